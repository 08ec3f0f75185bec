#!/usr/bin/env python3
"""Core scaling: the same batch with `--workers` 1, 2, 4, 8, 16.

    bench/scaling.py [--bin PATH] [--workers 1,2,4,8,16] [--images N] [--videos N]

The batch: N image edits (resize-image x0.5 of a 12 MP JPEG, default 48) and N video
edits (video-to-ogg of a 1080p 10 s clip, chunked on the defaults, default 2), posted
at once by four organizations, result cache off; each worker count on a fresh server.
Prints edits per second and efficiency (rate / (workers x rate at 1 worker)) per kind.
A worker count above the machine's cores measures oversubscription, not scaling:
run it on a machine with as many cores as the largest count. Without --bin a release
binary is built first.
"""

import argparse
import concurrent.futures
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, make_fixtures, release_binary, serve_directory  # noqa: E402


def run_batch(binary, work, src, workers, kind, count):
    service = Service(binary, work, orgs=4, extra=["--workers", str(workers), "--result-cache", "false"])
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
    args = parser.parse_args()
    binary = release_binary(args.bin)
    counts = [int(w) for w in args.workers.split(",")]
    print(f"machine: {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        make_fixtures(sources)
        src = serve_directory(sources)
        for kind, count in (("images", args.images), ("videos", args.videos)):
            base = None
            for workers in counts:
                rate = run_batch(binary, os.path.join(work, f"{kind}-{workers}"), src, workers, kind, count)
                base = base or rate / workers
                print(f"{kind:<7} --workers {workers:>2}: {rate:7.2f} edits/s, efficiency {rate / (workers * base):5.0%}")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
