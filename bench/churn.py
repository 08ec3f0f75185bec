#!/usr/bin/env python3
"""POST /v1/edits under churn: 16 keep-alive connections posting edits whose source
answers 404, so each fails at its fetch and the workers claim and end edits as fast as
they arrive (every POST's insert races the claims and ends of the others).

    bench/churn.py [--bin PATH] [--seconds S] [--connections N] [--runs N]

Prints edits per second, p50 and p99 of the POSTs per run, and the median p99 (goal
<= 100 ms), on SQLite and local files, on the service's defaults. Without --bin a
release binary is built first.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, post_rate, release_binary, serve_directory  # noqa: E402


def churn(service, src, seconds, connections):
    body = json.dumps({"assets": [{"type": "image", "src": f"{src}/missing.jpg"}], "commands": ["resize-image"],
                       "options": {"scale": 0.5}})
    return post_rate(service, service.tokens[0], body, seconds, connections)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    binary = release_binary(args.bin)
    with tempfile.TemporaryDirectory() as work:
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        src = serve_directory(empty)
        p99s = []
        for n in range(args.runs):
            service = Service(binary, os.path.join(work, f"run{n}"), orgs=1)
            try:
                rate, p50, p99 = churn(service, src, args.seconds, args.connections)
            finally:
                service.stop()
            p99s.append(p99)
            print(f"run {n + 1}: {rate:.0f} edits/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms")
            sys.stdout.flush()
        print(f"POST /v1/edits under churn, {args.connections} connections: median p99 "
              f"{statistics.median(p99s):.1f} ms (goal <= 100 ms)")


if __name__ == "__main__":
    main()
