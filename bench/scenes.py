#!/usr/bin/env python3
"""`video-scenes` next to PySceneDetect's content detector, in one run.

Accuracy: lavfi clips (640x360, 25 fps, H.264) with hard cuts at known frames, a slow
pan, a fast pan, a 1 s dissolve and a 1 s fade through black (0.5 s out, 0.5 s in). Each side's cuts are
counted true when within 2 frames of a known cut (each known cut counted once) and
false otherwise. PySceneDetect runs `detect(path, ContentDetector())` on its defaults
(threshold 27, 15-frame shortest scene); ours runs on its defaults (threshold 27,
minSceneSeconds 1).

Speed: `video-scenes` on a 1080p 60 s clip of six shots, a keyframe every 2 s (POST
to done: fetch, probe, analysis, six posters), next to `ffmpeg -i clip -f null -` (one plain decode to nowhere), medians of
--runs. Goal: ratio <= 1.2. The clip is encoded by x264 at --preset (ultrafast by
default: no CABAC, no deblocking, the cheapest stream to decode, so the decode the
ratio divides by is as small as it gets; `veryfast` is closer to what phones write).

    bench/scenes.py [--bin PATH] [--runs N] [--preset ultrafast]

Needs ffmpeg and PySceneDetect with OpenCV in the Python that runs it
(`python3 -m venv v && v/bin/pip install scenedetect opencv-python-headless`, then
`v/bin/python bench/scenes.py`). Without --bin a release binary is built first.
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
from perf import Service, ffmpeg, release_binary, serve_directory  # noqa: E402

RATE = 25
SIZE = "640x360"


def shot(source, seconds):
    """`seconds` of a lavfi source (trimmed: not every source has a duration)."""
    joint = ":" if "=" in source else "="
    return f"{source}{joint}s={SIZE}:r={RATE},trim=duration={seconds}"


# name -> (lavfi shots, how they join, known cut frames)
CLIPS = {
    "hard-cuts": (
        # 1.5 s is 38 frames (those before 1.5 s).
        [shot("testsrc2", 2), shot("smptebars", 1.5), shot("mandelbrot", 2), shot("rgbtestsrc", 1.5),
         shot("testsrc", 2), shot("testsrc2", 2) + ",hue=h=120", shot("color=c=0x2040c0", 1.5),
         shot("smptehdbars", 2)],
        None,
        [50, 88, 138, 176, 226, 276, 314],
    ),
    "pan-dissolve-fadeblack": (
        # 4 s slow pan (2 px a frame) dissolving over its last second into testsrc2
        # (4 s), which fades out over 0.5 s, the bars fading in over 0.5 s (3 s);
        # then a hard cut to testsrc.
        [f"smptehdbars=s=1920x360:r={RATE},trim=duration=4,crop=640:360:'t*50':0",
         shot("testsrc2", 4) + ",fade=t=out:st=3.5:d=0.5", shot("smptebars", 3) + ",fade=t=in:d=0.5",
         shot("testsrc", 2)],
        "[s0][s1]xfade=transition=fade:duration=1:offset=3[a];[a][s2][s3]concat=n=3",
        [250],
    ),
    "fast-pan": (
        # 16 px a frame over a detailed picture, then a hard cut.
        [f"mandelbrot=s=2560x360:r={RATE},trim=duration=5,crop=640:360:'t*400':0", shot("testsrc", 2)],
        None,
        [125],
    ),
}


def make_clip(directory, name, shots, joined):
    inputs = [f"{s},format=yuv420p,settb=AVTB[s{i}]" for i, s in enumerate(shots)]
    if joined is None:
        joined = "".join(f"[s{i}]" for i in range(len(shots))) + f"concat=n={len(shots)}"
    path = os.path.join(directory, f"{name}.mp4")
    ffmpeg("-f", "lavfi", "-i", ";".join(inputs) + ";" + joined, "-c:v", "libx264", "-preset", "veryfast",
           "-pix_fmt", "yuv420p", path)
    return path


def score(found, known):
    """(true cuts, false cuts) of `found` frames against `known` ones, within 2 frames."""
    left = list(known)
    true = false = 0
    for frame in found:
        match = next((k for k in left if abs(k - frame) <= 2), None)
        if match is None:
            false += 1
        else:
            left.remove(match)
            true += 1
    return true, false


def ours(service, token, src):
    """Cut frames `video-scenes` finds (the chapters' starts after the first)."""
    _, doc = service.edit(token, {"assets": [{"type": "video", "src": src}], "commands": ["video-scenes"]})
    vtt = urllib.request.urlopen(doc["attributes"]["downloadUrls"][-1]).read().decode()
    starts = []
    for line in vtt.splitlines():
        if " --> " in line:
            h, m, s = line.split(" --> ")[0].split(":")
            starts.append(round((int(h) * 3600 + int(m) * 60 + float(s)) * RATE))
    return starts[1:]


def theirs(path):
    from scenedetect import ContentDetector, detect
    frame = lambda t: t.frame_num if hasattr(t, "frame_num") else t.get_frames()
    return [frame(start) for start, _ in detect(path, ContentDetector())[1:]]


def decode_seconds(path):
    start = time.monotonic()
    subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"], check=True)
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--preset", default="ultrafast", help="x264's preset for the 1080p clip")
    args = parser.parse_args()
    binary = release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        clips = os.path.join(work, "clips")
        os.makedirs(clips)
        paths = {name: make_clip(clips, name, shots, joined) for name, (shots, joined, _) in CLIPS.items()}
        # 1080p, 60 s: six 10 s shots, a keyframe every 2 s (as phones and streaming
        # encoders write them; each poster seeks to one).
        long_shots = [f"{s}=s=1920x1080:r=30:d=10" for s in
                      ("testsrc2", "smptehdbars", "smptebars", "testsrc", "rgbtestsrc", "testsrc2")]
        long_shots[-1] += ",hue=h=120"
        ffmpeg("-f", "lavfi", "-i", ";".join(f"{s},format=yuv420p,settb=AVTB[s{i}]" for i, s in enumerate(long_shots))
               + ";" + "".join(f"[s{i}]" for i in range(6)) + "concat=n=6",
               "-c:v", "libx264", "-preset", args.preset, "-g", "60", "-pix_fmt", "yuv420p",
               os.path.join(clips, "long.mp4"))
        src = serve_directory(clips)
        service = Service(binary, work, orgs=len(CLIPS) + args.runs)
        try:
            print(f"{'clip':<24} {'known':>5}   {'mediaedit true/false':>20}   {'PySceneDetect true/false':>24}")
            for name, (_, _, known) in CLIPS.items():
                a = score(ours(service, service.fresh_token(), f"{src}/{name}.mp4"), known)
                b = score(theirs(paths[name]), known)
                print(f"{name:<24} {len(known):>5}   {a[0]:>15}/{a[1]:<4}   {b[0]:>19}/{b[1]:<4}")
            long_path = os.path.join(clips, "long.mp4")
            mine, plain = [], []
            for _ in range(args.runs):
                plain.append(decode_seconds(long_path))
                token = service.fresh_token()
                body = {"assets": [{"type": "video", "src": f"{src}/long.mp4"}], "commands": ["video-scenes"]}
                seconds, doc = service.edit(token, body)
                mine.append(seconds)
            scenes = len(doc["attributes"]["downloadUrls"]) - 1
        finally:
            service.stop()
    mine, plain = statistics.median(mine), statistics.median(plain)
    print(f"1080p 60 s H.264 {args.preset} ({scenes} scenes): video-scenes {mine:.2f} s   ffmpeg -f null {plain:.2f} s"
          f"   ratio {mine / plain:.2f} (goal <= 1.2)")


if __name__ == "__main__":
    main()
