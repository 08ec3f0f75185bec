//! `gravity: smart` judged by its pixels: a small salient object on a flat picture.

use image::{DynamicImage, Rgb, RgbImage};

use crate::media::image::tests::{boxed, rgb_at, run, BLUE};
use crate::media::image::*;

/// A flat grey `w` × `h` picture with a small red-and-white checkerboard (saturated
/// and full of edges) whose top-left corner is at `at`.
fn object_on_flat(w: u32, h: u32, at: (u32, u32), side: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        let inside = (at.0..at.0 + side).contains(&x) && (at.1..at.1 + side).contains(&y);
        if !inside {
            return Rgb([128, 128, 128]);
        }
        if (x / 4 + y / 4) % 2 == 0 {
            Rgb([230, 20, 20])
        } else {
            Rgb([250, 250, 250])
        }
    }))
}

fn red_pixels(image: &DynamicImage) -> usize {
    image
        .to_rgb8()
        .pixels()
        .filter(|p| p[0] > 180 && p[1] < 90 && p[2] < 90)
        .count()
}

#[test]
fn smart_keeps_a_small_salient_object_on_a_flat_background_wherever_it_is() {
    let smart = boxed(100, 200, Fit::Cover, Gravity::Smart);
    let object = 30 * 30 / 2;
    for x in [10, 150, 265] {
        let picture = object_on_flat(300, 200, (x, 80), 30);
        let out = run(&smart, &picture);
        // The whole object (half of it red) is inside the kept window.
        let kept = red_pixels(&out);
        assert!(
            kept * 10 >= object * 9,
            "object at x {x}: {kept} red pixels"
        );
        // The centre keeps none of it at the sides.
        if x != 150 {
            let centre = run(&boxed(100, 200, Fit::Cover, Gravity::Center), &picture);
            assert_eq!(red_pixels(&centre), 0, "x {x}");
        }
    }
    // Vertically too, and on a bigger picture (measured on a small copy).
    let picture = object_on_flat(600, 1200, (250, 1100), 60);
    let out = run(&boxed(300, 300, Fit::Cover, Gravity::Smart), &picture);
    assert!(
        red_pixels(&out) * 10 >= 15 * 15 * 9 / 2,
        "{}",
        red_pixels(&out)
    );
    // Nothing salient: the centre.
    let flat = DynamicImage::ImageRgb8(RgbImage::from_pixel(300, 100, Rgb([9, 9, 9])));
    let map = smart::salience(&flat.to_rgb8());
    assert_eq!(map.best_window(100, 100), (100, 0));
}

#[test]
fn smart_choices_settle_once_for_every_frame() {
    let first = object_on_flat(300, 200, (250, 80), 30);
    let op = boxed(100, 200, Fit::Cover, Gravity::Smart);
    let settled = op.settled(&first).expect("smart settles");
    // A later frame without the object keeps the same window.
    let later = object_on_flat(300, 200, (0, 0), 0);
    let marked = |image: &DynamicImage| {
        let mut rgb = image.to_rgb8();
        rgb.put_pixel(299, 0, Rgb(BLUE));
        DynamicImage::ImageRgb8(rgb)
    };
    let out = settled.apply(marked(&later)).unwrap();
    assert_eq!(
        rgb_at(&out, 99, 0),
        BLUE,
        "the right edge, as for the first"
    );
    assert!(boxed(100, 200, Fit::Cover, Gravity::North)
        .settled(&first)
        .is_none());
}
