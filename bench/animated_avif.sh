#!/usr/bin/env bash
# Animated AVIF against GIF and animated WebP on real animations, at matched SSIM.
#
# For each GIF: the service writes it as GIF, animated WebP (q80) and AVIF (an AV1
# sequence, quantizer 25) through `Media::transform_image` at scale 1
# (examples/animated_formats.rs). SSIM (ffmpeg's ssim filter, all planes in YUV 4:4:4,
# transparent pixels as black) is measured frame by frame against the source's frames
# as viewers composite them.
# Then WebP is made again by the same libwebp (ffmpeg's libwebp_anim) at the lowest
# quality whose SSIM reaches the AVIF's: the WebP that matches the AVIF's SSIM.
#
# bench/animated_avif.sh [GIF...]   (default: the corpus's chi.gif and iss634.gif)
set -euo pipefail
corpus=${MEDIAEDIT_CORPUS_DIR:-target/corpus}
sources=("$@")
[ ${#sources[@]} -gt 0 ] || sources=("$corpus/pillow/chi.gif" "$corpus/pillow/iss634.gif")
bin=${ANIMATED_FORMATS:-target/debug/examples/animated_formats}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

frames() { # FILE DIR: the file's frames as DIR/NNN.png
    mkdir -p "$2"
    case "$1" in
    *.avif) ffmpeg -v error -i "$1" -fps_mode passthrough "$2/%03d.png" ;;
    *) "$bin" --frames "$1" "$2" ;;
    esac
}
# Transparent pixels compared as black (the AVIF's colour track carries the colour
# under them, which is the source's; WebP keeps no colour under alpha 0).
flat="format=rgba,premultiply=inplace=1,format=yuv444p"
ssim() { # DIR DIR: mean SSIM over the frames
    ffmpeg -v info -framerate 1 -i "$1/%03d.png" -framerate 1 -i "$2/%03d.png" \
        -lavfi "[0:v]$flat[a];[1:v]$flat[b];[a][b]ssim" -f null - 2>&1 |
        grep -o 'All:[0-9.]*' | cut -d: -f2
}

echo "| animation | frames | format | bytes | SSIM | bytes vs AVIF |"
echo "|---|---|---|---|---|---|"
for src in "${sources[@]}"; do
    name=$(basename "$src" .gif)
    dir="$work/$name"
    mkdir -p "$dir"
    "$bin" "$src" "$dir" >/dev/null
    frames "$src" "$dir/src"
    count=$(ls "$dir/src" | wc -l)
    avif_bytes=$(stat -c %s "$dir/ours.avif")
    frames "$dir/ours.avif" "$dir/avif"
    avif_ssim=$(ssim "$dir/avif" "$dir/src")
    row() { printf '| %s | %s | %s | %s | %s | %.1f× |\n' "$name" "$count" "$1" "$2" "$3" \
        "$(echo "$2 / $avif_bytes" | bc -l)"; }
    row "GIF (the source)" "$(stat -c %s "$src")" "1"
    for ext in gif webp; do
        frames "$dir/ours.$ext" "$dir/$ext"
        row "$ext (ours, q80 for WebP)" "$(stat -c %s "$dir/ours.$ext")" "$(ssim "$dir/$ext" "$dir/src")"
    done
    row "AVIF (ours, quantizer 25)" "$avif_bytes" "$avif_ssim"
    # The WebP matching the AVIF's SSIM: the lowest quality that reaches it.
    matched=""
    for q in 5 10 20 30 40 50 60 70 80 90 95 100; do
        ffmpeg -v error -y -i "$src" -c:v libwebp_anim -quality "$q" -loop 0 "$dir/q$q.webp"
        rm -rf "$dir/wq"
        frames "$dir/q$q.webp" "$dir/wq"
        s=$(ssim "$dir/wq" "$dir/src")
        if [ "$(echo "$s >= $avif_ssim" | bc -l)" = 1 ]; then
            row "WebP at matched SSIM (quality $q)" "$(stat -c %s "$dir/q$q.webp")" "$s"
            matched=1
            break
        fi
    done
    [ -n "$matched" ] || row "WebP at quality 100 (lossy; none reaches the AVIF's SSIM)" \
        "$(stat -c %s "$dir/q100.webp")" "$s"
done
