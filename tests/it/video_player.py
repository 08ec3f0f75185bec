"""A plain <video> element in a real headless Chromium, on a page of another origin,
playing one output file of the service from its download URL.

Usage: video_player.py VIDEO_URL
Prints one JSON line: the playback time reached, the picture's size, the frames the
browser decoded and any media error; a video that does not play past 1.2 s within a
minute prints what the element was doing instead, and the caller's asserts fail.
"""

import json
import sys

from playwright.sync_api import sync_playwright

from browser_page import html, launch, serve

video_url = sys.argv[1]
PAGE = f"""<!doctype html><html><body>
<video id="v" muted playsinline autoplay src={json.dumps(video_url)}></video>
</body></html>"""


page_url = serve({"/": html(PAGE)})

PLAYED = """(() => { const v = document.getElementById('v');
  const q = v.getVideoPlaybackQuality();
  return { current_time: v.currentTime, width: v.videoWidth, height: v.videoHeight,
           decoded_frames: q.totalVideoFrames, dropped_frames: q.droppedVideoFrames,
           media_error: v.error && v.error.message }; })()"""

with sync_playwright() as p:
    browser = launch(p)
    page = browser.new_page()
    page.goto(page_url)
    try:
        page.wait_for_function(
            "document.getElementById('v').currentTime > 1.2", timeout=60_000
        )
    except Exception:
        pass
    seen = page.evaluate(PLAYED)
    seen["origin"] = page.evaluate("location.origin")
    browser.close()
print(json.dumps(seen))
