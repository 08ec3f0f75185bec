#!/usr/bin/env python3
"""Chunks across nodes: what going through the queue and shared storage costs.

    bench/across_nodes.py [--bin PATH] [--runs N] [--command video-to-ogg]

Needs python3, ffmpeg, PostgreSQL (initdb, pg_ctl) and s3s-fs, as the tests do
(scripts/install-deps.sh --test). Without --bin a release binary is built first.

Every node runs on PostgreSQL and S3 (s3s-fs on loopback), each confined to its own
CPUs (sched_setaffinity), so that one machine of two cores stands for two nodes of
one. A 1080p 10 s clip through `--command` (default video-to-ogg), POST to `done`,
medians of N (default 3), each run by an organization of its own:

1. one node on one core: the single process (a node of one core does not split);
2. two nodes of one core each, `--chunk-across-nodes`: the edit's node plans a chunk
   for each node's slot, the other node claims one, reads the source from storage and
   stores its chunk there, the edit's node joins;
3. one node on both cores, chunks on its own slots (the default): the same split
   with no claim, no storage round trip.

Prints the three times, the two-node speed-up and efficiency over one core, what the
trip through the queue and storage costs (2 against 3), and the bytes it moves: the
source up once and down once on the other node, and every chunk up and down (the
chunks add up to the output's video).
"""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import Service, ffmpeg, free_port, release_binary, s3s_fs, serve_directory  # noqa: E402


class Postgres:
    """A throwaway PostgreSQL cluster on a free port, as the postgres user under root."""

    def __init__(self, work):
        initdb = shutil.which("initdb") or sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))[-1]
        self.bin = os.path.dirname(os.path.realpath(initdb))
        self.dir = os.path.join(work, "pg")
        os.makedirs(self.dir)
        self.owner = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        if self.owner:
            shutil.chown(self.dir, "postgres", "postgres")
            os.chmod(work, 0o755)
        self.port = free_port()
        self.pg(["initdb", "-D", self.dir, "-U", "postgres", "--auth=trust", "--no-sync"])
        self.pg(["pg_ctl", "start", "-w", "-D", self.dir, "-l", f"{self.dir}/log", "-o",
                 f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=off"])

    def pg(self, args):
        command = [*self.owner, os.path.join(self.bin, args[0]), *args[1:]]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)

    def database(self, name):
        self.pg(["psql", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                 "-c", f"CREATE DATABASE {name}"])
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self):
        subprocess.run([*self.owner, os.path.join(self.bin, "pg_ctl"), "stop", "-m", "immediate",
                        "-D", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def shared_storage(work):
    """s3s-fs with the bucket `bench`; the environment points at it."""
    root = os.path.join(work, "s3")
    os.makedirs(os.path.join(root, "bench"))
    process, port = s3s_fs(root, "bench", "bench-secret")
    os.environ.update(AWS_ENDPOINT=f"http://127.0.0.1:{port}", AWS_REGION="us-east-1",
                      AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench-secret", AWS_ALLOW_HTTP="true")
    return process


def topology(binary, work, pg, name, nodes, runs, body):
    """Seconds (median of `runs`) of `body` posted to the first of `nodes`, and the last
    Edit document: each node a (cpus, extra flags) pair, all on one fresh database and
    storage prefix."""
    os.environ["MEDIAEDIT_DATABASE_URL"] = pg.database(name)
    os.environ["MEDIAEDIT_STORAGE_URL"] = f"s3://bench/{name}"
    services = []
    try:
        for n, (cpus, extra) in enumerate(nodes):
            workers = ["--workers", str(len(cpus))]
            services.append(Service(binary, os.path.join(work, f"{name}-{n}"), orgs=runs if n == 0 else 0,
                                    extra=[*workers, *extra], cpus=cpus))
        # Every node's chunk worker says it is there every 2 s.
        time.sleep(3)
        edits = [services[0].edit(services[0].fresh_token(), body) for _ in range(runs)]
        return statistics.median(seconds for seconds, _ in edits), edits[-1][1]
    finally:
        for service in services:
            service.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--command", default="video-to-ogg")
    args = parser.parse_args()
    binary = release_binary(args.bin)
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("needs two cores")
    with tempfile.TemporaryDirectory() as work:
        sources = os.path.join(work, "sources")
        os.makedirs(sources)
        ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25:duration=10", "-f", "lavfi",
               "-i", "sine=frequency=440:duration=10", "-c:v", "libx264", "-preset", "veryfast", "-crf", "20",
               "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", f"{sources}/clip.mp4")
        src = serve_directory(sources)
        body = {"assets": [{"type": "video", "src": f"{src}/clip.mp4"}], "commands": [args.command]}
        pg = Postgres(work)
        s3 = shared_storage(work)
        try:
            one_core, _ = topology(binary, work, pg, "one_core", [({0}, [])], args.runs, body)
            across = [({0}, ["--chunk-across-nodes"]), ({1}, ["--chunk-across-nodes"])]
            two_nodes, doc = topology(binary, work, pg, "two_nodes", across, args.runs, body)
            one_node, _ = topology(binary, work, pg, "one_node", [({0, 1}, [])], args.runs, body)
        finally:
            s3.kill()
            pg.stop()
        output = sum(o.get("bytes", 0) for o in doc["attributes"].get("outputs", []))
        source = os.path.getsize(f"{sources}/clip.mp4")
        print(f"{args.command}, 1080p 10 s ({source / 1e6:.1f} MB source), medians of {args.runs}:")
        print(f"  one node, one core (one process)          {one_core:7.2f} s")
        print(f"  two nodes of one core, across nodes       {two_nodes:7.2f} s   speed-up {one_core / two_nodes:.2f},"
              f" efficiency {one_core / two_nodes / 2:.0%}")
        print(f"  one node of two cores, its own chunks     {one_node:7.2f} s")
        print(f"  the queue and storage's cost              {two_nodes - one_node:+7.2f} s"
              f" ({(two_nodes - one_node) / one_node:+.0%})")
        moved = 2 * source + 2 * output
        print(f"  moved through storage an edit, about       {moved / 1e6:7.1f} MB"
              f" (source {source / 1e6:.1f} MB up and down, chunks {output / 1e6:.1f} MB up and down)")


if __name__ == "__main__":
    main()
