#!/usr/bin/env bash
# Installs the system packages mediaedit needs when they are missing (Debian/Ubuntu):
# ffmpeg/ffprobe for video; poppler's C++ library for PDF pages; cmake and nasm to build the vendored libjpeg-turbo 3 (SIMD);
# libtiff and libheif (headers and libraries) for TIFF, HEIC and AVIF sources; libclang,
# with which the build generates the Rust declarations of libavif, libtiff and libheif
# from their installed headers (bindgen).
#
# With --bench, also vipsthumbnail (libvips-tools) and cwebp (webp), the benchmarks'
# references.
# With --test, also what the test suite's scale-out tests run against: PostgreSQL
# (Debian's `postgresql`; the tests start a throwaway cluster with initdb + pg_ctl) and
# the S3-protocol server `s3s-fs`, built once with cargo into $CARGO_HOME/bin; Debian's
# `chromium` for the playground test; and the Python tools the tests drive, in a venv.
set -euo pipefail

S3S_FS_VERSION=0.14.1
# The stock tus client the upload tests drive (PyPI), in its own virtual environment.
TUSPY_VERSION=1.1.0
# Prometheus's own Python client, whose parser the metrics test reads /metrics with.
PROMETHEUS_CLIENT_VERSION=0.21.1
# The validator the OpenAPI test checks /v1/openapi.json with.
OPENAPI_VALIDATOR_VERSION=0.9.0
# The property-based API fuzzer the contract test runs against a live server.
SCHEMATHESIS_VERSION=4.32.5
# Drives the playground test in Debian's own `chromium` (Playwright's bundled browsers
# come from a CDN; the distribution's package needs nothing but apt).
PLAYWRIGHT_VERSION=1.65.2
TEST_VENV="${MEDIAEDIT_TEST_VENV:-$HOME/.cache/mediaedit-test-venv}"

with_test_tools=false
with_bench_tools=false
for arg in "$@"; do
  case "$arg" in
    --test) with_test_tools=true ;;
    # The benchmarks' reference tools: vipsthumbnail (libvips-tools) for
    # bench/render.py and bench/perf.py's vips rows, cwebp for its WebP row.
    --bench) with_bench_tools=true ;;
  esac
done

missing=()
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
command -v ffprobe >/dev/null 2>&1 || missing+=(ffmpeg)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v nasm >/dev/null 2>&1 || missing+=(nasm)
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
# libtiff, the reference TIFF decoder, which the binary links.
pkg-config --exists libtiff-4 2>/dev/null || missing+=(libtiff-dev)
# libheif (with libde265, dav1d and libaom behind it) for HEIC and AVIF sources.
pkg-config --exists libheif 2>/dev/null || missing+=(libheif-dev)
# libavif (libaom behind it) writes AVIF outputs, as avifenc does.
pkg-config --exists libavif 2>/dev/null || missing+=(libavif-dev)
# libjxl (and its thread pool) writes JPEG XL outputs, as cjxl does; jxl-oxide reads them.
pkg-config --exists libjxl libjxl_threads 2>/dev/null || missing+=(libjxl-dev)
# libclang and clang's own headers, which bindgen (build.rs) parses the C headers with.
ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || missing+=(libclang-dev)
# poppler's C++ library (and a C++ compiler) for the PDF drawer, the process of ours
# that draws the pages of PDF sources (build.rs compiles src/media/pdf/zygote.cpp).
pkg-config --exists poppler-cpp 2>/dev/null || missing+=(libpoppler-cpp-dev)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
# Little CMS for colour profiles (without it, lcms2-sys builds its bundled copy).
pkg-config --exists lcms2 2>/dev/null || missing+=(liblcms2-dev)
if $with_test_tools; then
  # The corpus test's reference decoder (Pillow) runs in a virtual environment.
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  python3 -m venv --help >/dev/null 2>&1 || missing+=(python3-venv)
  # Debian keeps initdb and pg_ctl in /usr/lib/postgresql/<version>/bin, off PATH.
  if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    missing+=(postgresql)
  fi
  [ -x "${MEDIAEDIT_TEST_CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
  # pdftoppm, the reference our PDF pages are compared with (tests and bench/svg_pdf.py).
  command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
  # qpdf encrypts the PDF test files (tests/it/pdf.rs).
  command -v qpdf >/dev/null 2>&1 || missing+=(qpdf)
  # heif-enc makes the HEIC and AVIF test files.
  command -v heif-enc >/dev/null 2>&1 || missing+=(libheif-examples)
  # curl fetches dash.js from the npm registry (scripts/dashjs.sh).
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  # cjxl makes the JPEG XL test files, djxl (the reference decoder) reads our outputs.
  command -v djxl >/dev/null 2>&1 || missing+=(libjxl-tools)
  # exiftool reads the outputs' EXIF and XMP under each metadata policy.
  command -v exiftool >/dev/null 2>&1 || missing+=(libimage-exiftool-perl)
fi

if $with_bench_tools; then
  command -v vipsthumbnail >/dev/null 2>&1 || missing+=(libvips-tools)
  # cwebp, the reference of bench/perf.py's image-to-webp row.
  command -v cwebp >/dev/null 2>&1 || missing+=(webp)
  command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
fi

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "Installing missing packages: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if $with_test_tools; then
  s3s_fs="${CARGO_HOME:-$HOME/.cargo}/bin/s3s-fs"
  if ! "$s3s_fs" --version 2>/dev/null | grep -q " $S3S_FS_VERSION\$"; then
    echo "Installing s3s-fs $S3S_FS_VERSION (a few minutes, once)" >&2
    started=$(date +%s)
    cargo install s3s-fs --version "$S3S_FS_VERSION" --features binary --locked --quiet
    echo "s3s-fs installed in $(( $(date +%s) - started )) s" >&2
  fi
  if ! "$TEST_VENV/bin/python" -c "import tusclient, prometheus_client, openapi_spec_validator, schemathesis, playwright" 2>/dev/null; then
    echo "Installing tuspy, prometheus-client, openapi-spec-validator, schemathesis and playwright into $TEST_VENV" >&2
    [ -x "$TEST_VENV/bin/pip" ] || python3 -m venv "$TEST_VENV"
    "$TEST_VENV/bin/pip" install --quiet --disable-pip-version-check \
      "tuspy==$TUSPY_VERSION" "prometheus-client==$PROMETHEUS_CLIENT_VERSION" \
      "openapi-spec-validator==$OPENAPI_VALIDATOR_VERSION" "schemathesis==$SCHEMATHESIS_VERSION" \
      "playwright==$PLAYWRIGHT_VERSION"
  fi
fi
