#!/usr/bin/env python3
"""What the reference decoders make of every file of the corpus, as JSON on stdout.

Run by scripts/corpus.sh over the unpacked corpus; read by the corpus test
(tests/it/corpus/), which runs every command over the same files and compares.

- Images (JPEG, PNG, WebP, TIFF, BMP): Pillow, with EXIF orientation applied
  (ImageOps.exif_transpose, which reads JPEG APP1, WebP's EXIF chunk, PNG's eXIf chunk and
  the TIFF Orientation tag). `ok` is false where Pillow refuses the file (truncated,
  corrupt, a decompression bomb).
- HEIC/HEIF: pillow-heif (libheif), which applies `irot`/`imir` itself; AVIF: Pillow's
  own plugin (libavif, AVIF's reference decoder).
- Animated WebP and APNG: their frames and each frame's delay, as Pillow reads them.
- GIF: Pillow's frame count and the logical screen; delays by the browsers' rule (a delay
  under 20 ms counts as 100 ms); the first frame.
- Video (MP4 and the copies of its clips in Matroska, WebM, QuickTime, M4V, 3GP, AVI,
  MPEG-TS and Ogg): ffprobe's first video stream, each file read by the demuxer ffprobe
  picks for it: its display aspect (sample aspect ratio and rotation applied), its frames
  as decoded (`-count_frames`: an AVI's index also counts the empty chunks ffmpeg pads
  B-frame timing with, and Matroska, MPEG-TS and Ogg state no count) and the stream's
  duration (Matroska states none of its own: there, ffmpeg's per-track `DURATION` tag,
  else the container's).

An embedded RGB or grey ICC profile is applied (to sRGB, with ImageCms), as the service
does.

Every picture is summarised as an 8x8 grid of mean colours, flattened onto white, which
the test compares coarsely with the same summary of our outputs.
"""

import io
import json
import subprocess
import sys
from pathlib import Path

import pillow_heif
from PIL import Image, ImageCms, ImageOps

pillow_heif.register_heif_opener()

Image.MAX_IMAGE_PIXELS = 100_000_000  # the service's default pixel limit
VIDEO_SUFFIXES = {".mp4", ".mov", ".m4v", ".3gp", ".mkv", ".webm", ".avi", ".ts", ".ogv"}
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".mpo", ".png", ".apng", ".webp", ".tif", ".tiff", ".bmp",
                  ".heic", ".heif", ".hif", ".avif"}


def as_rgba(image):
    """`image` as 8-bit RGBA, the way libpng and browsers show it."""
    if image.mode.startswith("I"):
        # Pillow clips 16-bit grey to 8 bits where every other decoder scales it, and
        # drops its tRNS grey value on the way.
        key = image.info.get("transparency")
        values = list(image.convert("I").getdata())
        rgba = Image.new("RGBA", image.size)
        rgba.putdata([(v >> 8, v >> 8, v >> 8, 0 if v == key else 255) for v in values])
        return rgba
    if image.mode == "1" and image.info.get("transparency", 0) > 1:
        # A tRNS grey value beyond a 1-bit image's range: libpng ignores it.
        image.info.pop("transparency")
    return image.convert("RGBA")


def grid(image):
    """An 8x8 grid of mean RGB colours of `image` laid over white."""
    rgba = as_rgba(image)
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    white.alpha_composite(rgba)
    small = white.convert("RGB").resize((8, 8), Image.BOX)
    return [list(small.getpixel((x, y))) for y in range(8) for x in range(8)]


def in_srgb(image):
    """`image` with its embedded ICC profile applied, as the service applies it (with
    the same lcms2 that Pillow's ImageCms wraps): RGB profiles other than sRGB and grey
    profiles, to sRGB, perceptual intent. A profile that does not parse leaves the
    pixels alone."""
    icc = image.info.get("icc_profile")
    if not icc:
        return image
    try:
        profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        description = ImageCms.getProfileDescription(profile).strip()
    except Exception:  # noqa: BLE001 - a broken profile is ignored, as browsers do
        return image
    space = profile.profile.xcolor_space.strip()
    srgb = ImageCms.createProfile("sRGB")
    if space == "GRAY":
        # A grey profile ("Dot Gain 20%"), as browsers apply it: the grey to sRGB.
        rgba = as_rgba(image)
        grey = ImageCms.profileToProfile(rgba.convert("L"), profile, srgb,
                                         renderingIntent=0, outputMode="RGB")
        if not has_transparency(image):
            return grey
        grey.putalpha(rgba.getchannel("A"))
        return grey
    if space != "RGB" or description.startswith("sRGB"):
        return image
    mode = "RGBA" if has_transparency(image) else "RGB"
    pixels = as_rgba(image) if mode == "RGBA" else as_rgba(image).convert("RGB")
    return ImageCms.profileToProfile(pixels, profile, srgb, renderingIntent=0, outputMode=mode)


def has_transparency(image):
    return as_rgba(image).getextrema()[3][0] < 255


def image_reference(path):
    try:
        with Image.open(path) as image:
            image.load()
            # Orientation from EXIF only: browsers ignore XMP's tiff:Orientation.
            for key in ("xmp", "XML:com.adobe.xmp"):
                image.info.pop(key, None)
            upright = in_srgb(ImageOps.exif_transpose(image))
            upright.info.update(image.info)
            return {
                "ok": True,
                "size": list(upright.size),
                "alpha": has_transparency(upright),
                "grid": grid(upright),
                **animation(image),
            }
    except Exception as error:  # noqa: BLE001 - any refusal is the answer
        return {"ok": False, "error": type(error).__name__}


def animation(image):
    """An animated WebP or APNG's frames, each one's delay in milliseconds (as stored),
    and whether an APNG's default image is a frame of its own (Pillow counts it as frame
    0, lasting nothing). Nothing for stills, or where a later frame does not decode (then
    viewers, and the service, show the still image)."""
    frames = getattr(image, "n_frames", 1)
    if frames < 2 or image.format not in ("PNG", "WEBP"):
        return {}
    delays = []
    try:
        for index in range(frames):
            image.seek(index)
            image.load()
            delays.append(float(image.info.get("duration") or 0))
    except Exception:  # noqa: BLE001 - a broken animation shows as its still image
        return {}
    separate = image.format == "PNG" and bool(image.info.get("default_image"))
    return {"frames": frames, "delays": delays, "default_image": separate}


def gif_reference(path):
    try:
        with Image.open(path) as image:
            screen = list(image.size)
            first = grid(image.convert("RGBA"))
            total_ms = 0
            for index in range(image.n_frames):
                image.seek(index)
                image.load()
                delay = image.info.get("duration") or 0
                total_ms += delay if delay >= 20 else 100
            return {
                "ok": True,
                "size": screen,
                "frames": image.n_frames,
                "seconds": total_ms / 1000,
                "grid": first,
            }
    except Exception as error:  # noqa: BLE001
        return {"ok": False, "error": type(error).__name__}


def video_reference(path):
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
         "-show_entries", "stream=width,height,sample_aspect_ratio,nb_read_frames,duration"
         ":stream_tags=DURATION:stream_side_data=rotation:format=duration", "-of", "json",
         str(path)],
        capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return {"ok": False, "error": "ffprobe"}
    probed = json.loads(probe.stdout)
    stream = probed["streams"][0]
    num, den = (int(v) for v in stream.get("sample_aspect_ratio", "1:1").split(":"))
    sar = num / den if num and den else 1.0
    aspect = stream["width"] * sar / stream["height"]
    rotation = next((int(d["rotation"]) for d in stream.get("side_data_list", [])
                     if "rotation" in d), 0)
    if rotation % 180:
        aspect = 1 / aspect
    return {
        "ok": True,
        "aspect": aspect,
        "frames": int(stream["nb_read_frames"]),
        "seconds": stream_seconds(stream, probed["format"]),
    }


def stream_seconds(stream, container):
    """The video stream's duration; Matroska has no per-stream duration field, so there
    the `DURATION` tag ffmpeg's muxer writes per track ("00:00:04.004000000"), else the
    container's."""
    if "duration" in stream:
        return float(stream["duration"])
    tag = stream.get("tags", {}).get("DURATION")
    if tag:
        hours, minutes, seconds = tag.split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    return float(container["duration"])


def main():
    root = Path(sys.argv[1])
    entries = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        suffix = path.suffix.lower()
        if suffix in IMAGE_SUFFIXES:
            kind, reference = "image", image_reference(path)
        elif suffix == ".gif":
            kind, reference = "gif", gif_reference(path)
        elif suffix in VIDEO_SUFFIXES:
            kind, reference = "video", video_reference(path)
        else:
            continue
        entries.append({"path": str(path.relative_to(root)), "kind": kind, **reference})
    json.dump(entries, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
