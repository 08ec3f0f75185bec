#!/usr/bin/env bash
# The generated clients, used as a new user would: starts the real binary with a token,
# fetches /v1/openapi.json, generates a Python client (openapi-python-client) and a
# TypeScript one (openapi-typescript + openapi-fetch, type-checked with `tsc --strict`),
# and with each creates an edit (a PNG resized by half, served by a local
# `python3 -m http.server`), follows it to `done`, downloads the output and checks it
# with ffprobe. Either generator warning about the document fails the test, so every
# endpoint keeps coming out typed. Run by .ci/run; about a minute once the tools are
# installed (in target/clients-test: a venv and node_modules, pinned below).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

OPENAPI_PYTHON_CLIENT_VERSION=0.29.1
OPENAPI_TYPESCRIPT_VERSION=7.13.0
OPENAPI_FETCH_VERSION=0.17.0
TYPESCRIPT_VERSION=5.9.3
TYPES_NODE_VERSION=20
target="${CARGO_TARGET_DIR:-target}"
work="$(realpath -m "$target/clients-test")"
bin="${MEDIAEDIT_BIN:-$target/debug/mediaedit}"
clients="$PWD/tests/clients"
mkdir -p "$work"

say() { echo "clients-test: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }

missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v ffprobe >/dev/null 2>&1 || missing+=(ffmpeg)
python3 -m venv --help >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  say "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The generators, pinned, installed once.
if ! "$work/venv/bin/openapi-python-client" --version 2>/dev/null | grep -q "$OPENAPI_PYTHON_CLIENT_VERSION"; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet --disable-pip-version-check \
    "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION"
fi
if ! grep -qs "\"version\": \"$OPENAPI_TYPESCRIPT_VERSION\"" "$work/node_modules/openapi-typescript/package.json"; then
  echo '{ "private": true, "type": "module" }' >"$work/package.json"
  (cd "$work" && npm install --silent --no-audit --no-fund \
    "openapi-typescript@$OPENAPI_TYPESCRIPT_VERSION" "openapi-fetch@$OPENAPI_FETCH_VERSION" \
    "typescript@$TYPESCRIPT_VERSION" "@types/node@$TYPES_NODE_VERSION")
fi
[ -x "$bin" ] || cargo build --locked --quiet --bin mediaedit

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

# The service, as a user starts it, and a source for it on loopback.
rm -rf "$work/data" "$work/src" "$work/out"
mkdir -p "$work/src" "$work/out"
token=$("$bin" token create --data-dir "$work/data" --org clients | tail -1)
port=$(free_port)
base="http://127.0.0.1:$port"
"$bin" serve --data-dir "$work/data" --listen "127.0.0.1:$port" --allow-private-sources \
  >"$work/server.log" 2>&1 &
pids+=($!)
ffmpeg -v error -y -f lavfi -i testsrc=size=320x240 -frames:v 1 "$work/src/in.png"
source_port=$(free_port)
python3 -m http.server "$source_port" --bind 127.0.0.1 --directory "$work/src" >/dev/null 2>&1 &
pids+=($!)
source="http://127.0.0.1:$source_port/in.png"
for _ in $(seq 1 100); do
  curl -fs -o /dev/null "$base/healthz" && curl -fs -o /dev/null "$source" && break
  sleep 0.1
done
curl -fsS "$base/v1/openapi.json" -o "$work/openapi.json" || fail "no /v1/openapi.json"

# 200 with a 160x120 PNG: what resizing the 320x240 source by half makes.
check_output() {
  local dims
  dims=$(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 "$1")
  [ "$dims" = "png,160,120" ] || fail "$2 downloaded '$dims', not a 160x120 PNG"
}

say "Python: openapi-python-client $OPENAPI_PYTHON_CLIENT_VERSION"
rm -rf "$work/python"
(cd "$work" && venv/bin/openapi-python-client generate --path openapi.json --output-path python \
  --config "$clients/openapi-python-client.yaml") >"$work/python-generate.log" 2>&1 \
  || { cat "$work/python-generate.log" >&2; fail "the Python client was not generated"; }
if grep -qi 'warning' "$work/python-generate.log"; then
  cat "$work/python-generate.log" >&2
  fail "openapi-python-client warned about the document"
fi
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$work/python"
id=$("$work/venv/bin/python" "$clients/python_client.py" "$base" "$token" "$source" "$work/out/python.png")
check_output "$work/out/python.png" "the Python client"
say "Python client: edit $id done, output downloaded"

say "TypeScript: openapi-typescript $OPENAPI_TYPESCRIPT_VERSION + openapi-fetch $OPENAPI_FETCH_VERSION, tsc $TYPESCRIPT_VERSION --strict"
rm -rf "$work/typescript"
mkdir -p "$work/typescript"
cp "$clients/typescript_client.ts" "$clients/tsconfig.json" "$work/typescript/"
(cd "$work" && npx --no-install openapi-typescript openapi.json -o typescript/schema.d.ts) \
  >"$work/typescript-generate.log" 2>&1 \
  || { cat "$work/typescript-generate.log" >&2; fail "the TypeScript types were not generated"; }
if grep -qiE 'warn|⚠' "$work/typescript-generate.log"; then
  cat "$work/typescript-generate.log" >&2
  fail "openapi-typescript warned about the document"
fi
# node_modules one level up is where Node and tsc find openapi-fetch and the types.
(cd "$work/typescript" && ../node_modules/.bin/tsc --strict -p tsconfig.json) \
  || fail "the TypeScript client does not type-check"
id=$(node "$work/typescript/out/typescript_client.js" "$base" "$token" "$source" "$work/out/typescript.png")
check_output "$work/out/typescript.png" "the TypeScript client"
say "TypeScript client: edit $id done, output downloaded"

say "passed in $(( $(date +%s) - started )) s"
