#!/usr/bin/env python3
"""Warm processes and in-process header readers, each alone and together.

    bench/startup.py [--bin PATH] [--runs N]

Needs python3 and ffmpeg; without --bin a release binary is built first.

Both were built to skip the ~50 ms an ffmpeg or ffprobe process takes to start: warm
processes (`--warm-processes`, default 2) keep ffmpeg and ffprobe started and waiting;
the header readers (`--header-readers`, default true) read an MP4/MOV or Matroska
file's size, duration and frame count in this process instead of asking ffprobe. This
runs the rows either can touch (short video edits, where a process start is a visible
share) on four servers, one per variant, alternating run by run, and prints the
median of each and its ratio to the defaults (both on).
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, ffmpeg, make_fixtures, release_binary, serve_directory  # noqa: E402

VARIANTS = [
    ("both (defaults)", []),
    ("warm processes only", ["--header-readers", "false"]),
    ("header readers only", ["--warm-processes", "0"]),
    ("neither", ["--warm-processes", "0", "--header-readers", "false"]),
]


def short_clips(work):
    """A 2 s 480p MP4 with sound and the same as WebM: the edits a process start weighs on most."""
    mp4 = f"{work}/short480.mp4"
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=854x480:rate=25:duration=2", "-f", "lavfi",
           "-i", "sine=frequency=440:duration=2", "-c:v", "libx264", "-preset", "veryfast", "-crf", "23",
           "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", mp4)
    webm = f"{work}/short480.webm"
    ffmpeg("-i", mp4, "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "0",
           "-crf", "35", "-c:a", "libopus", webm)
    return {"short480.mp4": mp4, "short480.webm": webm}


def cases(src):
    video = lambda name: {"type": "video", "src": f"{src}/{name}"}
    image = lambda name: {"type": "image", "src": f"{src}/{name}"}
    body = lambda asset, commands, options=None: {"assets": [asset], "commands": commands,
                                                  **({"options": options} if options else {})}
    return [
        ("modify-video-speed x2, 480p 2 s MP4", body(video("short480.mp4"), ["modify-video-speed"], {"speed": 2})),
        ("modify-video-speed x2, 480p 2 s WebM", body(video("short480.webm"), ["modify-video-speed"], {"speed": 2})),
        ("video-to-gif 480p 2 s", body(video("short480.mp4"), ["video-to-gif"])),
        ("trim-video 0.5-1.5 s of 480p 2 s", body(video("short480.mp4"), ["trim-video"], {"start": 0.5, "end": 1.5})),
        ("modify-video-speed x2, 1080p 10 s", body(video("clip1080.mp4"), ["modify-video-speed"], {"speed": 2})),
        ("extract-frames 720p 5 s (125 frames)", body(video("clip720.mp4"), ["extract-frames"])),
        ("extract-frames + resize-image x0.25, 720p 5 s",
         body(video("clip720.mp4"), ["extract-frames", "resize-image"], {"scale": 0.25})),
        ("gif-to-video 3 s GIF", body(image("clip.gif"), ["gif-to-video"])),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    binary = release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        make_fixtures(sources)
        short_clips(sources)
        src = serve_directory(sources)
        chosen = [c for c in cases(src) if args.only in c[0]]
        services = [Service(binary, os.path.join(work, f"v{i}"), orgs=len(chosen) * args.runs + 1, extra=extra)
                    for i, (_, extra) in enumerate(VARIANTS)]
        try:
            header = f"{'case':46}" + "".join(f"{name:>22}" for name, _ in VARIANTS)
            print(header)
            for name, body in chosen:
                times = [[] for _ in VARIANTS]
                for _ in range(args.runs):
                    for i, service in enumerate(services):
                        times[i].append(service.edit(service.fresh_token(), body)[0])
                medians = [statistics.median(t) for t in times]
                cells = "".join(f"{m * 1000:9.0f} ms ({m / medians[0]:4.2f}x)" for m in medians)
                print(f"{name:46}{cells}", flush=True)
        finally:
            for service in services:
                service.stop()


if __name__ == "__main__":
    main()
