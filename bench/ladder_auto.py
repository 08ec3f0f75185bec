#!/usr/bin/env python3
"""`video-to-hls` with `ladder: auto` against the fixed ladder, through the whole service,
side by side in one run, on a static slide-like video and a high-motion one: seconds
from POST to done, bytes per rung (every segment and init section of the rendition),
and SSIM per rung against the source scaled to the rung's size (ffmpeg's ssim filter,
all planes). Goals (issue 43): the static video <= 0.6x the fixed ladder's bytes at
per-rung SSIM within 0.005 of the fixed ladder's or better; the high-motion video
per-rung SSIM >= the fixed ladder's - 0.005; encoding <= 1.5x the fixed ladder's time.

    bench/ladder_auto.py [--bin PATH] [--seconds N] [--size WxH]

The clips are made here with ffmpeg's lavfi sources: slides (a still test card with
fine grain that changes every 5 s, as a deck's pages do) and motion (testsrc2 under
temporal noise). Without --bin a release binary is built first.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (the Service, the fixture server and the timing helpers)


def make_clips(directory, seconds, size):
    pages = max(1, seconds // 5)
    slides = os.path.join(directory, "slides.mp4")
    # One still page per 5 s: a test card with static grain, its hue turned per page.
    chain = (f"smptehdbars=s={size}:r=25,noise=alls=12:allf=0,"
             f"hue=h='360*floor(t/5)/{pages}',format=yuv420p")
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", chain,
                    "-f", "lavfi", "-i", "sine=f=440", "-t", str(seconds), "-c:v", "libx264", "-crf", "12",
                    "-preset", "veryfast", "-c:a", "aac", slides], check=True)
    motion = os.path.join(directory, "motion.mp4")
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                    f"testsrc2=s={size}:r=25,noise=alls=20:allf=t+u,format=yuv420p",
                    "-f", "lavfi", "-i", "sine=f=440", "-t", str(seconds), "-c:v", "libx264", "-crf", "12",
                    "-preset", "veryfast", "-c:a", "aac", motion], check=True)
    return {"slides": slides, "motion": motion}


def fetch_ladder(master_url, work):
    """Each variant's (resolution, bytes, joined local file) from the master URL."""
    master = urllib.request.urlopen(master_url).read().decode()
    lines = master.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not line.startswith("#EXT-X-STREAM-INF:"):
            continue
        resolution = re.search(r"RESOLUTION=(\d+x\d+)", line).group(1)
        playlist_url = lines[i + 1].strip()
        playlist = urllib.request.urlopen(playlist_url).read().decode()
        parts = [re.search(r'URI="([^"]+)"', playlist).group(1)]
        parts += [p for p in playlist.splitlines() if p and not p.startswith("#")]
        joined = os.path.join(work, f"v{len(out)}-{os.getpid()}.mp4")
        size = 0
        with open(joined, "wb") as f:
            for part in parts:
                data = urllib.request.urlopen(part).read()
                size += len(data)
                f.write(data)
        out.append((resolution, size, joined))
    return out


def ssim(output, source, resolution):
    w, h = resolution.split("x")
    out = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", output, "-i", source,
                          "-lavfi", f"[1:v]scale={w}:{h}:flags=bicubic[r];[0:v][r]ssim", "-f", "null", "-"],
                         capture_output=True, text=True)
    return float(out.stderr.rsplit("All:", 1)[1].split()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--seconds", type=int, default=40)
    parser.add_argument("--size", default="1280x720")
    args = parser.parse_args()
    binary = perf.release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        clips = make_clips(sources, args.seconds, args.size)
        src = perf.serve_directory(sources)
        service = perf.Service(binary, os.path.join(work, "svc"), orgs=1, extra=["--result-cache", "false"])
        rows = []
        try:
            for name, path in clips.items():
                for ladder in ("fixed", "auto"):
                    body = {"assets": [{"type": "video", "src": f"{src}/{os.path.basename(path)}"}],
                            "commands": ["video-to-hls"], "options": {"ladder": ladder}}
                    seconds, doc = service.edit(service.tokens[0], body)
                    variants = fetch_ladder(doc["attributes"]["downloadUrls"][0], work)
                    rungs = [(res, size, ssim(joined, path, res)) for res, size, joined in variants]
                    rows.append((name, ladder, seconds, rungs))
        finally:
            service.stop()
    print(f"machine: {os.cpu_count()} cores; clips {args.size}, {args.seconds} s")
    print("| clip | ladder | seconds | total bytes | rungs (resolution: bytes, SSIM) |\n|---|---|---|---|---|")
    for name, ladder, seconds, rungs in rows:
        listed = "; ".join(f"{r}: {b}, {s:.4f}" for r, b, s in rungs)
        print(f"| {name} | {ladder} | {seconds:.1f} | {sum(b for _, b, _ in rungs)} | {listed} |")
    for name in ("slides", "motion"):
        fixed = next(r for r in rows if r[0] == name and r[1] == "fixed")
        auto = next(r for r in rows if r[0] == name and r[1] == "auto")
        fixed_ssim = {res: s for res, _, s in fixed[3]}
        worst = min((s - fixed_ssim[res] for res, _, s in auto[3] if res in fixed_ssim), default=0.0)
        print(f"{name}: auto/fixed bytes {sum(b for _, b, _ in auto[3]) / sum(b for _, b, _ in fixed[3]):.2f}, "
              f"time {auto[2] / fixed[2]:.2f}x (goal <= 1.5), worst per-rung SSIM change {worst:+.4f} "
              f"(goal >= -0.005), rungs {len(auto[3])} of {len(fixed[3])}")


if __name__ == "__main__":
    main()
