use base64::Engine;
use image::{DynamicImage, RgbaImage};

use crate::format::MediaFormat;
use crate::media::image::placeholders::hashes::dominant_colour;
use crate::media::image::placeholders::*;

/// 300x200: the left two thirds `left`, the rest `right`.
fn two_colours(left: [u8; 4], right: [u8; 4]) -> RgbaImage {
    RgbaImage::from_fn(300, 200, |x, _| {
        image::Rgba(if x < 200 { left } else { right })
    })
}

/// The mean colour of `rgba` (straight alpha ignored: opaque pictures).
fn mean_rgb(rgba: &[u8]) -> [f64; 3] {
    let n = (rgba.len() / 4) as f64;
    let mut sum = [0.0; 3];
    for px in rgba.chunks_exact(4) {
        for c in 0..3 {
            sum[c] += f64::from(px[c]);
        }
    }
    sum.map(|s| s / n)
}

/// The mean colour of `rgba` taken in linear light, back in sRGB: what BlurHash's first
/// component holds.
fn mean_linear(rgba: &[u8]) -> [f64; 3] {
    let to_linear = |c: u8| {
        let v = f64::from(c) / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let to_srgb = |v: f64| {
        let s = if v <= 0.0031308 {
            v * 12.92
        } else {
            1.055 * v.powf(1.0 / 2.4) - 0.055
        };
        s * 255.0
    };
    let n = (rgba.len() / 4) as f64;
    let mut sum = [0.0; 3];
    for px in rgba.chunks_exact(4) {
        for c in 0..3 {
            sum[c] += to_linear(px[c]);
        }
    }
    sum.map(|s| to_srgb(s / n))
}

fn assert_near(a: [f64; 3], b: [f64; 3], tolerance: f64, what: &str) {
    for c in 0..3 {
        assert!((a[c] - b[c]).abs() <= tolerance, "{what}: {a:?} vs {b:?}");
    }
}

#[test]
fn the_hashes_decode_to_the_pictures_average_and_the_dominant_colour_is_exact() {
    let image = two_colours([200, 30, 30, 255], [20, 40, 220, 255]);
    let (expected, linear) = (mean_rgb(image.as_raw()), mean_linear(image.as_raw()));
    let found = placeholders_of(&DynamicImage::ImageRgba8(image)).unwrap();
    assert_eq!(found.dominant_color, "#c81e1e");

    let decoded = blurhash::decode(&found.blurhash, 30, 20, 1.0).unwrap();
    assert_near(mean_linear(&decoded), linear, 6.0, "blurhash");
    // 4x3 components: 1 size digit, 1 max digit, 4 DC digits, 2 per AC component.
    assert_eq!(found.blurhash.len(), 6 + 2 * (4 * 3 - 1));

    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&found.thumbhash)
        .unwrap();
    let (r, g, b, a) = thumbhash::thumb_hash_to_average_rgba(&bytes).unwrap();
    let average = [r, g, b].map(|c| f64::from(c) * 255.0);
    assert_near(average, expected, 12.0, "thumbhash");
    assert!(a > 0.99, "{a}");
    let (w, h, pixels) = thumbhash::thumb_hash_to_rgba(&bytes).unwrap();
    assert!(w > h, "{w}x{h}: the aspect is kept");
    // The left of the decoded thumbnail is red, its right blue.
    let at = |x: usize| &pixels[(h / 2 * w + x) * 4..][..3];
    assert!(at(0)[0] > at(0)[2] && at(w - 1)[2] > at(w - 1)[0]);
}

#[test]
fn transparency_is_kept_by_thumbhash_and_ignored_by_the_dominant_colour() {
    let image = two_colours([0, 0, 0, 0], [10, 200, 90, 255]);
    let found = placeholders_of(&DynamicImage::ImageRgba8(image)).unwrap();
    assert_eq!(found.dominant_color, "#0ac85a");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&found.thumbhash)
        .unwrap();
    let (.., a) = thumbhash::thumb_hash_to_average_rgba(&bytes).unwrap();
    assert!((0.2..0.45).contains(&a), "{a}");
    let clear = RgbaImage::new(5, 5);
    assert_eq!(dominant_colour(&clear), "#000000");
    assert!(has_placeholders(MediaFormat::Gif) && !has_placeholders(MediaFormat::Mp4));
}

#[tokio::test]
async fn animations_get_the_placeholders_of_their_first_frame_and_videos_none() {
    let dir = crate::media::testutil::tempdir();
    let cases: [(&str, &[&str], MediaFormat); 4] = [
        (
            "a.webp",
            &["-c:v", "libwebp_anim", "-loop", "0"],
            MediaFormat::Webp,
        ),
        ("a.png", &["-plays", "0", "-f", "apng"], MediaFormat::Png),
        ("a.gif", &[], MediaFormat::Gif),
        (
            "a.mp4",
            &["-c:v", "libx264", "-pix_fmt", "yuv420p"],
            MediaFormat::Mp4,
        ),
    ];
    let media = crate::media::testutil::media();
    for (name, args, format) in cases {
        let path = crate::media::testutil::ffmpeg_clip(dir.path(), name, args);
        let found = media
            .placeholders(&MediaFile { path, format })
            .await
            .unwrap();
        if format == MediaFormat::Mp4 {
            assert_eq!(found, None);
            continue;
        }
        let found = found.unwrap_or_else(|| panic!("{name}: none"));
        assert_eq!(found.blurhash.len(), 28, "{name}");
        assert!(found.dominant_color.starts_with('#'), "{name}");
    }
}

/// The hex colour `#rrggbb` as numbers.
fn rgb_of(hex: &str) -> [f64; 3] {
    let at = |i: usize| f64::from(u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap());
    [at(0), at(1), at(2)]
}

#[tokio::test]
async fn an_output_encoded_inside_around_keeps_the_placeholders_of_its_pixels_and_none_outside() {
    let dir = crate::media::testutil::tempdir();
    let image = two_colours([200, 30, 30, 255], [20, 40, 220, 255]);
    let input = crate::media::testutil::png(dir.path(), "two.png", DynamicImage::ImageRgba8(image));
    let media = crate::media::testutil::media();
    let kept = kept::Kept::default();

    // A render, or a step whose files go on to another command: nothing is kept.
    let outside = media.reencode_as_webp(&input, dir.path()).await.unwrap();
    assert_eq!(kept.take(&outside.path), None);

    let inside = kept
        .around(media.reencode_as_webp(&input, dir.path()))
        .await
        .unwrap();
    let from_pixels = kept.take(&inside.path).expect("kept while it was encoded");
    assert_eq!(kept.take(&inside.path), None, "taken once");
    assert_eq!(from_pixels.dominant_color, "#c81e1e");
    // The file read back (lossy) gives what its pixels gave, within the compression.
    let read_back = media.placeholders(&inside).await.unwrap().unwrap();
    let (a, b) = (
        rgb_of(&from_pixels.dominant_color),
        rgb_of(&read_back.dominant_color),
    );
    assert!((0..3).all(|c| (a[c] - b[c]).abs() <= 4.0), "{a:?} vs {b:?}");
    let average = |hash: &str| {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(hash)
            .unwrap();
        thumbhash::thumb_hash_to_average_rgba(&bytes).unwrap()
    };
    let (x, y) = (
        average(&from_pixels.thumbhash),
        average(&read_back.thumbhash),
    );
    assert!(
        (x.0 - y.0).abs() < 0.02 && (x.2 - y.2).abs() < 0.02,
        "{x:?} vs {y:?}"
    );
}

#[tokio::test]
async fn a_jpeg_keeps_the_placeholders_of_its_picture_flattened_onto_white() {
    let dir = crate::media::testutil::tempdir();
    let image = two_colours([0, 0, 0, 0], [10, 200, 90, 255]);
    let input =
        crate::media::testutil::png(dir.path(), "half.png", DynamicImage::ImageRgba8(image));
    let media = crate::media::testutil::media();
    let kept = kept::Kept::default();
    let jpeg = Some(crate::media::ImageFormat::Jpeg);
    let out = kept
        .around(media.scale_image(&input, 0.5, jpeg, dir.path()))
        .await
        .unwrap();
    let found = kept.take(&out.path).expect("kept");
    // The transparent two thirds are white in the JPEG, and so in its placeholders.
    assert_eq!(found.dominant_color, "#ffffff");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&found.thumbhash)
        .unwrap();
    let (.., alpha) = thumbhash::thumb_hash_to_average_rgba(&bytes).unwrap();
    assert!(alpha > 0.99, "{alpha}");
}

#[tokio::test]
async fn a_video_pictures_placeholders_come_from_its_planes_on_the_blocking_thread_that_encodes_it()
{
    use crate::media::image::yuv::{Matrix, Yuv420};
    // BT.601 red (255, 0, 0) is Y 81, Cb 90, Cr 240.
    let picture = || {
        let (cw, ch) = Yuv420::chroma_size(640, 360);
        Yuv420 {
            width: 640,
            height: 360,
            y: vec![81; 640 * 360],
            u: vec![90; cw * ch],
            v: vec![240; cw * ch],
            a: None,
        }
    };
    let path = std::path::PathBuf::from("frame-000000.webp");
    let keep = |path: std::path::PathBuf| {
        let picture = picture();
        crate::media::blocking(move || {
            kept::FromPixels::of_planes(&picture, Matrix::Bt601).keep(&path);
            Ok(())
        })
    };
    let kept = kept::Kept::default();
    keep(path.clone()).await.unwrap();
    assert_eq!(kept.take(&path), None, "not asked for");
    kept.around(keep(path.clone())).await.unwrap();
    let found = kept.take(&path).expect("kept");
    let [r, g, b] = rgb_of(&found.dominant_color);
    assert!(
        r >= 250.0 && g <= 5.0 && b <= 5.0,
        "{}",
        found.dominant_color
    );
    assert_eq!(found.blurhash.len(), 28);
}
