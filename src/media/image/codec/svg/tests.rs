use std::time::{Duration, Instant};

use image::{DynamicImage, GenericImageView};

use super::open;
use crate::media::error::MediaError;

const LIMIT: u64 = 50_000_000;

fn draw(svg: &str, size: (u32, u32)) -> DynamicImage {
    open(svg.as_bytes(), LIMIT)
        .unwrap()
        .draw(size, LIMIT)
        .unwrap()
}

/// A billion laughs: ten levels of ten references, 10⁹ copies of "lol" if expanded.
fn entity_bomb() -> String {
    let mut svg = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE svg [\n<!ENTITY l0 \"lol\">\n");
    for level in 1..=9 {
        let refs = format!("&l{};", level - 1).repeat(10);
        svg.push_str(&format!("<!ENTITY l{level} \"{refs}\">\n"));
    }
    svg.push_str("]>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">");
    svg.push_str("<text y=\"5\">&l9;</text></svg>");
    svg
}

#[test]
fn a_circle_is_drawn_at_the_size_asked_for_not_its_own() {
    let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" width="10" height="10">
        <circle cx="5" cy="5" r="4" fill="#ff0000"/></svg>"##;
    let file = open(svg.as_bytes(), LIMIT).unwrap();
    assert_eq!((file.width, file.height), (10, 10));
    assert_eq!(file.drawn_size((1000, 500), LIMIT), (1000, 1000));
    let image = draw(svg, (1000, 1000));
    assert_eq!(image.dimensions(), (1000, 1000));
    assert_eq!(image.get_pixel(500, 500).0, [255, 0, 0, 255]);
    assert_eq!(
        image.get_pixel(2, 2).0[3],
        0,
        "outside the circle is transparent"
    );
    // Vector-sharp: the antialiased edge is about one pixel wide all round (the
    // circumference is 2π·400 ≈ 2513 px); a 10 px bitmap scaled up 100 times would
    // smear it over tens of thousands.
    let soft = image
        .pixels()
        .filter(|(_, _, p)| p.0[3] > 0 && p.0[3] < 255)
        .count();
    assert!(soft < 6000, "{soft} half-covered pixels");
}

#[test]
fn an_opaque_drawing_comes_out_without_alpha() {
    let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="2">
        <rect width="4" height="2" fill="#0000ff"/></svg>"##;
    let image = draw(svg, (8, 4));
    assert!(matches!(image, DynamicImage::ImageRgb8(_)));
    assert_eq!(image.get_pixel(3, 3).0, [0, 0, 255, 255]);
}

#[test]
fn an_entity_bomb_is_refused_quickly() {
    let started = Instant::now();
    let refused = open(entity_bomb().as_bytes(), LIMIT);
    assert!(
        matches!(refused, Err(MediaError::InvalidMedia(_))),
        "{:?}",
        refused.err()
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_canvas_past_the_pixel_limit_is_image_too_large() {
    let svg =
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="1000000000" height="1000000000"/>"##;
    let refused = open(svg.as_bytes(), LIMIT).err().unwrap();
    assert!(
        matches!(refused, MediaError::ImageTooLarge { .. }),
        "{refused:?}"
    );
    // Small on its own, asked for past the limit: drawn as large as the limit allows.
    let small = r##"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>"##;
    let file = open(small.as_bytes(), 1_000_000).unwrap();
    assert_eq!(file.drawn_size((100_000, 100_000), 1_000_000), (1000, 1000));
}

#[test]
fn images_are_read_from_data_uris_only_never_from_files() {
    let dir = tempfile::tempdir().unwrap();
    let png_path = dir.path().join("red.png");
    let red = image::RgbImage::from_pixel(4, 4, image::Rgb([255, 0, 0]));
    red.save(&png_path).unwrap();
    let mut png = Vec::new();
    DynamicImage::ImageRgb8(red)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    let svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="20" height="10">
        <image x="0" width="10" height="10" xlink:href="data:image/png;base64,{data}"/>
        <image x="10" width="10" height="10" href="{}"/></svg>"##,
        png_path.display()
    );
    let image = draw(&svg, (20, 10));
    assert_eq!(
        image.get_pixel(5, 5).0,
        [255, 0, 0, 255],
        "the data: URI is drawn"
    );
    assert_eq!(image.get_pixel(15, 5).0[3], 0, "the file is not read");
}

#[test]
fn text_is_set_in_the_bundled_font_whatever_family_it_asks_for() {
    let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60">
        <text x="10" y="45" font-family="Comic Sans MS, cursive" font-size="40">Hello</text></svg>"##;
    let image = draw(svg, (200, 60));
    let inked = image.pixels().filter(|(_, _, p)| p.0[3] > 128).count();
    assert!(inked > 500, "only {inked} pixels of text");
}

#[test]
fn what_is_not_an_svg_picture_is_invalid_media() {
    for bad in [
        "<svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\"/>",
        "\u{0}",
    ] {
        let refused = open(bad.as_bytes(), LIMIT).err();
        assert!(
            matches!(refused, Some(MediaError::InvalidMedia(_))),
            "{bad}: {refused:?}"
        );
    }
}
