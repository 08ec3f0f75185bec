#!/usr/bin/env python3
"""`video-to-webm` with `codec: av1` (SVT-AV1) against its VP9 default, through the
whole service, alternated in one run: seconds from POST to done (median), bytes, and
SSIM against the source (ffmpeg's ssim filter, all planes). Goals (issue 43): AV1
within 3x VP9 realtime's time, at most 0.8x its bytes at equal or better SSIM.

    bench/av1_webm.py [--bin PATH] [--runs N] [clip]

The clip defaults to the corpus's Big Buck Bunny scaled to 1280x720, 10 s
(scripts/corpus.sh first). Without --bin a release binary is built first.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (the Service, the fixture server and the timing helpers)



def ssim(output, source):
    out = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", output, "-i", source,
                          "-lavfi", "[0:v][1:v]ssim", "-f", "null", "-"], capture_output=True, text=True)
    return float(out.stderr.rsplit("All:", 1)[1].split()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("clip", nargs="?")
    args = parser.parse_args()
    binary = perf.release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        clip = os.path.join(sources, "clip.mp4")
        perf.bunny_clip(clip, args.clip)
        src = perf.serve_directory(sources)
        service = perf.Service(binary, os.path.join(work, "svc"), orgs=1, extra=["--result-cache", "false"])
        rows = {}
        try:
            for run in range(args.runs):
                for codec in ("vp9", "av1"):
                    body = {"assets": [{"type": "video", "src": f"{src}/clip.mp4"}], "commands": ["video-to-webm"],
                            "options": {"codec": codec}}
                    seconds, doc = service.edit(service.tokens[0], body)
                    row = rows.setdefault(codec, {"seconds": []})
                    row["seconds"].append(seconds)
                    if run == 0:
                        out = os.path.join(work, f"{codec}.webm")
                        urllib.request.urlretrieve(doc["attributes"]["downloadUrls"][0], out)
                        row["bytes"] = os.path.getsize(out)
                        row["ssim"] = ssim(out, clip)
        finally:
            service.stop()
        print("| codec | seconds (median) | bytes | SSIM |\n|---|---|---|---|")
        for codec, row in rows.items():
            print(f"| {codec} | {perf.median(row['seconds']):.2f} | {row['bytes']} | {row['ssim']:.4f} |")
        vp9, av1 = rows["vp9"], rows["av1"]
        time_ratio = perf.median(av1["seconds"]) / perf.median(vp9["seconds"])
        print(f"\nAV1/VP9: time {time_ratio:.2f}x (goal <= 3), bytes {av1['bytes'] / vp9['bytes']:.2f}x "
              f"(goal <= 0.8), SSIM {av1['ssim'] - vp9['ssim']:+.4f} (goal >= 0)")


if __name__ == "__main__":
    main()
