"""dash.js in a real headless Chromium, on a page of another origin, playing a DASH
manifest of the service from its URL alone.

Usage: dash_player.py DASH_JS_FILE MPD_URL [SECONDS]
The page and dash.js (the file given, fetched from npm by scripts/dashjs.sh) are
served by a server of this script on another port of 127.0.0.1 (an origin of its
own, on loopback like the service, so no private-network rule is in play: only
CORS); the manifest and its segments come from the service. The video plays muted
until it is past SECONDS (default 1). Prints one JSON line of what it saw; a failed
expectation raises.
"""

import json
import sys

from playwright.sync_api import sync_playwright

from browser_page import STATE, html, launch, serve

dash_js, manifest = sys.argv[1:3]
past = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
with open(dash_js, "rb") as f:
    DASH_JS = f.read()
PAGE = f"""<!doctype html><html><body>
<video id="v" muted playsinline autoplay></video>
<script src="/dash.js"></script>
<script>
  window.errors = [];
  const video = document.getElementById("v");
  const player = dashjs.MediaPlayer().create();
  player.updateSettings({{ debug: {{ logLevel: dashjs.Debug.LOG_LEVEL_WARNING }} }});
  player.on(dashjs.MediaPlayer.events.ERROR, (e) =>
    window.errors.push(JSON.stringify(e.error && (e.error.message || e.error.code) || e)));
  player.on(dashjs.MediaPlayer.events.STREAM_INITIALIZED, () => {{
    window.tracks = ["video", "audio", "text"].map((t) => [t, player.getTracksFor(t).length]);
    window.levels = player.getBitrateInfoListFor("video").map((b) => [b.width, b.height]);
  }});
  player.initialize(video, {json.dumps(manifest)}, true);
</script></body></html>"""


page_url = serve({"/": html(PAGE), "/dash.js": (DASH_JS, "text/javascript")})

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
    try:
        page.wait_for_function(
            f"document.getElementById('v').currentTime > {past}", timeout=60_000
        )
    except Exception:
        print(json.dumps({"stuck": page.evaluate(STATE), "console": console[-20:], **seen}))
        raise
    seen["current_time"] = page.evaluate("document.getElementById('v').currentTime")
    seen["duration"] = page.evaluate("document.getElementById('v').duration")
    seen["levels"] = page.evaluate("window.levels")
    seen["tracks"] = page.evaluate("window.tracks")
    seen["errors"] = page.evaluate("window.errors")
    seen["cues"] = page.evaluate("""Array.from(document.getElementById('v').textTracks).map((t) =>
        [t.kind, t.language, t.mode, t.cues ? Array.from(t.cues).map((c) => [c.startTime, c.endTime, c.text]) : null])""")
    seen["audio_bytes"] = page.evaluate("document.getElementById('v').webkitAudioDecodedByteCount")
    seen["segments_fetched"] = len(
        [u for u in requests if "/seg" in u.split("?")[0] and u.split("?")[0].endswith(".mp4")]
    )
    browser.close()
print(json.dumps(seen))
