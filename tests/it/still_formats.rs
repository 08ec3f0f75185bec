//! TIFF and BMP sources (docs/API.md) through the real service: decoded in-process
//! (TIFF by libtiff, BMP by the `image` crate), upright, sized, with their transparency;
//! `resize-image` without a `format` writes JPEG, or PNG for a picture with alpha.

use image::{GenericImageView, ImageFormat, Rgba, RgbaImage};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;

fn gradient_rgb(x: u32, y: u32) -> Vec<u8> {
    vec![(x * 4) as u8, (y * 4) as u8, 128]
}

#[tokio::test]
async fn a_tiff_is_resized_to_jpeg_and_turned_upright_by_its_orientation_tag() {
    let app = spawn_app().await;
    let plain = app
        .fixtures
        .add("a.tif", fixtures::tiff(64, 48, 2, 1, gradient_rgb));
    let doc = app
        .run_done(edit(&plain, &["resize-image"], Some(json!({"scale": 0.5}))))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::Jpeg);
    let image = fixtures::decode(out);
    assert_eq!(image.dimensions(), (32, 24));
    // The gradient survives: red grows to the right, green downwards.
    let (left, right) = (image.get_pixel(2, 12), image.get_pixel(29, 12));
    assert!(right[0] > left[0] + 100, "{left:?} {right:?}");

    // Orientation 6: stored 64×48, shown 48×64.
    let turned = app
        .fixtures
        .add("t.tif", fixtures::tiff(64, 48, 2, 6, gradient_rgb));
    let doc = app.run_done(edit(&turned, &["image-to-webp"], None)).await;
    let image = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(image.dimensions(), (48, 64));
}

#[tokio::test]
async fn a_cmyk_tiff_comes_out_in_rgb_and_an_rgba_tiff_keeps_its_alpha_in_png() {
    let app = spawn_app().await;
    // Pure cyan ink: C=255, M=Y=K=0.
    let cmyk = app.fixtures.add(
        "c.tif",
        fixtures::tiff(16, 16, 5, 1, |_, _| vec![255, 0, 0, 0]),
    );
    let doc = app
        .run_done(edit(
            &cmyk,
            &["resize-image"],
            Some(json!({"format": "png"})),
        ))
        .await;
    let image = fixtures::decode(&app.download_all(&doc).await[0]);
    let Rgba([r, g, b, _]) = image.get_pixel(8, 8);
    assert!(r < 10 && g > 245 && b > 245, "cyan came out as {r},{g},{b}");

    let rgba = app.fixtures.add(
        "a.tif",
        fixtures::tiff(32, 32, 2, 1, |x, _| {
            vec![200, 30, 30, if x < 16 { 0 } else { 255 }]
        }),
    );
    let doc = app.run_done(edit(&rgba, &["resize-image"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::Png);
    let image = fixtures::decode(out);
    assert_eq!(
        image.get_pixel(4, 4)[3],
        0,
        "the left half stays transparent"
    );
    assert_eq!(image.get_pixel(28, 4), Rgba([200, 30, 30, 255]));
}

#[tokio::test]
async fn bmp_sources_become_jpeg_png_webp_and_video() {
    let app = spawn_app().await;
    let rgb = fixtures::bmp(image::DynamicImage::ImageRgb8(fixtures::gradient(40, 30)));
    let rgb = app.fixtures.add("a.bmp", rgb);
    let doc = app
        .run_done(edit(&rgb, &["resize-image"], Some(json!({"scale": 2}))))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::Jpeg);
    assert_eq!(fixtures::decode(out).dimensions(), (80, 60));

    let alpha = image::DynamicImage::ImageRgba8(RgbaImage::from_fn(20, 20, |x, _| {
        Rgba([0, 0, 255, if x < 10 { 0 } else { 255 }])
    }));
    let alpha = app.fixtures.add("b.bmp", fixtures::bmp(alpha));
    let doc = app.run_done(edit(&alpha, &["image-to-webp"], None)).await;
    let image = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(image.get_pixel(2, 2)[3], 0);

    let doc = app
        .run_done(edit(
            &rgb,
            &["image-to-video"],
            Some(json!({"duration": 1, "fps": 5})),
        ))
        .await;
    let video = probe(&app.download_all(&doc).await[0]);
    let stream = video_stream(&video);
    assert_eq!(
        (&stream["width"], &stream["height"]),
        (&40.into(), &30.into())
    );
}

#[tokio::test]
async fn a_tiff_past_the_pixel_limit_is_refused_from_its_header() {
    let app = spawn_app_with(|c| c.max_image_pixels = 1000).await;
    let big = app
        .fixtures
        .add("big.tif", fixtures::tiff(64, 48, 2, 1, gradient_rgb));
    let error = app.run_failed(edit(&big, &["resize-image"], None)).await;
    assert_eq!(error["code"], "image_too_large", "{error}");
}

/// `png` encoded by `heif-enc` (libheif's own tool: x265 for HEIC, libaom for AVIF).
fn heif_enc(png: &[u8], args: &[&str], name: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in.png"), dir.path().join(name));
    std::fs::write(&input, png).unwrap();
    let status = std::process::Command::new("heif-enc")
        .args(args)
        .arg("-o")
        .arg(&output)
        .arg(&input)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("heif-enc runs (libheif-examples)");
    assert!(status.success(), "heif-enc {args:?}");
    std::fs::read(output).unwrap()
}

#[tokio::test]
async fn heic_and_avif_photos_come_out_at_their_size_with_their_colours() {
    let app = spawn_app().await;
    let picture = image::DynamicImage::ImageRgb8(fixtures::gradient(320, 240));
    let png = fixtures::encode(picture.clone(), ImageFormat::Png);
    for (name, args) in [
        ("a.heic", &["-q", "90"][..]),
        ("a.avif", &["-A", "-q", "90"][..]),
    ] {
        let src = app.fixtures.add(name, heif_enc(&png, args, name));
        let options = json!({"scale": 0.5, "format": "jpeg"});
        let doc = app
            .run_done(edit(&src, &["resize-image"], Some(options)))
            .await;
        let out = &app.download_all(&doc).await[0];
        assert_eq!(fixtures::format_of(out), ImageFormat::Jpeg, "{name}");
        let got = fixtures::decode(out);
        assert_eq!(got.dimensions(), (160, 120), "{name}");
        let expected = picture.resize_exact(160, 120, image::imageops::FilterType::Triangle);
        let apart = fixtures::distance(&got, &expected);
        assert!(apart < 6.0, "{name}: {apart} away from the source");
    }
}

#[tokio::test]
async fn a_10_bit_heic_and_a_heic_with_alpha_are_read() {
    let app = spawn_app().await;
    let deep = image::DynamicImage::ImageRgb16(image::ImageBuffer::from_fn(64, 48, |x, y| {
        image::Rgb([(x * 1000) as u16, (y * 1300) as u16, 30000])
    }));
    let png16 = fixtures::encode(deep.clone(), ImageFormat::Png);
    let src = app.fixtures.add(
        "deep.heic",
        heif_enc(&png16, &["-q", "90", "-b", "10"], "deep.heic"),
    );
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let got = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(got.dimensions(), (64, 48));
    let apart = fixtures::distance(&got, &image::DynamicImage::ImageRgb8(deep.to_rgb8()));
    assert!(
        apart < 8.0,
        "the 10-bit HEIC is {apart} away from its source"
    );

    let png = fixtures::png_with_alpha(40, 30);
    let src = app
        .fixtures
        .add("alpha.heic", heif_enc(&png, &["-q", "90"], "alpha.heic"));
    let doc = app.run_done(edit(&src, &["resize-image"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(
        fixtures::format_of(out),
        ImageFormat::Png,
        "alpha means PNG"
    );
    fixtures::assert_left_half_transparent(&fixtures::decode(out));
}

#[tokio::test]
async fn a_damaged_heic_fails_with_invalid_media() {
    let app = spawn_app().await;
    let png = fixtures::png(64, 48);
    let mut heic = heif_enc(&png, &["-q", "50"], "a.heic");
    heic.truncate(heic.len() / 2);
    let src = app.fixtures.add("cut.heic", heic);
    let error = app.run_failed(edit(&src, &["resize-image"], None)).await;
    assert_eq!(error["code"], "invalid_media", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("HEIC"),
        "{error}"
    );
}

/// `heic` (as `heif-enc` writes it: one image, or a grid of tiles) with an `irot`
/// property of `quarter_turns` anti-clockwise added to its primary item: the boxes that
/// hold it grow, and the items stored behind the meta box move with their data.
fn with_irot(heic: &[u8], quarter_turns: u8) -> Vec<u8> {
    let be16 = |b: &[u8], at: usize| usize::from(u16::from_be_bytes([b[at], b[at + 1]]));
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let child = |b: &[u8], start: usize, end: usize, name: &[u8]| {
        let mut at = start;
        while at < end {
            if &b[at + 4..at + 8] == name {
                return at;
            }
            at += be32(b, at);
        }
        panic!("no {} box", String::from_utf8_lossy(name));
    };
    let meta = child(heic, 0, heic.len(), b"meta");
    let meta_end = meta + be32(heic, meta);
    let primary = be16(heic, child(heic, meta + 12, meta_end, b"pitm") + 12);
    let iprp = child(heic, meta + 12, meta_end, b"iprp");
    let ipco = child(heic, iprp + 8, iprp + be32(heic, iprp), b"ipco");
    let ipma = child(heic, iprp + 8, iprp + be32(heic, iprp), b"ipma");
    let iloc = child(heic, meta + 12, meta_end, b"iloc");
    let mut properties = 0;
    let mut at = ipco + 8;
    while at < ipco + be32(heic, ipco) {
        properties += 1;
        at += be32(heic, at);
    }
    // ipma v0, flags 0: u32 entries of (u16 item, u8 count, u8 associations).
    assert_eq!(&heic[ipma + 8..ipma + 12], &[0u8; 4][..]);
    let mut entry = ipma + 16;
    while be16(heic, entry) != primary {
        entry += 3 + usize::from(heic[entry + 2]);
    }
    // iloc v0 or v1 with 4-byte offsets, lengths and base offsets, and no index.
    let version = heic[iloc + 8];
    assert!(
        version <= 1 && heic[iloc + 12..iloc + 14] == [0x44, 0x40],
        "an iloc this helper knows"
    );
    let irot = [0, 0, 0, 9, b'i', b'r', b'o', b't', quarter_turns];
    let grown = irot.len() + 1;
    let mut out = heic.to_vec();
    let add = |out: &mut Vec<u8>, at: usize, by: usize| {
        let value = be32(out, at) + by;
        out[at..at + 4].copy_from_slice(&(value as u32).to_be_bytes());
    };
    // Items stored in the file (construction method 0) lie behind the meta box: their
    // base offsets move with it. Patched first, as the boxes below shift iloc's bytes.
    let mut item = iloc + 16;
    for _ in 0..be16(heic, iloc + 14) {
        let method = if version == 1 {
            be16(heic, item + 2) & 0xF
        } else {
            0
        };
        let base = item + if version == 1 { 6 } else { 4 };
        if method == 0 {
            add(&mut out, base, grown);
        }
        item = base + 6 + 8 * be16(heic, base + 4);
    }
    // The association (essential, 1-based index), then the property: later first.
    let count = usize::from(heic[entry + 2]);
    out[entry + 2] += 1;
    out.insert(entry + 3 + count, 0x80 | (properties + 1) as u8);
    add(&mut out, ipma, 1);
    out.splice(ipco + be32(heic, ipco)..ipco + be32(heic, ipco), irot);
    add(&mut out, ipco, irot.len());
    add(&mut out, iprp, grown);
    add(&mut out, meta, grown);
    out
}

#[tokio::test]
async fn a_grid_heic_turned_by_irot_comes_out_upright() {
    let app = spawn_app().await;
    let png = fixtures::encode(
        image::DynamicImage::ImageRgb8(fixtures::gradient(64, 48)),
        ImageFormat::Png,
    );
    let encoded = heif_enc(&png, &["-q", "90"], "a.heic");
    // libheif 1.15 writes a picture this small as a grid of tiles, as iPhones do.
    assert!(encoded.windows(4).any(|w| w == b"grid"), "a grid image");
    let heic = with_irot(&encoded, 1);
    let src = app.fixtures.add("turned.heic", heic);
    let doc = app
        .run_done(edit(
            &src,
            &["resize-image"],
            Some(json!({"format": "png"})),
        ))
        .await;
    let image = fixtures::decode(&app.download_all(&doc).await[0]);
    // A quarter turn anti-clockwise: 48×64, the stored right edge (most red) on top.
    assert_eq!(image.dimensions(), (48, 64));
    let (top, bottom) = (image.get_pixel(24, 2), image.get_pixel(24, 61));
    assert!(top[0] > bottom[0] + 100, "top {top:?}, bottom {bottom:?}");
}
