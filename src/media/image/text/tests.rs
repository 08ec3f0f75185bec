use crate::media::image::text::*;

const GOLD: Colour = Colour([255, 200, 0, 255]);

/// Opaque pixels of exactly `colour`: the inside of the letters.
fn inked(image: &RgbaImage, colour: Colour) -> usize {
    image.pixels().filter(|p| p.0 == colour.0).count()
}

/// Whether a pixel is the dark outline: mostly opaque and near black.
fn dark(p: &Rgba<u8>) -> bool {
    p[3] >= 200 && p[0] < 60 && p[1] < 60 && p[2] < 60
}

#[test]
fn greek_and_cyrillic_render_in_the_colour_inside_a_dark_outline() {
    for text in ["Ωμέγα αλφάβητο", "Съешь же ещё этих булок"] {
        let layout = layout(text, 48.0);
        assert!(
            layout.glyphs.iter().all(|g| g.id.0 != 0),
            "{text}: a character the font lacks"
        );
        let image = render_text(text, 48.0, GOLD);
        let (w, h) = image.dimensions();
        assert!(w > 200 && h > 30, "{text}: {w}x{h}");
        let inside = inked(&image, GOLD);
        assert!(inside > 500, "{text}: {inside} pixels of the colour");
        let outline = image.pixels().filter(|p| dark(p)).count();
        assert!(outline > 300, "{text}: {outline} outline pixels");
        // Around the letters is the outline: every opaque pixel next to a transparent
        // one is dark, never the letters' own colour.
        for (x, y, p) in image.enumerate_pixels() {
            if p[3] < 250 {
                continue;
            }
            let neighbours = [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)];
            let at_edge = neighbours.iter().any(|(dx, dy)| {
                let (nx, ny) = (i64::from(x) + dx, i64::from(y) + dy);
                nx < 0
                    || ny < 0
                    || nx >= i64::from(w)
                    || ny >= i64::from(h)
                    || image.get_pixel(nx as u32, ny as u32)[3] == 0
            });
            assert!(
                !at_edge || dark(p),
                "{text}: {p:?} at ({x}, {y}) has no outline"
            );
        }
    }
}

#[test]
fn the_box_is_tight_and_grows_with_the_font_size() {
    let small = render_text("Hello, Привет", 20.0, Colour::WHITE);
    let large = render_text("Hello, Привет", 40.0, Colour::WHITE);
    let ratio_w = f64::from(large.width()) / f64::from(small.width());
    let ratio_h = f64::from(large.height()) / f64::from(small.height());
    assert!((1.7..2.3).contains(&ratio_w), "{ratio_w}");
    assert!((1.6..2.4).contains(&ratio_h), "{ratio_h}");
    for image in [&small, &large] {
        let (w, h) = image.dimensions();
        let row_has_ink = |y: u32| (0..w).any(|x| image.get_pixel(x, y)[3] > 0);
        let col_has_ink = |x: u32| (0..h).any(|y| image.get_pixel(x, y)[3] > 0);
        assert!(row_has_ink(0) && row_has_ink(h - 1), "{w}x{h}");
        assert!(col_has_ink(0) && col_has_ink(w - 1), "{w}x{h}");
    }
    // A capital's height is about 0.73 em, plus the outline on both sides.
    let capital = render_text("H", 100.0, Colour::WHITE);
    let expected = 73 + 2 * outline_px(100.0);
    assert!(
        capital.height().abs_diff(expected) <= 3,
        "{}",
        capital.height()
    );
}

#[test]
fn shaping_kerns_pairs_and_lines_stack() {
    let apart = layout("A", 40.0).width + layout("V", 40.0).width;
    let pad = 2.0 * outline_px(40.0) as f32;
    let kerned = layout("AV", 40.0).width;
    assert!(kerned < apart - pad - 1.0, "{kerned} vs {apart}");
    let one = render_text("Ab", 30.0, Colour::WHITE);
    let two = render_text("Ab\nAb", 30.0, Colour::WHITE);
    assert_eq!(one.width(), two.width());
    assert!(two.height() > one.height() * 2 - 10, "{}", two.height());
}

#[test]
fn the_colours_alpha_applies_to_letters_and_outline_and_blank_text_is_empty() {
    let half = render_text("Ж", 40.0, Colour([255, 255, 255, 128]));
    assert!(half.pixels().all(|p| p[3] <= 128));
    assert!(half.pixels().any(|p| p.0 == [255, 255, 255, 128]));
    let crlf = render_text("Ab\r\nAb", 30.0, Colour::WHITE);
    assert_eq!(
        crlf,
        render_text("Ab\nAb", 30.0, Colour::WHITE),
        "no box for \\r"
    );
    let blank = render_text("   ", 40.0, Colour::WHITE);
    assert_eq!(blank.dimensions(), (1, 1));
    assert_eq!(blank.get_pixel(0, 0)[3], 0);
}

/// The disc's maximum the slow way: every pixel within `radius` of each pixel.
fn dilate_by_hand(fill: &[f32], (w, h): (usize, usize), radius: usize) -> Vec<f32> {
    let r = radius as isize;
    let half = |dy: isize| (((r * r - dy * dy) as f64).sqrt().round()) as isize;
    let mut out = vec![0f32; w * h];
    for y in 0..h as isize {
        for x in 0..w as isize {
            let mut best = 0f32;
            for dy in -r..=r {
                for dx in -half(dy)..=half(dy) {
                    let (sx, sy) = (x + dx, y + dy);
                    if sx >= 0 && sy >= 0 && sx < w as isize && sy < h as isize {
                        best = best.max(fill[sy as usize * w + sx as usize]);
                    }
                }
            }
            out[y as usize * w + x as usize] = best;
        }
    }
    out
}

#[test]
fn the_outline_is_the_discs_maximum_at_every_radius() {
    let (w, h) = (37, 23);
    // A fixed pseudo-random coverage, sparse like letters.
    let mut seed = 7u32;
    let fill: Vec<f32> = (0..w * h)
        .map(|_| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let v = (seed >> 16) % 100;
            if v < 8 {
                v as f32 / 8.0
            } else {
                0.0
            }
        })
        .collect();
    for radius in [0, 1, 2, 3, 5, 8, 13, 30] {
        assert_eq!(
            dilate(&fill, (w, h), radius),
            dilate_by_hand(&fill, (w, h), radius),
            "radius {radius}"
        );
    }
}

#[test]
fn the_memory_a_layout_declares_covers_the_canvas_it_draws_on() {
    for (text, size) in [
        ("MM", 500.0),
        ("Ég\nqÅ", 300.0),
        ("i", 9.0),
        ("ffi W", 200.0),
    ] {
        let laid = layout(text, size);
        let drawn = laid.render(GOLD);
        let ink = u64::from(drawn.width()) * u64::from(drawn.height());
        // The canvas is the ink's box with the outline's room around it, no more.
        let pad = 2 * (u64::from(laid.outline) + 2);
        let room = (u64::from(drawn.width()) + pad) * (u64::from(drawn.height()) + pad);
        let declared = laid.memory();
        assert!(
            declared >= ink * MEMORY_PER_PIXEL && declared <= room * MEMORY_PER_PIXEL,
            "{text} at {size}: {declared} declared, {ink} px inked"
        );
    }
}
