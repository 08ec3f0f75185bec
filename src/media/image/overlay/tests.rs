use std::sync::Arc;

use image::DynamicImage;

use image::{Rgb, RgbImage, Rgba};

use crate::media::image::overlay::*;

fn solid(w: u32, h: u32, px: [u8; 4]) -> RgbaImage {
    RgbaImage::from_pixel(w, h, Rgba(px))
}

/// What source-over gives for one channel on an opaque base, rounded as `blend` does.
fn over_opaque(src: u8, dst: u8, alpha: f32) -> u8 {
    (f32::from(src) * alpha + f32::from(dst) * (1.0 - alpha)).round() as u8
}

#[test]
fn opacity_and_alpha_blend_exactly() {
    let mut base = solid(4, 4, [200, 0, 0, 255]);
    composite(&mut base, &solid(2, 2, [0, 0, 200, 255]), (1, 1), 0.5);
    assert_eq!(base.get_pixel(1, 1).0, [100, 0, 100, 255]);
    assert_eq!(base.get_pixel(2, 2).0, [100, 0, 100, 255]);
    assert_eq!(base.get_pixel(0, 0).0, [200, 0, 0, 255]);
    assert_eq!(base.get_pixel(3, 3).0, [200, 0, 0, 255]);

    let mut base = solid(1, 1, [10, 100, 250, 255]);
    composite(&mut base, &solid(1, 1, [250, 50, 0, 128]), (0, 0), 0.75);
    let a = 128.0 / 255.0 * 0.75;
    let expected = [
        over_opaque(250, 10, a),
        over_opaque(50, 100, a),
        over_opaque(0, 250, a),
        255,
    ];
    assert_eq!(base.get_pixel(0, 0).0, expected);

    // On a transparent base the overlay's pixels come through as they are.
    let mut clear = solid(2, 2, [0, 0, 0, 0]);
    composite(&mut clear, &solid(2, 2, [10, 20, 30, 128]), (0, 0), 1.0);
    assert_eq!(clear.get_pixel(1, 1).0, [10, 20, 30, 128]);
    // Opacity 0 and a fully transparent overlay change nothing.
    let mut base = solid(2, 2, [1, 2, 3, 255]);
    composite(&mut base, &solid(2, 2, [9, 9, 9, 255]), (0, 0), 0.0);
    composite(&mut base, &solid(2, 2, [9, 9, 9, 0]), (0, 0), 1.0);
    assert_eq!(base, solid(2, 2, [1, 2, 3, 255]));
}

#[test]
fn an_overlay_past_the_edges_is_clipped() {
    let red = [255, 0, 0, 255];
    let painted = |at: (i64, i64), top: (u32, u32)| {
        let mut base = solid(3, 3, [0, 0, 0, 255]);
        composite(&mut base, &solid(top.0, top.1, red), at, 1.0);
        let mut hits: Vec<(u32, u32)> = base
            .enumerate_pixels()
            .filter(|(_, _, p)| p.0 == red)
            .map(|(x, y, _)| (x, y))
            .collect();
        hits.sort();
        hits
    };
    assert_eq!(painted((-2, -2), (4, 4)), [(0, 0), (0, 1), (1, 0), (1, 1)]);
    assert_eq!(painted((2, 2), (4, 4)), [(2, 2)]);
    assert_eq!(painted((-1, 1), (10, 1)), [(0, 1), (1, 1), (2, 1)]);
    assert_eq!(painted((-1, -1), (5, 5)).len(), 9);
    assert!(painted((3, 0), (2, 2)).is_empty());
    assert!(painted((-2, 0), (2, 2)).is_empty());
    assert!(painted((i64::MIN / 4, i64::MAX / 4), (2, 2)).is_empty());
}

#[test]
fn each_gravity_places_the_overlay_against_its_edges_with_the_margin() {
    let (base, top, m) = ((100, 80), (10, 6), 5);
    let cases = [
        (Gravity::Northwest, (5, 5)),
        (Gravity::North, (45, 5)),
        (Gravity::Northeast, (85, 5)),
        (Gravity::West, (5, 37)),
        (Gravity::Center, (45, 37)),
        (Gravity::East, (85, 37)),
        (Gravity::Southwest, (5, 69)),
        (Gravity::South, (45, 69)),
        (Gravity::Southeast, (85, 69)),
        (Gravity::Smart, (45, 37)),
        (Gravity::Focus { x: 0.5, y: 0.5 }, (45, 37)),
        (Gravity::Focus { x: 0.3, y: 0.25 }, (25, 17)),
        (Gravity::Focus { x: 0.0, y: 1.0 }, (5, 69)),
        (Gravity::Focus { x: 0.97, y: 0.02 }, (85, 5)),
    ];
    for (gravity, expected) in cases {
        assert_eq!(place(base, top, gravity, m), expected, "{gravity:?}");
    }
    // An overlay larger than the room inside the margins: corners still hold their
    // margin, a focus centres it.
    assert_eq!(place((20, 20), (30, 30), Gravity::Northwest, 4), (4, 4));
    assert_eq!(place((20, 20), (30, 30), Gravity::Southeast, 4), (-14, -14));
    let focus = Gravity::Focus { x: 0.1, y: 0.9 };
    assert_eq!(place((20, 20), (30, 30), focus, 4), (-5, -5));
}

#[test]
fn a_watermark_keeps_its_transparency_scale_and_corner() {
    // 10x5: the left half transparent, the right half red.
    let mut logo = solid(10, 5, [0, 0, 0, 0]);
    for (x, _, p) in logo.enumerate_pixels_mut() {
        if x >= 5 {
            *p = Rgba([255, 0, 0, 255]);
        }
    }
    let grey = Rgb([100, 100, 100]);
    let base = DynamicImage::ImageRgb8(RgbImage::from_pixel(200, 100, grey));
    let op = Watermark::new(logo.clone());
    assert_eq!(op.output_size((200, 100)).unwrap(), (200, 100));
    assert_eq!(op.overlay_size((200, 100)), (40, 20));
    let out = op.apply(base.clone()).unwrap();
    let DynamicImage::ImageRgb8(out) = out else {
        panic!("an RGB picture stays RGB");
    };
    assert_eq!(out.dimensions(), (200, 100));
    // Default gravity southeast, margin 16: the 40x20 overlay at (144, 64).
    assert_eq!(out.get_pixel(144 + 30, 64 + 10), &Rgb([255, 0, 0]));
    assert_eq!(out.get_pixel(144 + 38, 64 + 18), &Rgb([255, 0, 0]));
    assert_eq!(out.get_pixel(144 + 5, 64 + 10), &grey, "transparency kept");
    assert_eq!(
        out.get_pixel(144 + 41, 64 + 10),
        &grey,
        "the margin is left"
    );
    assert_eq!(out.get_pixel(144 + 30, 64 + 21), &grey);
    let reds = out.pixels().filter(|p| p[0] > 200 && p[1] < 50).count();
    assert!((360..=440).contains(&reds), "{reds}");

    let mut half = Watermark::new(logo);
    (half.opacity, half.gravity, half.margin) = (0.5, Gravity::Northwest, 0);
    let out = half.apply(base).unwrap().into_rgb8();
    let mixed = [over_opaque(255, 100, 0.5), 50, 50];
    assert_eq!(out.get_pixel(30, 10).0, mixed);
    assert_eq!(out.get_pixel(5, 10), &grey);
}

#[test]
fn a_tall_watermark_is_held_to_the_pictures_height_and_alpha_pictures_keep_alpha() {
    let op = Watermark::new(solid(10, 100, [0, 255, 0, 255]));
    assert_eq!(op.overlay_size((200, 50)), (5, 50));
    let clear = DynamicImage::ImageRgba8(solid(200, 50, [0, 0, 0, 0]));
    let DynamicImage::ImageRgba8(out) = op.apply(clear).unwrap() else {
        panic!("an RGBA picture stays RGBA");
    };
    assert_eq!(out.get_pixel(200 - 16 - 3, 25).0, [0, 255, 0, 255]);
    assert_eq!(out.get_pixel(10, 25).0, [0, 0, 0, 0]);
}

#[test]
fn text_lands_in_its_corner_in_its_colour_with_an_outline() {
    let blue = Rgb([0, 0, 255]);
    let base = DynamicImage::ImageRgb8(RgbImage::from_pixel(400, 200, blue));
    let mut op = Text::new("Привет, κόσμε");
    (op.gravity, op.margin, op.font_size) = (Gravity::Northwest, 10, Some(40.0));
    let drawn = op.drawn_for((400, 200)).unwrap();
    let (tw, th) = drawn.dimensions();
    let out = op.apply(base).unwrap().into_rgb8();
    assert_eq!(out.dimensions(), (400, 200));
    let mut white = 0;
    for (x, y, p) in out.enumerate_pixels() {
        let inside = (10..10 + tw).contains(&x) && (10..10 + th).contains(&y);
        if !inside {
            assert_eq!(p, &blue, "({x}, {y}) is outside the text's box");
        } else if p.0 == [255, 255, 255] {
            white += 1;
        }
    }
    assert!(white > 300, "{white}");
    let dark = out.pixels().filter(|p| p.0.iter().all(|c| *c < 40)).count();
    assert!(dark > 200, "{dark}");
}

#[test]
fn text_defaults_to_a_twentieth_of_the_height_and_shrinks_to_fit() {
    let op = Text::new("Hi");
    assert_eq!(op.font_size_for((400, 200)), 10.0);
    assert_eq!(op.font_size_for((400, 1000)), 50.0);
    let mut long = Text::new("Съешь же ещё этих мягких французских булок");
    long.font_size = Some(40.0);
    let size = long.font_size_for((400, 200));
    assert!(size < 20.0 && size > 5.0, "{size}");
    let drawn = long.drawn_for((400, 200)).unwrap();
    assert!(drawn.width() <= 400 - 32, "{}", drawn.width());
    // Each frame of an animation gets the same drawing, made once.
    assert!(Arc::ptr_eq(&drawn, &long.drawn_for((400, 200)).unwrap()));
}
