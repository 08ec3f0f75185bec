#!/usr/bin/env bash
# Benchmark: one resize-image (12 MP JPEG -> 0.5x JPEG) through the whole service
# (POST to done, fetch and store included) next to `vips resize` on the same file,
# in one run. Prints both wall times and the ratio.
#
#   bench/resize.sh [runs]        (needs: vips (libvips-tools), python3, curl)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

command -v vips >/dev/null || { echo "install libvips-tools for the reference tool" >&2; exit 1; }
cargo build --release --quiet
bin=./target/release/mediaedit

# A 12 MP (4000x3000) JPEG with real detail.
ffmpeg -v error -f lavfi -i "testsrc2=size=4000x3000" -frames:v 1 -q:v 3 "$work/photo.jpg"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work" >"$work/http.log" 2>&1 &
for _ in $(seq 50); do port=$(grep -o 'port [0-9]*' "$work/http.log" | grep -o '[0-9]*' || true); [ -n "$port" ] && break; sleep 0.1; done

token=$($bin token create --data-dir "$work/data" --org bench 2>/dev/null | tail -n 1)
listen=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RUST_LOG=warn $bin serve --data-dir "$work/data" --listen "$listen" --allow-private-sources --poll-ms 20 &
for _ in $(seq 100); do curl -sf "http://$listen/healthz" >/dev/null && break; kill -0 $! 2>/dev/null || { echo "the server did not start" >&2; exit 1; }; sleep 0.1; done

now() { date +%s.%N; }
service_total=0
vips_total=0
for i in $(seq "$runs"); do
  start=$(now)
  id=$(curl -sf -X POST "http://$listen/v1/edits" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"assets\":[{\"type\":\"image\",\"src\":\"http://127.0.0.1:$port/photo.jpg\"}],\"commands\":[\"resize-image\"],\"options\":{\"scale\":0.5}}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  while :; do
    doc=$(curl -sf "http://$listen/v1/edits/$id" -H "Authorization: Bearer $token")
    status=$(echo "$doc" | python3 -c 'import json,sys; print(json.load(sys.stdin)["attributes"]["status"])')
    [ "$status" = done ] && break
    [ "$status" = failed ] && { echo "edit failed" >&2; exit 1; }
    sleep 0.01
  done
  service=$(echo "$(now) - $start" | bc)
  # The server's own view, free of this loop's polling granularity: createdAt to updatedAt.
  inside=$(echo "$doc" | python3 -c 'import json,sys,datetime as d; a=json.load(sys.stdin)["attributes"]; p=lambda s: d.datetime.fromisoformat(s.replace("Z","+00:00")); print((p(a["updatedAt"])-p(a["createdAt"])).total_seconds())')

  start=$(now)
  vips resize "$work/photo.jpg" "$work/vips-out.jpg[Q=85]" 0.5
  vips_time=$(echo "$(now) - $start" | bc)
  printf 'run %d: service %.3f s (created->done inside the server %.3f s)   vips resize %.3f s\n' "$i" "$service" "$inside" "$vips_time"
  service_total=$(echo "$service_total + $service" | bc)
  vips_total=$(echo "$vips_total + $vips_time" | bc)
done
printf 'mean: service %.3f s, vips resize %.3f s, ratio service/vips %.2f\n' \
  "$(echo "$service_total / $runs" | bc -l)" "$(echo "$vips_total / $runs" | bc -l)" "$(echo "$service_total / $vips_total" | bc -l)"
