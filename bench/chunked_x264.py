#!/usr/bin/env python3
"""x264 re-encodes in chunks (`modify-video-speed`, `watermark`), side by side with one process.

    bench/chunked_x264.py [--bin PATH] [--runs N] [--size WxH] [--seconds S] [--quality]

Needs python3 and ffmpeg; without --bin a release binary is built first. The source is
a clip with two hard scene cuts (test pattern, fractal zoom, noisy bars) of WxH
(default 1920x1080) and S seconds (default 10) at 25 fps with a tone, its video in
MPEG-4 Part 2 so that `modify-video-speed` must re-encode it (an H.264 4:2:0 MP4 is
copied).

1. Speed: `modify-video-speed` x1.5 and `watermark` (a 400x200 picture, 20 % of the
   width, southeast) through the service on its defaults, and with
   `--x264-cores-per-chunk 1` (a chunk a core: split on two cores), each against the
   same recipe run by hand in one ffmpeg process, alternating, medians of N (default 3).
   On two cores the defaults encode in one process (goal <= 1.1x: nothing lost).
2. With --quality: both edits through a service that splits (`--min-chunk-work 1`,
   `--x264-cores-per-chunk 1`) and one that never does (`--min-chunk-work 0`): frames,
   SSIM to the source (retimed for the speed change) and size. Goals: same frames,
   SSIM within 0.003, size within 5 %.

Run it only on an otherwise idle machine for timings; `--size 320x240 --seconds 2`
checks the script itself in seconds.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, ffmpeg, ratio_row, release_binary, serve_directory, timed  # noqa: E402

SQUARE = "scale='if(gte(sar,1),round(iw*sar),iw)':'if(gte(sar,1),ih,round(ih/sar))',setsar=1"
EVEN = "scale='max(2,trunc(iw/2)*2)':'max(2,trunc(ih/2)*2)'"
X264 = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"]


def source(work, size, seconds):
    """The clip with scene cuts: a third each of test pattern, fractal zoom, noisy bars."""
    third = seconds / 3
    path = f"{work}/cuts.mp4"
    ffmpeg("-filter_complex",
           f"testsrc2=s={size}:r=25:d={third}[a];"
           f"mandelbrot=s={size}:r=25,trim=duration={third},setpts=PTS-STARTPTS[b];"
           f"smptebars=s={size}:r=25:d={seconds - 2 * third},noise=alls=20:allf=t[c];"
           "[a][b][c]concat=n=3,format=yuv420p[v]",
           "-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}",
           "-map", "[v]", "-map", "0:a", "-c:v", "mpeg4", "-q:v", "2", "-c:a", "aac", "-shortest", path)
    ffmpeg("-f", "lavfi", "-i", "color=c=0xff3030@0.8:s=400x200,format=rgba", "-frames:v", "1",
           f"{work}/logo.png")
    return path


def by_hand(command, src, logo, width):
    """The service's recipe of `command`, in one ffmpeg process."""
    head = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", src]
    if command == "modify-video-speed":
        return [*head, "-map", "0:v:0", "-map", "0:a:0", "-vf",
                f"{SQUARE},setpts=PTS/1.5,fps=75/2,{EVEN},setsar=1,format=yuv420p", "-fps_mode", "vfr", *X264,
                "-af", "atempo=1.5", "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", "-f", "mp4", "out"]
    overlay = round(width * 0.2)
    graph = (f"[0:v:0]{SQUARE},{EVEN},format=yuv420p[base];[1:v]scale={overlay}:-1,format=rgba,"
             "scale=out_color_matrix=bt601:out_range=tv,format=yuva420p[top];"
             "[base][top]overlay=x='16+floor((W-w-32))':y='16+floor((H-h-32))':format=yuv420:"
             "eof_action=repeat,setsar=1,format=yuv420p[v]")
    return [*head, "-i", logo, "-filter_complex", graph, "-map", "[v]", "-map", "0:a:0", "-fps_mode",
            "passthrough", *X264, "-colorspace", "smpte170m", "-color_range", "tv", "-c:a", "copy",
            "-movflags", "+faststart", "-f", "mp4", "out"]


def bodies(src):
    clip = {"type": "video", "src": f"{src}/cuts.mp4"}
    return {
        "modify-video-speed": {"assets": [clip], "commands": ["modify-video-speed"], "options": {"speed": 1.5}},
        "watermark": {"assets": [clip], "commands": ["watermark"],
                      "options": {"overlay": f"{src}/logo.png"}},
    }


def speed(binary, work, src, files, width, runs):
    hand = os.path.join(work, "hand")
    for label, extra, goal in (("defaults", [], 1.1), ("--x264-cores-per-chunk 1", ["--x264-cores-per-chunk", "1"], None)):
        service = Service(binary, os.path.join(work, label.replace(" ", "")), orgs=2 * runs * 2 + 2,
                          extra=["--result-cache", "false", *extra])
        try:
            for command, body in bodies(src).items():
                reference = by_hand(command, files["cuts"], files["logo"], width)
                ours, theirs = [], []
                for _ in range(runs):
                    ours.append(service.edit(service.fresh_token(), body)[0])
                    theirs.append(timed(reference, hand))
                ratio_row(f"{command} ({label})", statistics.median(ours), statistics.median(theirs), goal, width=48)
        finally:
            service.stop()


def probe_frames(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                          "stream=nb_read_packets", "-of", "csv=p=0", path], capture_output=True, text=True)
    return int(out.stdout.strip().rstrip(","))


def ssim(encoded, source, retime):
    out = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-i", encoded, "-i", source, "-lavfi",
                          f"[1:v]{retime}[ref];[0:v][ref]ssim", "-f", "null", "-"], capture_output=True, text=True)
    if "All:" not in out.stderr:
        raise RuntimeError(f"no SSIM of {encoded}: {out.stderr[-600:]}")
    return float(out.stderr.rsplit("All:", 1)[1].split()[0])


def quality(binary, work, src, files):
    split = Service(binary, os.path.join(work, "split"), orgs=1,
                    extra=["--min-chunk-work", "1", "--x264-cores-per-chunk", "1", "--result-cache", "false"])
    whole = Service(binary, os.path.join(work, "whole"), orgs=1, extra=["--min-chunk-work", "0"])
    print(f"\n{'command':<22} {'frames':>9} {'SSIM chunked':>12} {'one process':>11} {'diff':>7} {'size':>7}")
    try:
        for command, body in bodies(src).items():
            out = {}
            for name, service in (("chunked", split), ("whole", whole)):
                doc = service.edit(service.tokens[0], body)[1]
                out[name] = os.path.join(work, f"{name}-{command}.mp4")
                urllib.request.urlretrieve(doc["attributes"]["downloadUrls"][0], out[name])
            retime = "setpts=PTS/1.5" if command == "modify-video-speed" else "null"
            q, wq = ssim(out["chunked"], files["cuts"], retime), ssim(out["whole"], files["cuts"], retime)
            size = os.path.getsize(out["chunked"]) / os.path.getsize(out["whole"]) - 1
            frames = f"{probe_frames(out['chunked'])}/{probe_frames(out['whole'])}"
            print(f"{command:<22} {frames:>9} {q:12.4f} {wq:11.4f} {q - wq:+7.4f} {size:+7.1%}")
            sys.stdout.flush()
    finally:
        split.stop()
        whole.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--quality", action="store_true")
    args = parser.parse_args()
    binary = release_binary(args.bin)
    width = int(args.size.split("x")[0])
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        files = {"cuts": source(sources, args.size, args.seconds), "logo": f"{sources}/logo.png"}
        src = serve_directory(sources)
        if args.quality:
            quality(binary, os.path.join(work, "quality"), src, files)
            return
        print(f"{'case':<48} {'ours s':>8} {'ref s':>8} {'ratio':>6} {'goal':>5}")
        speed(binary, os.path.join(work, "speed"), src, files, width, args.runs)


if __name__ == "__main__":
    main()
