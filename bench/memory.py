#!/usr/bin/env python3
"""The memory bound of in-process steps, measured on the running binary.

    bench/memory.py [--bin PATH] [--step-mib N] [--budget-mib N]

Starts the service with `--max-step-memory-bytes` and `--memory-budget-bytes`, warms it
with a small edit, then runs the largest work one request can ask of it in-process —
`text` at its largest font (and longest text) on a 3600×2700 PNG, a rotation of a
24 MP PNG, four of those at once — and prints, for each, the seconds it took, how it
ended and how far the server's peak resident memory (`VmHWM`) rose over the warmed
baseline, next to the bound it must stay under: one step's limit plus 64 MiB, and for
steps together the node's budget plus 64 MiB.
"""

import argparse
import concurrent.futures
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf  # noqa: E402  (the service and fixture helpers every benchmark shares)

MIB = 1 << 20


def run(service, token, body):
    """Seconds, and `done` or the failure's code."""
    start = time.monotonic()
    try:
        service.edit(token, body)
        return time.monotonic() - start, "done"
    except RuntimeError as e:
        code = "too_much_work" if "too_much_work" in str(e) else str(e)[:80]
        return time.monotonic() - start, code


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin")
    parser.add_argument("--step-mib", type=int, default=512)
    parser.add_argument("--budget-mib", type=int, default=768)
    args = parser.parse_args()
    binary = perf.release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        files = os.path.join(work, "files")
        os.makedirs(files)
        perf.ffmpeg("-f", "lavfi", "-i", "testsrc2=size=3600x2700", "-frames:v", "1",
                    os.path.join(files, "big.png"))
        perf.ffmpeg("-f", "lavfi", "-i", "testsrc2=size=6000x4000", "-frames:v", "1",
                    os.path.join(files, "huge.png"))
        perf.ffmpeg("-f", "lavfi", "-i", "testsrc2=size=200x150", "-frames:v", "1",
                    os.path.join(files, "small.png"))
        src = perf.serve_directory(files)
        extra = ["--max-step-memory-bytes", str(args.step_mib * MIB),
                 "--memory-budget-bytes", str(args.budget_mib * MIB), "--workers", "4"]
        service = perf.Service(binary, work, orgs=8, extra=extra)
        try:
            def image(name, commands, options):
                return {"assets": [{"type": "image", "src": f"{src}/{name}"}],
                        "commands": commands, "options": options}

            run(service, service.fresh_token(), image("small.png", ["text"], {"text": "hi"}))
            baseline = service.peak_rss_mib()
            print(f"warmed baseline VmHWM: {baseline:.0f} MiB; step limit {args.step_mib} MiB, "
                  f"node budget {args.budget_mib} MiB")
            print(f"{'case':58} {'s':>6} {'ended':>14} {'peak rose':>10} {'bound':>7}")
            rows = [
                ("text MM at fontSize 2048 on 3600x2700 PNG",
                 image("big.png", ["text"], {"text": "MM", "fontSize": 2048})),
                ("text of 200 M at fontSize 2048 on 3600x2700 PNG",
                 image("big.png", ["text"], {"text": "M" * 200, "fontSize": 2048})),
                ("rotate-image 90 of a 6000x4000 PNG",
                 image("huge.png", ["rotate-image"], {"angle": 90})),
            ]
            for name, body in rows:
                seconds, ended = run(service, service.fresh_token(), body)
                rose = service.peak_rss_mib() - baseline
                print(f"{name:58} {seconds:6.2f} {ended:>14} {rose:8.0f} MiB {args.step_mib + 64:5} MiB")
            token = service.fresh_token()
            body = image("huge.png", ["rotate-image"], {"angle": 270})
            start = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                ended = list(pool.map(lambda _: run(service, token, body)[1], range(4)))
            seconds = time.monotonic() - start
            rose = service.peak_rss_mib() - baseline
            summary = ",".join(sorted(set(ended)))
            print(f"{'four of those at once':58} {seconds:6.2f} {summary:>14} {rose:8.0f} MiB "
                  f"{args.budget_mib + 64:5} MiB")
        finally:
            service.stop()


if __name__ == "__main__":
    main()
