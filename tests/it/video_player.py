"""A plain <video> element in a real headless Chromium, on a page of another origin,
playing one output file of the service from its download URL.

Usage: video_player.py VIDEO_URL
Prints one JSON line: the playback time reached, the picture's size, the frames the
browser decoded and any media error; a video that does not play past 1.2 s within a
minute prints what the element was doing instead, and the caller's asserts fail.
"""

import http.server
import json
import os
import sys
import threading

from playwright.sync_api import sync_playwright

video_url = sys.argv[1]
chromium = os.environ.get("MEDIAEDIT_TEST_CHROMIUM", "/usr/bin/chromium")
PAGE = f"""<!doctype html><html><body>
<video id="v" muted playsinline autoplay src={json.dumps(video_url)}></video>
</body></html>"""


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
  const q = v.getVideoPlaybackQuality();
  return { current_time: v.currentTime, width: v.videoWidth, height: v.videoHeight,
           decoded_frames: q.totalVideoFrames, dropped_frames: q.droppedVideoFrames,
           media_error: v.error && v.error.message }; })()"""

with sync_playwright() as p:
    browser = p.chromium.launch(
        executable_path=chromium,
        args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"],
    )
    page = browser.new_page()
    page.goto(page_url)
    try:
        page.wait_for_function(
            "document.getElementById('v').currentTime > 1.2", timeout=60_000
        )
    except Exception:
        pass
    seen = page.evaluate(STATE)
    seen["origin"] = page.evaluate("location.origin")
    browser.close()
print(json.dumps(seen))
