#!/usr/bin/env python3
"""`video-to-webm` with `burnSubtitles` against the same edit without it, through the
whole service, alternated in one run: seconds from POST to done (median of the runs)
and the ratio. Goal (issue 44): burning costs at most 5 % more time (ratio <= 1.05).

    bench/subtitles_burn.py [--bin PATH] [--runs N] [clip]

The clip defaults to the corpus's Big Buck Bunny scaled to 1280x720, 10 s
(scripts/corpus.sh first). The subtitles are dense: a two-line cue every 2 s, shown
for 1.5 s. Without --bin a release binary is built first.
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (the Service, the fixture server and the timing helpers)



def srt(seconds):
    cues = []
    for i, start in enumerate(range(0, int(seconds), 2)):
        cues.append(f"{i + 1}\n00:00:{start:02},000 --> 00:00:{start + 1:02},500\n"
                    f"Cue number {i + 1}, a line of dialogue\n<i>and a second line under it</i>\n")
    return "\n".join(cues)


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
        with open(os.path.join(sources, "cues.srt"), "w") as f:
            f.write(srt(10))
        src = perf.serve_directory(sources)
        service = perf.Service(binary, os.path.join(work, "svc"), orgs=1, extra=["--result-cache", "false"])
        seconds = {False: [], True: []}
        try:
            for _ in range(args.runs):
                for burn in (False, True):
                    body = {"assets": [{"type": "video", "src": f"{src}/clip.mp4"},
                                       {"type": "subtitles", "src": f"{src}/cues.srt"}],
                            "commands": ["video-to-webm"], "options": {"burnSubtitles": burn}}
                    took, _ = service.edit(service.tokens[0], body)
                    seconds[burn].append(took)
        finally:
            service.stop()
        plain, burned = perf.median(seconds[False]), perf.median(seconds[True])
        print("| video-to-webm | seconds (median) | runs |\n|---|---|---|")
        print(f"| without burnSubtitles | {plain:.2f} | {', '.join(f'{s:.2f}' for s in seconds[False])} |")
        print(f"| with burnSubtitles | {burned:.2f} | {', '.join(f'{s:.2f}' for s in seconds[True])} |")
        print(f"\nburned/plain: {burned / plain:.3f}x (goal <= 1.05)")


if __name__ == "__main__":
    main()
