#!/usr/bin/env bash
# Load test on loopback: drives GET and POST /v1/edits with wrk while the workers are
# busy, and reports throughput, latency percentiles and the server's peak RSS.
# Bounded: each phase runs for a fixed time, then everything stops.
#
#   bench/load.sh [seconds-per-phase] [connections]     (needs: wrk, python3, curl)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
conns="${2:-16}"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)" >&2; exit 1; }
cargo build --release --quiet
bin=./target/release/mediaedit

python3 - "$work/small.png" <<'PY'
import struct, sys, zlib
w, h = 64, 48
raw = b"".join(b"\0" + bytes(v for x in range(w) for v in (x * 4 % 256, y * 5 % 256, 128)) for y in range(h))
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
PY
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work" >"$work/http.log" 2>&1 &
for _ in $(seq 50); do port=$(grep -o 'port [0-9]*' "$work/http.log" | grep -o '[0-9]*' || true); [ -n "$port" ] && break; sleep 0.1; done

token=$($bin token create --data-dir "$work/data" --org load 2>/dev/null | tail -n 1)
listen=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RUST_LOG=warn $bin serve --data-dir "$work/data" --listen "$listen" --allow-private-sources \
  --write-rate-limit-per-second 0 --read-rate-limit-per-second 0 --workers 2 &
pid=$!
for _ in $(seq 100); do curl -sf "http://$listen/healthz" >/dev/null && break; kill -0 $! 2>/dev/null || { echo "the server did not start" >&2; exit 1; }; sleep 0.1; done

body="{\"assets\":[{\"type\":\"image\",\"src\":\"http://127.0.0.1:$port/small.png\"}],\"commands\":[\"image-to-webp\"]}"
id=$(curl -sf -X POST "http://$listen/v1/edits" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "$body" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')

cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $token"
LUA

echo "== POST /v1/edits for ${secs}s, $conns connections (each creates an edit the 2 workers process)"
wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$work/post.lua" "http://$listen/v1/edits" | grep -E 'Requests/sec|Latency|50%|90%|99%|requests in|Non-2xx'
echo "== GET /v1/edits/{id} for ${secs}s, $conns connections, while the workers drain the backlog"
wrk -t2 -c"$conns" -d"${secs}s" --latency -H "Authorization: Bearer $token" "http://$listen/v1/edits/$id" | grep -E 'Requests/sec|Latency|50%|90%|99%|requests in|Non-2xx'
backlog=$(sqlite3 "$work/data/mediaedit.db" "SELECT status, COUNT(*) FROM edits GROUP BY status" 2>/dev/null || echo "(sqlite3 not installed)")
echo "== edits by status after the run: $(echo $backlog | tr '\n' ' ')"
echo "== server peak RSS: $(grep VmHWM /proc/$pid/status | awk '{print $2, $3}')"
