#!/usr/bin/env bash
# dash.js (npm `dashjs` 4.7.4, BSD-3-Clause), the DASH player tests/it/dash.rs plays
# `video-to-hls`'s DASH manifests with in Chromium: only its player build (0.7 MB)
# and licence, fetched once by scripts/npm-fetch.sh. Not vendored nor in the binary:
# the playground plays no DASH. Prints the file's path.
set -euo pipefail
# The integrity is `npm view dashjs@4.7.4 dist.integrity`, as hex.
exec "$(dirname "$0")/npm-fetch.sh" dashjs 4.7.4 \
  fa195da36e503cfdc7fcd3b0a94aefb78b8a74cb1eeb4fc6b33f405009e861f8606bca875aae275a2a23528b0e8a281b8a09034c2027f4e45cbd468a0af99f08 \
  dist/dash.mediaplayer.min.js LICENSE.md
