#!/usr/bin/env python3
"""The inputs and outputs of docs/API.md through the whole service, next to the
reference tools doing the same job, alternated in one run.

    bench/formats.py [--bin PATH] [--runs N] [--markdown]

- AVIF out: `resize-image` `format: "avif"` of a 3 MP PNG against `avifenc` (libavif,
  the same libaom) at the settings the service uses (speed 7, 4:2:0, quantizer 25, as
  many threads as cores): time, bytes, and SSIM against the source (both outputs read
  back with `heif-convert`, SSIM by ffmpeg's `ssim` filter).
- HEIC, AVIF and TIFF in: `resize-image` x0.5 to JPEG of a 12 MP source against
  `vips resize` (libvips-tools) where installed, else `heif-convert`/`tiffcp` timing is
  not comparable and the row shows our time only.

Needs python3, ffmpeg, heif-enc/heif-convert (libheif-examples), avifenc (libavif-bin);
vips (libvips-tools) for the decode rows' ratios. Without --bin a release binary is
built first.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (the Service, the fixture server and the timing helpers)

THREADS = str(os.cpu_count() or 1)


def run(*command, **kwargs):
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)


def make_sources(work):
    """A 12 MP photo-like JPEG, a 3 MP one, and the 12 MP one as HEIC, AVIF and TIFF."""
    def photo(name, size):
        perf.ffmpeg("-f", "lavfi", "-i", f"testsrc2=size={size}:rate=1", "-vf", "noise=alls=12:allf=u",
                    "-frames:v", "1", "-q:v", "3", f"{work}/{name}")
    photo("photo12.jpg", "4000x3000")
    photo("photo3.jpg", "2000x1500")
    perf.ffmpeg("-i", f"{work}/photo3.jpg", f"{work}/photo3.png")
    perf.ffmpeg("-i", f"{work}/photo12.jpg", f"{work}/photo12.png")
    run("heif-enc", "-q", "80", "-o", f"{work}/photo12.heic", f"{work}/photo12.png")
    run("heif-enc", "-A", "-q", "80", "-o", f"{work}/photo12.avif", f"{work}/photo12.png")
    perf.ffmpeg("-i", f"{work}/photo12.png", "-compression_algo", "lzw", f"{work}/photo12.tif")


def ssim(reference, picture_avif, scratch):
    """SSIM (all planes) of an AVIF against a reference picture, through a PNG."""
    png = os.path.join(scratch, "back.png")
    run("heif-convert", picture_avif, png)
    out = subprocess.run(["ffmpeg", "-nostdin", "-i", png, "-i", reference, "-lavfi", "ssim", "-f", "null", "-"],
                         capture_output=True, text=True, check=True).stderr
    return float(re.search(r"All:([0-9.]+)", out).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    binary = perf.release_binary(args.bin)

    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        make_sources(sources)
        src = perf.serve_directory(sources)
        hand = os.path.join(work, "hand")
        scratch = os.path.join(work, "scratch")
        os.makedirs(scratch)
        service = perf.Service(binary, work, orgs=8 * args.runs + 4)
        image = lambda name: {"type": "image", "src": f"{src}/{name}"}
        try:
            # AVIF out, with bytes and SSIM.
            # From a PNG, so both start from the same pixels (no JPEG decoder in between).
            body = {"assets": [image("photo3.png")], "commands": ["resize-image"], "options": {"format": "avif"}}
            avifenc = ["avifenc", "--speed", "7", "--jobs", THREADS, "-y", "420", "--min", "25", "--max", "25",
                       f"{sources}/photo3.png", f"{hand}/out.avif"]
            ours, theirs, doc = [], [], None
            for _ in range(args.runs):
                seconds, doc = service.edit(service.fresh_token(), body)
                ours.append(seconds)
                theirs.append(perf.timed(avifenc, hand))
            ours_file = os.path.join(scratch, "ours.avif")
            urllib.request.urlretrieve(doc["attributes"]["downloadUrls"][0], ours_file)
            reference_png = f"{sources}/photo3.png"
            sizes = (os.path.getsize(ours_file), os.path.getsize(f"{hand}/out.avif"))
            quality = (ssim(reference_png, ours_file, scratch), ssim(reference_png, f"{hand}/out.avif", scratch))
            perf.print_row(("resize-image 3 MP PNG -> AVIF vs avifenc", perf.median(ours), perf.median(theirs), 1.0),
                           args.markdown, header=True)
            print(f"  bytes: ours {sizes[0]:,} / avifenc {sizes[1]:,} = {sizes[0] / sizes[1]:.3f} (goal within 5 %);"
                  f" SSIM ours {quality[0]:.4f}, avifenc {quality[1]:.4f}")

            # HEIC, AVIF and TIFF in.
            have_vips = shutil.which("vips") is not None
            for name in ("photo12.heic", "photo12.avif", "photo12.tif"):
                body = {"assets": [image(name)], "commands": ["resize-image"], "options": {"scale": 0.5, "format": "jpeg"}}
                reference = ["vips", "resize", f"{sources}/{name}", f"{hand}/out.jpg[Q=85]", "0.5"] if have_vips else None
                ours, theirs = [], []
                for _ in range(args.runs):
                    ours.append(service.edit(service.fresh_token(), body)[0])
                    if reference:
                        theirs.append(perf.timed(reference, hand))
                perf.print_row((f"resize-image 12 MP {name.split('.')[1].upper()} x0.5 -> JPEG vs vips",
                                perf.median(ours), perf.median(theirs), 1.0), args.markdown, header=False)
        finally:
            service.stop()


if __name__ == "__main__":
    main()
