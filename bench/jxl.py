#!/usr/bin/env python3
"""JPEG XL through the service next to libjxl's own tools, on the same 12 MP photo.

    bench/jxl.py [--bin PATH] [--runs N] [--photo PATH] [--ssimulacra2-python PATH]

Needs python3, ffmpeg, cjxl and djxl (Debian libjxl-tools) and, for the bytes row, a
Python with the `ssimulacra2` package (`pip install ssimulacra2`; --ssimulacra2-python
names its interpreter). Without --bin a release binary is built first. The photo is
--photo scaled to 4000x3000, or without one a synthetic photo (ffmpeg's testsrc2 with
grain, as bench/perf.py makes them).

1. Decode: `resize-image {width: 256, format: png}` of the photo as a JPEG XL (cjxl's
   defaults: -d 1 -e 7), against `djxl photo.jxl out.ppm` (the whole picture decoded
   and written). Ours is the whole edit: fetch, probe, decode, resize, encode, store.
2. Encode: `resize-image {scale: 1, format: jxl}` of the photo as a PNG, against
   `cjxl photo.png out.jxl -e 7 -d 1` (both read the PNG first).
3. Bytes at equal SSIMULACRA2: the photo scaled to 1600x1200, written by the service
   as WebP and as JPEG XL at several qualities; each output's SSIMULACRA2 against the
   source, and the bytes each format needs for scores 70 and 80 (interpolated).
Medians of N runs (default 3), each edit by an organization of its own (never answered
from the result cache); each row prints ours, theirs and the ratio.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, release_binary, serve_directory  # noqa: E402

WEBP_QUALITIES = [50, 65, 75, 85, 92, 97]
JXL_QUALITIES = [40, 55, 70, 80, 90]


def run(*command):
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def timed(command):
    started = time.perf_counter()
    run(*command)
    return time.perf_counter() - started


def score(python, source, distorted):
    """SSIMULACRA2 of `distorted` (a PNG) against `source`."""
    code = ("import sys; from ssimulacra2 import compute_ssimulacra2 as s; "
            "print(s(sys.argv[1], sys.argv[2]))")
    out = subprocess.run([python, "-c", code, source, distorted], check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def bytes_at(points, target):
    """Bytes interpolated at `target` score from (score, bytes) points."""
    points = sorted(points)
    for (s0, b0), (s1, b1) in zip(points, points[1:]):
        if s0 <= target <= s1:
            return b0 + (b1 - b0) * (target - s0) / (s1 - s0) if s1 > s0 else b0
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--photo")
    parser.add_argument("--ssimulacra2-python", default=sys.executable)
    args = parser.parse_args()
    binary = release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        src = os.path.join(work, "sources")
        os.makedirs(src)
        photo = os.path.join(src, "photo.png")
        if args.photo:
            run("ffmpeg", "-y", "-i", args.photo, "-vf", "scale=4000:3000", photo)
        else:
            run("ffmpeg", "-y", "-f", "lavfi", "-i", "testsrc2=size=4000x3000:rate=1",
                "-vf", "noise=alls=12:allf=u", "-frames:v", "1", photo)
        run("cjxl", photo, os.path.join(src, "photo.jxl"))
        small = os.path.join(src, "small.png")
        run("ffmpeg", "-y", "-i", photo, "-vf", "scale=1600:1200:flags=lanczos", small)
        base = serve_directory(src)
        orgs = 2 * (args.runs + 1) + len(WEBP_QUALITIES) + len(JXL_QUALITIES)
        service = Service(binary, work, orgs=orgs)

        def ours(file, options):
            body = {"assets": [{"type": "image", "src": f"{base}/{file}"}],
                    "commands": ["resize-image"], "options": options}
            return service.edit(service.fresh_token(), body)

        try:
            rows = [
                ("decode 12 MP JPEG XL (to a 256 px PNG)", "photo.jxl", {"width": 256, "format": "png"},
                 ["djxl", os.path.join(src, "photo.jxl"), os.path.join(work, "d.ppm")]),
                ("encode 12 MP PNG as JPEG XL (effort 7, distance 1)", "photo.png", {"scale": 1, "format": "jxl"},
                 ["cjxl", photo, os.path.join(work, "e.jxl"), "-e", "7", "-d", "1"]),
            ]
            for name, file, options, reference in rows:
                ours(file, options)  # warm-up
                mine = statistics.median(ours(file, options)[0] for _ in range(args.runs))
                theirs = statistics.median(timed(reference) for _ in range(args.runs))
                print(f"{name}: ours {mine:.2f} s, {reference[0]} {theirs:.2f} s, ratio {mine / theirs:.2f}; "
                      f"server peak RSS so far {service.peak_rss_mib():.0f} MiB")
            points = {"webp": [], "jxl": []}
            for fmt, qualities in (("webp", WEBP_QUALITIES), ("jxl", JXL_QUALITIES)):
                for q in qualities:
                    _, doc = ours("small.png", {"scale": 1, "format": fmt, "quality": q})
                    out = os.path.join(work, f"q{q}.{fmt}")
                    urllib.request.urlretrieve(doc["attributes"]["downloadUrls"][0], out)
                    png = out + ".png"
                    if fmt == "jxl":
                        run("djxl", out, png)
                    else:
                        run("ffmpeg", "-y", "-i", out, png)
                    s = score(args.ssimulacra2_python, small, png)
                    points[fmt].append((s, os.path.getsize(out)))
                    print(f"  {fmt} quality {q}: {os.path.getsize(out)} bytes, SSIMULACRA2 {s:.1f}")
            for target in (70, 80):
                webp, jxl = bytes_at(points["webp"], target), bytes_at(points["jxl"], target)
                print(f"bytes at SSIMULACRA2 {target} (1600x1200): WebP {webp:.0f}, JPEG XL {jxl:.0f}, "
                      f"ratio {jxl / webp:.2f}")
        finally:
            service.stop()


if __name__ == "__main__":
    main()
