#!/usr/bin/env bash
# Writes the seed inputs of every fuzz target (scripts/fuzz.sh) under DIR/<target>/:
# small valid files of each format, made with ffmpeg, heif-enc (where installed) and
# Python, so that the fuzzer starts from inputs that reach deep into each parser.
#
#   scripts/fuzz-seeds.sh DIR
set -euo pipefail
dir="${1:?usage: fuzz-seeds.sh DIR}"
for target in request_parse content_detection mp4 matroska gif apng bmp heif_boxes exif \
  render_transform ffprobe_output hls tus_metadata jxl; do
  mkdir -p "$dir/$target"
done

echo '{"assets":[{"type":"image","src":"https://example.com/a.png"}],"commands":["resize-image","image-to-video"],"options":{"scale":0.5,"fps":10}}' \
  >"$dir/request_parse/seed.json"
echo '{"assets":[{"type":"video","src":"http://127.0.0.1:8080/v1/uploads/0b4f3c8e-6a59-4b8f-9f7e-3d2f1b0c9a8d"}],"commands":["video-to-gif"],"options":{"duration":2},"webhook":{"url":"https://example.com/hook"}}' \
  >"$dir/request_parse/upload.json"

printf '%s' 'w:300,h:200,fit:cover,g:smart,f:auto,q:80,we:1,bg:ffffff' >"$dir/render_transform/list"
printf '%s' 'preset:thumb,fx:0.3,fy:0.7,s:0.5' >"$dir/render_transform/preset"
printf '%s' 'filename cGhvdG8uanBn,is_confidential,filetype aW1hZ2UvanBlZw==' >"$dir/tus_metadata/seed"
cp "$(dirname "$0")"/../src/media/testdata/*.json "$dir/ffprobe_output/"
# A master playlist, a NUL, a media playlist: as `video-to-hls` writes them.
printf '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=140800,RESOLUTION=640x360,CODECS="avc1.42c01e,mp4a.40.2"\nv0/index.m3u8\n\0#EXTM3U\n#EXT-X-MAP:URI="init_0.mp4"\n#EXTINF:2.000000,\nseg0.m4s\n#EXTINF:0.040000,\nseg1.m4s\n#EXT-X-ENDLIST\n' \
  >"$dir/hls/seed.m3u8"

ff() { ffmpeg -v error -y -f lavfi "$@"; }
if command -v ffmpeg >/dev/null; then
  src=(-i testsrc=size=16x16:rate=10)
  ff "${src[@]}" -frames:v 1 "$dir/content_detection/seed.jpg"
  ff "${src[@]}" -frames:v 1 "$dir/content_detection/seed.webp"
  ff "${src[@]}" -frames:v 1 "$dir/content_detection/seed.bmp"
  ff "${src[@]}" -frames:v 3 -c:v libx264 -pix_fmt yuv420p "$dir/mp4/seed.mp4"
  ff "${src[@]}" -frames:v 3 -c:v libx264 -pix_fmt yuv420p "$dir/mp4/seed.mov"
  ff "${src[@]}" -frames:v 3 -c:v libvpx -b:v 50k "$dir/matroska/seed.webm"
  ff "${src[@]}" -frames:v 3 -c:v libx264 -pix_fmt yuv420p "$dir/matroska/seed.mkv"
  ff "${src[@]}" -frames:v 3 "$dir/gif/seed.gif"
  ff "${src[@]}" -frames:v 3 -plays 0 -f apng "$dir/apng/seed.png"
  ff "${src[@]}" -frames:v 1 "$dir/bmp/seed24.bmp"
  ff "${src[@]}" -frames:v 1 -pix_fmt pal8 "$dir/bmp/seed8.bmp"
  ff "${src[@]}" -frames:v 1 -pix_fmt rgb555le "$dir/bmp/seed16.bmp"
  ff "${src[@]}" -frames:v 1 -pix_fmt monow "$dir/bmp/seed1.bmp"
  ff "${src[@]}" -frames:v 1 "$dir/exif/plain.jpg"
  for seed in "$dir/mp4/seed.mp4" "$dir/matroska/seed.webm" "$dir/gif/seed.gif"; do
    ffprobe -v error -print_format json -show_format -show_streams "$seed" \
      >"$dir/ffprobe_output/$(basename "$seed").json"
  done
  if command -v heif-enc >/dev/null; then
    ff "${src[@]}" -frames:v 1 "$dir/heif_boxes/source.png"
    heif-enc -q 50 "$dir/heif_boxes/source.png" -o "$dir/heif_boxes/seed.heic" >/dev/null 2>&1 || true
    heif-enc -A -q 50 "$dir/heif_boxes/source.png" -o "$dir/heif_boxes/seed.avif" >/dev/null 2>&1 || true
    rm -f "$dir/heif_boxes/source.png"
  fi
  if command -v cjxl >/dev/null; then
    # A lossy still, a lossless one, and a 3-frame animation (Debian libjxl-tools).
    ff "${src[@]}" -frames:v 1 "$dir/jxl/source.png"
    ff "${src[@]}" -frames:v 3 "$dir/jxl/source.gif"
    cjxl "$dir/jxl/source.png" "$dir/jxl/lossy.jxl" -d 2 >/dev/null 2>&1 || true
    cjxl "$dir/jxl/source.png" "$dir/jxl/lossless.jxl" -d 0 >/dev/null 2>&1 || true
    cjxl "$dir/jxl/source.gif" "$dir/jxl/animated.jxl" >/dev/null 2>&1 || true
    rm -f "$dir/jxl/source.png" "$dir/jxl/source.gif"
  fi
fi

python3 - "$dir" <<'PY'
import struct, sys, zlib
d = sys.argv[1]
def w(path, data):
    open(f"{d}/{path}", "wb").write(data)
def chunk(t, b):
    return struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b))
def png(extra=b""):
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 3, 8, 6, 0, 0, 0))
    idat = chunk(b"IDAT", zlib.compress(b"".join(b"\0" + b"\x80" * 16 for _ in range(3))))
    return b"\x89PNG\r\n\x1a\n" + ihdr + extra + idat + chunk(b"IEND", b"")
# EXIF: a TIFF structure whose one IFD entry is Orientation 6.
tiff = b"II*\0" + struct.pack("<IHHHIHH", 8, 1, 0x0112, 3, 1, 6, 0) + struct.pack("<I", 0)
w("content_detection/seed.png", png())
w("exif/seed.jpg", b"\xff\xd8" + b"\xff\xe1" + struct.pack(">H", len(tiff) + 8) + b"Exif\0\0" + tiff + b"\xff\xd9")
w("exif/seed.png", png(chunk(b"eXIf", tiff)))
def riff(chunks):
    body = b"WEBP" + b"".join(t + struct.pack("<I", len(c)) + c + (b"\0" if len(c) % 2 else b"") for t, c in chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body
vp8x = bytes([0x08, 0, 0, 0]) + (3).to_bytes(3, "little") + (2).to_bytes(3, "little")
w("exif/seed.webp", riff([(b"VP8X", vp8x), (b"EXIF", b"Exif\0\0" + tiff)]))
# HEIF boxes: meta (a full box) with pitm, and iprp holding ipco (ispe, irot) and ipma.
def box(t, b):
    return struct.pack(">I", len(b) + 8) + t + b
def full(t, b, version=0):
    return box(t, bytes([version, 0, 0, 0]) + b)
ipco = box(b"ipco", full(b"ispe", struct.pack(">II", 64, 32)) + box(b"irot", b"\x01"))
ipma = full(b"ipma", struct.pack(">IHB", 1, 1, 2) + bytes([0x81, 0x02]))
meta = full(b"meta", full(b"pitm", struct.pack(">H", 1)) + box(b"iprp", ipco + ipma))
w("heif_boxes/seed.heif", box(b"ftyp", b"heic\0\0\0\0mif1heic") + meta)
# BMP: an 8-bit RLE picture with a run, literal pixels, a delta and the end marker.
rle = bytes([3, 1, 0, 3, 2, 1, 2, 0, 0, 0, 2, 1, 0, 0, 1])
palette = b"".join(bytes([b, g, r, 0]) for r, g, b in [(0, 0, 0), (255, 0, 0), (0, 0, 255)])
info = struct.pack("<IiiHHIIiiII", 40, 4, 3, 1, 8, 1, len(rle), 2835, 2835, 3, 0)
offset = 14 + len(info) + len(palette)
w("bmp/rle8.bmp", b"BM" + struct.pack("<IHHI", offset + len(rle), 0, 0, offset) + info + palette + rle)
# GIF: a 2x2 two-frame animation, the second frame without a colour table.
gif = b"GIF89a" + struct.pack("<HHBBB", 2, 2, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
gif += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\0\0\0"
for local in (False, True):
    gif += b"\x21\xf9\x04\x04\x0a\0\0\0"
    gif += b"\x2c" + struct.pack("<HHHHB", 0, 0, 2, 2, 0x80 if local else 0)
    if local:
        gif += b"\0\0\0\xff\0\0"
    gif += b"\x02\x02\x44\x01\0"
gif += b"\x3b"
w("gif/two.gif", gif)
PY
