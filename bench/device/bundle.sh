#!/usr/bin/env bash
# Packs what the many-core measurements need for a bare machine that has python3 and
# nothing else (no ffmpeg, no package registry): a release build of mediaedit, an
# ffmpeg 5.1 and ffprobe built from Debian's source with only the external encoders
# the service uses (so that their libraries are few), and every library the three
# load, with an RPATH of /tmp/b/lib on each binary (an RPATH, not a RUNPATH, so the
# libraries' own dependencies are found there too). Writes .devbench/bundle.tar.xz
# (about 37 MB) and copies run.sh beside it; `.devbench/` is for .git/info/exclude.
#
#   bench/device/bundle.sh        (Debian 12; takes ~10 min on 16 cores' worth of
#                                  make, ~25 on 2; needs deb-src access to Debian)
#
# Then, on the machine, from the repository root: `bash .devbench/run.sh` (see there).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=${WORK:-/tmp/device-bundle}
mkdir -p "$work" .devbench
apt-get install -y -qq nasm patchelf libx264-dev libvpx-dev libtheora-dev libvorbis-dev \
    libopus-dev libwebp-dev libmp3lame-dev libdav1d-dev >/dev/null
if [ ! -x "$work/ffinst/bin/ffmpeg" ]; then
    (
        cd "$work"
        echo "Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" >/etc/apt/sources.list.d/mediaedit-src.sources
        apt-get update -qq && apt-get source --download-only ffmpeg >/dev/null
        rm /etc/apt/sources.list.d/mediaedit-src.sources
        tar xf ffmpeg_*.orig.tar.xz && cd ffmpeg-*/
        # lavfi is an input device: the benchmarks make their sources with it.
        ./configure --prefix="$work/ffinst" --disable-autodetect --enable-gpl --enable-version3 \
            --disable-shared --enable-static --disable-doc --disable-ffplay --disable-devices \
            --enable-indev=lavfi --enable-zlib --enable-libx264 --enable-libvpx --enable-libtheora \
            --enable-libvorbis --enable-libopus --enable-libwebp --enable-libmp3lame \
            --enable-libdav1d --enable-pthreads >/dev/null
        make -j"$(nproc)" >/dev/null && make install >/dev/null
    )
fi
cargo build --release --quiet
pack="$work/pack"
rm -rf "$pack" && mkdir -p "$pack/bin" "$pack/lib"
cp "$work/ffinst/bin/ffmpeg" "$work/ffinst/bin/ffprobe" "$pack/bin/"
strip -o "$pack/bin/mediaedit" target/release/mediaedit
strip "$pack/bin/ffmpeg" "$pack/bin/ffprobe"
# glibc stays the machine's (it must be 2.36 or later); everything else travels.
for bin in "$pack"/bin/*; do ldd "$bin"; done | awk '{print $3}' | grep / | sort -u \
    | grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv)\.so|ld-linux' \
    | xargs -I{} cp -L {} "$pack/lib/"
for bin in "$pack"/bin/*; do patchelf --force-rpath --set-rpath /tmp/b/lib "$bin"; done
tar cf - -C "$pack" . | xz -T0 -6 >"$root/.devbench/bundle.tar.xz"
cp bench/device/run.sh "$root/.devbench/run.sh"
ls -la "$root/.devbench"
