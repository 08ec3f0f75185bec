#!/usr/bin/env python3
"""Notifications: how soon a webhook arrives after its edit is done, and what an idle
long poll costs the server.

    python3 bench/notifications.py --bin target/release/mediaedit [--edits 200] [--polls 900]

1. Webhook latency: `--edits` small edits (resize-image of a 16x16 PNG), 20 a second,
   each with a webhook to a receiver on loopback; latency is the receiver's clock at
   arrival minus the edit's `updatedAt` (the moment it was recorded done), same machine.
   Prints p50/p90/p99/max.
2. Idle long polls: `--polls` connections held in `GET /v1/edits/{id}?wait=60` on an edit
   that cannot end meanwhile (its source accepts the connection and never answers);
   prints the server's RSS before and while they wait (per poll), and the CPU the
   server spent in 10 s without them and in 10 s with them (no busy polling: the same).
"""

import argparse
import asyncio
import datetime
import http.server
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from perf import Service, ffmpeg, serve_directory  # noqa: E402


def receiver():
    """A webhook receiver on loopback: (url, list of (arrival time, body))."""
    got = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append((time.time(), json.loads(body)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/hook", got


def silent_source():
    """A URL whose server accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []

    def accept():
        while True:
            held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/never.png"


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def webhook_latency(service, token, src, edits):
    url, got = receiver()
    body = {"assets": [{"type": "image", "src": src}], "commands": ["resize-image"],
            "options": {"scale": 0.5}, "webhook": {"url": url}}
    for _ in range(edits):
        service.request("POST", "/v1/edits", token, body)
        time.sleep(0.05)
    deadline = time.time() + 60
    while len(got) < edits and time.time() < deadline:
        time.sleep(0.1)
    latencies = sorted((arrived - parse_time(event["data"]["attributes"]["updatedAt"])) * 1000
                       for arrived, event in got if event["type"] == "edit.done")
    def pct(p):
        return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))]
    print(f"webhook latency, done → received, {len(latencies)} of {edits} edits: "
          f"p50 {pct(50):.1f} ms, p90 {pct(90):.1f} ms, p99 {pct(99):.1f} ms, max {latencies[-1]:.1f} ms")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_secs(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def hold_polls(port, token, edit_id, polls, pid):
    request = (f"GET /v1/edits/{edit_id}?wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               f"Authorization: Bearer {token}\r\n\r\n").encode()
    before = rss_kib(pid)
    cpu_start = cpu_secs(pid)
    await asyncio.sleep(10)
    baseline = cpu_secs(pid) - cpu_start
    connections = []
    for _ in range(polls):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request)
        connections.append((reader, writer))
    await asyncio.sleep(3)
    during = rss_kib(pid)
    cpu_start = cpu_secs(pid)
    await asyncio.sleep(10)
    cpu = cpu_secs(pid) - cpu_start
    answered = sum(1 for reader, _ in connections if reader.at_eof() or len(reader._buffer) > 0)
    for _, writer in connections:
        writer.close()
    print(f"idle long polls: {polls} held; server RSS {before / 1024:.1f} MiB before, "
          f"{during / 1024:.1f} MiB while they wait ({(during - before) / polls:.1f} KiB each); "
          f"server CPU over 10 s: {baseline * 1000:.0f} ms without them, {cpu * 1000:.0f} ms "
          f"while they wait; answered early: {answered}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/mediaedit")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--polls", type=int, default=900)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        ffmpeg("-f", "lavfi", "-i", "color=red:size=16x16", "-frames:v", "1", f"{work}/a.png")
        base = serve_directory(work)
        service = Service(os.path.abspath(args.bin), work, 2)
        try:
            webhook_latency(service, service.tokens[0], f"{base}/a.png", args.edits)
            token = service.tokens[1]
            waiting = {"assets": [{"type": "image", "src": silent_source()}], "commands": ["image-to-webp"]}
            edit_id = service.request("POST", "/v1/edits", token, waiting)["id"]
            asyncio.run(hold_polls(service.port, token, edit_id, args.polls, service.process.pid))
        finally:
            service.stop()


if __name__ == "__main__":
    main()
