//! Animation kept (docs/API.md): animated GIF and WebP through `resize-image` and
//! `image-to-webp` keep every frame, its delay and the loop count (APNG: `apng.rs`);
//! `gif-to-video` plays animated WebP and APNG as it plays GIF; `image-to-video` takes
//! the first frame; the video limits apply.

use std::io::Cursor;

use image::codecs::webp::WebPDecoder;
use image::AnimationDecoder;
use serde_json::json;

use crate::apng;
use crate::clips::*;
use crate::fixtures;
use crate::helpers::*;

/// A frame's size and its delay in milliseconds.
type FrameSummary = ((u32, u32), u32);

/// Every frame's size and delay (ms) of an animated WebP, and how often it plays
/// (0: forever).
fn frames_of(bytes: &[u8]) -> (Vec<FrameSummary>, u32) {
    let plays = |count: image::metadata::LoopCount| match count {
        image::metadata::LoopCount::Infinite => 0,
        image::metadata::LoopCount::Finite(n) => n.get(),
    };
    let summary = |frames: image::Frames| {
        frames
            .map(|f| {
                let f = f.unwrap();
                let (n, d) = f.delay().numer_denom_ms();
                (f.buffer().dimensions(), n / d.max(1))
            })
            .collect::<Vec<_>>()
    };
    let decoder = WebPDecoder::new(Cursor::new(bytes)).unwrap();
    assert!(decoder.has_animation());
    let count = plays(decoder.loop_count());
    (summary(decoder.into_frames()), count)
}

#[tokio::test]
async fn an_animated_gif_stays_an_animated_gif_through_resize_image() {
    let app = spawn_app().await;
    let gif = lavfi_gif("testsrc2=size=64x48:rate=10:duration=1", "a.gif");
    let src = app.fixtures.add("a.gif", gif);
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(json!({"scale": 0.5}))))
        .await;
    assert_eq!(doc["attributes"]["outputs"][0]["format"], "gif");
    let out = &app.download_all(&doc).await[0];
    let probe = probe(out);
    let video = video_stream(&probe);
    assert_eq!(dims(video), (32, 24));
    assert_eq!(frames(video), 10);
    assert!(
        (duration(&probe) - 1.0).abs() < 0.05,
        "lasts {}",
        duration(&probe)
    );
}

#[tokio::test]
async fn image_to_webp_makes_an_animated_webp_with_the_delays_and_it_resizes_again() {
    let app = spawn_app().await;
    let gif = lavfi_gif("testsrc2=size=64x48:rate=10:duration=1", "a.gif");
    let src = app.fixtures.add("a.gif", gif);
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let webp = std::fs::read(&app.download_all(&doc).await[0]).unwrap();
    let (frames, plays) = frames_of(&webp);
    assert_eq!(frames.len(), 10);
    assert!(
        frames
            .iter()
            .all(|(size, delay)| *size == (64, 48) && *delay == 100),
        "{frames:?}"
    );
    assert_eq!(plays, 0, "loops forever, as the GIF");

    // The animated WebP in: resized, still animated, as WebP.
    let again = app.fixtures.add("b.webp", webp);
    let doc = app
        .run_done(edit(&again, &["resize-image"], Some(json!({"scale": 2}))))
        .await;
    let (frames, _) = frames_of(&std::fs::read(&app.download_all(&doc).await[0]).unwrap());
    assert_eq!(frames.len(), 10);
    assert_eq!(frames[0].0, (128, 96));
}

#[tokio::test]
async fn image_to_video_takes_an_animations_first_frame() {
    let app = spawn_app().await;
    let gif = app.fixtures.add(
        "g.gif",
        lavfi_gif("testsrc2=size=64x48:rate=10:duration=1", "g.gif"),
    );
    let doc = app
        .run_done(edit(
            &gif,
            &["image-to-video"],
            Some(json!({"duration": 1, "fps": 5})),
        ))
        .await;
    let probe = probe(&app.download_all(&doc).await[0]);
    assert_eq!(dims(video_stream(&probe)), (64, 48));
    assert_eq!(frames(video_stream(&probe)), 5);
}

/// The colour at the centre of every frame of a video, and when each frame starts.
fn video_frames(path: &std::path::Path) -> Vec<([u8; 3], f64)> {
    let starts = frame_starts(path);
    let raw = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args(["-vf", "crop=2:2", "-fps_mode", "passthrough"])
        .args(["-pix_fmt", "rgb24", "-f", "rawvideo", "-"])
        .output()
        .unwrap();
    let colours = raw.stdout.chunks_exact(12).map(|px| [px[0], px[1], px[2]]);
    colours.zip(starts).collect()
}

fn assert_video_shows(path: &std::path::Path, expected: &[([u8; 3], f64)], seconds: f64) {
    let probe = probe(path);
    assert_eq!(frames(video_stream(&probe)), expected.len() as u64);
    assert!(
        (duration(&probe) - seconds).abs() < 0.002,
        "lasts {}, not {seconds}",
        duration(&probe)
    );
    let shown = video_frames(path);
    assert_eq!(shown.len(), expected.len(), "{shown:?}");
    for ((colour, start), (want, want_start)) in shown.iter().zip(expected) {
        let close = colour.iter().zip(want).all(|(a, b)| a.abs_diff(*b) <= 16);
        assert!(close, "{colour:?} is not {want:?}: {shown:?}");
        assert!((start - want_start).abs() < 0.0015, "{shown:?}");
    }
}

const RGB_SHOWN: [([u8; 3], f64); 3] =
    [([255, 0, 0], 0.0), ([0, 255, 0], 0.1), ([0, 0, 255], 0.35)];

#[tokio::test]
async fn gif_to_video_plays_an_apng_frame_by_frame_for_its_own_delays() {
    let app = spawn_app().await;
    // The default image is not a frame: the video leaves it out, as players do.
    let src = app
        .fixtures
        .add("a.png", apng::three_frames(Some(apng::MAGENTA), 0));
    let doc = app.run_done(edit(&src, &["gif-to-video"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(dims(video_stream(&probe(out))), (40, 30));
    assert_video_shows(out, &RGB_SHOWN, 0.75);
}

#[tokio::test]
async fn gif_to_video_plays_an_animated_webp_in_a_pipeline() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", apng::three_frames(None, 0));
    let doc = app
        .run_done(edit(&src, &["image-to-webp", "gif-to-video"], None))
        .await;
    assert_video_shows(&app.download_all(&doc).await[0], &RGB_SHOWN, 0.75);
}

#[tokio::test]
async fn gif_to_video_refuses_a_still_png_saying_it_is_not_animated() {
    let app = spawn_app().await;
    let src = app.fixtures.add("s.png", fixtures::png(16, 16));
    let error = app.run_failed(edit(&src, &["gif-to-video"], None)).await;
    assert_eq!(error["code"], "unsupported_input_format", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("not animated"),
        "{error}"
    );
}

#[tokio::test]
async fn an_animation_past_the_frame_limit_fails_with_too_many_frames() {
    let app = spawn_app_with(|c| c.max_video_frames = 5).await;
    let gif = lavfi_gif("testsrc2=size=32x32:rate=10:duration=1", "long.gif");
    let src = app.fixtures.add("long.gif", gif);
    let error = app.run_failed(edit(&src, &["image-to-webp"], None)).await;
    assert_eq!(error["code"], "too_many_frames", "{error}");
}

#[tokio::test]
async fn frames_alike_stay_frames_of_their_own_in_an_animated_webp() {
    let app = spawn_app().await;
    // Red for 100 ms, the same red for 200 ms, blue for 300 ms; then all alike.
    let gif = |colours: &[([u8; 4], u32)]| {
        let mut bytes = Vec::new();
        {
            let mut encoder = image::codecs::gif::GifEncoder::new(&mut bytes);
            for &(colour, ms) in colours {
                let frame = image::Frame::from_parts(
                    image::RgbaImage::from_pixel(16, 16, image::Rgba(colour)),
                    0,
                    0,
                    image::Delay::from_numer_denom_ms(ms, 1),
                );
                encoder.encode_frame(frame).unwrap();
            }
        }
        bytes
    };
    let (red, blue) = ([255, 0, 0, 255], [0, 0, 255, 255]);
    for (name, colours) in [
        ("alike.gif", vec![(red, 100), (red, 200), (blue, 300)]),
        ("same.gif", vec![(red, 100), (red, 200), (red, 300)]),
    ] {
        let src = app.fixtures.add(name, gif(&colours));
        let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
        let webp = std::fs::read(&app.download_all(&doc).await[0]).unwrap();
        let decoder = WebPDecoder::new(Cursor::new(webp.as_slice())).unwrap();
        assert!(decoder.has_animation(), "{name} is animated");
        let shown: Vec<([u8; 3], u32)> = decoder
            .into_frames()
            .map(|f| {
                let f = f.unwrap();
                let [r, g, b, _] = f.buffer().get_pixel(8, 8).0;
                (
                    [r, g, b].map(|c| if c > 127 { 255 } else { 0 }),
                    f.delay().numer_denom_ms().0,
                )
            })
            .collect();
        let expected: Vec<_> = colours
            .iter()
            .map(|&([r, g, b, _], ms)| ([r, g, b], ms))
            .collect();
        assert_eq!(shown, expected, "{name}");
    }
}
