//! The canvas model, each disposal and blend, on the canvas itself and through small
//! APNG and GIF files made here: the composed frames' exact pixels.

use image::{Rgba, RgbaImage};
use png::{BlendOp, DisposeOp};

use super::*;
use crate::media::image::codec::apng::ApngFrames;
use crate::media::image::codec::gif::frames::tests::{control, frames as gif_frames, gif};

const RED: [u8; 4] = [255, 0, 0, 255];
const GREEN: [u8; 4] = [0, 255, 0, 255];
const BLUE: [u8; 4] = [0, 0, 255, 255];
const CLEAR: [u8; 4] = [0; 4];

/// The pixels of `image`, row by row.
fn pixels(image: &RgbaImage) -> Vec<[u8; 4]> {
    image.pixels().map(|p| p.0).collect()
}

/// Lays `colour` over the whole of `rect` by `blend`.
fn paint(canvas: &mut Canvas, (x, y, w, h): Rect, colour: [u8; 4], blend: Blend) {
    for ty in y..y + h {
        for tx in x..x + w {
            canvas.put(tx, ty, colour, blend);
        }
    }
}

#[test]
fn each_disposal_leaves_the_next_frame_the_canvas_the_specification_says() {
    // A 2x1 canvas: red, then green over the right pixel with each disposal, then
    // nothing drawn: what the next frame is laid on.
    for (dispose, right) in [
        (Dispose::None, GREEN),
        (Dispose::Background, CLEAR),
        (Dispose::Previous, RED),
    ] {
        let mut canvas = Canvas::new(2, 1);
        canvas.begin((0, 0, 2, 1), Dispose::None);
        paint(&mut canvas, (0, 0, 2, 1), RED, Blend::Source);
        canvas.begin((1, 0, 1, 1), dispose);
        paint(&mut canvas, (1, 0, 1, 1), GREEN, Blend::Source);
        assert_eq!(pixels(canvas.image()), [RED, GREEN], "{dispose:?} shown");
        canvas.begin((0, 0, 1, 1), Dispose::None);
        assert_eq!(pixels(canvas.image()), [RED, right], "{dispose:?} after");
    }
}

#[test]
fn a_first_frame_to_be_put_back_is_cleared_instead() {
    let mut canvas = Canvas::new(2, 1);
    canvas.fill(BLUE);
    canvas.begin((0, 0, 1, 1), Dispose::Previous);
    paint(&mut canvas, (0, 0, 1, 1), RED, Blend::Source);
    canvas.begin((1, 0, 1, 1), Dispose::None);
    assert_eq!(pixels(canvas.image()), [CLEAR, BLUE]);
}

#[test]
fn blends_replace_lay_over_or_cut_at_half() {
    let half_red = [255, 0, 0, 128];
    let cases = [
        (Blend::Source, half_red, half_red),
        (Blend::Source, CLEAR, CLEAR),
        // Pillow's rounding: every channel moved by 128/255, alpha included.
        (Blend::Over, half_red, [128, 0, 127, 191]),
        (Blend::Over, CLEAR, BLUE),
        (Blend::Over, RED, RED),
        (Blend::Cut, half_red, half_red),
        (Blend::Cut, [255, 0, 0, 127], BLUE),
    ];
    for (blend, source, expected) in cases {
        let mut canvas = Canvas::new(1, 1);
        canvas.fill(BLUE);
        canvas.begin((0, 0, 1, 1), Dispose::None);
        canvas.put(0, 0, source, blend);
        assert_eq!(pixels(canvas.image()), [expected], "{blend:?} {source:?}");
    }
    // 127 frames of green at alpha 2 over opaque green fade it to alpha 97, as in
    // Pillow's own test of its APNG reader.
    let faded = (0..127).fold(Rgba(GREEN), |d, _| over(d, [0, 255, 0, 2]));
    assert_eq!(faded.0, [0, 255, 0, 97]);
}

#[test]
fn what_a_frame_draws_past_the_canvas_is_clipped() {
    let mut canvas = Canvas::new(2, 2);
    canvas.begin((1, 1, 5, 5), Dispose::Background);
    paint(&mut canvas, (1, 1, 5, 5), RED, Blend::Source);
    assert_eq!(pixels(canvas.image()), [CLEAR, CLEAR, CLEAR, RED]);
    canvas.begin((9, 9, 1, 1), Dispose::None);
    assert_eq!(pixels(canvas.image()), [CLEAR; 4]);
}

/// An APNG of a 4x2 canvas whose frames are each one colour over a rectangle, the
/// first the default image (the whole canvas).
fn apng(frames: &[(Rect, DisposeOp, BlendOp, [u8; 4])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, 4, 2);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_animated(frames.len() as u32, 0).unwrap();
    let mut writer = encoder.write_header().unwrap();
    for &((x, y, w, h), dispose, blend, colour) in frames {
        writer.reset_frame_position().unwrap();
        writer.set_frame_dimension(w, h).unwrap();
        writer.set_frame_position(x, y).unwrap();
        writer.set_dispose_op(dispose).unwrap();
        writer.set_blend_op(blend).unwrap();
        writer
            .write_image_data(&colour.repeat((w * h) as usize))
            .unwrap();
    }
    writer.finish().unwrap();
    out
}

fn apng_frames(bytes: &[u8]) -> Vec<RgbaImage> {
    let frames = ApngFrames::open(bytes, 1 << 20).unwrap();
    frames.map(|f| f.unwrap().into_buffer()).collect()
}

const WHOLE: Rect = (0, 0, 4, 2);
const RIGHT: Rect = (2, 0, 2, 2);
const CORNER: Rect = (0, 0, 1, 1);

#[test]
fn apng_dispose_ops_give_the_next_frame_its_canvas() {
    use {BlendOp::*, DisposeOp as D};
    let row = |left: [u8; 4], right: [u8; 4]| [left, left, right, right].repeat(2);
    // Red, green over the right half with each dispose_op, then a transparent pixel
    // laid over the corner: the last frame shows what the green one left.
    for (dispose, right) in [(D::None, GREEN), (D::Background, CLEAR), (D::Previous, RED)] {
        let bytes = apng(&[
            (WHOLE, D::None, Source, RED),
            (RIGHT, dispose, Over, GREEN),
            (CORNER, D::None, Over, CLEAR),
        ]);
        let frames = apng_frames(&bytes);
        assert_eq!(frames.len(), 3);
        assert_eq!(pixels(&frames[1]), row(RED, GREEN), "{dispose:?}");
        assert_eq!(pixels(&frames[2]), row(RED, right), "{dispose:?}");
    }
    // dispose_op previous over the whole canvas, blended over (Pillow's
    // dispose_op_previous.png): the canvas before it comes back whole.
    let bytes = apng(&[
        (WHOLE, D::None, Source, GREEN),
        (WHOLE, D::Previous, Over, RED),
        (CORNER, D::None, Over, CLEAR),
    ]);
    let frames = apng_frames(&bytes);
    assert_eq!(pixels(&frames[1]), [RED; 8]);
    assert_eq!(pixels(&frames[2]), [GREEN; 8]);
}

#[test]
fn an_apng_first_frame_to_be_put_back_is_cleared() {
    use {BlendOp::*, DisposeOp as D};
    let bytes = apng(&[
        (WHOLE, D::Previous, Source, RED),
        (CORNER, D::None, Source, BLUE),
    ]);
    let frames = apng_frames(&bytes);
    assert_eq!(pixels(&frames[0]), [RED; 8]);
    let mut expected = [CLEAR; 8];
    expected[0] = BLUE;
    assert_eq!(pixels(&frames[1]), expected);
}

#[test]
fn apng_blend_ops_replace_or_lay_over() {
    use {BlendOp::*, DisposeOp as D};
    let half_red = [255, 0, 0, 128];
    for (blend, expected) in [(Source, half_red), (Over, [128, 0, 127, 191])] {
        let bytes = apng(&[
            (WHOLE, D::None, Source, BLUE),
            (WHOLE, D::None, blend, half_red),
        ]);
        assert_eq!(pixels(&apng_frames(&bytes)[1]), [expected; 8], "{blend:?}");
    }
    let bytes = apng(&[
        (WHOLE, D::None, Source, BLUE),
        (RIGHT, D::None, Source, CLEAR),
    ]);
    let row = [BLUE, BLUE, CLEAR, CLEAR].repeat(2);
    assert_eq!(pixels(&apng_frames(&bytes)[1]), row);
}

#[test]
fn gif_disposals_clear_to_transparency_whatever_the_background_colour() {
    let table = [[255, 0, 0], [0, 255, 0], [0, 0, 255]];
    let (whole, right) = ((0, 0, 2, 1), (1, 0, 1, 1));
    // Red without a transparent index, green over the right pixel with each
    // disposal, then an index-3 pixel transparent over the left one.
    for (disposal, after) in [(1, GREEN), (2, CLEAR), (3, RED)] {
        let bytes = gif(
            (2, 1),
            &table,
            &[
                (whole, control(0, None), vec![0, 0]),
                (right, control(disposal, None), vec![1]),
                ((0, 0, 1, 1), control(0, Some(3)), vec![3]),
            ],
        );
        let frames = gif_frames(&bytes);
        assert_eq!(pixels(&frames[1]), [RED, GREEN], "disposal {disposal}");
        assert_eq!(pixels(&frames[2]), [RED, after], "disposal {disposal}");
    }
}

#[test]
fn a_gif_first_frame_to_be_put_back_leaves_transparency() {
    // Pillow's dispose_prev_first_frame.gif: a first frame of disposal 3 with a
    // transparent index, then the same frame again.
    let table = [[0, 0, 0], [255, 0, 0]];
    let frame = ((0, 0, 2, 1), control(3, Some(0)), vec![1, 0]);
    let bytes = gif((2, 1), &table, &[frame.clone(), frame]);
    let frames = gif_frames(&bytes);
    assert_eq!(pixels(&frames[0]), [RED, CLEAR]);
    assert_eq!(pixels(&frames[1]), [RED, CLEAR]);
}

#[test]
fn each_gif_frame_has_its_own_transparent_index() {
    // Pillow's different_transparency.gif: index 0 transparent in the first frame,
    // index 2 in the second, whose index 0 is then drawn.
    let table = [[0, 0, 0], [255, 0, 0], [0, 0, 255]];
    let bytes = gif(
        (3, 1),
        &table,
        &[
            ((0, 0, 3, 1), control(0, Some(0)), vec![1, 0, 0]),
            ((0, 0, 3, 1), control(0, Some(2)), vec![2, 0, 2]),
        ],
    );
    let frames = gif_frames(&bytes);
    assert_eq!(pixels(&frames[0]), [RED, CLEAR, CLEAR]);
    assert_eq!(pixels(&frames[1]), [RED, [0, 0, 0, 255], CLEAR]);
}
