use super::*;
use image::{Rgb, RgbImage, Rgba, RgbaImage};

/// A picture with what photographs have: smooth gradients, fine texture and edges.
fn photo_like(width: u32, height: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
        let texture = ((x * 7919 + y * 104_729) % 23) as f32;
        let sky = y < height / 3;
        let (r, g, b) = if sky {
            (90.0 + y as f32 * 0.8, 140.0 + y as f32 * 0.5, 220.0)
        } else {
            let leaf = ((x as f32 / 5.0).sin() * (y as f32 / 3.0).cos() * 40.0) + texture * 2.0;
            (60.0 + leaf, 110.0 + leaf * 1.2, 40.0 + texture)
        };
        Rgb([r as u8, g as u8, b as u8])
    }))
}

fn budget() -> Arc<MemoryBudget> {
    MemoryBudget::new(1 << 30, 1 << 31)
}

#[test]
fn the_search_tries_at_most_four_qualities_and_keeps_the_lowest_passing() {
    // Scores rising by one a quality step: 70 is reached at quality 70.
    let mut search = Search::new(ImageFormat::Webp, 70.0);
    let mut tried = Vec::new();
    while let Some(quality) = search.next() {
        tried.push(quality);
        search.record(quality, f64::from(quality));
    }
    assert!(tried.len() <= MAX_TRIALS, "{tried:?}");
    assert!(search.pass.1 >= 70.0);
    assert!(search.pass.0 <= 72, "{tried:?} ended at {:?}", search.pass);
    // Nothing passes but full quality: full quality is kept.
    let mut hard = Search::new(ImageFormat::Jpeg, 70.0);
    while let Some(quality) = hard.next() {
        hard.record(quality, 10.0);
    }
    assert_eq!(hard.pass, (100, 100.0));
    assert!(hard.trials <= MAX_TRIALS);
}

#[test]
fn a_photograph_s_curve_is_settled_in_two_trials() {
    // A WebP curve as photographs have it near the target: half a point a quality step,
    // 70 at quality 80 (the line to quality 100 would be three times as steep).
    let curve = |quality: u8| 70.0 + 0.5 * (f64::from(quality) - 80.0);
    let mut search = Search::new(ImageFormat::Webp, 70.0);
    let mut tried = Vec::new();
    while let Some(quality) = search.next() {
        tried.push(quality);
        search.record(quality, curve(quality));
    }
    assert_eq!(tried.len(), 2, "{tried:?}");
    assert!(
        search.pass.1 >= 70.0 && search.pass.0 <= 82,
        "{tried:?}: {:?}",
        search.pass
    );
}

#[test]
fn auto_quality_picks_less_than_full_quality_and_meets_the_target() {
    let image = photo_like(160, 120);
    for format in [ImageFormat::Jpeg, ImageFormat::Webp, ImageFormat::Avif] {
        let auto = Quality::Auto { target: 70.0 };
        let (bytes, chosen) = encode_with(image.clone(), format, auto, &budget()).unwrap();
        let chosen = chosen.unwrap();
        assert!(chosen.quality < 100, "{format:?}: {chosen:?}");
        // Scored again here: the output against the picture at quality 100.
        let decode = |b: &[u8]| {
            decode::open(b, format.media_format(), u64::MAX)
                .unwrap()
                .decode(160, 120)
                .unwrap()
        };
        let full = encode_at(image.clone(), format, Some(100)).unwrap();
        let measured = score(&decode(&full), &decode(&bytes)).unwrap();
        assert!(measured >= 70.0, "{format:?}: {measured} at {chosen:?}");
        assert!(
            (measured - chosen.score).abs() < 0.1,
            "{measured} {chosen:?}"
        );
    }
}

#[test]
fn a_large_output_is_scored_on_tiles_cut_at_its_own_scale() {
    use image::GenericImageView;
    assert!(mosaic(&photo_like(400, 300)).is_none());
    let big = photo_like(1200, 900);
    let tiles = mosaic(&big).unwrap();
    assert_eq!(tiles.dimensions(), (512, 512));
    // Each tile is the picture's own pixels, unscaled, from the middle of its cell:
    // the first cell's middle is (150, 112), the last's (1050, 787).
    assert_eq!(tiles.get_pixel(0, 0), big.get_pixel(150 - 64, 112 - 64));
    assert_eq!(
        tiles.get_pixel(511, 511),
        big.get_pixel(1050 + 63, 787 + 63)
    );
    // A long, low picture: tiles as high as it is.
    let strip = mosaic(&photo_like(3000, 100)).unwrap();
    assert_eq!(strip.dimensions(), (512, 400));
    assert!(u64::from(strip.width()) * u64::from(strip.height()) <= SCORED_PIXELS);
}

#[test]
fn best_keeps_the_smallest_format_and_leaves_jpeg_out_for_transparency() {
    let image = photo_like(96, 64);
    let auto = Quality::Auto { target: 70.0 };
    let all = [ImageFormat::Jpeg, ImageFormat::Webp, ImageFormat::Avif];
    let (format, bytes, _) = encode_best(image.clone(), &all, auto, &budget()).unwrap();
    for other in all {
        let (each, _) = encode_with(image.clone(), other, auto, &budget()).unwrap();
        assert!(bytes.len() <= each.len(), "{format:?} beat by {other:?}");
    }
    let clear = DynamicImage::ImageRgba8(RgbaImage::from_pixel(32, 32, Rgba([9, 9, 9, 0])));
    let (format, _, _) = encode_best(clear.clone(), &all, auto, &budget()).unwrap();
    assert_ne!(format, ImageFormat::Jpeg);
    let jpeg_only = [ImageFormat::Jpeg];
    let (format, _, chosen) = encode_best(clear, &jpeg_only, auto, &budget()).unwrap();
    assert_eq!((format, chosen), (ImageFormat::Png, None));
}

#[test]
fn the_search_is_charged_to_the_memory_budget() {
    let tight = MemoryBudget::new(1 << 20, 1 << 30);
    let auto = Quality::Auto { target: 70.0 };
    let e = encode_with(photo_like(400, 300), ImageFormat::Jpeg, auto, &tight).unwrap_err();
    assert!(matches!(e, MediaError::MemoryTooLarge { .. }), "{e:?}");
}

#[test]
fn a_quick_webp_is_another_encode_of_the_same_picture_at_the_default_quality() {
    let picture = photo_like(320, 240);
    let (quick, none) = encode_with(
        picture.clone(),
        ImageFormat::Webp,
        Quality::Quick,
        &budget(),
    )
    .unwrap();
    let (default, _) = encode_with(
        picture.clone(),
        ImageFormat::Webp,
        Quality::Fixed(None),
        &budget(),
    )
    .unwrap();
    assert!(none.is_none());
    assert_ne!(quick, default, "method 2 is not method 4");
    let decoded = image::load_from_memory(&quick).unwrap().to_rgb8();
    assert_eq!(decoded.dimensions(), (320, 240));
    let (a, b) = (decoded.as_raw(), picture.to_rgb8().into_raw());
    let mean = a
        .iter()
        .zip(&b)
        .map(|(x, y)| f64::from(x.abs_diff(*y)))
        .sum::<f64>()
        / a.len() as f64;
    assert!(mean < 6.0, "mean difference {mean} from the picture");
    let ratio = quick.len() as f64 / default.len() as f64;
    assert!(
        (0.8..1.3).contains(&ratio),
        "{} against {} bytes",
        quick.len(),
        default.len()
    );
    // Other formats are written as at their default.
    let (png, _) =
        encode_with(picture.clone(), ImageFormat::Png, Quality::Quick, &budget()).unwrap();
    let (png_default, _) =
        encode_with(picture, ImageFormat::Png, Quality::Fixed(None), &budget()).unwrap();
    assert_eq!(png, png_default);
}
