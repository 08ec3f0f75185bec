#!/usr/bin/env python3
"""Images by URL (GET /v1/render/...) against vipsthumbnail, on the same files.

    bench/render.py [--bin PATH] [--files N] [--cached-seconds S] [--markdown]

Needs python3, ffmpeg and vipsthumbnail (libvips-tools; scripts/install-deps.sh
--bench installs it). Without --bin a release binary is built first.

1. Uncached: N distinct 2 MP JPEGs (1920x1080 photos with grain), uploaded first, each
   rendered once to 512x512 `fit:cover` (JPEG out) by two concurrent clients (keep-alive
   connections, one process each): requests per second over the whole run and p95
   latency. Every render is a cache miss (distinct sources).
2. vipsthumbnail over the same N files in two processes (half each, one process per
   half, so process start is paid twice, not N times): `--size 512x512 --smartcrop
   centre`, JPEG Q=85 as ours; files per second. The ratio ours/vips is printed.
3. Cached: one render URL asked again and again by two client processes for S seconds
   (default 5): requests per second, every answer streamed from the cache.
The server runs with --workers 2 on this machine's cores; what it prints is the
machine's, so compare ratios, not figures from elsewhere.
"""

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (release_binary)
TRANSFORM = "w:512,h:512,fit:cover"


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def render_path(key, transform, source):
    sig = b64(hmac.new(key.encode(), f"{transform}/{source}".encode(), hashlib.sha256).digest())
    return f"/v1/render/{sig}/{transform}/{source}"


def make_photos(work, count):
    """`count` distinct 1920x1080 JPEGs: frames of a moving test pattern with grain."""
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=size=1920x1080:rate=25", "-vf", "noise=alls=12:allf=t+u",
                    "-frames:v", str(count), "-q:v", "3", f"{work}/photo-%04d.jpg"], check=True)
    return sorted(f"{work}/{name}" for name in os.listdir(work) if name.startswith("photo-"))


def cli(binary, data, *args):
    out = subprocess.run([binary, *args, "--data-dir", data], check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def start_server(binary, data, port):
    server = subprocess.Popen(
        [binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data, "--workers", "2",
         "--max-requests-per-org", "1000", "--write-rate-limit-per-second", "0",
         "--read-rate-limit-per-second", "0"],
        stdout=subprocess.DEVNULL, stderr=open(f"{data}/server.log", "w"))
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return server
        except OSError:
            time.sleep(0.05)
    server.kill()
    sys.exit("the server did not start; see its log in " + data)


def upload(port, token, path):
    with open(path, "rb") as f:
        body = f.read()
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("POST", "/v1/uploads", body, {"Authorization": f"Bearer {token}"})
    answer = conn.getresponse()
    doc = json.loads(answer.read())
    assert answer.status == 201, doc
    return doc["id"]


def client(args):
    """One client: GETs each path once over one keep-alive connection; latencies."""
    port, paths = args
    conn = http.client.HTTPConnection("127.0.0.1", port)
    latencies = []
    for path in paths:
        started = time.perf_counter()
        conn.request("GET", path)
        answer = conn.getresponse()
        body = answer.read()
        assert answer.status == 200 and body[:2] == b"\xff\xd8", (answer.status, body[:200])
        latencies.append(time.perf_counter() - started)
    return latencies


def hammer(args):
    """One client: GETs `path` over one keep-alive connection for `seconds`; a count."""
    port, path, seconds = args
    conn = http.client.HTTPConnection("127.0.0.1", port)
    done, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        conn.request("GET", path)
        answer = conn.getresponse()
        answer.read()
        assert answer.status == 200
        done += 1
    return done


def vips(files, out):
    """vipsthumbnail over `files` in two processes (half each): wall seconds."""
    halves = [files[0::2], files[1::2]]
    started = time.perf_counter()
    procs = [subprocess.Popen(["vipsthumbnail", *half, "--size", "512x512", "--smartcrop", "centre",
                               "-o", f"{out}/%s.jpg[Q=85]"]) for half in halves]
    for proc in procs:
        assert proc.wait() == 0
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--cached-seconds", type=float, default=5.0)
    parser.add_argument("--port", type=int, default=18090)
    args = parser.parse_args()
    if not shutil.which("vipsthumbnail"):
        sys.exit("vipsthumbnail is missing: apt-get install libvips-tools (scripts/install-deps.sh --bench)")
    binary = perf.release_binary(args.bin)
    work = tempfile.mkdtemp(prefix="render-bench-")
    try:
        photos = make_photos(f"{work}", args.files)
        data = f"{work}/data"
        token = cli(binary, data, "token", "create", "--org", "bench")
        key = cli(binary, data, "render-key", "create", "--org", "bench")
        server = start_server(binary, data, args.port)
        try:
            ids = [upload(args.port, token, p) for p in photos]
            paths = [render_path(key, TRANSFORM, f"upload:{i}") for i in ids]
            with multiprocessing.Pool(2) as pool:
                started = time.perf_counter()
                halves = pool.map(client, [(args.port, paths[0::2]), (args.port, paths[1::2])])
                wall = time.perf_counter() - started
                latencies = sorted(halves[0] + halves[1])
                ours = len(paths) / wall
                p95 = latencies[int(0.95 * (len(latencies) - 1))] * 1000
                p50 = statistics.median(latencies) * 1000
                os.makedirs(f"{work}/vips")
                vips_rate = len(photos) / vips(photos, f"{work}/vips")
                counts = pool.map(hammer, [(args.port, paths[0], args.cached_seconds)] * 2)
                cached = sum(counts) / args.cached_seconds
        finally:
            server.terminate()
            server.wait()
        cores = os.cpu_count()
        print(f"machine: {cores} cores; {len(photos)} distinct 1920x1080 JPEGs -> 512x512 fit:cover JPEG")
        print("| row | ours | vipsthumbnail (2 processes) | ours / vips |")
        print("|---|---|---|---|")
        print(f"| uncached renders, 2 clients | {ours:.1f} req/s (p50 {p50:.1f} ms, p95 {p95:.1f} ms) "
              f"| {vips_rate:.1f} files/s | {ours / vips_rate:.2f}x |")
        print(f"| cached renders, 2 clients | {cached:.0f} req/s | | |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
