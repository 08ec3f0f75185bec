#!/usr/bin/env python3
"""Hostile tenants against the engine, before and after, in one run.

    bench/hostile.py BEFORE_BIN AFTER_BIN [seconds]        (python3 and ffmpeg only)

For each binary in turn, on its defaults (plus private sources and no rate limit):
a "hostile" organization posts drip sources (1 byte/s forever), heavy legal jobs
(2000x2000 image-to-video, 600 frames each), a frame-bomb GIF (20,000 1x1 frames on
a 2000x2000 screen) and chains of resizes; then, every 3 s for the whole window,
another organization and the hostile one itself each post a small resize-image edit.
Reported: how long those small edits took (POST to done), how many edits finished per
minute, and how busy the CPUs were (from /proc/stat). Edits not done within the
window count as taking the whole rest of it. Then a benign mix from three
organizations (30 image edits, 6 720p video edits, 3 sources that answer after 5 s),
all posted at once, is timed until every edit has ended.
"""

import http.server
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib


def png(width, height):
    row = bytes(v for x in range(width) for v in ((x * 7) % 256, (x * 3) % 256, 128))
    raw = b"".join(b"\0" + row[y % 3:] + row[: y % 3] for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def frame_bomb_gif(frames=20000, side=2000):
    """A legal GIF: `frames` 1x1 frames of 2 cs each on a side x side screen."""
    out = bytearray(b"GIF89a" + struct.pack("<HH", side, side) + b"\x80\x00\x00")
    out += b"\x00\x00\x00\xff\xff\xff"  # two-colour global table
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    frame = (
        b"\x21\xf9\x04\x00" + struct.pack("<H", 2) + b"\x00\x00"  # 2 cs
        + b"\x2c" + struct.pack("<HHHH", 0, 0, 1, 1) + b"\x00"
        + b"\x02\x02\x44\x01\x00"  # LZW: clear, pixel 0, end
    )
    out += frame * frames
    out += b"\x3b"
    return bytes(out)


class Fixtures(http.server.ThreadingHTTPServer):
    daemon_threads = True


def fixture_server(files):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/drip":
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.end_headers()
                try:
                    while True:
                        self.wfile.write(b"\x89")
                        self.wfile.flush()
                        time.sleep(1)
                except OSError:
                    return
            path = self.path.lstrip("/")
            if path.startswith("slow/"):
                time.sleep(5)
                path = path[5:]
            body = files.get(path)
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = Fixtures(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_times():
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields), idle


class Service:
    def __init__(self, binary, work):
        self.binary, self.work = binary, work
        data = os.path.join(work, "data")
        self.tokens = {
            org: subprocess.run(
                [binary, "token", "create", "--data-dir", data, "--org", org],
                check=True, capture_output=True, text=True,
            ).stdout.strip().splitlines()[-1]
            for org in ("hostile", "normal", "third")
        }
        self.base = f"http://127.0.0.1:{free_port()}"
        env = dict(os.environ, RUST_LOG="error")
        self.process = subprocess.Popen(
            [binary, "serve", "--data-dir", data, "--listen", self.base[7:],
             "--allow-private-sources", "--write-rate-limit-per-second", "0", "--read-rate-limit-per-second", "0"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # Its own process group, so stopping it stops its ffmpeg children too.
            start_new_session=True,
        )
        for _ in range(200):
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.05)

    def post(self, org, src, commands, options=None, kind="image"):
        body = {"assets": [{"type": kind, "src": src}], "commands": commands}
        if options:
            body["options"] = options
        request = urllib.request.Request(
            self.base + "/v1/edits", data=json.dumps(body).encode(), method="POST",
            headers={"Authorization": "Bearer " + self.tokens[org], "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["id"]

    def status(self, org, edit):
        request = urllib.request.Request(
            f"{self.base}/v1/edits/{edit}", headers={"Authorization": "Bearer " + self.tokens[org]}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["attributes"]["status"]

    def stop(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def run(binary, seconds, urls):
    with tempfile.TemporaryDirectory() as work:
        service = Service(binary, work)
        hostile = []
        for _ in range(12):
            hostile.append(service.post("hostile", urls["drip"], ["image-to-webp"]))
        for _ in range(4):
            hostile.append(service.post("hostile", urls["big"], ["image-to-video"], {"fps": 30, "duration": 20}))
        hostile.append(service.post("hostile", urls["bomb"], ["gif-to-video"]))
        for _ in range(10):
            chain = ["resize-image"] * 4
            hostile.append(service.post("hostile", urls["photo"], chain, {"scale": 0.9}))

        cpu_start = cpu_times()
        started = time.monotonic()
        small = []  # (org, id, posted at)
        next_post = started
        finished = {}
        while time.monotonic() < started + seconds:
            now = time.monotonic()
            if now >= next_post:
                for org in ("normal", "hostile"):
                    small.append((org, service.post(org, urls["small"], ["resize-image"], {"scale": 0.5}), now))
                next_post += 3
            for org, edit, posted in small:
                if edit not in finished and service.status(org, edit) in ("done", "failed"):
                    finished[edit] = time.monotonic() - posted
            time.sleep(0.1)
        end = time.monotonic()
        cpu_end = cpu_times()
        done_hostile = sum(service.status("hostile", e) in ("done", "failed") for e in hostile)
        service.stop()

    total, idle = cpu_end[0] - cpu_start[0], cpu_end[1] - cpu_start[1]
    latencies = {org: sorted(finished.get(e, end - posted) for o, e, posted in small if o == org) for org in ("normal", "hostile")}
    finished_count = len(finished) + done_hostile
    return {
        "small edit, other org: median / worst s": (median(latencies["normal"]), latencies["normal"][-1]),
        "small edit, hostile org itself: median / worst s": (median(latencies["hostile"]), latencies["hostile"][-1]),
        "small edits done in the window": f"{sum(e in finished for _, e, _ in small)} of {len(small)}",
        "hostile edits finished (done or failed)": f"{done_hostile} of {len(hostile)}",
        "edits finished per minute": round(finished_count * 60 / (end - started), 1),
        "CPU busy %": round(100 * (1 - idle / total), 1) if total else 0,
    }


def run_mixed(binary, urls):
    """A benign mix from three organizations, all posted at once: 30 image edits, 6
    video edits, 3 image edits whose source answers after 5 s. Timed until all end."""
    with tempfile.TemporaryDirectory() as work:
        service = Service(binary, work)
        orgs = ("hostile", "normal", "third")
        edits = []
        cpu_start = cpu_times()
        started = time.monotonic()
        for i in range(30):
            commands = ["resize-image"] if i % 2 else ["image-to-webp"]
            edits.append((orgs[i % 3], service.post(orgs[i % 3], urls["photo"], commands, {"scale": 0.5} if i % 2 else None)))
        for i, command in enumerate(["video-to-gif", "video-to-webm", "modify-video-speed"] * 2):
            options = {"speed": 2} if command == "modify-video-speed" else None
            edits.append((orgs[i % 3], service.post(orgs[i % 3], urls["clip"], [command], options, kind="video")))
        for i in range(3):
            edits.append((orgs[i], service.post(orgs[i], urls["slow"], ["image-to-webp"])))
        pending = {edit: org for org, edit in edits}
        statuses = {}
        while pending and time.monotonic() < started + 300:
            for edit, org in list(pending.items()):
                status = service.status(org, edit)
                if status in ("done", "failed"):
                    statuses[edit] = status
                    del pending[edit]
            time.sleep(0.1)
        end = time.monotonic()
        cpu_end = cpu_times()
        service.stop()
    total, idle = cpu_end[0] - cpu_start[0], cpu_end[1] - cpu_start[1]
    return {
        "mixed: all done in s": round(end - started, 1),
        "mixed: done / failed / unfinished": f"{list(statuses.values()).count('done')} / {list(statuses.values()).count('failed')} / {len(pending)}",
        "mixed: edits per minute": round(len(statuses) * 60 / (end - started), 1),
        "mixed: CPU busy %": round(100 * (1 - idle / total), 1) if total else 0,
    }


def median(values):
    return values[len(values) // 2]


def main():
    before, after = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60
    files = {
        "small.png": png(64, 48),
        "big.png": png(2000, 2000),
        "photo.png": png(1600, 1200),
        "bomb.gif": frame_bomb_gif(),
    }
    with tempfile.TemporaryDirectory() as work:
        clip = os.path.join(work, "clip.mp4")
        subprocess.run(
            ["ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=8",
             "-f", "lavfi", "-i", "sine=frequency=440:duration=8", "-c:v", "libx264", "-pix_fmt", "yuv420p",
             "-c:a", "aac", "-shortest", clip],
            check=True,
        )
        with open(clip, "rb") as f:
            files["clip.mp4"] = f.read()
    server = fixture_server(files)
    root = f"http://127.0.0.1:{server.server_address[1]}"
    urls = {
        "drip": root + "/drip",
        "small": root + "/small.png",
        "big": root + "/big.png",
        "photo": root + "/photo.png",
        "bomb": root + "/bomb.gif",
        "clip": root + "/clip.mp4",
        "slow": root + "/slow/small.png",
    }
    results = {}
    for name, binary in (("before", before), ("after", after)):
        print(f"== {name}: {binary}, {seconds:.0f} s", flush=True)
        results[name] = run(binary, seconds, urls)
        results[name].update(run_mixed(binary, urls))
        for key, value in results[name].items():
            print(f"   {key}: {value}", flush=True)
    print("== after / before")
    for key in results["after"]:
        a, b = results["after"][key], results["before"][key]
        if isinstance(a, tuple):
            print(f"   {key}: {a[0] / b[0]:.2f} / {a[1] / b[1]:.2f}")
        elif isinstance(a, (int, float)) and b:
            print(f"   {key}: {a / b:.2f}")


if __name__ == "__main__":
    main()
