#!/usr/bin/env bash
# Scale-out benchmark on this machine: one node versus three nodes on one PostgreSQL
# and one S3 bucket (s3s-fs), in the same run, with a mixed image/video workload.
#
# For each topology:
#   1. throughput: a burst of BURST edits posted round-robin over the nodes; edits per
#      minute = BURST / (last edit processed - first edit created);
#   2. claim latency under load: edits posted at a steady RATE per second for SECS
#      seconds; latency = POST handled ("edit created") to claimed ("processing edit"),
#      taken from the nodes' own logs (one clock), reported as p50/p99.
#
#   bench/cluster.sh [burst] [rate-per-second] [seconds]
#   (needs: python3, curl, ffmpeg, PostgreSQL's initdb/pg_ctl, s3s-fs — see
#    scripts/install-deps.sh --test; MEDIAEDIT_BIN picks a prebuilt binary, else a
#    release build is made)
set -euo pipefail
cd "$(dirname "$0")/.."
burst="${1:-200}"
rate="${2:-8}"
secs="${3:-20}"
work=$(mktemp -d /tmp/mediaedit-bench-XXXXXX)
chmod 755 "$work"
pg_ctl_cmd=()
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  if [ ${#pg_ctl_cmd[@]} -gt 0 ]; then "${pg_ctl_cmd[@]}" stop -m immediate -D "$work/pg" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -z "${MEDIAEDIT_BIN:-}" ]; then
  cargo build --release --quiet
  MEDIAEDIT_BIN=./target/release/mediaedit
fi
bin=$(realpath "$MEDIAEDIT_BIN")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# PostgreSQL: a throwaway cluster, as the postgres user when running as root.
pg_bin=$(dirname "$(readlink -f "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")")
as_owner=()
if [ "$(id -u)" -eq 0 ]; then as_owner=(runuser -u postgres --); fi
mkdir -p "$work/pg"
if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$work/pg"; fi
"${as_owner[@]}" "$pg_bin/initdb" -D "$work/pg" -U postgres --auth=trust --no-sync >/dev/null
pg_port=$(free_port)
pg_ctl_cmd=("${as_owner[@]}" "$pg_bin/pg_ctl")
"${pg_ctl_cmd[@]}" start -w -D "$work/pg" -l "$work/pg/log" \
  -o "-p $pg_port -c listen_addresses=127.0.0.1 -k $work/pg -c max_connections=200" >/dev/null

# S3: s3s-fs with one bucket.
s3s_fs="${MEDIAEDIT_TEST_S3S_FS:-$(command -v s3s-fs || echo "${CARGO_HOME:-$HOME/.cargo}/bin/s3s-fs")}"
mkdir -p "$work/s3/bench"
s3_port=$(free_port)
RUST_LOG=error "$s3s_fs" --host 127.0.0.1 --port "$s3_port" --access-key bench --secret-key bench-secret "$work/s3" >/dev/null 2>&1 &
export AWS_ENDPOINT="http://127.0.0.1:$s3_port" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=bench \
  AWS_SECRET_ACCESS_KEY=bench-secret AWS_ALLOW_HTTP=true

# Sources: a 1600x1200 JPEG, a 800x600 PNG, served by python on loopback.
mkdir -p "$work/src"
ffmpeg -v error -f lavfi -i testsrc2=size=1600x1200 -frames:v 1 "$work/src/big.jpg"
ffmpeg -v error -f lavfi -i testsrc2=size=800x600 -frames:v 1 "$work/src/mid.png"
ffmpeg -v error -f lavfi -i testsrc2=size=320x240:rate=25:duration=2 -f lavfi -i sine=duration=2 \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -shortest "$work/src/clip.mp4"
src_port=$(free_port)
python3 -m http.server "$src_port" --bind 127.0.0.1 --directory "$work/src" >/dev/null 2>&1 &
until curl -sf "http://127.0.0.1:$src_port/mid.png" -o /dev/null; do sleep 0.1; done

# run_topology NAME NODES: starts NODES nodes on a fresh database and prefix, runs the
# burst and the paced load, prints the figures, stops the nodes.
run_topology() {
  local name=$1 count=$2
  "${as_owner[@]}" "$pg_bin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -c "CREATE DATABASE $name" >/dev/null
  export MEDIAEDIT_DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/$name"
  export MEDIAEDIT_STORAGE_URL="s3://bench/$name"
  local token
  token=$("$bin" token create --org bench 2>/dev/null | tail -n 1)
  local bases=() pids=()
  for n in $(seq "$count"); do
    local port
    port=$(free_port)
    RUST_LOG="warn,mediaedit::queue::worker=info,mediaedit::api::edits=info" \
      "$bin" serve --listen "127.0.0.1:$port" --data-dir "$work/$name-node$n" --allow-private-sources \
      --write-rate-limit-per-second 0 --read-rate-limit-per-second 0 --workers 2 2>"$work/$name-node$n.log" &
    pids+=($!)
    bases+=("http://127.0.0.1:$port")
  done
  for base in "${bases[@]}"; do until curl -sf "$base/healthz" >/dev/null; do sleep 0.1; done; done
  python3 - "$name" "$token" "$src_port" "$burst" "$rate" "$secs" "$work" "${bases[@]}" <<'PY'
import concurrent.futures, datetime, glob, json, re, sys, time, urllib.request
name, token, src_port, burst, rate, secs, work, *bases = sys.argv[1:]
burst, rate, secs = int(burst), float(rate), float(secs)
src = f"http://127.0.0.1:{src_port}"
# The mixed image/video workload, in rotation: four image edits, two video edits.
bodies = [
    {"assets": [{"type": "image", "src": f"{src}/big.jpg"}], "commands": ["resize-image"], "options": {"scale": 0.5}},
    {"assets": [{"type": "image", "src": f"{src}/mid.png"}], "commands": ["image-to-webp"]},
    {"assets": [{"type": "image", "src": f"{src}/big.jpg"}], "commands": ["resize-image"], "options": {"scale": 0.25, "format": "webp"}},
    {"assets": [{"type": "image", "src": f"{src}/mid.png"}], "commands": ["resize-image"], "options": {"scale": 2, "format": "jpeg"}},
    {"assets": [{"type": "image", "src": f"{src}/mid.png"}], "commands": ["image-to-video"], "options": {"duration": 1, "fps": 10}},
    {"assets": [{"type": "video", "src": f"{src}/clip.mp4"}], "commands": ["video-to-gif"]},
]
def post(i):
    req = urllib.request.Request(f"{bases[i % len(bases)]}/v1/edits", data=json.dumps(bodies[i % len(bodies)]).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req) as r:
        return json.load(r)["id"]
def status(i, id):
    req = urllib.request.Request(f"{bases[i % len(bases)]}/v1/edits/{id}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)["attributes"]["status"]
def wait_all(ids):
    pending = dict(enumerate(ids))
    while pending:
        for i, id in list(pending.items()):
            if status(i, id) in ("done", "failed"):
                del pending[i]
        time.sleep(0.2)
def parse_logs():
    ts = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
    created, claimed, processed = {}, {}, {}
    for path in glob.glob(f"{work}/{name}-node*.log"):
        for line in open(path, errors="replace"):
            line = re.sub(r"\x1b\[[0-9;]*m", "", line)
            m = re.match(r"(\S+)\s+INFO\s.*edit\.id=([0-9a-f-]{36})", line)
            if not m:
                continue
            t, id = ts(m.group(1)), m.group(2)
            if "edit created" in line: created[id] = t
            elif "processing edit" in line: claimed.setdefault(id, t)
            elif "edit processed" in line: processed[id] = t
    return created, claimed, processed
def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]

# 1. Throughput: a burst, posted by 8 clients at once.
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    burst_ids = list(pool.map(post, range(burst)))
wait_all(burst_ids)
created, claimed, processed = parse_logs()
start = min(created[i] for i in burst_ids)
end = max(processed[i] for i in burst_ids)
per_min = burst / (end - start) * 60
burst_lat = [(claimed[i] - created[i]) * 1000 for i in burst_ids]

# 2. Claim latency at a steady rate below capacity.
paced, t0 = [], time.time()
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    futures = []
    n = 0
    while time.time() - t0 < secs:
        futures.append(pool.submit(post, burst + n))
        n += 1
        time.sleep(max(0, t0 + n / rate - time.time()))
    paced = [f.result() for f in futures]
wait_all(paced)
created, claimed, processed = parse_logs()
lat = [(claimed[i] - created[i]) * 1000 for i in paced]
print(f"{name}: {len(bases)} node(s) x 2 workers\n"
      f"  burst of {burst}: {per_min:.0f} edits/min ({end - start:.1f} s); POST->processing "
      f"p50 {pct(burst_lat, 50):.0f} ms, p99 {pct(burst_lat, 99):.0f} ms (queue wait behind the burst)\n"
      f"  {len(paced)} edits at {rate:g}/s: POST->processing p50 {pct(lat, 50):.0f} ms, "
      f"p99 {pct(lat, 99):.0f} ms, max {max(lat):.0f} ms")
PY
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}

echo "== $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); binary $bin; burst $burst edits; paced $rate/s for ${secs}s"
run_topology one 1
run_topology three 3
