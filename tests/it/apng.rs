//! APNG keeps its animation (docs/API.md): through `resize-image` (an APNG out)
//! and `image-to-webp` (an animated WebP) every frame, its delay and the plays are
//! kept; a default image outside the animation stays the default image; damaged and
//! oversized files end with their codes.

use std::io::Cursor;

use image::codecs::png::PngDecoder;
use image::codecs::webp::WebPDecoder;
use image::metadata::LoopCount;
use image::{AnimationDecoder, GenericImageView};
use serde_json::json;

use crate::clips::*;
use crate::fixtures;
use crate::helpers::*;

pub const RED: [u8; 4] = [255, 0, 0, 255];
pub const GREEN: [u8; 4] = [0, 255, 0, 255];
pub const BLUE: [u8; 4] = [0, 0, 255, 255];
pub const MAGENTA: [u8; 4] = [255, 0, 255, 255];

/// A 40x30 APNG of plain frames, each `(colour, delay_num, delay_den)`, played `plays`
/// times (0: forever); `default`, when given, is a default image outside the animation.
pub fn apng(default: Option<[u8; 4]>, frames: &[([u8; 4], u16, u16)], plays: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, 40, 30);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_animated(frames.len() as u32, plays).unwrap();
    encoder.set_sep_def_img(default.is_some()).unwrap();
    let mut writer = encoder.write_header().unwrap();
    let plain = |c: [u8; 4]| c.repeat(40 * 30);
    if let Some(colour) = default {
        writer.write_image_data(&plain(colour)).unwrap();
    }
    for &(colour, num, den) in frames {
        writer.set_frame_delay(num, den).unwrap();
        writer.write_image_data(&plain(colour)).unwrap();
    }
    writer.finish().unwrap();
    out
}

/// Red for 1/10 s, green for 1/4 s, blue for 2/5 s.
pub fn three_frames(default: Option<[u8; 4]>, plays: u32) -> Vec<u8> {
    apng(default, &[(RED, 1, 10), (GREEN, 1, 4), (BLUE, 2, 5)], plays)
}

/// `bytes` with the `nth` chunk of `kind` changed by `patch` (its CRC recomputed).
pub fn patch_chunk(
    bytes: &[u8],
    kind: &[u8],
    nth: usize,
    patch: impl FnOnce(&mut [u8]),
) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let (mut at, mut seen) = (8, 0);
    while at + 8 <= out.len() {
        let len = u32::from_be_bytes(out[at..at + 4].try_into().unwrap()) as usize;
        if &out[at + 4..at + 8] == kind {
            if seen == nth {
                patch(&mut out[at + 8..at + 8 + len]);
                let crc = crc32fast::hash(&out[at + 4..at + 8 + len]);
                out[at + 8 + len..at + 12 + len].copy_from_slice(&crc.to_be_bytes());
                return out;
            }
            seen += 1;
        }
        at += len + 12;
    }
    panic!("no such chunk");
}

/// A frame's size, the colour at its centre, and its delay in milliseconds.
pub type Shown = ((u32, u32), [u8; 4], f64);

fn summary(frames: image::Frames) -> Vec<Shown> {
    frames
        .map(|f| {
            let f = f.unwrap();
            let (n, d) = f.delay().numer_denom_ms();
            let buffer = f.buffer();
            let (w, h) = buffer.dimensions();
            (
                (w, h),
                buffer.get_pixel(w / 2, h / 2).0,
                f64::from(n) / f64::from(d),
            )
        })
        .collect()
}

/// How often an animation plays (0: forever).
fn plays(count: LoopCount) -> u32 {
    match count {
        LoopCount::Infinite => 0,
        LoopCount::Finite(n) => n.get(),
    }
}

/// The frames and plays (0: forever) of an APNG, read by the `image` crate's own APNG
/// reader.
pub fn apng_frames(bytes: &[u8]) -> (Vec<Shown>, u32) {
    let decoder = PngDecoder::new(Cursor::new(bytes)).unwrap();
    assert!(decoder.is_apng().unwrap(), "an APNG");
    let decoder = decoder.apng().unwrap();
    let plays = plays(decoder.loop_count());
    (summary(decoder.into_frames()), plays)
}

/// The frames and plays (0: forever) of an animated WebP.
pub fn webp_frames(bytes: &[u8]) -> (Vec<Shown>, u32) {
    let decoder = WebPDecoder::new(Cursor::new(bytes)).unwrap();
    assert!(decoder.has_animation(), "an animated WebP");
    let plays = plays(decoder.loop_count());
    (summary(decoder.into_frames()), plays)
}

/// Whether two colours are the same but for lossy coding.
pub fn near(a: [u8; 4], b: [u8; 4]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 12)
}

fn assert_shows(frames: &[Shown], expected: &[([u8; 4], f64)], size: (u32, u32)) {
    assert_eq!(frames.len(), expected.len(), "{frames:?}");
    for ((got_size, colour, delay), (want, want_delay)) in frames.iter().zip(expected) {
        assert_eq!(*got_size, size, "{frames:?}");
        assert!(
            near(*colour, *want),
            "{colour:?} is not {want:?}: {frames:?}"
        );
        assert!(
            (delay - want_delay).abs() < 0.01,
            "{delay} ms, not {want_delay}: {frames:?}"
        );
    }
}

const SHOWN: [([u8; 4], f64); 3] = [(RED, 100.0), (GREEN, 250.0), (BLUE, 400.0)];

#[tokio::test]
async fn an_apng_stays_an_apng_through_resize_image_with_its_delays_and_plays() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", three_frames(None, 2));
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(json!({"scale": 0.5}))))
        .await;
    assert_eq!(doc["attributes"]["outputs"][0]["format"], "png");
    let out = &app.download_all(&doc).await[0];
    let (shown_frames, plays) = apng_frames(&std::fs::read(out).unwrap());
    assert_shows(&shown_frames, &SHOWN, (20, 15));
    assert_eq!(plays, 2);
    // ffmpeg's own APNG reader agrees on the frames and when each starts.
    let shown = probe(out);
    assert_eq!(frames(video_stream(&shown)), 3);
    assert_eq!(frame_starts(out), [0.0, 0.1, 0.35]);
}

#[tokio::test]
async fn image_to_webp_and_resize_image_to_webp_animate_an_apng() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", three_frames(None, 0));
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let webp = std::fs::read(&app.download_all(&doc).await[0]).unwrap();
    let (frames, plays) = webp_frames(&webp);
    assert_shows(&frames, &SHOWN, (40, 30));
    assert_eq!(plays, 0, "forever, as the source");

    let doc = app
        .run_done(edit(
            &src,
            &["resize-image"],
            Some(json!({"scale": 2, "format": "webp"})),
        ))
        .await;
    let webp = std::fs::read(&app.download_all(&doc).await[0]).unwrap();
    assert_shows(&webp_frames(&webp).0, &SHOWN, (80, 60));
}

#[tokio::test]
async fn a_default_image_outside_the_animation_stays_the_default_image() {
    let app = spawn_app().await;
    let src = app.fixtures.add("d.png", three_frames(Some(MAGENTA), 0));
    let doc = app.run_done(edit(&src, &["resize-image"], None)).await;
    let out = &app.download_all(&doc).await[0];
    // A still reader shows the default image, as it shows the source's...
    let still = fixtures::decode(out);
    assert_eq!(still.get_pixel(20, 15).0, MAGENTA);
    // ...and an animating one the same three frames.
    assert_shows(
        &apng_frames(&std::fs::read(out).unwrap()).0,
        &SHOWN,
        (40, 30),
    );

    // An animated WebP has no such picture: it is left out, as players leave it out
    // (a first frame "lasting 0 ms" would flash for 100 ms in a browser).
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let webp = std::fs::read(&app.download_all(&doc).await[0]).unwrap();
    assert_shows(&webp_frames(&webp).0, &SHOWN, (40, 30));
}

#[tokio::test]
async fn a_one_frame_apng_keeps_the_still_path() {
    let app = spawn_app().await;
    let src = app.fixtures.add("one.png", apng(None, &[(RED, 1, 10)], 0));
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let out = &app.download_all(&doc).await[0];
    let webp = WebPDecoder::new(Cursor::new(std::fs::read(out).unwrap())).unwrap();
    assert!(!webp.has_animation());
    assert!(near(fixtures::decode(out).get_pixel(20, 15).0, RED));
}

/// One frame apart from a default image (Pillow's `split_fdat.png`): an animating
/// viewer shows the frame, so every output that animates shows it; an APNG output
/// keeps the default image for still readers.
#[tokio::test]
async fn one_frame_apart_from_the_default_image_is_what_the_outputs_show() {
    let app = spawn_app().await;
    let src = app
        .fixtures
        .add("one.png", apng(Some(MAGENTA), &[(RED, 1, 10)], 0));
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert!(near(fixtures::decode(out).get_pixel(20, 15).0, RED));
    let doc = app.run_done(edit(&src, &["resize-image"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::decode(out).get_pixel(20, 15).0, MAGENTA);
    let (frames, _) = apng_frames(&std::fs::read(out).unwrap());
    assert_shows(&frames, &[(RED, 100.0)], (40, 30));
    let doc = app.run_done(edit(&src, &["gif-to-video"], None)).await;
    let probed = probe(&app.download_all(&doc).await[0]);
    assert_eq!(video_stream(&probed)["nb_read_frames"], "1");
}

#[tokio::test]
async fn damaged_and_oversized_apngs_end_with_their_codes() {
    let app = spawn_app_with(|c| c.max_video_frames = 2).await;
    let fail = |name: &str, bytes: Vec<u8>| {
        let src = app.fixtures.add(name, bytes);
        let app = &app;
        async move { app.run_failed(edit(&src, &["resize-image"], None)).await }
    };
    let error = fail("many.png", three_frames(None, 0)).await;
    assert_eq!(error["code"], "too_many_frames", "{error}");

    // Cut inside the first frame: nothing to show.
    let whole = apng(None, &[(RED, 1, 10), (GREEN, 1, 10)], 0);
    let error = fail("cut.png", whole[..whole.len() / 2].to_vec()).await;
    assert_eq!(error["code"], "invalid_media", "{error}");

    // A first frame wider than the canvas.
    let wide = patch_chunk(&whole, b"fcTL", 0, |fctl| {
        fctl[4..8].copy_from_slice(&41u32.to_be_bytes())
    });
    let error = fail("wide.png", wide).await;
    assert_eq!(error["code"], "invalid_media", "{error}");
}

#[tokio::test]
async fn an_apng_whose_later_frames_are_damaged_shows_its_default_image() {
    let app = spawn_app().await;
    // The second frame claims to start past the canvas: Pillow and PNG readers show
    // the default image, and so does the output.
    let bytes = patch_chunk(&three_frames(Some(MAGENTA), 0), b"fcTL", 1, |fctl| {
        fctl[12..16].copy_from_slice(&30u32.to_be_bytes())
    });
    let src = app.fixtures.add("bad.png", bytes);
    let doc = app.run_done(edit(&src, &["resize-image"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::decode(out).get_pixel(20, 15).0, MAGENTA);
    assert!(!PngDecoder::new(Cursor::new(std::fs::read(out).unwrap()))
        .unwrap()
        .is_apng()
        .unwrap());
}
