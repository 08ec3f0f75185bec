#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets/, one per parser of ours that reads hostile
# bytes) for a bounded time each — default 60 s — with cargo-fuzz on the nightly
# toolchain, each seeded with small valid files made here (ffmpeg, Python). A crash
# leaves its reproducer under fuzz/artifacts/<target>/ and makes the script exit 1.
# The last lines are a summary, one per target, ready to paste into docs/SECURITY.md.
#
#   scripts/fuzz.sh [seconds-per-target] [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
all=(request_parse content_detection mp4 matroska gif apng bmp heif_boxes exif
  render_transform ffprobe_output hls tus_metadata svg jxl pdf_answer)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

./scripts/fuzz-seeds.sh fuzz/corpus

# The MP4 and Matroska targets write each input to a scratch file (their readers take
# a path): kept under fuzz/, removed at the end.
scratch="$PWD/fuzz/scratch"
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT

# The bundled SQLite is registered twice under the address sanitizer (an ODR report
# at start, before any input): not a finding of ours, so that one check is off.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_odr_violation=0}"

echo "== building ${#targets[@]} targets (nightly, address sanitizer)"
cargo +nightly fuzz build >fuzz/build.log 2>&1 || { tail -n 30 fuzz/build.log; exit 1; }

status=0
summary=()
for target in "${targets[@]}"; do
  echo "== fuzzing $target for ${secs}s"
  log="fuzz/$target.log"
  mkdir -p "fuzz/corpus/$target"
  started=$(date +%s)
  if TMPDIR="$scratch" cargo +nightly fuzz run "$target" "fuzz/corpus/$target" -- \
      -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 >"$log" 2>&1; then
    result="no crash"
  else
    result="CRASH (see $log and fuzz/artifacts/$target/)"
    grep -E 'ERROR|panicked|SUMMARY|Test unit written' "$log" || tail -n 20 "$log"
    status=1
  fi
  elapsed=$(( $(date +%s) - started ))
  runs=$(grep -oE '^Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' || true)
  if [ -z "$runs" ]; then
    # A crash stops before "Done": the last status line has the count (#N).
    runs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)
  fi
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  summary+=("$(printf '%-18s %12s runs %5s s  corpus %5s  %s' \
    "$target" "${runs:-?}" "$elapsed" "$corpus" "$result")")
done

echo "== summary ($(date -u +%Y-%m-%d), ${secs} s a target, $(rustc +nightly --version | cut -d' ' -f2-3))"
printf '%s\n' "${summary[@]}"
exit $status
