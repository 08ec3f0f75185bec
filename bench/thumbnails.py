#!/usr/bin/env python3
"""A batch of thumbnails: 60 distinct 2 MP JPEGs posted at once by one organization,
each `resize-image` to a 512x512 `fit: cover` box (centre gravity), on the service's
defaults — next to `vipsthumbnail --smartcrop centre -s 512x512` over the same files
on both cores (`xargs -P 2`), process starts included. Prints the medians and the
ratio (goal: <= 1.0).

    bench/thumbnails.py [--bin PATH] [--runs N] [--count N]

Needs python3, ffmpeg and vipsthumbnail (libvips-tools). Without --bin a release
binary is built first.
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
from perf import Service, ffmpeg, release_binary, serve_directory  # noqa: E402


def photos(directory, count):
    """Distinct 1632x1224 (2 MP) photo-like JPEGs: testsrc2 at different times, grain."""
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1632x1224:rate=1", "-vf", "noise=alls=12:allf=u",
           "-frames:v", str(count), "-q:v", "3", f"{directory}/photo-%03d.jpg")
    return sorted(f for f in os.listdir(directory) if f.endswith(".jpg"))


def service_batch(service, token, src, names):
    """Seconds from the first POST to the last edit done, all posted at once."""
    body = lambda name: {"assets": [{"type": "image", "src": f"{src}/{name}"}],
                         "commands": ["resize-image"],
                         "options": {"width": 512, "height": 512, "fit": "cover"}}
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        docs = list(pool.map(lambda name: service.edit(token, body(name))[1], names))
    elapsed = time.monotonic() - start
    for doc in docs:
        out = doc["attributes"]["outputs"][0]
        assert (out["width"], out["height"]) == (512, 512), out
    return elapsed


def vips_batch(sources, names, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    start = time.monotonic()
    subprocess.run(
        ["xargs", "-P", "2", "-n", "1", "vipsthumbnail", "--smartcrop", "centre", "-s", "512x512",
         "-o", f"{out_dir}/%s.jpg[Q=85]"],
        input="\n".join(os.path.join(sources, n) for n in names), text=True, check=True)
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=60)
    args = parser.parse_args()
    binary = release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        names = photos(sources, args.count)
        src = serve_directory(sources)
        service = Service(binary, work, orgs=args.runs)
        ours, theirs = [], []
        try:
            for run in range(args.runs):
                # Each run is a fresh organization, so the result cache answers nothing.
                ours.append(service_batch(service, service.fresh_token(), src, names))
                theirs.append(vips_batch(sources, names, os.path.join(work, f"vips-{run}")))
        finally:
            service.stop()
    ours, theirs = statistics.median(ours), statistics.median(theirs)
    print(f"{args.count} x resize-image 2 MP JPEG -> 512x512 cover, one organization, defaults")
    print(f"  mediaedit {ours:.2f} s   vipsthumbnail --smartcrop centre (xargs -P 2) {theirs:.2f} s"
          f"   ratio {ours / theirs:.2f} (goal <= 1.0)")


if __name__ == "__main__":
    main()
