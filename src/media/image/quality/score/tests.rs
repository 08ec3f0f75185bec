use super::super::xyb::cube_root;
use super::*;
use image::{Rgb, RgbImage, Rgba, RgbaImage};

fn gradient(width: u32, height: u32, noise: u8) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
        let n = if (x * 7 + y * 13) % 5 == 0 { noise } else { 0 };
        Rgb([
            ((x * 4) as u8).saturating_add(n),
            (y * 5) as u8,
            128u8.saturating_sub(n),
        ])
    }))
}

/// A picture with texture, edges and colour, and a copy of it damaged as lossy encoders
/// damage pictures: blocks flattened, colours shifted, noise.
fn photo_and_damaged(width: u32, height: u32, damage: u32) -> (DynamicImage, DynamicImage) {
    let pixel = |x: u32, y: u32| {
        let leaf = ((x as f32 / 5.0).sin() * (y as f32 / 3.0).cos() * 60.0) as i32;
        let texture = ((x * 7919 + y * 104_729) % 31) as i32;
        [
            100 + leaf + texture,
            120 + leaf / 2,
            80 + texture * 3 - leaf / 3,
        ]
    };
    let clamp = |v: i32| v.clamp(0, 255) as u8;
    let photo = RgbImage::from_fn(width, height, |x, y| Rgb(pixel(x, y).map(clamp)));
    let damaged = RgbImage::from_fn(width, height, |x, y| {
        let block = pixel(x / 4 * 4, y / 4 * 4);
        let own = pixel(x, y);
        let noise = ((x * 31 + y * 17) % 7) as i32 - 3;
        let d = damage as i32;
        Rgb(std::array::from_fn(|c| {
            clamp((own[c] * (10 - d) + block[c] * d) / 10 + noise * d / 3 + c as i32 * d)
        }))
    });
    (
        DynamicImage::ImageRgb8(photo),
        DynamicImage::ImageRgb8(damaged),
    )
}

/// The crate's score, the reference implementation.
fn crates_score(reference: &DynamicImage, distorted: &DynamicImage) -> f64 {
    let linear = |image: &DynamicImage| {
        let planes = linear(image);
        let pixels: Vec<[f32; 3]> = (0..planes.width * planes.height)
            .map(|i| [0, 1, 2].map(|c| planes.channels[c][i]))
            .collect();
        ssimulacra2::LinearRgb::new(pixels, planes.width, planes.height).unwrap()
    };
    ssimulacra2::compute_frame_ssimulacra2(linear(reference), linear(distorted)).unwrap()
}

#[test]
fn our_scores_are_the_ssimulacra2_crate_s() {
    // Odd sizes (a halving repeats the last row or column), one converted in two halves
    // at once, one that ends under 8 pixels
    // a side before the sixth scale, and damage from slight to heavy.
    for (width, height) in [(97, 61), (300, 240), (40, 300)] {
        for damage in [1, 3, 6, 9] {
            let (photo, damaged) = photo_and_damaged(width, height, damage);
            let ours = score(&photo, &damaged).unwrap();
            let theirs = crates_score(&photo, &damaged);
            // The crate's `mul_add`s round once where ours round twice: cancellation in
            // the variances of nearly equal pictures makes that a few hundredths.
            assert!(
                (ours - theirs).abs() < 0.05,
                "{width}x{height} damage {damage}: ours {ours}, the crate's {theirs}"
            );
        }
    }
}

#[test]
fn one_reference_scores_every_trial_as_a_fresh_one_would() {
    let (photo, slight) = photo_and_damaged(120, 90, 2);
    let (_, heavy) = photo_and_damaged(120, 90, 8);
    let mut reference = Reference::of(&photo);
    for trial in [&slight, &heavy, &slight] {
        assert_eq!(
            reference.score(trial).unwrap(),
            score(&photo, trial).unwrap()
        );
    }
    let other_size = gradient(64, 48, 0);
    assert!(reference.score(&other_size).is_err());
}

#[test]
fn the_same_picture_scores_100_and_a_noisier_one_less() {
    let clean = gradient(64, 48, 0);
    assert!((score(&clean, &clean).unwrap() - 100.0).abs() < 1e-6);
    let slight = score(&clean, &gradient(64, 48, 6)).unwrap();
    let heavy = score(&clean, &gradient(64, 48, 40)).unwrap();
    assert!(slight < 100.0 && heavy < slight, "{slight} {heavy}");
}

#[test]
fn transparency_is_scored_as_on_white() {
    let white = DynamicImage::ImageRgb8(RgbImage::from_pixel(16, 16, Rgb([255; 3])));
    let clear = DynamicImage::ImageRgba8(RgbaImage::from_pixel(16, 16, Rgba([0, 0, 0, 0])));
    assert!((score(&white, &clear).unwrap() - 100.0).abs() < 1e-6);
    let tiny = DynamicImage::ImageRgb8(RgbImage::from_pixel(7, 16, Rgb([255; 3])));
    assert!(score(&tiny, &tiny).is_err());
}

#[test]
fn the_blur_is_the_crate_s_recursive_gaussian() {
    let (w, h) = (37usize, 23usize);
    let plane: Vec<f32> = (0..w * h)
        .map(|i| ((i * 7919) % 101) as f32 / 100.0)
        .collect();
    let mut temp = vec![0f32; w * h];
    let mut out = vec![0f32; w * h];
    blur(&plane, w, &mut temp, &mut out);
    let mut theirs = ssimulacra2::Blur::new(w, h);
    let t = theirs.blur(&[plane.clone(), plane.clone(), plane.clone()]);
    let worst = out
        .iter()
        .zip(&t[0])
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(worst < 1e-5, "the blurs differ by {worst}");
}

#[test]
fn xyb_is_the_crate_s_made_positive() {
    let (photo, _) = photo_and_damaged(20, 10, 1);
    let planes = linear(&photo);
    let pixels: Vec<[f32; 3]> = (0..200)
        .map(|i| [0, 1, 2].map(|c| planes.channels[c][i]))
        .collect();
    let theirs = ssimulacra2::Xyb::from(ssimulacra2::LinearRgb::new(pixels, 20, 10).unwrap());
    let ours = xyb(&planes);
    for i in 0..200 {
        let t = theirs.data()[i];
        let t = [t[0] * 14.0 + 0.42, t[1] + 0.01, (t[2] - t[1]) + 0.55];
        for (c, theirs) in t.iter().enumerate() {
            let ours = ours.channels[c][i];
            assert!((ours - theirs).abs() < 1e-5, "{i} {c}: {ours} vs {theirs}");
        }
    }
}

#[test]
fn the_cube_root_is_libm_s_to_f32_precision() {
    for i in 0..=100_000 {
        let v = i as f32 / 50_000.0;
        let (ours, libm) = (cube_root(v), v.cbrt());
        assert!(
            (ours - libm).abs() <= 2.0 * f32::EPSILON * libm,
            "{v}: {ours} {libm}"
        );
    }
    assert_eq!(cube_root(0.0), 0.0);
    assert_eq!(cube_root(-1.0), 0.0);
}
