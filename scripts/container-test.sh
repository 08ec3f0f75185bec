#!/usr/bin/env bash
# Builds the image from Containerfile and uses it as a new user would: start it, wait
# until its health check passes, make a token, run an image edit and a video edit
# through the API with curl, and check the outputs with ffprobe (codec, dimensions,
# duration). Also that the service runs as a non-root user and the image stays under
# 400 MB. Run by .ci/run, with the binary the test suite built (see below): a minute
# or two, most of it apt in the runtime stage the first time.
#
# No registry is needed: the base image is a Debian bookworm root file system made by
# mmdebstrap, slimmed as Docker Hub's -slim images are (no manuals, documentation or
# translations, and no Perl: /usr is merged by mmdebstrap's hook, not by usrmerge, which needs it), and
# imported as localhost/debian:bookworm-slim, unless BASE names another
# (`BASE=debian:bookworm-slim` pulls Docker Hub's). podman runs with runc and chroot
# isolation, which work inside an unprivileged VM or container where crun does not.
#
# Environment: BASE (see above); IMAGE (the tag built, localhost/mediaedit:test);
# PORT (the host port the container listens on with host networking, 8080 — the
# health check's port); KEEP=1 leaves the container running at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

BASE="${BASE:-localhost/debian:bookworm-slim}"
IMAGE="${IMAGE:-localhost/mediaedit:test}"
PORT=8080
work="$PWD/target/container-test"
mkdir -p "$work"

say() { echo "container-test: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }

missing=()
for tool in podman mmdebstrap runc curl ffmpeg ffprobe python3 objcopy; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  packages=$(printf '%s\n' "${missing[@]}" | sed -e 's/^ffprobe$/ffmpeg/' -e 's/^objcopy$/binutils/' | sort -u)
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  say "installing: $packages"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086 # one word per package
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $packages >/dev/null
fi
podman_run() { podman --runtime runc "$@"; }

# The base image, once: a minimal Debian bookworm (apt only), imported into podman.
# (A base imported before the slimming, without the label, is made again.)
if [ "$BASE" = localhost/debian:bookworm-slim ] \
  && [ "$(podman image inspect --format '{{index .Labels "slim"}}' "$BASE" 2>/dev/null)" != 2 ]; then
  say "making $BASE with mmdebstrap (about a minute, once)"
  mmdebstrap --quiet --variant=apt --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    bookworm "$work/rootfs.tar"
  podman import --change 'LABEL slim=2' "$work/rootfs.tar" "$BASE" >/dev/null
  rm -f "$work/rootfs.tar"
fi

# A proxy that intercepts TLS (as in some CI sandboxes) has its CA among the host's
# locally added ones; the build stage trusts them for rustup and cargo (Containerfile).
ca_certificates=""
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  ca_certificates=$(cat /usr/local/share/ca-certificates/*.crt)
fi
# The binary: the one the test suite built (MEDIAEDIT_BIN, else target/debug), without
# its debug information, put in the image by the Containerfile's `prebuilt` target,
# whose runtime stage is the one users' images have. FROM_SOURCE=1 builds the default
# target instead: the binary compiled inside the image (minutes longer).
target="${CARGO_TARGET_DIR:-$PWD/target}"
build_args=(--target prebuilt --build-context "binary=$work/binary")
if [ "${FROM_SOURCE:-0}" = 1 ]; then
  build_args=()
else
  bin="${MEDIAEDIT_BIN:-$target/debug/mediaedit}"
  [ -x "$bin" ] || cargo build --locked --quiet --bin mediaedit
  mkdir -p "$work/binary"
  objcopy --strip-all "$bin" "$work/binary/mediaedit"
fi
say "building $IMAGE from $BASE"
build_started=$(date +%s)
# `--format docker`: an OCI image config has no field for HEALTHCHECK, so podman's
# default format would drop it.
nice -n 5 podman build --isolation chroot --format docker --build-arg BASE="$BASE" \
  --build-arg CA_CERTIFICATES="$ca_certificates" "${build_args[@]}" -t "$IMAGE" -f Containerfile . \
  >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; fail "the image did not build ($work/build.log)"; }
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
say "image built in $(( $(date +%s) - build_started )) s: $(( size / 1000000 )) MB"
# The image's size: the runtime stage plus the binary (docs/DEPLOY.md gives the figures).
# Built from the suite's debug binary (stripped, about twice a release binary's size),
# the image is held to what users get: its runtime stage plus room for a release
# binary of 45 MB (33.5 MB stripped before the face detector and the quality metric
# were added) under 400 MB. From source (FROM_SOURCE=1), the image itself is.
if [ "${FROM_SOURCE:-0}" = 1 ]; then
  users=$size
else
  binary_size=$(stat -c %s "$work/binary/mediaedit")
  users=$(( size - binary_size + 45000000 ))
  say "runtime stage $(( (size - binary_size) / 1000000 )) MB + a release binary's 45 MB"
fi
[ "$users" -lt 400000000 ] || fail "the image is $(( users / 1000000 )) MB, over 400 MB"

# The image's own promises, read from its configuration.
user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
[ -n "$user" ] && [ "${user%%:*}" != root ] && [ "${user%%:*}" != 0 ] || fail "image user is '$user'"
podman image inspect --format '{{json .Config.Volumes}}' "$IMAGE" | grep -q '"/data"' || fail "/data is not a volume"
podman image inspect --format '{{json .Config.Cmd}}' "$IMAGE" | grep -q '"serve","--listen","0.0.0.0:8080"' \
  || fail "the default command is not 'mediaedit serve --listen 0.0.0.0:8080'"

# Source media, served from the host by a plain static server.
ffmpeg -v error -y -f lavfi -i testsrc=size=320x240 -frames:v 1 "$work/in.png"
ffmpeg -v error -y -f lavfi -i testsrc=size=320x240:rate=25 -f lavfi -i sine=frequency=440 \
  -t 2 -c:v libx264 -pix_fmt yuv420p -c:a aac -shortest "$work/in.mp4"
# A one-page PDF (200 × 100 pt, a red square), written by hand with its byte offsets.
python3 - "$work/in.pdf" <<'PDF'
import sys
content = b"1 0 0 rg 0 0 100 100 re f"
objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
           b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>",
           b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)]
out, offsets = bytearray(b"%PDF-1.4\n"), []
for i, body in enumerate(objects, 1):
    offsets.append(len(out))
    out += b"%d 0 obj\n%s\nendobj\n" % (i, body)
xref = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
open(sys.argv[1], "wb").write(out)
PDF
source_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$source_port" --bind 127.0.0.1 --directory "$work" >/dev/null 2>&1 &
source_pid=$!

if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then
  fail "port $PORT is in use on this host; the test container needs it (host networking)"
fi
name="mediaedit-test-$$"
cleanup() {
  kill "$source_pid" 2>/dev/null || true
  if [ "${KEEP:-0}" != 1 ]; then podman_run rm -f -v "$name" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
base="http://127.0.0.1:$PORT"
# Host networking reaches the source server on loopback, which the service refuses
# unless private sources are allowed; the public URL is what download URLs start with.
podman_run run -d --name "$name" --network host \
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
  -e MEDIAEDIT_PUBLIC_URL="$base" -e MEDIAEDIT_ALLOW_PRIVATE_SOURCES=true \
  "$IMAGE" >/dev/null

# The image's HEALTHCHECK, run as the runtime would (no systemd timer here).
healthy=false
for _ in $(seq 1 60); do
  if podman_run healthcheck run "$name" >/dev/null 2>&1; then healthy=true; break; fi
  sleep 0.5
done
$healthy || { podman_run logs "$name" >&2; fail "the container never became healthy"; }
status=$(podman_run inspect --format '{{.State.Health.Status}}' "$name" 2>/dev/null || podman_run inspect --format '{{.State.Healthcheck.Status}}' "$name")
[ "$status" = healthy ] || fail "health status is '$status'"
# The uid the service process itself runs as, read from /proc inside the container.
uid=$(podman_run exec "$name" sh -c 'for p in /proc/[0-9]*; do
  [ "$(cat "$p/comm" 2>/dev/null)" = mediaedit ] && awk "/^Uid:/ {print \$2}" "$p/status"; done' | head -1)
[ -n "$uid" ] && [ "$uid" != 0 ] || fail "the mediaedit process runs as uid '$uid'"
say "healthy, serving as uid $uid"

token=$(podman_run exec "$name" mediaedit token create --org container-test | tail -1)
[ -n "$token" ] || fail "no token"

# POSTs an edit and long-polls it to `done`; prints the first download URL.
run_edit() {
  local body=$1 created id doc state
  created=$(curl -sS -X POST "$base/v1/edits" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d "$body")
  id=$(printf '%s' "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') \
    || fail "edit not created: $created"
  for _ in $(seq 1 12); do
    doc=$(curl -sS "$base/v1/edits/$id?wait=10" -H "Authorization: Bearer $token")
    state=$(printf '%s' "$doc" | python3 -c 'import json,sys; print(json.load(sys.stdin)["attributes"]["status"])')
    case "$state" in
      done) printf '%s' "$doc" | python3 -c 'import json,sys; print(json.load(sys.stdin)["attributes"]["downloadUrls"][0])'; return ;;
      failed|canceled) fail "edit $id ended $state: $doc" ;;
    esac
  done
  fail "edit $id not done in 2 minutes: $doc"
}
# ffprobe's first stream of one type: "codec width height duration".
probe() {
  ffprobe -v error -select_streams "$2:0" -show_entries stream=codec_name,width,height:format=duration \
    -of default=noprint_wrappers=1:nokey=1 "$1" | tr '\n' ' '
}

image_url=$(run_edit "{\"commands\":[\"resize-image\"],\"options\":{\"scale\":0.5},
  \"assets\":[{\"type\":\"image\",\"src\":\"http://127.0.0.1:$source_port/in.png\"}]}")
curl -sSf -o "$work/out.png" "$image_url"
read -r codec width height _ <<<"$(probe "$work/out.png" v)"
[ "$codec $width $height" = "png 160 120" ] || fail "image output is '$codec $width $height', not 'png 160 120'"
say "image edit done: $codec ${width}x$height"

# A PDF page, drawn by the drawer the binary carries with the image's poppler.
pdf_url=$(run_edit "{\"commands\":[\"resize-image\"],\"options\":{\"width\":400,\"format\":\"png\"},
  \"assets\":[{\"type\":\"image\",\"src\":\"http://127.0.0.1:$source_port/in.pdf\"}]}")
curl -sSf -o "$work/page.png" "$pdf_url"
read -r codec width height _ <<<"$(probe "$work/page.png" v)"
[ "$codec $width $height" = "png 400 200" ] || fail "PDF page output is '$codec $width $height', not 'png 400 200'"
say "PDF page drawn: $codec ${width}x$height"

video_url=$(run_edit "{\"commands\":[\"modify-video-speed\"],\"options\":{\"speed\":2},
  \"assets\":[{\"type\":\"video\",\"src\":\"http://127.0.0.1:$source_port/in.mp4\"}]}")
curl -sSf -o "$work/out.mp4" "$video_url"
read -r codec width height duration <<<"$(probe "$work/out.mp4" v)"
[ "$codec $width $height" = "h264 320 240" ] || fail "video output is '$codec $width $height', not 'h264 320 240'"
python3 -c "import sys; d=float(sys.argv[1]); sys.exit(0 if 0.9 <= d <= 1.2 else 1)" "$duration" \
  || fail "video output lasts $duration s, not about 1 s (2 s at double speed)"
say "video edit done: $codec ${width}x$height, $duration s"

# An encode through the image's own ffmpeg libraries (VP9 and Opus), which the runtime
# stage must keep while it leaves out what nothing loads.
webm_url=$(run_edit "{\"commands\":[\"video-to-webm\"],
  \"assets\":[{\"type\":\"video\",\"src\":\"http://127.0.0.1:$source_port/in.mp4\"}]}")
curl -sSf -o "$work/out.webm" "$webm_url"
read -r codec width height duration <<<"$(probe "$work/out.webm" v)"
[ "$codec $width $height" = "vp9 320 240" ] || fail "webm output is '$codec $width $height', not 'vp9 320 240'"
read -r codec _ <<<"$(probe "$work/out.webm" a)"
[ "$codec" = opus ] || fail "webm audio is '$codec', not opus"
say "webm edit done: vp9 ${width}x$height with opus"

say "passed in $(( $(date +%s) - started )) s"
