#!/usr/bin/env bash
# dash.js (npm `dashjs` 4.7.4, BSD-3-Clause), the DASH player tests/it/dash.rs plays
# `video-to-hls`'s DASH manifests with in Chromium: fetched once from the npm registry
# into target/dashjs/ (MEDIAEDIT_DASHJS_DIR), checked against the tarball's published
# integrity, never committed nor built into the binary (the playground does not play
# DASH). Only the player build is kept (dash.mediaplayer.min.js, 0.7 MB, and the
# licence). Prints that file's path; cheap once cached.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=4.7.4
# `npm view dashjs@4.7.4 dist.integrity`, as hex.
SHA512=fa195da36e503cfdc7fcd3b0a94aefb78b8a74cb1eeb4fc6b33f405009e861f8606bca875aae275a2a23528b0e8a281b8a09034c2027f4e45cbd468a0af99f08

dir="${MEDIAEDIT_DASHJS_DIR:-$PWD/target/dashjs}/$VERSION"
file="$dir/dash.mediaplayer.min.js"
if [ ! -s "$file" ]; then
  mkdir -p "$dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  curl -fsSL --retry 3 -o "$tmp/dashjs.tgz" "https://registry.npmjs.org/dashjs/-/dashjs-$VERSION.tgz"
  echo "$SHA512  $tmp/dashjs.tgz" | sha512sum -c --quiet -
  tar xzf "$tmp/dashjs.tgz" -C "$tmp" package/dist/dash.mediaplayer.min.js package/LICENSE.md
  mv "$tmp/package/LICENSE.md" "$dir/LICENSE.md"
  # Whole or not at all: tests running at once may both fetch.
  mv "$tmp/package/dist/dash.mediaplayer.min.js" "$file"
fi
echo "$file"
