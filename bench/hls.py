#!/usr/bin/env python3
"""`video-to-hls` of a 1080p 10 s clip (the 4-rung ladder: 1080p, 720p, 480p, 360p)
through the whole service, next to one ffmpeg command by hand making the same
renditions from one decode with a `split` filter, alternated in one run.

    bench/hls.py [--bin PATH] [--runs N] [--markdown]

The service run is POST to `done` (fetch from a loopback HTTP server, probe, encode,
measure the segments' rates, store every playlist and segment), followed by long
poll, as in bench/perf.py; the reference is the same ffmpeg recipe (x264 veryfast CRF
23 capped per rung, AAC 128k, 6 s fMP4 segments) run on the same file, process start
included. Prints the medians and their ratio (goal <= 1.1). Needs python3 and
ffmpeg; without --bin a release binary is built first.
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (the Service, the fixture server and the timing helpers)

# (width, height, cap kbit/s): the service's ladder for a 1920x1080 source.
RUNGS = [(1920, 1080, 5000), (1280, 720, 2800), (854, 480, 1400), (640, 360, 800)]


def by_hand(clip, out):
    """The same renditions as one ffmpeg command: one decode, `split` into four."""
    n = len(RUNGS)
    graph = f"[0:v:0]format=yuv420p,split={n}" + "".join(f"[s{i}]" for i in range(n))
    for i, (w, h, _) in enumerate(RUNGS):
        graph += f";[s{i}]scale={w}:{h}:flags=bicubic,setsar=1[v{i}]"
    command = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", clip, "-filter_complex", graph]
    for i in range(n):
        command += ["-map", f"[v{i}]"]
    for _ in range(n):
        command += ["-map", "0:a:0"]
    command += ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p"]
    for i, (_, _, rate) in enumerate(RUNGS):
        command += [f"-maxrate:v:{i}", f"{rate}k", f"-bufsize:v:{i}", f"{2 * rate}k"]
    command += ["-force_key_frames", "expr:gte(t,n_forced*2)", "-c:a", "aac", "-b:a", "128k", "-ac", "2",
                "-f", "hls", "-hls_time", "6", "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4",
                "-hls_flags", "independent_segments", "-hls_fmp4_init_filename", "init.mp4",
                "-hls_segment_filename", f"{out}/v%v/seg%d.mp4", "-master_pl_name", "master.m3u8",
                "-var_stream_map", " ".join(f"v:{i},a:{i}" for i in range(n)), f"{out}/v%v/index.m3u8"]
    return command


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
        clip = os.path.join(sources, "clip1080.mp4")
        perf.ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25:duration=10", "-f", "lavfi",
                    "-i", "sine=frequency=440:duration=10", "-c:v", "libx264", "-preset", "veryfast",
                    "-crf", "20", "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", clip)
        src = perf.serve_directory(sources)
        hand = os.path.join(work, "hand")
        reference = by_hand(clip, hand)
        service = perf.Service(binary, work, orgs=args.runs + 2)
        ours, theirs = [], []
        try:
            body = {"assets": [{"type": "video", "src": f"{src}/clip1080.mp4"}], "commands": ["video-to-hls"]}
            for _ in range(args.runs):
                seconds, doc = service.edit(service.fresh_token(), body)
                ours.append(seconds)
                # ffmpeg writes into the rungs' folders but makes none itself.
                subprocess.run(["rm", "-rf", hand], check=True)
                for i in range(len(RUNGS)):
                    os.makedirs(os.path.join(hand, f"v{i}"))
                start = perf.time.monotonic()
                subprocess.run(reference, check=True, stdout=subprocess.DEVNULL)
                theirs.append(perf.time.monotonic() - start)
            output = doc["attributes"]["outputs"][0]
            assert (output["width"], output["height"]) == (1920, 1080), output
        finally:
            service.stop()
        perf.print_row(("video-to-hls 1080p 10 s, 4 rungs", perf.median(ours), perf.median(theirs), 1.1),
                       args.markdown, header=True)


if __name__ == "__main__":
    main()
