#!/usr/bin/env python3
"""Core scaling: the same batch with `--workers` 1, 2, 4, 8, 16.

    bench/scaling.py [--bin PATH] [--workers 1,2,4,8,16] [--images N] [--videos N]

The batch: N image edits (resize-image x0.5 of a 12 MP JPEG, default 48) and N video
edits (video-to-ogg of a 1080p 10 s clip, chunked on the defaults, default 2), posted
at once by four organizations, result cache off; each worker count on a fresh server.
Prints edits per second and efficiency (rate / (workers x rate at 1 worker)) per kind.

Each count N runs on N cores: the service (and every ffmpeg it starts) is confined to
CPUs 0..N-1, so that it sees N cores, as a node of that size does. Without that, one
worker already uses every core (an image is resized in bands, one per core; a video
is cut into a chunk per core), and the efficiency would measure how much of the
machine one edit leaves idle rather than how the engine scales with cores. --no-pin
runs every count on the whole machine. A count above the machine's cores cannot be
pinned: run it on a machine with as many cores as the largest count. Without --bin a
release binary is built first.
"""

import argparse
import concurrent.futures
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, make_fixtures, release_binary, serve_directory  # noqa: E402


def run_batch(binary, work, src, workers, kind, count, pin):
    cpus = set(range(workers)) if pin else None
    service = Service(binary, work, orgs=4, extra=["--workers", str(workers), "--result-cache", "false"], cpus=cpus)
    try:
        if kind == "images":
            body = {"assets": [{"type": "image", "src": f"{src}/photo12.jpg"}], "commands": ["resize-image"],
                    "options": {"scale": 0.5}}
        else:
            body = {"assets": [{"type": "video", "src": f"{src}/clip1080.mp4"}], "commands": ["video-to-ogg"]}
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(count) as pool:
            list(pool.map(lambda n: service.edit(service.tokens[n % 4], body), range(count)))
        return count / (time.monotonic() - start)
    finally:
        service.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--workers", default="1,2,4,8,16")
    parser.add_argument("--images", type=int, default=48)
    parser.add_argument("--videos", type=int, default=2)
    parser.add_argument("--no-pin", action="store_true", help="every count on the whole machine")
    args = parser.parse_args()
    binary = release_binary(args.bin)
    counts = [int(w) for w in args.workers.split(",")]
    pin = not args.no_pin
    if pin and max(counts) > os.cpu_count():
        raise SystemExit(f"{max(counts)} workers cannot be pinned to {os.cpu_count()} cores; pass --no-pin")
    print(f"machine: {os.cpu_count()} cores; {'each count on as many cores' if pin else 'every count on every core'}")
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        make_fixtures(sources)
        src = serve_directory(sources)
        for kind, count in (("images", args.images), ("videos", args.videos)):
            base = None
            for workers in counts:
                rate = run_batch(binary, os.path.join(work, f"{kind}-{workers}"), src, workers, kind, count, pin)
                base = base or rate / workers
                print(f"{kind:<7} --workers {workers:>2}: {rate:7.2f} edits/s, efficiency {rate / (workers * base):5.0%}")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
