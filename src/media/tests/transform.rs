//! `Media::transform_image`: boxes, crops and turns of stills and animations, and the
//! animated AVIF output, checked by decoding and probing the files.

use ::image::codecs::gif::{GifDecoder, GifEncoder, Repeat};
use ::image::codecs::webp::WebPDecoder;
use ::image::{AnimationDecoder, Delay, Frame, Rgba, RgbaImage};
use std::path::Path;

use crate::media::image::{BoxResize, Crop, Fit, FrameOp, Gravity, Rotate};
use crate::media::tests::*;

/// The frames of the fixture animation: each a colour of its own, with its delay.
const FRAMES: [([u8; 4], u32); 3] = [
    ([255, 0, 0, 255], 100),
    ([0, 255, 0, 255], 200),
    ([0, 0, 255, 255], 300),
];

/// A 60×40 GIF of `FRAMES`, playing `repeat`.
fn animated_gif(repeat: Repeat) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut gif = GifEncoder::new(&mut out);
        gif.set_repeat(repeat).unwrap();
        for (colour, delay) in FRAMES {
            let picture = RgbaImage::from_pixel(60, 40, Rgba(colour));
            let delay = Delay::from_numer_denom_ms(delay, 1);
            gif.encode_frame(Frame::from_parts(picture, 0, 0, delay))
                .unwrap();
        }
    }
    out
}

fn cover(width: u32, height: u32) -> Vec<Box<dyn FrameOp>> {
    vec![Box::new(BoxResize {
        width: Some(width),
        height: Some(height),
        fit: Fit::Cover,
        gravity: Gravity::Center,
        background: None,
        without_enlargement: false,
    })]
}

fn frames_and_delays(frames: Vec<Frame>) -> Vec<((u32, u32), [u8; 4], u32)> {
    frames
        .into_iter()
        .map(|frame| {
            let (numer, denom) = frame.delay().numer_denom_ms();
            let buffer = frame.into_buffer();
            let centre = buffer.get_pixel(buffer.width() / 2, buffer.height() / 2).0;
            (buffer.dimensions(), centre, numer / denom.max(1))
        })
        .collect()
}

fn assert_fixture_frames(found: &[((u32, u32), [u8; 4], u32)], size: (u32, u32)) {
    assert_eq!(found.len(), FRAMES.len(), "{found:?}");
    for (found, (colour, delay)) in found.iter().zip(FRAMES) {
        assert_eq!(found.0, size);
        let close = found.1.iter().zip(colour).all(|(a, b)| a.abs_diff(b) <= 24);
        assert!(close, "{found:?} against {colour:?}");
        assert_eq!(found.2, delay);
    }
}

#[tokio::test]
async fn animated_inputs_keep_every_frame_and_delay_through_a_box() {
    let dir = tempdir();
    let media = media();
    let gif = animated_gif(Repeat::Infinite);
    let input = write_file(dir.path(), "in.gif", &gif, MediaFormat::Gif);

    let out = media
        .transform_image(&input, cover(30, 30), None, dir.path())
        .await
        .unwrap();
    assert_eq!(out.format, MediaFormat::Gif);
    let bytes = std::fs::read(&out.path).unwrap();
    let decoder = GifDecoder::new(std::io::Cursor::new(bytes)).unwrap();
    let frames = decoder.into_frames().collect_frames().unwrap();
    assert_fixture_frames(&frames_and_delays(frames), (30, 30));

    let out = media
        .transform_image(&input, cover(20, 32), Some(ImageFormat::Webp), dir.path())
        .await
        .unwrap();
    let bytes = std::fs::read(&out.path).unwrap();
    let decoder = WebPDecoder::new(std::io::Cursor::new(bytes)).unwrap();
    let frames = decoder.into_frames().collect_frames().unwrap();
    assert_fixture_frames(&frames_and_delays(frames), (20, 32));
}

/// `ffprobe`'s packets of the first video stream: (duration in seconds) each, and the
/// stream's size.
fn probe_packets(path: &Path) -> (Vec<f64>, (u64, u64)) {
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(["-show_entries", "packet=duration_time:stream=width,height"])
        .args(["-of", "json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let durations = json["packets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["duration_time"].as_str().unwrap().parse().unwrap())
        .collect();
    let stream = &json["streams"][0];
    let size = (
        stream["width"].as_u64().unwrap(),
        stream["height"].as_u64().unwrap(),
    );
    (durations, size)
}

/// The fields of the first `elst` box: flags, then segment duration.
fn edit_list(avif: &[u8]) -> (u8, u64) {
    let at = avif
        .windows(4)
        .position(|w| w == b"elst")
        .expect("an edit list");
    let flags = avif[at + 7];
    let segment = u64::from_be_bytes(avif[at + 12..at + 20].try_into().unwrap());
    (flags, segment)
}

/// The `tkhd` duration (version 1) of the first track.
fn track_duration(avif: &[u8]) -> u64 {
    let at = avif.windows(4).position(|w| w == b"tkhd").unwrap();
    assert_eq!(avif[at + 4], 1, "a version 1 tkhd");
    u64::from_be_bytes(avif[at + 32..at + 40].try_into().unwrap())
}

#[tokio::test]
async fn an_animation_written_as_avif_is_a_sequence_with_every_frame_delay_and_loop() {
    let dir = tempdir();
    let media = media();
    for (repeat, plays) in [(Repeat::Finite(3), Some(3)), (Repeat::Infinite, None)] {
        let gif = animated_gif(repeat);
        let input = write_file(dir.path(), "in.gif", &gif, MediaFormat::Gif);
        let out = media
            .transform_image(&input, cover(40, 40), Some(ImageFormat::Avif), dir.path())
            .await
            .unwrap();
        assert_eq!(out.format, MediaFormat::Avif);
        assert_eq!(media.detect(&out.path).await.unwrap(), MediaFormat::Avif);
        let (durations, size) = probe_packets(&out.path);
        assert_eq!(size, (40, 40));
        assert_eq!(durations, [0.1, 0.2, 0.3], "every frame, each its delay");
        let bytes = std::fs::read(&out.path).unwrap();
        let (flags, segment) = edit_list(&bytes);
        assert_eq!(segment, 600, "the frames span 600 ms");
        match plays {
            Some(n) => {
                assert_eq!(flags, 1, "repeats");
                assert_eq!(track_duration(&bytes), 600 * n);
            }
            None => assert_eq!(track_duration(&bytes), u64::MAX, "for ever"),
        }
        // The frames' colours, decoded by ffmpeg (libdav1d).
        let png = dir.path().join("frame-%d.png");
        let decoded = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-i"])
            .arg(&out.path)
            .args(["-fps_mode", "passthrough"])
            .arg(&png)
            .status()
            .unwrap();
        assert!(decoded.success());
        for (i, (colour, _)) in FRAMES.iter().enumerate() {
            let frame = decode(&dir.path().join(format!("frame-{}.png", i + 1))).to_rgb8();
            let centre = frame.get_pixel(20, 20).0;
            let close = centre.iter().zip(colour).all(|(a, b)| a.abs_diff(*b) <= 24);
            assert!(close, "frame {i}: {centre:?} against {colour:?}");
        }
    }
}

#[tokio::test]
async fn a_larger_moving_animation_encodes_as_avif_past_its_first_frame() {
    // libaom crashed on the frames after the first at a still's speed (7), once
    // frames were large and moving enough to take its inter-frame paths.
    let dir = tempdir();
    let media = media();
    let mut gif = Vec::new();
    {
        let mut encoder = GifEncoder::new(&mut gif);
        encoder.set_repeat(Repeat::Infinite).unwrap();
        for i in 0..6u32 {
            let picture = RgbaImage::from_fn(320, 240, |x, y| {
                let v = ((x + 7 * i) ^ (y + 3 * i)) as u8;
                Rgba([v, v.wrapping_mul(3), (x * 255 / 320) as u8, 255])
            });
            let delay = Delay::from_numer_denom_ms(80, 1);
            encoder
                .encode_frame(Frame::from_parts(picture, 0, 0, delay))
                .unwrap();
        }
    }
    let input = write_file(dir.path(), "moving.gif", &gif, MediaFormat::Gif);
    let out = media
        .transform_image(&input, cover(320, 240), Some(ImageFormat::Avif), dir.path())
        .await
        .unwrap();
    let (durations, size) = probe_packets(&out.path);
    assert_eq!(size, (320, 240));
    assert_eq!(durations, [0.08; 6]);
}

#[tokio::test]
async fn a_crop_outside_the_picture_is_refused_from_the_header() {
    let dir = tempdir();
    let media = media();
    // A PNG whose image data stops short: its header reads, decoding fails.
    let png = encode(
        DynamicImage::ImageRgb8(two_tone(4000, 30)),
        ::image::ImageFormat::Png,
    );
    let idat = png.windows(4).position(|w| w == b"IDAT").unwrap();
    let input = write_file(dir.path(), "cut.png", &png[..idat + 20], MediaFormat::Png);
    let inside: Vec<Box<dyn FrameOp>> = vec![Box::new(Crop {
        x: 0,
        y: 0,
        width: 20,
        height: 20,
    })];
    let err = media
        .transform_image(&input, inside, None, dir.path())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_media", "decoding fails: {err}");
    let crop: Vec<Box<dyn FrameOp>> = vec![Box::new(Crop {
        x: 3990,
        y: 0,
        width: 20,
        height: 20,
    })];
    let err = media
        .transform_image(&input, crop, None, dir.path())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "crop_outside_image", "{err}");
    assert!(files_in(dir.path()).len() == 1, "nothing written");
}

#[tokio::test]
async fn operations_work_on_the_upright_picture_of_an_exif_rotated_jpeg() {
    let dir = tempdir();
    let media = media();
    // Stored 80×40, left red and right blue; orientation 6 shows it 40×80, red on top.
    let jpeg = jpeg_with_orientation(80, 40, 6);
    let input = write_file(dir.path(), "rotated.jpeg", &jpeg, MediaFormat::Jpeg);
    let top: Vec<Box<dyn FrameOp>> = vec![Box::new(Crop {
        x: 0,
        y: 0,
        width: 40,
        height: 30,
    })];
    let out = media
        .transform_image(&input, top, Some(ImageFormat::Png), dir.path())
        .await
        .unwrap();
    let rgb = decode(&out.path).to_rgb8();
    assert_eq!(rgb.dimensions(), (40, 30));
    assert_close(rgb.get_pixel(20, 15).0, RED, 40);

    // A cover box at the bottom, then a half turn: blue, 20×20.
    let ops: Vec<Box<dyn FrameOp>> = vec![
        cover_at(20, 20, Gravity::South),
        Box::new(Rotate {
            angle: 180,
            flip: None,
        }),
    ];
    let out = media
        .transform_image(&input, ops, None, dir.path())
        .await
        .unwrap();
    assert_eq!(out.format, MediaFormat::Jpeg);
    let rgb = decode(&out.path).to_rgb8();
    assert_eq!(rgb.dimensions(), (20, 20));
    assert_close(rgb.get_pixel(10, 10).0, BLUE, 40);
}

fn cover_at(width: u32, height: u32, gravity: Gravity) -> Box<dyn FrameOp> {
    Box::new(BoxResize {
        width: Some(width),
        height: Some(height),
        fit: Fit::Cover,
        gravity,
        background: None,
        without_enlargement: false,
    })
}

#[tokio::test]
async fn a_jpeg_padded_without_a_background_is_padded_white_and_a_png_transparent() {
    let dir = tempdir();
    let media = media();
    let jpeg = write_file(
        dir.path(),
        "in.jpeg",
        &solid_jpeg(200, 100, RED),
        MediaFormat::Jpeg,
    );
    let pad = || -> Vec<Box<dyn FrameOp>> {
        vec![Box::new(BoxResize {
            width: Some(100),
            height: Some(100),
            fit: Fit::Pad,
            gravity: Gravity::Center,
            background: None,
            without_enlargement: false,
        })]
    };
    let out = media
        .transform_image(&jpeg, pad(), None, dir.path())
        .await
        .unwrap();
    let rgb = decode(&out.path).to_rgb8();
    assert_eq!(rgb.dimensions(), (100, 100));
    assert_close(rgb.get_pixel(50, 5).0, [255, 255, 255], 8);
    assert_close(rgb.get_pixel(50, 50).0, RED, 24);

    let out = media
        .transform_image(&jpeg, pad(), Some(ImageFormat::Png), dir.path())
        .await
        .unwrap();
    let rgba = decode(&out.path).to_rgba8();
    assert_eq!(rgba.get_pixel(50, 5).0[3], 0, "transparent padding");
    assert_eq!(rgba.get_pixel(50, 50).0[3], 255);
}
