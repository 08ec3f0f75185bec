//! Colour management (docs/API.md): a Display P3 and an Adobe RGB source, each as a
//! PNG (`iCCP`) and a JPEG (APP2 `ICC_PROFILE`), come out in sRGB: a patch of a known
//! colour lands within ΔE 2 (CIE76) of what lcms2 makes of it, where the same pixels
//! read as if they were sRGB land far off.

use image::{DynamicImage, ImageEncoder, Rgb, RgbImage};
use lcms2::{CIELab, CIELabExt, CIExyY, CIExyYTRIPLE, GlobalContext, Intent, PixelFormat};
use lcms2::{Profile, ToneCurve, Transform};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;

const D65: CIExyY = CIExyY {
    x: 0.3127,
    y: 0.3290,
    Y: 1.0,
};

fn rgb_profile(primaries: [(f64, f64); 3], curve: &ToneCurve) -> Profile {
    let at = |(x, y): (f64, f64)| CIExyY { x, y, Y: 1.0 };
    let primaries = CIExyYTRIPLE {
        Red: at(primaries[0]),
        Green: at(primaries[1]),
        Blue: at(primaries[2]),
    };
    Profile::new_rgb(&D65, &primaries, &[curve, curve, curve]).unwrap()
}

/// Display P3: the P3 primaries, D65 and sRGB's transfer curve.
pub(crate) fn display_p3() -> Profile {
    let srgb_curve = [2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045];
    let curve = ToneCurve::new_parametric(4, &srgb_curve).unwrap();
    rgb_profile([(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)], &curve)
}

/// Adobe RGB (1998): its primaries, D65 and a gamma of 563/256.
fn adobe_rgb() -> Profile {
    let curve = ToneCurve::new(563.0 / 256.0);
    rgb_profile([(0.64, 0.33), (0.21, 0.71), (0.15, 0.06)], &curve)
}

pub(crate) fn lab_of_srgb(pixel: [u8; 3]) -> CIELab {
    let lab = Profile::new_lab4_context(GlobalContext::new(), &D65).unwrap();
    let to_lab: Transform<[u8; 3], [f64; 3]> = Transform::new(
        &Profile::new_srgb(),
        PixelFormat::RGB_8,
        &lab,
        PixelFormat::Lab_DBL,
        Intent::RelativeColorimetric,
    )
    .unwrap();
    let mut out = [[0f64; 3]];
    to_lab.transform_pixels(&[pixel], &mut out);
    let [lightness, a, b] = out[0];
    CIELab { L: lightness, a, b }
}

/// What lcms2 makes of `pixel` in `profile`, in sRGB.
pub(crate) fn reference(profile: &Profile, pixel: [u8; 3]) -> [u8; 3] {
    let to_srgb: Transform<[u8; 3], [u8; 3]> = Transform::new(
        profile,
        PixelFormat::RGB_8,
        &Profile::new_srgb(),
        PixelFormat::RGB_8,
        Intent::Perceptual,
    )
    .unwrap();
    let mut out = [[0u8; 3]];
    to_srgb.transform_pixels(&[pixel], &mut out);
    out[0]
}
/// The pixel at (16, 16) of `src` halved to PNG by `resize-image`, and its ΔE2000 from
/// `expected`.
pub(crate) async fn halved_patch(app: &TestApp, src: &str, expected: [u8; 3]) -> ([u8; 3], f64) {
    let options = json!({"scale": 0.5, "format": "png"});
    let doc = app
        .run_done(edit(src, &["resize-image"], Some(options)))
        .await;
    let out = fixtures::decode(&app.download_all(&doc).await[0]).to_rgb8();
    let got = out.get_pixel(16, 16).0;
    (got, lab_of_srgb(got).delta_e(&lab_of_srgb(expected)))
}

pub(crate) fn tagged(format: image::ImageFormat, patch: [u8; 3], icc: Vec<u8>) -> Vec<u8> {
    let image = RgbImage::from_pixel(64, 64, Rgb(patch));
    let mut bytes = Vec::new();
    match format {
        image::ImageFormat::Png => {
            let mut encoder = image::codecs::png::PngEncoder::new(&mut bytes);
            encoder.set_icc_profile(icc).unwrap();
            encoder
                .write_image(&image, 64, 64, image::ExtendedColorType::Rgb8)
                .unwrap();
        }
        _ => {
            let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 98);
            encoder.set_icc_profile(icc).unwrap();
            encoder
                .write_image(&image, 64, 64, image::ExtendedColorType::Rgb8)
                .unwrap();
        }
    }
    bytes
}

#[tokio::test]
async fn display_p3_and_adobe_rgb_sources_come_out_in_srgb_within_delta_e_2() {
    let app = spawn_app().await;
    // Saturated but inside sRGB once converted: no clipping decides the outcome.
    let patch = [200, 120, 80];
    for (name, profile) in [("display-p3", display_p3()), ("adobe-rgb", adobe_rgb())] {
        let expected = reference(&profile, patch);
        let naive = lab_of_srgb(patch).delta_e(&lab_of_srgb(expected));
        assert!(
            naive > 5.0,
            "{name}: the patch barely moves ({naive}); a weak test"
        );
        for format in [image::ImageFormat::Png, image::ImageFormat::Jpeg] {
            let bytes = tagged(format, patch, profile.icc().unwrap());
            let src = app
                .fixtures
                .add(&format!("{name}.{}", format.extensions_str()[0]), bytes);
            let (got, delta) = halved_patch(&app, &src, expected).await;
            assert!(
                delta < 2.0,
                "{name} {format:?}: {got:?} is ΔE {delta:.2} from lcms2's {expected:?}"
            );
        }
    }
}

#[tokio::test]
async fn an_srgb_or_broken_profile_leaves_the_pixels_as_they_are() {
    let app = spawn_app().await;
    let patch = [200, 120, 80];
    let srgb = Profile::new_srgb().icc().unwrap();
    let mut broken = display_p3().icc().unwrap();
    broken.truncate(60);
    for (name, icc) in [("srgb", srgb), ("broken", broken)] {
        let src = app.fixtures.add(
            &format!("{name}.png"),
            tagged(image::ImageFormat::Png, patch, icc),
        );
        let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
        let out: DynamicImage = fixtures::decode(&app.download_all(&doc).await[0]);
        let got = out.to_rgb8().get_pixel(32, 32).0;
        let delta = lab_of_srgb(got).delta_e(&lab_of_srgb(patch));
        assert!(delta < 2.0, "{name}: {got:?} moved ΔE {delta:.2}");
    }
}

/// A two-frame APNG of `patch` (100 ms each) tagged with `icc`.
fn tagged_apng(patch: [u8; 3], icc: Vec<u8>) -> Vec<u8> {
    let mut info = png::Info::with_size(32, 32);
    info.color_type = png::ColorType::Rgb;
    info.bit_depth = png::BitDepth::Eight;
    info.icc_profile = Some(icc.into());
    let mut out = Vec::new();
    let mut encoder = png::Encoder::with_info(&mut out, info).unwrap();
    encoder.set_animated(2, 0).unwrap();
    let mut writer = encoder.write_header().unwrap();
    for _ in 0..2 {
        writer.set_frame_delay(1, 10).unwrap();
        writer.write_image_data(&patch.repeat(32 * 32)).unwrap();
    }
    writer.finish().unwrap();
    out
}

#[tokio::test]
async fn every_frame_of_a_tagged_animation_comes_out_in_srgb() {
    let app = spawn_app().await;
    let patch = [200, 120, 80];
    let profile = display_p3();
    let expected = reference(&profile, patch);
    let src = app
        .fixtures
        .add("p3.png", tagged_apng(patch, profile.icc().unwrap()));
    // image-to-webp: an animated WebP; resize-image: an APNG of its own.
    for (commands, options) in [
        (vec!["image-to-webp"], None),
        (vec!["resize-image"], Some(json!({"scale": 0.5}))),
    ] {
        let doc = app.run_done(edit(&src, &commands, options)).await;
        let bytes = std::fs::read(&app.download_all(&doc).await[0]).unwrap();
        let (frames, _) = if bytes.starts_with(b"RIFF") {
            crate::apng::webp_frames(&bytes)
        } else {
            crate::apng::apng_frames(&bytes)
        };
        assert_eq!(frames.len(), 2, "{commands:?}");
        for (_, [r, g, b, _], _) in &frames {
            let delta = lab_of_srgb([*r, *g, *b]).delta_e(&lab_of_srgb(expected));
            assert!(
                delta < 2.0,
                "{commands:?}: {:?} is ΔE {delta:.2} from {expected:?}",
                [r, g, b]
            );
        }
    }
}

/// A grey JPEG of `level` tagged with `icc`, as Photoshop writes a "Dot Gain 20%" one.
fn tagged_grey_jpeg(level: u8, icc: Vec<u8>) -> Vec<u8> {
    let image = image::GrayImage::from_pixel(64, 64, image::Luma([level]));
    let mut bytes = Vec::new();
    let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 98);
    encoder.set_icc_profile(icc).unwrap();
    encoder
        .write_image(&image, 64, 64, image::ExtendedColorType::L8)
        .unwrap();
    bytes
}

#[tokio::test]
async fn a_grey_profile_is_applied_as_browsers_apply_it() {
    let app = spawn_app().await;
    // A dot-gain-like curve (gamma 1.8 where sRGB is about 2.2): a mid grey reads
    // lighter than the same value in sRGB.
    let d50 = CIExyY {
        x: 0.3457,
        y: 0.3585,
        Y: 1.0,
    };
    let grey = Profile::new_gray(&d50, &ToneCurve::new(1.8)).unwrap();
    let level = 100;
    let to_srgb: Transform<u8, [u8; 3]> = Transform::new(
        &grey,
        PixelFormat::GRAY_8,
        &Profile::new_srgb(),
        PixelFormat::RGB_8,
        Intent::Perceptual,
    )
    .unwrap();
    let mut expected = [[0u8; 3]];
    to_srgb.transform_pixels(&[level], &mut expected);
    let expected = expected[0];
    let naive = lab_of_srgb([level; 3]).delta_e(&lab_of_srgb(expected));
    assert!(naive > 3.0, "the grey barely moves ({naive}); a weak test");
    let src = app
        .fixtures
        .add("dot-gain.jpg", tagged_grey_jpeg(level, grey.icc().unwrap()));
    for (command, options) in [
        ("resize-image", json!({"scale": 0.5, "format": "png"})),
        ("image-to-webp", json!({})),
    ] {
        let doc = app.run_done(edit(&src, &[command], Some(options))).await;
        let out = fixtures::decode(&app.download_all(&doc).await[0]).to_rgb8();
        let got = out.get_pixel(16, 16).0;
        let delta = lab_of_srgb(got).delta_e(&lab_of_srgb(expected));
        assert!(
            delta < 2.0,
            "{command}: {got:?} is ΔE {delta:.2} from lcms2's {expected:?}"
        );
    }
}
