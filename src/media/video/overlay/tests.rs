use std::process::Command;

use image::Rgba;

use crate::media::image::overlay::{place, Text, Watermark};
use crate::media::testutil::{media, tempdir};
use crate::media::video::overlay::*;

const BASE: [u8; 3] = [32, 64, 192];

/// A 320x180 clip of 2 s at 25 fps in `BASE`'s colour with a tone, made by ffmpeg:
/// `args` choose the codecs and container.
fn clip(dir: &Path, name: &str, args: &[&str], format: MediaFormat) -> MediaFile {
    let path = dir.join(name);
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-y"])
        .args([
            "-f",
            "lavfi",
            "-i",
            "color=c=0x2040c0:size=320x180:rate=25:duration=2",
        ])
        .args(["-f", "lavfi", "-i", "sine=frequency=440:duration=2"])
        .args(["-pix_fmt", "yuv420p"])
        .args(args)
        .arg(&path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg could not make {name}");
    MediaFile { path, format }
}

/// Every frame of `video` as RGB, decoded by ffmpeg.
fn frames(video: &Path) -> Vec<image::RgbImage> {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-i"])
        .arg(video)
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"])
        .output()
        .expect("run ffmpeg");
    assert!(out.status.success());
    let size = 320 * 180 * 3;
    assert_eq!(out.stdout.len() % size, 0);
    out.stdout
        .chunks_exact(size)
        .map(|f| image::RgbImage::from_raw(320, 180, f.to_vec()).unwrap())
        .collect()
}

fn assert_colour(frame: &image::RgbImage, (x, y): (u32, u32), expected: [u8; 3], what: &str) {
    let found = frame.get_pixel(x, y).0;
    let close = (0..3).all(|c| found[c].abs_diff(expected[c]) <= 24);
    assert!(
        close,
        "{what} at ({x}, {y}): {found:?}, expected {expected:?}"
    );
}

/// Duration, video frames and audio codec of `file`.
async fn facts(file: &MediaFile) -> (f64, u64, Option<String>) {
    let probe = media().probe(&file.path).await.unwrap();
    let video = probe.video().unwrap();
    assert_eq!(video.codec_name.as_deref(), Some("h264"));
    let frames = video.nb_frames.unwrap();
    let audio = probe.audio().and_then(|a| a.codec_name.clone());
    (probe.format.duration.unwrap(), frames, audio)
}

#[tokio::test]
async fn a_watermark_lands_in_its_corner_on_every_frame_and_the_audio_is_copied() {
    let dir = tempdir();
    let input = clip(
        dir.path(),
        "in.mp4",
        &["-c:v", "libx264", "-c:a", "aac"],
        MediaFormat::Mp4,
    );
    let op = Watermark::new(RgbaImage::from_pixel(20, 10, Rgba([255, 0, 0, 255])));
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let progress = |_: f64| {
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let out = media()
        .overlay_on_video(&input, &op, None, dir.path(), &progress)
        .await
        .unwrap();
    assert_eq!(out.format, MediaFormat::Mp4);
    let (duration, count, audio) = facts(&out).await;
    assert!((duration - 2.0).abs() < 0.06, "{duration}");
    assert_eq!(count, 50);
    assert_eq!(audio.as_deref(), Some("aac"));
    // 64x32 (a fifth of 320), southeast, 16 px in: x 240..304, y 132..164.
    let decoded = frames(&out.path);
    assert_eq!(decoded.len(), 50);
    for frame in [&decoded[0], &decoded[49]] {
        assert_colour(frame, (272, 148), [255, 0, 0], "the overlay");
        assert_colour(frame, (244, 136), [255, 0, 0], "its top-left");
        assert_colour(frame, (300, 160), [255, 0, 0], "its bottom-right");
        assert_colour(frame, (232, 148), BASE, "left of it");
        assert_colour(frame, (312, 148), BASE, "the margin");
        assert_colour(frame, (272, 172), BASE, "below it");
        assert_colour(frame, (40, 40), BASE, "the far corner");
    }
    assert!(calls.load(std::sync::atomic::Ordering::Relaxed) > 0);
    // Only the output is left in the directory: the PNG made for ffmpeg is gone.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "the input and the output");
}

#[tokio::test]
async fn opacity_blends_and_text_is_drawn_on_a_webm_whose_audio_becomes_aac() {
    let dir = tempdir();
    let args = [
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-c:a",
        "libopus",
    ];
    let input = clip(dir.path(), "in.webm", &args, MediaFormat::Webm);
    let png = dir.path().join("half.png");
    RgbaImage::from_pixel(40, 20, Rgba([255, 255, 0, 255]))
        .save(&png)
        .unwrap();
    let out = media()
        .overlay_video(
            &input,
            &png,
            (Gravity::Northwest, 8, 0.5),
            None,
            dir.path(),
            &|_| {},
        )
        .await
        .unwrap();
    let (duration, count, audio) = facts(&out).await;
    assert!((duration - 2.0).abs() < 0.08, "{duration}");
    assert_eq!(count, 50);
    assert_eq!(audio.as_deref(), Some("aac"));
    let yellow: [u8; 3] = [255, 255, 0];
    let mixed = [0, 1, 2].map(|c| ((u16::from(yellow[c]) + u16::from(BASE[c])) / 2) as u8);
    let decoded = frames(&out.path);
    assert_colour(&decoded[10], (28, 18), mixed, "half the overlay");
    assert_colour(&decoded[10], (60, 18), BASE, "right of it");

    let mut text = Text::new("Привет");
    (text.gravity, text.font_size) = (Gravity::North, Some(40.0));
    let out = media()
        .overlay_on_video(&input, &text, None, dir.path(), &|_| {})
        .await
        .unwrap();
    let drawn = text.drawn_for((320, 180)).unwrap();
    let (tw, th) = drawn.dimensions();
    let (x0, y0) = place((320, 180), (tw, th), Gravity::North, 16);
    let frame = &frames(&out.path)[25];
    let white = frame
        .enumerate_pixels()
        .filter(|(_, _, p)| p.0.iter().all(|c| *c > 220))
        .collect::<Vec<_>>();
    assert!(white.len() > 150, "{}", white.len());
    for (x, y, _) in white {
        let (x, y) = (i64::from(x), i64::from(y));
        assert!(x >= x0 && x < x0 + i64::from(tw) && y >= y0 && y < y0 + i64::from(th));
    }
    assert_colour(frame, (160, 150), BASE, "below the text");
}

#[test]
fn the_recipe_copies_mp4_audio_tags_the_matrix_and_places_like_a_still_image() {
    let info = VideoInfo {
        has_audio: true,
        matrix: Matrix::Bt709,
        ..VideoInfo::default()
    };
    let args = overlay_args(&info, (Gravity::Southeast, 16, 1.0), true).join(" ");
    assert!(args.contains("-c:a copy"), "{args}");
    assert!(args.contains("-colorspace bt709"), "{args}");
    assert!(args.contains("out_color_matrix=bt709"), "{args}");
    assert!(!args.contains("colorchannelmixer"), "{args}");
    assert!(args.contains("x='16+floor((W-w-2*16)*1)'"), "{args}");
    let silent = VideoInfo::default();
    let args = overlay_args(&silent, (Gravity::Center, 0, 0.25), false).join(" ");
    assert!(!args.contains("-c:a") && !args.contains("0:a:0"), "{args}");
    assert!(args.contains("colorchannelmixer=aa=0.25"), "{args}");
    assert!(args.contains("-colorspace smpte170m"), "{args}");
    let (x, _) = position(Gravity::Focus { x: 0.3, y: 0.5 }, 4);
    assert!(x.contains("clip(round(0.3*W-w/2),4,W-w-4)"), "{x}");
}
