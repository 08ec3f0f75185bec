"""hls.js in a real headless Chromium, on a page of another origin, playing an HLS
output of the service from its master playlist URL alone.

Usage: hls_player.py HLS_JS_URL MASTER_URL
The page is served by a server of this script on another port of 127.0.0.1 (an
origin of its own, on loopback like the service, so no private-network rule is in
play: only CORS), loads hls.js from the service, and plays muted. Prints one JSON line
of what it saw; a failed expectation raises.
"""

import json
import sys

from playwright.sync_api import sync_playwright

from browser_page import STATE, html, launch, serve

hls_js, master = sys.argv[1:3]
PAGE = f"""<!doctype html><html><body>
<video id="v" muted playsinline autoplay></video>
<script src="{hls_js}"></script>
<script>
  window.errors = [];
  const video = document.getElementById("v");
  const hls = new Hls({{ enableWorker: false }});
  hls.on(Hls.Events.ERROR, (_, d) => window.errors.push(d.details + (d.fatal ? " (fatal)" : "")));
  hls.on(Hls.Events.MANIFEST_PARSED, (_, d) => {{
    window.levels = d.levels.map((l) => [l.width, l.height]);
    video.play();
  }});
  hls.loadSource({json.dumps(master)});
  hls.attachMedia(video);
</script></body></html>"""



page_url = serve({"/": html(PAGE)})

seen = {}
with sync_playwright() as p:
    browser = launch(p)
    page = browser.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    console = []
    page.on("console", lambda m: console.append(m.text))
    page.goto(page_url)
    seen["origin"] = page.evaluate("location.origin")
    seen["mse_h264"] = page.evaluate(
        "MediaSource.isTypeSupported('video/mp4; codecs=\"avc1.64001e,mp4a.40.2\"')"
    )
    try:
        page.wait_for_function("document.getElementById('v').currentTime > 1.2", timeout=60_000)
    except Exception:
        print(json.dumps({"stuck": page.evaluate(STATE), "console": console[-20:], **seen}))
        raise
    seen["current_time"] = page.evaluate("document.getElementById('v').currentTime")
    seen["levels"] = page.evaluate("window.levels")
    seen["errors"] = page.evaluate("window.errors.filter((e) => e.includes('fatal'))")
    seen["segments_fetched"] = len([u for u in requests if "/v1/files/" in u and ".mp4" in u])
    browser.close()
print(json.dumps(seen))
