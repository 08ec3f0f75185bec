//! Draws the windows `gravity: smart` keeps of a photo, for docs/SMARTCROP.md:
//! a square (red) and a 9:16 portrait (yellow) for a landscape photo.
//!
//! `cargo run --release --example smartcrop -- PHOTO OUT.png`

use image::{DynamicImage, Rgb, RgbImage};
use mediaedit::media::image::smart_window;

/// Width of the picture written (the photo shrunk to it).
const OUT_WIDTH: u32 = 320;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(input), Some(output)) = (args.next(), args.next()) else {
        eprintln!("usage: smartcrop PHOTO OUT.png");
        std::process::exit(2);
    };
    let photo = image::open(&input).expect("a photo the image crate reads");
    let (w, h) = (f64::from(photo.width()), f64::from(photo.height()));
    let k = f64::from(OUT_WIDTH) / w;
    let mut canvas = photo
        .resize_exact(
            OUT_WIDTH,
            (h * k).round() as u32,
            image::imageops::FilterType::Triangle,
        )
        .into_rgb8();
    for (aspect, colour) in [(1.0, [230, 30, 30]), (9.0 / 16.0, [250, 220, 0])] {
        let size = if w / h > aspect {
            (h * aspect, h)
        } else {
            (w, w / aspect)
        };
        let (left, top) = smart_window(&photo, size);
        println!(
            "{input}: {:.0}x{:.0} window at ({left:.0}, {top:.0})",
            size.0, size.1
        );
        draw_box(
            &mut canvas,
            (left * k, top * k, size.0 * k, size.1 * k),
            Rgb(colour),
        );
    }
    DynamicImage::ImageRgb8(canvas)
        .save(&output)
        .expect("the picture written");
}

/// A rectangle 3 px thick, inside `(left, top, width, height)`.
fn draw_box(
    canvas: &mut RgbImage,
    (left, top, width, height): (f64, f64, f64, f64),
    colour: Rgb<u8>,
) {
    let (x0, y0) = (left.round() as u32, top.round() as u32);
    let x1 = ((left + width).round() as u32).min(canvas.width()) - 1;
    let y1 = ((top + height).round() as u32).min(canvas.height()) - 1;
    for t in 0..3 {
        for x in x0..=x1 {
            canvas.put_pixel(x, y0 + t, colour);
            canvas.put_pixel(x, y1 - t, colour);
        }
        for y in y0..=y1 {
            canvas.put_pixel(x0 + t, y, colour);
            canvas.put_pixel(x1 - t, y, colour);
        }
    }
}
