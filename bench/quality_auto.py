#!/usr/bin/env python3
"""`quality: auto` (render `q:auto`) against the best a fixed quality can do, on photographs.

    bench/quality_auto.py [--bin PATH] [--target 70] [--width 800] [--formats jpeg,webp,avif]

Needs python3 with the `ssimulacra2` (PyPI, BSD-3-Clause: a NumPy/SciPy implementation of
SSIMULACRA2, independent of the Rust crate the service uses) and Pillow (with AVIF)
packages: run it with a venv that has them (`pip install ssimulacra2 pillow`). Without
--bin a release binary is built first. The photographs are the real-file corpus's
(scripts/corpus.sh, MEDIAEDIT_CORPUS_DIR or target/corpus): Pillow's test photographs
and libheif's HEIC photos.

For each format, every photo is rendered by the service at `w:WIDTH,we:1`:
1. at `q:auto` (target `ts`), its bytes, and its score against the same render at
   `q:100`, measured here by the independent scorer;
2. at fixed qualities, searched here (bisection, scored the same way) for each photo's
   lowest quality that reaches the target; the highest of those is the one fixed
   quality that keeps every photo at or above the target (what a user must pick
   without `auto`), and its total bytes are the reference;
3. timed: each photo rendered once at the format's default quality and once at
   `q:auto`, at a width not rendered before (no cache), one at a time.
Prints, per format: bytes auto / bytes fixed (goal <= 0.8), the lowest independent score
of an auto output (goal >= target - 2) and the time of the auto renders over the fixed
ones (goal <= 3).
"""

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (release_binary)
import render  # noqa: E402  (cli, start_server, upload)

try:
    from ssimulacra2 import compute_ssimulacra2
except ImportError:
    sys.exit("the ssimulacra2 package is missing: pip install ssimulacra2 pillow")

PHOTOS = [
    "pillow/flower.jpg", "pillow/flower2.jpg", "pillow/exif-72dpi-int.jpg",
    "pillow/app13-multiple.jpg", "pillow/junk_jpeg_header.jpg",
    "pillow/sugarshack_bad_mpo_header.jpg", "pillow/hopper_bad_exif.jpg",
    "pillow/icc_profile_big.jpg", "pillow/xmp_test.jpg", "pillow/exif_gps_typeerror.jpg",
    "pillow/ultrahdr.jpg", "heif/heif_other/pug.heic", "heif/heif_special/xiaomi.heic",
    "heif/heif_other/nokia/bird_burst.heic", "heif/heif_other/spatial_photo.heic",
]


SKIMAGE_PHOTOS = ["astronaut.png", "camera.png", "chelsea.png", "coffee.png", "motorcycle_left.png",
                  "rocket.jpg", "hubble_deep_field.jpg", "retina.jpg", "grass.png", "gravel.png", "brick.png"]


def skimage_photos(wheel, work):
    """The photographs of scikit-image's data folder, copied out of its wheel into `work`."""
    import zipfile
    out = []
    with zipfile.ZipFile(wheel) as z:
        for name in SKIMAGE_PHOTOS:
            path = os.path.join(work, "skimage-" + name)
            with open(path, "wb") as f:
                f.write(z.read("skimage/data/" + name))
            out.append(path)
    return out


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Renders:
    """GETs render URLs of one organization's key over one connection; caches bodies."""

    def __init__(self, port, key, work):
        self.conn = http.client.HTTPConnection("127.0.0.1", port)
        self.key, self.work, self.files = key, work, {}

    def renders(self, source):
        """Whether `source` renders at all (a few corpus files are damaged on purpose)."""
        try:
            self.get("w:64", source)
            return True
        except AssertionError:
            return False

    def get(self, transform, source):
        """The path of the rendered file, and the seconds the request took."""
        name = f"{self.work}/{hashlib.sha256(f'{transform}/{source}'.encode()).hexdigest()[:16]}"
        if name in self.files:
            return name, 0.0
        sig = b64(hmac.new(self.key.encode(), f"{transform}/{source}".encode(), hashlib.sha256).digest())
        started = time.perf_counter()
        self.conn.request("GET", f"/v1/render/{sig}/{transform}/{source}")
        answer = self.conn.getresponse()
        body = answer.read()
        took = time.perf_counter() - started
        assert answer.status == 200, (transform, answer.status, body[:300])
        with open(name, "wb") as f:
            f.write(body)
        self.files[name] = len(body)
        return name, took


def score(reference, distorted):
    return compute_ssimulacra2(reference, distorted)


def lowest_passing(renders, base, source, reference, target):
    """The lowest fixed quality whose render scores `target` (bisection over 1-100)."""
    low, high = 0, 100  # low fails (or is below the scale), high passes (it is the reference)
    while high - low > 1:
        mid = (low + high) // 2
        path, _ = renders.get(f"{base},q:{mid}", source)
        if score(reference, path) >= target:
            high = mid
        else:
            low = mid
    return high


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--target", type=float, default=70.0)
    parser.add_argument("--width", type=int, default=800)
    parser.add_argument("--formats", default="jpeg,webp,avif")
    parser.add_argument("--port", type=int, default=18091)
    parser.add_argument("--skimage-wheel", help="also the colour and grey photographs of a scikit-image "
                        "wheel (PyPI; skimage/data: NASA's astronaut, rocket and Hubble field, the "
                        "cameraman, the cat, the coffee, a motorcycle, a retina, grass, gravel, brick), "
                        "read from the wheel file itself: pip download scikit-image --no-deps")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    corpus = os.environ.get("MEDIAEDIT_CORPUS_DIR", os.path.join(root, "target", "corpus"))
    photos = [os.path.join(corpus, p) for p in PHOTOS if os.path.exists(os.path.join(corpus, p))]
    if not photos:
        sys.exit(f"no photographs in {corpus}: run scripts/corpus.sh")
    binary = perf.release_binary(args.bin)
    work = tempfile.mkdtemp(prefix="quality-bench-")
    if args.skimage_wheel:
        photos += skimage_photos(args.skimage_wheel, work)
    rows = []
    try:
        data = f"{work}/data"
        token = render.cli(binary, data, "token", "create", "--org", "bench")
        key = render.cli(binary, data, "render-key", "create", "--org", "bench")
        server = render.start_server(binary, data, args.port)
        try:
            sources = [f"upload:{render.upload(args.port, token, p)}" for p in photos]
            renders = Renders(args.port, key, work)
            kept = [renders.renders(s) for s in sources]
            photos = [p for p, ok in zip(photos, kept) if ok]
            sources = [s for s, ok in zip(sources, kept) if ok]
            for fmt in args.formats.split(","):
                base = f"w:{args.width},we:1,f:{fmt}"
                auto_bytes, auto_scores, needed, timings = 0, [], [], [0.0, 0.0]
                for n, source in enumerate(sources):
                    reference, _ = renders.get(f"{base},q:100", source)
                    auto, _ = renders.get(f"{base},q:auto,ts:{args.target:g}", source)
                    auto_bytes += os.path.getsize(auto)
                    auto_scores.append(score(reference, auto))
                    needed.append(lowest_passing(renders, base, source, reference, args.target))
                    # Timed at a width rendered by nothing else: no cache.
                    timed = f"w:{args.width - 1 - n},we:1,f:{fmt}"
                    timings[0] += renders.get(timed, source)[1]
                    timings[1] += renders.get(f"{timed},q:auto,ts:{args.target:g}", source)[1]
                fixed_q = max(needed)
                fixed_bytes = sum(os.path.getsize(renders.get(f"{base},q:{fixed_q}", s)[0]) for s in sources)
                # What a perfect choice would give: each photo at its own lowest passing quality.
                oracle_bytes = sum(os.path.getsize(renders.get(f"{base},q:{q}", s)[0]) for q, s in zip(needed, sources))
                rows.append((fmt, fixed_q, needed, fixed_bytes, auto_bytes, auto_scores, timings, oracle_bytes))
        finally:
            server.terminate()
            server.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"machine: {os.cpu_count()} cores; {len(photos)} photographs rendered at w:{args.width},we:1; "
          f"target {args.target:g}; independent scorer: ssimulacra2 (PyPI)")
    print("| format | lowest fixed quality keeping all >= target | bytes at it | bytes at q:auto | auto / fixed (goal <= 0.8) "
          "| each photo at its own lowest passing quality / fixed "
          "| lowest auto score (goal >= target - 2) | mean auto score | q:auto time / default-quality time (goal <= 3) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fmt, fixed_q, needed, fixed_bytes, auto_bytes, scores, (fixed_t, auto_t), oracle_bytes in rows:
        print(f"| {fmt} | {fixed_q} (per photo {min(needed)}-{max(needed)}) | {fixed_bytes} | {auto_bytes} "
              f"| {auto_bytes / fixed_bytes:.2f} | {oracle_bytes / fixed_bytes:.2f} "
              f"| {min(scores):.1f} | {sum(scores) / len(scores):.1f} "
              f"| {auto_t / fixed_t:.2f} ({auto_t * 1000 / len(photos):.0f} ms vs {fixed_t * 1000 / len(photos):.0f} ms a render) |")
    print(json.dumps({"photos": [os.path.relpath(p, corpus) if p.startswith(corpus) else os.path.basename(p)
                                 for p in photos]}))
    for fmt, _, needed, _, _, scores, *_ in rows:
        print(json.dumps({"format": fmt, "lowest passing quality per photo": needed,
                          "auto score per photo": [round(x, 1) for x in scores]}))


if __name__ == "__main__":
    main()
