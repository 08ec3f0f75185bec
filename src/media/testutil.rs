//! Fixtures for the media tests, made in code so that no binary test files are needed.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use image::{DynamicImage, Rgb, RgbImage, Rgba, RgbaImage};

use crate::format::MediaFormat;
use crate::media::config::MediaConfig;
use crate::media::engine::Media;
use crate::media::file::MediaFile;

pub(crate) const RED: [u8; 3] = [230, 20, 20];
pub(crate) const BLUE: [u8; 3] = [20, 20, 230];

pub(crate) fn media() -> Media {
    media_with_limit(100_000_000)
}

pub(crate) fn media_with_limit(max_image_pixels: u64) -> Media {
    Media::new(MediaConfig {
        max_image_pixels,
        process_timeout: Duration::from_secs(60),
        max_processes: 2,
        ffmpeg: "ffmpeg".into(),
        ffprobe: "ffprobe".into(),
        max_video_seconds: 600.0,
        max_video_pixels: 7680 * 4320,
        max_video_frames: 100_000,
        max_extract_frames: 1000,
        face_sample_fps: 5.0,
        max_animation_pixels: 4_000_000_000,
        process_memory_limit: 0,
        scratch_dir: None,
        warm_processes: 0,
        header_readers: true,
        shim_dir: None,
        min_chunk_work: 100_000_000,
        ladder_cores_per_chunk: 2,
        x264_cores_per_chunk: 4,
        vp9_cores_per_chunk: 2,
        max_step_memory_bytes: 512 << 20,
        memory_budget_bytes: 2 << 30,
    })
}

/// Left half red, right half blue: shows which way a picture was turned.
pub(crate) fn two_tone(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, _| {
        Rgb(if x < width / 2 { RED } else { BLUE })
    })
}

/// Left half fully transparent, right half opaque green.
pub(crate) fn half_transparent(width: u32, height: u32) -> RgbaImage {
    RgbaImage::from_fn(width, height, |x, _| {
        if x < width / 2 {
            Rgba([0, 0, 0, 0])
        } else {
            Rgba([20, 200, 20, 255])
        }
    })
}

pub(crate) fn encode(image: DynamicImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).expect("encode fixture");
    out.into_inner()
}

pub(crate) fn solid_jpeg(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
    let image = RgbImage::from_pixel(width, height, Rgb(rgb));
    encode(DynamicImage::ImageRgb8(image), image::ImageFormat::Jpeg)
}

/// A two-tone JPEG whose APP1 Exif segment carries `orientation`.
pub(crate) fn jpeg_with_orientation(width: u32, height: u32, orientation: u16) -> Vec<u8> {
    let jpeg = encode(
        DynamicImage::ImageRgb8(two_tone(width, height)),
        image::ImageFormat::Jpeg,
    );
    let mut out = jpeg[..2].to_vec(); // SOI
    out.extend_from_slice(&exif_app1(orientation));
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// A minimal APP1 segment: `Exif\0\0`, a little-endian TIFF header and one IFD with
/// only the Orientation tag (0x0112, SHORT).
pub(crate) fn exif_app1(orientation: u16) -> Vec<u8> {
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"II*\0");
    tiff.extend_from_slice(&8u32.to_le_bytes()); // first IFD right after the header
    tiff.extend_from_slice(&1u16.to_le_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_le_bytes());
    tiff.extend_from_slice(&3u16.to_le_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_le_bytes()); // one value
    tiff.extend_from_slice(&orientation.to_le_bytes());
    tiff.extend_from_slice(&[0, 0]); // value padded to 4 bytes
    tiff.extend_from_slice(&0u32.to_le_bytes()); // no next IFD

    let mut payload = b"Exif\0\0".to_vec();
    payload.extend_from_slice(&tiff);
    let mut segment = vec![0xFF, 0xE1];
    segment.extend_from_slice(&(payload.len() as u16 + 2).to_be_bytes());
    segment.extend_from_slice(&payload);
    segment
}

/// A two-tone PNG with an `eXIf` chunk carrying `orientation`, right after IHDR.
pub(crate) fn png_with_orientation(width: u32, height: u32, orientation: u16) -> Vec<u8> {
    let png = encode(
        DynamicImage::ImageRgb8(two_tone(width, height)),
        image::ImageFormat::Png,
    );
    let tiff = &exif_app1(orientation)[10..]; // skip marker, length and `Exif\0\0`
    let mut chunk = b"eXIf".to_vec();
    chunk.extend_from_slice(tiff);
    let ihdr_end = 8 + 4 + 4 + 13 + 4;
    let mut out = png[..ihdr_end].to_vec();
    out.extend_from_slice(&(tiff.len() as u32).to_be_bytes());
    out.extend_from_slice(&chunk);
    out.extend_from_slice(&crc32fast::hash(&chunk).to_be_bytes());
    out.extend_from_slice(&png[ihdr_end..]);
    out
}

/// A PNG signature and a valid IHDR claiming `width` x `height`, and no image data.
pub(crate) fn png_claiming_size(width: u32, height: u32) -> Vec<u8> {
    let mut chunk = b"IHDR".to_vec();
    chunk.extend_from_slice(&width.to_be_bytes());
    chunk.extend_from_slice(&height.to_be_bytes());
    chunk.extend_from_slice(&[8, 6, 0, 0, 0]); // 8-bit RGBA, no interlace
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(&13u32.to_be_bytes());
    png.extend_from_slice(&chunk);
    png.extend_from_slice(&crc32fast::hash(&chunk).to_be_bytes());
    png
}

/// Writes `bytes` to `dir/name` as a file of `format`.
pub(crate) fn write_file(dir: &Path, name: &str, bytes: &[u8], format: MediaFormat) -> MediaFile {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write fixture");
    MediaFile { path, format }
}

/// A 2-frame 32x32 test clip made by ffmpeg, with the given output arguments.
pub(crate) fn ffmpeg_clip(dir: &Path, name: &str, output_args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let status = std::process::Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-y"])
        .args([
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=32x32:rate=5:duration=0.4",
        ])
        .args(output_args)
        .arg(&path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg could not make {name}");
    path
}

/// Decodes an output with the `image` crate, which the code under test does not use
/// for encoding, as an independent check.
pub(crate) fn decode(path: &Path) -> DynamicImage {
    image::ImageReader::open(path)
        .expect("open output")
        .with_guessed_format()
        .expect("read output")
        .decode()
        .expect("decode output")
}

/// Names of the top-level ISO-BMFF boxes of an MP4, in file order.
pub(crate) fn top_level_boxes(mp4: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut at = 0usize;
    while at + 8 <= mp4.len() {
        let size = u32::from_be_bytes(mp4[at..at + 4].try_into().unwrap()) as usize;
        names.push(String::from_utf8_lossy(&mp4[at + 4..at + 8]).into_owned());
        let size = match size {
            1 => u64::from_be_bytes(mp4[at + 8..at + 16].try_into().unwrap()) as usize,
            0 => mp4.len() - at,
            n => n,
        };
        if size < 8 {
            break;
        }
        at += size;
    }
    names
}

/// A temp dir removed when dropped.
pub(crate) fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// `image` written as a PNG file `dir/name`.
pub(crate) fn png(dir: &Path, name: &str, image: DynamicImage) -> MediaFile {
    let bytes = encode(image, image::ImageFormat::Png);
    write_file(dir, name, &bytes, MediaFormat::Png)
}

/// The entries of `dir`.
pub(crate) fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

/// An uncompressed little-endian TIFF with the given tags (each a list of SHORT values,
/// or LONG for sizes and offsets) and pixel data in `chunks`: strips, or tiles when
/// `tiled`. The offsets and byte counts of the chunks are added here.
pub(crate) fn raw_tiff(tags: &[(u16, Vec<u32>)], chunks: &[Vec<u8>], tiled: bool) -> Vec<u8> {
    let (offsets, counts) = if tiled { (324, 325) } else { (273, 279) };
    let mut tags = tags.to_vec();
    tags.push((offsets, vec![0; chunks.len()]));
    tags.push((counts, chunks.iter().map(|c| c.len() as u32).collect()));
    tags.sort_by_key(|(tag, _)| *tag);
    let long = |tag: u16| matches!(tag, 256 | 257 | 273 | 278 | 279 | 322 | 323 | 324 | 325);
    let ifd_len = 2 + tags.len() * 12 + 4;
    // Values that do not fit in an entry follow the IFD, then the pixel data.
    let mut extra = Vec::new();
    let mut entries = Vec::new();
    let data_at = 8 + ifd_len + tags.iter().map(|(_, v)| v.len() * 4).sum::<usize>();
    let mut chunk_at = data_at as u32;
    for (tag, values) in &tags {
        let values: Vec<u32> = if *tag == offsets {
            chunks
                .iter()
                .map(|c| {
                    chunk_at += c.len() as u32;
                    chunk_at - c.len() as u32
                })
                .collect()
        } else {
            values.clone()
        };
        let bytes: Vec<u8> = values
            .iter()
            .flat_map(|v| match long(*tag) {
                true => v.to_le_bytes().to_vec(),
                false => (*v as u16).to_le_bytes().to_vec(),
            })
            .collect();
        entries.extend_from_slice(&tag.to_le_bytes());
        entries.extend_from_slice(&(if long(*tag) { 4u16 } else { 3 }).to_le_bytes());
        entries.extend_from_slice(&(values.len() as u32).to_le_bytes());
        if bytes.len() <= 4 {
            entries.extend_from_slice(&bytes);
            entries.resize(entries.len() + 4 - bytes.len(), 0);
        } else {
            entries.extend_from_slice(&((8 + ifd_len + extra.len()) as u32).to_le_bytes());
            extra.extend_from_slice(&bytes);
        }
    }
    let mut out = b"II*\0\x08\0\0\0".to_vec();
    out.extend_from_slice(&(tags.len() as u16).to_le_bytes());
    out.extend_from_slice(&entries);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&extra);
    out.resize(data_at, 0);
    for chunk in chunks {
        out.extend_from_slice(chunk);
    }
    out
}

/// ffmpeg behind a script in `dir` that appends each run's arguments to a log: the
/// script's path (for `MediaConfig::ffmpeg`) and the log's.
pub(crate) fn logging_ffmpeg(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.join("runs.log");
    let wrapper = dir.join("ffmpeg");
    let script = format!(
        "#!/bin/sh\necho \"$@\" >> '{}'\nexec ffmpeg \"$@\"\n",
        log.display()
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    (wrapper, log)
}

/// A `w`x`h` clip at 25 fps of three scenes lasting `scenes` seconds (a test pattern, a
/// fractal zoom, noisy bars: two hard cuts), with a tone as long, by x264 at `preset`:
/// what the chunked encodes, the scenes analysis and the posters are tested on.
pub(crate) fn clip_with_cuts(
    dir: &Path,
    (w, h): (u32, u32),
    scenes: [f64; 3],
    preset: &str,
) -> MediaFile {
    let path = dir.join("cuts.mp4");
    let [a, b, c] = scenes;
    let graph = format!(
        "testsrc2=s={w}x{h}:r=25:d={a}[a];\
         mandelbrot=s={w}x{h}:r=25,trim=duration={b},setpts=PTS-STARTPTS[b];\
         smptebars=s={w}x{h}:r=25:d={c},noise=alls=20:allf=t[c];\
         [a][b][c]concat=n=3,format=yuv420p[v]"
    );
    let tone = format!("sine=frequency=300:duration={:.3}", a + b + c);
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-filter_complex", &graph])
        .args(["-f", "lavfi", "-i", &tone])
        .args(["-map", "[v]", "-map", "0:a", "-c:v", "libx264", "-g", "250"])
        .args(["-preset", preset, "-c:a", "aac", "-shortest"])
        .arg(&path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
    MediaFile {
        path,
        format: MediaFormat::Mp4,
    }
}
