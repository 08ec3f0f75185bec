"""hls.js in a real headless Chromium, on a page of another origin, playing an HLS
output of the service from its master playlist URL alone.

Usage: hls_player.py HLS_JS_URL MASTER_URL
The page is served by a server of this script on another port of 127.0.0.1 (an
origin of its own, on loopback like the service, so no private-network rule is in
play: only CORS), loads hls.js from the service, and plays muted. Prints one JSON line
of what it saw; a failed expectation raises.
"""

import http.server
import json
import os
import sys
import threading

from playwright.sync_api import sync_playwright

hls_js, master = sys.argv[1:3]
chromium = os.environ.get("MEDIAEDIT_TEST_CHROMIUM", "/usr/bin/chromium")
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



class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
threading.Thread(target=server.serve_forever, daemon=True).start()
page_url = f"http://127.0.0.1:{server.server_address[1]}/"

STATE = """(() => { const v = document.getElementById('v');
  return { time: v.currentTime, ready: v.readyState, paused: v.paused,
           buffered: Array.from({length: v.buffered.length}, (_, i) => [v.buffered.start(i), v.buffered.end(i)]),
           errors: window.errors, levels: window.levels, mediaError: v.error && v.error.message }; })()"""

seen = {}
with sync_playwright() as p:
    browser = p.chromium.launch(
        executable_path=chromium,
        args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"],
    )
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
