#!/usr/bin/env bash
# Runs each fuzz target for a bounded time (default 60 s each) with cargo-fuzz on the
# nightly toolchain, seeded with small valid inputs. A crash exits non-zero and leaves
# the reproducer under fuzz/artifacts/.
#
#   scripts/fuzz.sh [seconds-per-target]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal

mkdir -p fuzz/corpus/request_parse fuzz/corpus/content_detection
echo '{"assets":[{"type":"image","src":"https://example.com/a.png"}],"commands":["resize-image","image-to-video"],"options":{"scale":0.5,"fps":10}}' \
  > fuzz/corpus/request_parse/seed.json
python3 - <<'PY'
import struct, zlib
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 3, 8, 6, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"\0" + b"\x80" * 16 * 3)) + chunk(b"IEND", b"")
open("fuzz/corpus/content_detection/seed.png", "wb").write(png)
PY
if command -v ffmpeg >/dev/null; then
  ffmpeg -v error -y -f lavfi -i testsrc=size=16x8 -frames:v 1 fuzz/corpus/content_detection/seed.jpg
  ffmpeg -v error -y -f lavfi -i testsrc=size=16x8 -frames:v 1 fuzz/corpus/content_detection/seed.webp
fi

status=0
for target in request_parse content_detection; do
  echo "== fuzzing $target for ${secs}s"
  log="fuzz/$target.log"
  if cargo +nightly fuzz run "$target" "fuzz/corpus/$target" -- -max_total_time="$secs" -rss_limit_mb=2048 >"$log" 2>&1; then
    grep -E '^Done [0-9]+ runs' "$log" || tail -n 3 "$log"
  else
    echo "!! $target found a problem:"; grep -E 'ERROR|panicked|SUMMARY|Test unit written' "$log" || tail -n 20 "$log"
    status=1
  fi
done
exit $status
