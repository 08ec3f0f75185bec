#!/usr/bin/env bash
# hls.js's full build (npm `hls.js` 1.7.4, Apache-2.0), with the subtitle support the
# playground's vendored light build leaves out: tests/it/hls_subtitles.rs shows
# `video-to-hls`'s WebVTT rendition with it in Chromium. Only dist/hls.min.js and the
# licence, fetched once by scripts/npm-fetch.sh. Prints the file's path.
set -euo pipefail
# The integrity is `npm view hls.js@1.7.4 dist.integrity`, as hex.
exec "$(dirname "$0")/npm-fetch.sh" hls.js 1.7.4 \
  dc697119d3ef4f6607bd060eb7ec8ecd3fc3122a2bfea255348ca51c0efb9207a805375042a8bbd06c1e7cd11498741e346ca30bc53adbe6ebbaa5bf4e99beb6 \
  dist/hls.min.js LICENSE
