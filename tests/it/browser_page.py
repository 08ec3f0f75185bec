"""What the browser tests' player scripts share: a page served from an origin of its
own, and Chromium launched the way the tests run it.

The page is served by a thread of the calling script on another port of 127.0.0.1 (an
origin of its own, on loopback like the service, so no private-network rule is in
play: only CORS).
"""

import http.server
import os
import threading

# What each player reports when its video does not play: the element's state.
STATE = """(() => { const v = document.getElementById('v');
  return { time: v.currentTime, ready: v.readyState, paused: v.paused,
           buffered: Array.from({length: v.buffered.length}, (_, i) => [v.buffered.start(i), v.buffered.end(i)]),
           errors: window.errors, levels: window.levels, mediaError: v.error && v.error.message }; })()"""


def serve(files):
    """Serves `files` ({path: (bytes, content type)}; "/" the page) and returns the
    page's URL."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body, kind = files.get(self.path, files["/"])
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


def html(page):
    """A page's text as `serve` takes it."""
    return (page.encode(), "text/html; charset=utf-8")


def launch(playwright):
    """Headless Chromium (MEDIAEDIT_TEST_CHROMIUM, else Debian's), autoplay allowed."""
    return playwright.chromium.launch(
        executable_path=os.environ.get("MEDIAEDIT_TEST_CHROMIUM", "/usr/bin/chromium"),
        args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"],
    )
