#!/usr/bin/env python3
"""Chunked encoding and work-conserving fairness, side by side with the single process.

    bench/chunked.py [--bin PATH] [--runs N] [--only SUBSTRING]

Needs python3 and ffmpeg; without --bin a release binary is built first.

1. `video-to-ogg` and `video-to-webm` of a 1080p 10 s clip through the service on its
   defaults (POST to `done`, long poll) next to the single-process recipe with the same
   encoder settings run by hand on the same file, alternating, medians of N (default
   3); on a plain clip and on one with scene cuts. Goals: ogg <= 0.6x, webm <= 0.8x.
2. 60 thumbnails (resize-image x0.2 of a 2 MP JPEG) posted at once by one organization,
   POST of the first to `done` of the last: on the defaults, and with
   `--max-running-per-org` set to the node's workers (the whole node for it); medians of
   N, each on a fresh server, result cache off. Goal: defaults <= 1.1x.
"""

import argparse
import concurrent.futures
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import ROOT, Service, ffmpeg, make_fixtures, serve_directory, timed  # noqa: E402

SQUARE = "scale='if(gte(sar,1),round(iw*sar),iw)':'if(gte(sar,1),ih,round(ih/sar))',setsar=1,format=yuv420p"
THEORA = ["-c:v", "libtheora", "-q:v", "6", "-g", "12", "-c:a", "libvorbis", "-q:a", "4", "-f", "ogg"]
VP9 = ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-b:v", "0",
       "-crf", "35", "-g", "128", "-c:a", "libopus", "-b:a", "96k", "-f", "webm"]


def scene_cuts(work):
    """1080p, 25 fps, 10 s: test pattern, fractal zoom, noisy automaton; with a tone."""
    path = f"{work}/cuts1080.mp4"
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=25:d=3", "-f", "lavfi",
           "-i", "mandelbrot=s=1920x1080:r=25,trim=duration=4", "-f", "lavfi",
           "-i", "life=s=1920x1080:r=25:mold=10:ratio=0.1:death_color=#C83232:life_color=#00ff00,trim=duration=3",
           "-f", "lavfi", "-i", "sine=frequency=440:duration=10", "-filter_complex",
           "[0:v]format=yuv420p[a];[1:v]format=yuv420p[b];[2:v]format=yuv420p,noise=alls=8:allf=t[c];"
           "[a][b][c]concat=n=3:v=1:a=0[v]", "-map", "[v]", "-map", "3:a", "-c:v", "libx264", "-preset",
           "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", path)
    return path


def thumbnail_source(work):
    path = f"{work}/photo2.jpg"
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1600x1200:rate=1", "-vf", "noise=alls=12:allf=u",
           "-frames:v", "1", "-q:v", "3", path)
    return path


def encodes(binary, work, src, files, runs, only):
    service = Service(binary, work, orgs=40)
    hand = os.path.join(work, "hand")
    try:
        for clip in ("clip1080.mp4", "cuts1080.mp4"):
            for command, codecs, goal in (("video-to-ogg", THEORA, 0.6), ("video-to-webm", VP9, 0.8)):
                name = f"{command} 1080p 10 s ({clip})"
                if only not in name:
                    continue
                body = {"assets": [{"type": "video", "src": f"{src}/{clip}"}], "commands": [command]}
                reference = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", files[clip], "-map", "0:v:0",
                             "-map", "0:a:0", "-vf", SQUARE, *codecs, f"{hand}/out"]
                ours, theirs = [], []
                for _ in range(runs):
                    ours.append(service.edit(service.fresh_token(), body)[0])
                    theirs.append(timed(reference, hand))
                row(name, statistics.median(ours), statistics.median(theirs), goal)
    finally:
        service.stop()


def batch(binary, work, src, extra):
    """Seconds from the first POST to the last of 60 thumbnail edits done, one organization."""
    service = Service(binary, work, orgs=1, extra=["--result-cache", "false", *extra])
    try:
        token = service.tokens[0]
        body = {"assets": [{"type": "image", "src": f"{src}/photo2.jpg"}], "commands": ["resize-image"],
                "options": {"scale": 0.2}}
        service.edit(token, body)  # warm: the first edit pays for the first connections
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(60) as pool:
            list(pool.map(lambda _: service.edit(token, body), range(60)))
        return time.monotonic() - start
    finally:
        service.stop()


def thumbnails(binary, work, src, runs):
    workers = os.cpu_count()
    defaults, whole = [], []
    for n in range(runs):
        defaults.append(batch(binary, os.path.join(work, f"d{n}"), src, []))
        whole.append(batch(binary, os.path.join(work, f"w{n}"), src, ["--max-running-per-org", str(workers)]))
    row(f"60 thumbnails, one org: defaults vs --max-running-per-org {workers}",
        statistics.median(defaults), statistics.median(whole), 1.1)


def row(name, ours, theirs, goal):
    ratio = ours / theirs
    print(f"{name:<64} {ours:8.2f} {theirs:8.2f} {ratio:6.2f} {goal:5} {'ok' if ratio <= goal else 'OVER'}")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    binary = args.bin
    if not binary:
        subprocess.run(["cargo", "build", "--release", "--quiet"], check=True, cwd=ROOT)
        binary = os.path.join(ROOT, "target/release/mediaedit")
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        files = make_fixtures(sources)
        files["cuts1080.mp4"] = scene_cuts(sources)
        thumbnail_source(sources)
        src = serve_directory(sources)
        print(f"{'case':<64} {'ours s':>8} {'ref s':>8} {'ratio':>6} {'goal':>5}")
        encodes(binary, os.path.join(work, "encodes"), src, files, args.runs, args.only)
        if args.only in "thumbnails":
            thumbnails(binary, os.path.join(work, "thumbnails"), src, args.runs)


if __name__ == "__main__":
    main()
