#!/usr/bin/env bash
# Installs what is missing and runs the whole test suite: formatting, lints, unit
# and integration tests (real ffmpeg, real SQLite, real HTTP on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
if rustup component list --installed 2>/dev/null | grep -q rustfmt; then
  cargo fmt --all -- --check
fi
if rustup component list --installed 2>/dev/null | grep -q clippy; then
  cargo clippy --locked --all-targets -- -D warnings
fi
cargo test --locked --all-targets -- "$@"
