"""hls.js in a real headless Chromium, on a page of another origin, playing an HLS
output of the service from its master playlist URL alone.

Usage: hls_player.py HLS_JS MASTER_URL
HLS_JS: a URL, or a local file served from the page's origin. A subtitles rendition,
when the master has one, is turned on and its cues reported.
The page is served by a server of this script on another port of 127.0.0.1 (an
origin of its own, on loopback like the service, so no private-network rule is in
play: only CORS), loads hls.js from the service, and plays muted. Prints one JSON line
of what it saw; a failed expectation raises.
"""

import json
import os
import sys

from playwright.sync_api import sync_playwright

from browser_page import STATE, html, launch, serve

hls_js, master = sys.argv[1:3]
# A local file (a full build fetched from npm) is served from the page's own origin.
served = {}
if os.path.isfile(hls_js):
    with open(hls_js, "rb") as f:
        served["/hls.js"] = (f.read(), "text/javascript")
    hls_js = "/hls.js"
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
    window.subtitle_tracks = (d.subtitleTracks || []).length;
    video.play();
  }});
  // Subtitles on, once hls.js has made their track (it makes it disabled).
  hls.on(Hls.Events.SUBTITLE_TRACKS_UPDATED, (_, d) => {{
    if (d.subtitleTracks.length > 0) {{
      hls.subtitleDisplay = true;
      hls.subtitleTrack = 0;
    }}
  }});
  hls.loadSource({json.dumps(master)});
  hls.attachMedia(video);
</script></body></html>"""



page_url = serve({"/": html(PAGE), **served})

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
    seen["subtitle_tracks"] = page.evaluate("window.subtitle_tracks")
    if seen["subtitle_tracks"]:
        try:
            page.wait_for_function(
                "Array.from(document.getElementById('v').textTracks).some((t) => t.cues && t.cues.length)",
                timeout=15_000,
            )
        except Exception:
            pass
    seen["cues"] = page.evaluate("""Array.from(document.getElementById('v').textTracks).map((t) =>
        [t.kind, t.language, t.mode, t.cues ? Array.from(t.cues).map((c) => [c.startTime, c.endTime, c.text]) : null])""")
    seen["segments_fetched"] = len([u for u in requests if "/v1/files/" in u and ".mp4" in u])
    browser.close()
print(json.dumps(seen))
