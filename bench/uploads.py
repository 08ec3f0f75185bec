#!/usr/bin/env python3
"""Upload throughput: a large file sent to mediaedit (direct, and tus in 8 MiB chunks
with the stock tus client tuspy) against curl sending it to a plain file server on the
same machine (s3s-fs, the S3-protocol server the tests use, writing to local files),
alternated, medians printed with the ratio, and the server's peak RSS during each.

    python3 bench/uploads.py --bin target/release/mediaedit [--size-mib 1024] [--runs 3]

Needs curl, s3s-fs and the test virtual environment with tuspy
(`scripts/install-deps.sh --test` installs both).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from perf import Service, s3s_fs  # noqa: E402

TUS_SCRIPT = """
import sys
from tusclient import client
tus = client.TusClient(sys.argv[1] + "/v1/uploads", headers={"Authorization": "Bearer " + sys.argv[2]})
tus.uploader(file_path=sys.argv[3], chunk_size=8 * 1024 * 1024).upload()
"""


def timed(command):
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/mediaedit")
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    venv = os.environ.get("MEDIAEDIT_TEST_VENV", os.path.expanduser("~/.cache/mediaedit-test-venv"))
    python = os.path.join(venv, "bin", "python")

    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as work:
        source = os.path.join(work, "upload.bin")
        with open(source, "wb") as f:
            for _ in range(args.size_mib):
                f.write(os.urandom(1 << 20))

        root = os.path.join(work, "s3")
        os.makedirs(os.path.join(root, "bench"))
        s3, port = s3s_fs(root, "k", "s")
        time.sleep(0.5)
        service = Service(binary, work, 1)
        token = service.tokens[0]
        base = f"http://127.0.0.1:{service.port}"
        cases = {
            "curl PUT to s3s-fs (reference)": lambda n: [
                "curl", "-sf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "k:s",
                "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-T", source, f"http://127.0.0.1:{port}/bench/object-{n}"],
            "mediaedit direct POST (curl)": lambda n: [
                "curl", "-sf", "-X", "POST", "-H", f"Authorization: Bearer {token}",
                "-T", source, f"{base}/v1/uploads"],
            "mediaedit tus, 8 MiB chunks (tuspy)": lambda n: [
                python, "-c", TUS_SCRIPT, base, token, source],
        }
        times = {name: [] for name in cases}
        try:
            for run in range(args.runs):
                for name, command in cases.items():
                    times[name].append(timed(command(run)))
            rss = service.peak_rss_mib()
        finally:
            service.stop()
            s3.kill()

    reference = statistics.median(times["curl PUT to s3s-fs (reference)"])
    size = args.size_mib
    print(f"{size} MiB, median of {args.runs}, alternated")
    print("| case | seconds | MiB/s | ratio to reference |")
    print("|---|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {size / median:.0f} | {median / reference:.2f} |")
    print(f"peak RSS of mediaedit over all runs: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
