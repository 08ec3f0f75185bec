#!/usr/bin/env bash
# hls.js's full build (npm `hls.js` 1.7.4, Apache-2.0), with the subtitle support the
# playground's vendored light build leaves out: tests/it/hls_subtitles.rs plays
# `video-to-hls`'s WebVTT rendition with it in Chromium. Fetched once from the npm
# registry into target/hlsjs/ (MEDIAEDIT_HLSJS_DIR), checked against the tarball's
# published integrity, never committed nor built into the binary. Only dist/hls.min.js
# and the licence are kept. Prints that file's path; cheap once cached.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.7.4
# `npm view hls.js@1.7.4 dist.integrity`, as hex.
SHA512=dc697119d3ef4f6607bd060eb7ec8ecd3fc3122a2bfea255348ca51c0efb9207a805375042a8bbd06c1e7cd11498741e346ca30bc53adbe6ebbaa5bf4e99beb6

dir="${MEDIAEDIT_HLSJS_DIR:-$PWD/target/hlsjs}/$VERSION"
file="$dir/hls.min.js"
if [ ! -s "$file" ]; then
  mkdir -p "$dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  curl -fsSL --retry 3 -o "$tmp/hlsjs.tgz" "https://registry.npmjs.org/hls.js/-/hls.js-$VERSION.tgz"
  echo "$SHA512  $tmp/hlsjs.tgz" | sha512sum -c --quiet -
  tar xzf "$tmp/hlsjs.tgz" -C "$tmp" package/dist/hls.min.js package/LICENSE
  mv "$tmp/package/LICENSE" "$dir/LICENSE"
  # Whole or not at all: tests running at once may both fetch.
  mv "$tmp/package/dist/hls.min.js" "$file"
fi
echo "$file"
