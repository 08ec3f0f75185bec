#!/usr/bin/env bash
# Benchmark: each video command on a 1080p 10 s H.264 + AAC clip through the whole
# service (POST to done: fetch, probe, ffmpeg, store) next to the same ffmpeg command
# line run by hand on the same file, in one run. Prints a table with both wall times,
# the ratio (service overhead) and the output sizes.
#
#   bench/video.sh        (needs: ffmpeg, python3, curl, bc)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# BENCH_BIN=path uses an already built binary instead of building a release one.
if [ -n "${BENCH_BIN:-}" ]; then bin=$BENCH_BIN; else cargo build --release --quiet; bin=./target/release/mediaedit; fi

# 1080p, 10 s, 25 fps, with a 440 Hz tone.
ffmpeg -v error -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=10" \
  -f lavfi -i "sine=frequency=440:duration=10" \
  -c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p -c:a aac -movflags +faststart "$work/clip.mp4"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work" >"$work/http.log" 2>&1 &
for _ in $(seq 50); do port=$(grep -o 'port [0-9]*' "$work/http.log" | grep -o '[0-9]*' || true); [ -n "$port" ] && break; sleep 0.1; done

token=$($bin token create --data-dir "$work/data" --org bench 2>/dev/null | tail -n 1)
listen=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RUST_LOG=warn $bin serve --data-dir "$work/data" --listen "$listen" --allow-private-sources --poll-ms 20 --workers 1 &
until curl -sf "http://$listen/healthz" >/dev/null; do sleep 0.1; done

now() { date +%s.%N; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# Runs one edit; prints "seconds bytes" (bytes summed over every output).
service() {
  local command=$1 options=$2 start id doc status
  start=$(now)
  id=$(curl -sf -X POST "http://$listen/v1/edits" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"assets\":[{\"type\":\"video\",\"src\":\"http://127.0.0.1:$port/clip.mp4\"}],\"commands\":[\"$command\"]$options}" \
    | json 'd["id"]')
  while :; do
    doc=$(curl -sf "http://$listen/v1/edits/$id" -H "Authorization: Bearer $token")
    status=$(echo "$doc" | json 'd["attributes"]["status"]')
    [ "$status" = done ] && break
    [ "$status" = failed ] && { echo "$command failed: $doc" >&2; exit 1; }
    sleep 0.02
  done
  local elapsed bytes=0
  elapsed=$(echo "$(now) - $start" | bc)
  for url in $(echo "$doc" | json '"\n".join(d["attributes"]["downloadUrls"])'); do
    bytes=$((bytes + $(curl -sf "$url" | wc -c)))
  done
  echo "$elapsed $bytes"
}

# Runs ffmpeg by hand with the service's recipe; prints "seconds bytes".
by_hand() {
  local out=$1 start elapsed
  shift
  rm -rf "$work/hand" && mkdir -p "$work/hand"
  start=$(now)
  ffmpeg -nostdin -v error -f mov -i "$work/clip.mp4" -map_metadata -1 "$@" "$work/hand/$out"
  elapsed=$(echo "$(now) - $start" | bc)
  echo "$elapsed $(du -cb "$work"/hand/* | tail -n 1 | cut -f1)"
}

gif="fps=15/1,scale='if(gte(iw,ih),min(480,iw),-1)':'if(gte(iw,ih),-1,min(480,ih))':flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=sierra2_4a:diff_mode=rectangle"

printf '%-20s %10s %10s %7s %12s %12s\n' command service_s ffmpeg_s ratio service_MB ffmpeg_MB
row() {
  local name=$1 s=$2 h=$3
  read -r st sb <<<"$s"
  read -r ht hb <<<"$h"
  printf '%-20s %10.2f %10.2f %7.2f %12.2f %12.2f\n' "$name" "$st" "$ht" "$(echo "$st / $ht" | bc -l)" \
    "$(echo "$sb / 1048576" | bc -l)" "$(echo "$hb / 1048576" | bc -l)"
}

# The clip is H.264 yuv420p at 25 fps: the service copies its video stream, so the
# reference is ffmpeg's own stream copy with the audio retimed.
speed_by_hand() {
  local start elapsed
  rm -rf "$work/hand" && mkdir -p "$work/hand"
  start=$(now)
  ffmpeg -nostdin -v error -itsscale:v:0 0.5 -f mov -i "$work/clip.mp4" -map_metadata -1 -map 0:v:0 -map 0:a:0 \
    -c:v copy -af atempo=2 -c:a aac -b:a 128k -movflags +faststart -f mp4 "$work/hand/out.mp4"
  elapsed=$(echo "$(now) - $start" | bc)
  echo "$elapsed $(du -cb "$work"/hand/* | tail -n 1 | cut -f1)"
}
row modify-video-speed "$(service modify-video-speed ',"options":{"speed":2}')" "$(speed_by_hand)"
row video-to-gif "$(service video-to-gif '')" \
  "$(by_hand out.gif -filter_complex "[0:v:0]$gif" -loop 0 -f gif)"
row video-to-ogg "$(service video-to-ogg '')" \
  "$(by_hand out.ogv -map 0:v:0 -map 0:a:0 -vf format=yuv420p -c:v libtheora -q:v 6 -c:a libvorbis -q:a 4 -f ogg)"
row video-to-webm "$(service video-to-webm '')" \
  "$(by_hand out.webm -map 0:v:0 -map 0:a:0 -vf format=yuv420p -c:v libvpx-vp9 -deadline realtime -cpu-used 8 \
      -row-mt 1 -b:v 0 -crf 35 -c:a libopus -b:a 96k -f webm)"
row extract-frames "$(service extract-frames '')" \
  "$(by_hand frame-%06d.webp -map 0:v:0 -fps_mode passthrough -c:v libwebp -quality 80 -f image2)"
# gif-to-video needs a GIF: the service's own video-to-gif output, served alongside.
ffmpeg -nostdin -v error -i "$work/clip.mp4" -filter_complex "[0:v:0]$gif" -loop 0 -f gif "$work/clip.gif"
gif_service() {
  local start id doc status elapsed bytes=0
  start=$(now)
  id=$(curl -sf -X POST "http://$listen/v1/edits" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"assets\":[{\"type\":\"image\",\"src\":\"http://127.0.0.1:$port/clip.gif\"}],\"commands\":[\"gif-to-video\"]}" | json 'd["id"]')
  while :; do
    doc=$(curl -sf "http://$listen/v1/edits/$id" -H "Authorization: Bearer $token")
    status=$(echo "$doc" | json 'd["attributes"]["status"]')
    [ "$status" = done ] && break
    [ "$status" = failed ] && { echo "gif-to-video failed: $doc" >&2; exit 1; }
    sleep 0.02
  done
  elapsed=$(echo "$(now) - $start" | bc)
  bytes=$(curl -sf "$(echo "$doc" | json 'd["attributes"]["downloadUrls"][0]')" | wc -c)
  echo "$elapsed $bytes"
}
gif_by_hand() {
  local start elapsed
  rm -rf "$work/hand" && mkdir -p "$work/hand"
  start=$(now)
  ffmpeg -nostdin -v error -ignore_loop 1 -f gif -i "$work/clip.gif" -map_metadata -1 -filter_complex \
    "[0:v:0]split[bg][fg];[bg]drawbox=c=white:t=fill[white];[white][fg]overlay=format=auto,scale=480:270:flags=lanczos:out_color_matrix=bt709:out_range=tv,format=yuv420p[v]" \
    -map '[v]' -fps_mode vfr -enc_time_base -1 -c:v libx264 -preset veryfast -crf 23 -movflags +faststart -f mp4 "$work/hand/out.mp4"
  elapsed=$(echo "$(now) - $start" | bc)
  echo "$elapsed $(stat -c %s "$work/hand/out.mp4")"
}
row gif-to-video "$(gif_service)" "$(gif_by_hand)"
