//! The operations judged by their pixels, on small pictures made here.

use image::{DynamicImage, Rgb, RgbImage, Rgba};

use crate::media::image::*;
use crate::media::MediaError;

const RED: [u8; 3] = [255, 0, 0];
const GREEN: [u8; 3] = [0, 255, 0];
pub(super) const BLUE: [u8; 3] = [0, 0, 255];
const YELLOW: [u8; 3] = [255, 255, 0];

/// A `w` × `h` picture in four quadrants: red (top left), green (top right), blue
/// (bottom left), yellow (bottom right).
fn quadrants(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        Rgb(match (x < w / 2, y < h / 2) {
            (true, true) => RED,
            (false, true) => GREEN,
            (true, false) => BLUE,
            (false, false) => YELLOW,
        })
    }))
}

pub(super) fn boxed(width: u32, height: u32, fit: Fit, gravity: Gravity) -> BoxResize {
    BoxResize {
        width: Some(width),
        height: Some(height),
        fit,
        gravity,
        background: None,
        without_enlargement: false,
    }
}

pub(super) fn rgb_at(image: &DynamicImage, x: u32, y: u32) -> [u8; 3] {
    let p = image.to_rgba8().get_pixel(x, y).0;
    [p[0], p[1], p[2]]
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 8)
}

/// The colours at the four corners of `image` (a few pixels in), clockwise from the
/// top left.
fn corners(image: &DynamicImage) -> [[u8; 3]; 4] {
    let (w, h) = (image.width() - 3, image.height() - 3);
    [
        rgb_at(image, 2, 2),
        rgb_at(image, w, 2),
        rgb_at(image, w, h),
        rgb_at(image, 2, h),
    ]
}

fn assert_corners(image: &DynamicImage, expected: [[u8; 3]; 4], what: &str) {
    let found = corners(image);
    let all = found.iter().zip(expected).all(|(&a, b)| close(a, b));
    assert!(all, "{what}: corners {found:?}, expected {expected:?}");
}

pub(super) fn run(op: &dyn FrameOp, image: &DynamicImage) -> DynamicImage {
    let out = op.apply(image.clone()).unwrap();
    let predicted = op.output_size((image.width(), image.height())).unwrap();
    assert_eq!((out.width(), out.height()), predicted, "{op:?}");
    out
}

#[test]
fn each_gravity_keeps_the_quadrants_on_its_side() {
    let picture = quadrants(200, 200);
    // A 100×50 box keeps a 200×100 band (top or bottom), a 50×100 box a column.
    let band = |g| run(&boxed(100, 50, Fit::Cover, g), &picture);
    let column = |g| run(&boxed(50, 100, Fit::Cover, g), &picture);
    for (gravity, row, side) in [
        (
            Gravity::Northwest,
            [RED, GREEN, GREEN, RED],
            [RED, RED, BLUE, BLUE],
        ),
        (
            Gravity::Northeast,
            [RED, GREEN, GREEN, RED],
            [GREEN, GREEN, YELLOW, YELLOW],
        ),
        (
            Gravity::Southwest,
            [BLUE, YELLOW, YELLOW, BLUE],
            [RED, RED, BLUE, BLUE],
        ),
        (
            Gravity::Southeast,
            [BLUE, YELLOW, YELLOW, BLUE],
            [GREEN, GREEN, YELLOW, YELLOW],
        ),
    ] {
        assert_corners(&band(gravity), row, &format!("{gravity:?}, band"));
        assert_corners(&column(gravity), side, &format!("{gravity:?}, column"));
    }
    // Half the width: the column of its side; half the height: the row.
    let tall = |g| run(&boxed(100, 200, Fit::Cover, g), &picture);
    assert_corners(&tall(Gravity::West), [RED, RED, BLUE, BLUE], "west");
    assert_corners(&tall(Gravity::East), [GREEN, GREEN, YELLOW, YELLOW], "east");
    assert_corners(
        &tall(Gravity::Center),
        [RED, GREEN, YELLOW, BLUE],
        "center, tall",
    );
    let wide = |g| run(&boxed(200, 100, Fit::Cover, g), &picture);
    assert_corners(&wide(Gravity::North), [RED, GREEN, GREEN, RED], "north");
    assert_corners(&wide(Gravity::South), [BLUE, YELLOW, YELLOW, BLUE], "south");
    // Scaled down too (400×400 → 100×50 keeps a 400×200 band).
    let big = quadrants(400, 400);
    let out = run(&boxed(100, 50, Fit::Cover, Gravity::South), &big);
    assert_corners(&out, [BLUE, YELLOW, YELLOW, BLUE], "south, scaled");
}

#[test]
fn every_fit_gives_its_exact_box() {
    let size = (400, 200);
    let out = |width, height, fit, enlarge: bool| {
        let op = BoxResize {
            width,
            height,
            fit,
            gravity: Gravity::Center,
            background: None,
            without_enlargement: !enlarge,
        };
        op.output_size(size).unwrap()
    };
    let (w, h) = (Some(100), Some(100));
    assert_eq!(out(w, h, Fit::Contain, true), (100, 50));
    assert_eq!(out(w, h, Fit::Cover, true), (100, 100));
    assert_eq!(out(w, h, Fit::Fill, true), (100, 100));
    assert_eq!(out(w, h, Fit::Pad, true), (100, 100));
    // One side alone keeps the aspect, whatever the fit.
    for fit in [Fit::Contain, Fit::Cover, Fit::Fill, Fit::Pad] {
        assert_eq!(out(Some(100), None, fit, true), (100, 50));
        assert_eq!(out(None, Some(50), fit, true), (100, 50));
        assert_eq!(out(Some(800), None, fit, true), (800, 400));
        assert_eq!(out(Some(800), None, fit, false), (400, 200));
    }
    // Enlarging, and withoutEnlargement.
    let (w, h) = (Some(800), Some(800));
    assert_eq!(out(w, h, Fit::Contain, true), (800, 400));
    assert_eq!(out(w, h, Fit::Contain, false), (400, 200));
    assert_eq!(out(w, h, Fit::Cover, true), (800, 800));
    assert_eq!(out(w, h, Fit::Cover, false), (400, 200));
    assert_eq!(out(w, h, Fit::Fill, false), (400, 200));
    assert_eq!(out(w, h, Fit::Pad, false), (800, 800));
    assert_eq!(out(Some(300), Some(100), Fit::Cover, false), (300, 100));
    // And the pixels come out at that size.
    let picture = quadrants(400, 200);
    for fit in [Fit::Contain, Fit::Cover, Fit::Fill, Fit::Pad] {
        run(&boxed(123, 77, fit, Gravity::Center), &picture);
    }
    let fill = run(&boxed(100, 100, Fit::Fill, Gravity::Center), &picture);
    assert_corners(&fill, [RED, GREEN, YELLOW, BLUE], "fill keeps all four");
}

#[test]
fn pad_fills_with_the_background_at_gravity_transparent_by_default() {
    let picture = quadrants(400, 200);
    // Contained to 100×50, padded to 100×100.
    let out = run(&boxed(100, 100, Fit::Pad, Gravity::Center), &picture);
    let rgba = out.to_rgba8();
    assert_eq!(rgba.get_pixel(50, 5).0, [0, 0, 0, 0], "transparent above");
    assert_eq!(rgba.get_pixel(50, 95).0, [0, 0, 0, 0], "transparent below");
    assert!(close(rgb_at(&out, 10, 30), RED) && rgba.get_pixel(10, 30)[3] == 255);
    assert!(close(rgb_at(&out, 90, 70), YELLOW));

    let red_pad = BoxResize {
        background: Colour::parse("#00FF00"),
        ..boxed(100, 100, Fit::Pad, Gravity::North)
    };
    let out = run(&red_pad, &picture);
    assert!(
        matches!(out, DynamicImage::ImageRgb8(_)),
        "opaque stays RGB"
    );
    assert!(close(rgb_at(&out, 10, 10), RED), "the picture at the top");
    assert!(close(rgb_at(&out, 10, 40), BLUE));
    assert_eq!(rgb_at(&out, 50, 90), GREEN, "the padding below");

    let see_through = BoxResize {
        background: Colour::parse("#0000FF80"),
        ..boxed(100, 100, Fit::Pad, Gravity::South)
    };
    let out = run(&see_through, &picture).to_rgba8();
    assert_eq!(out.get_pixel(50, 10).0, [0, 0, 255, 128]);
    assert!(close(rgb_at(&DynamicImage::ImageRgba8(out), 10, 60), RED));
}

#[test]
fn a_focus_point_centres_the_window_as_far_as_the_picture_allows() {
    // Ten vertical stripes of 40 px, each its own grey.
    let stripes = DynamicImage::ImageRgb8(RgbImage::from_fn(400, 100, |x, _| {
        let v = (x / 40 * 25) as u8;
        Rgb([v, v, v])
    }));
    let focus = |x, y| boxed(100, 100, Fit::Cover, Gravity::Focus { x, y });
    // Centred on x = 240: the window is 190..290.
    let out = run(&focus(0.6, 0.5), &stripes);
    assert_eq!(rgb_at(&out, 0, 50), [100; 3], "x 190 is stripe 4");
    assert_eq!(rgb_at(&out, 99, 50), [175; 3], "x 289 is stripe 7");
    // Near the left edge: held inside, 0..100.
    let out = run(&focus(0.05, 0.5), &stripes);
    assert_eq!(rgb_at(&out, 0, 50), [0; 3]);
    assert_eq!(rgb_at(&out, 99, 50), [50; 3]);
    // Near the right edge: 300..400.
    let out = run(&focus(0.99, 0.0), &stripes);
    assert_eq!(rgb_at(&out, 0, 50), [175; 3]);
    assert_eq!(rgb_at(&out, 99, 50), [225; 3]);
}

#[test]
fn crop_keeps_exactly_its_box_and_refuses_one_outside() {
    let picture = DynamicImage::ImageRgba8(image::RgbaImage::from_fn(200, 100, |x, y| {
        Rgba([x as u8, y as u8, 7, 255])
    }));
    let crop = Crop {
        x: 10,
        y: 20,
        width: 30,
        height: 40,
    };
    let out = run(&crop, &picture).to_rgba8();
    for (x, y, p) in out.enumerate_pixels() {
        assert_eq!(p.0, [10 + x as u8, 20 + y as u8, 7, 255]);
    }
    let whole = Crop {
        x: 0,
        y: 0,
        width: 200,
        height: 100,
    };
    assert_eq!(whole.output_size((200, 100)).unwrap(), (200, 100));
    for outside in [
        Crop { x: 180, ..crop },
        Crop { y: 61, ..crop },
        Crop {
            x: u32::MAX,
            ..crop
        },
    ] {
        let err = outside.output_size((200, 100)).unwrap_err();
        assert!(
            matches!(err, MediaError::CropOutsideImage { .. }),
            "{err:?}"
        );
        assert_eq!(err.code(), "crop_outside_image");
        assert!(outside.apply(picture.clone()).is_err());
    }
    let empty = Crop { width: 0, ..crop };
    assert!(matches!(
        empty.output_size((200, 100)),
        Err(MediaError::OutputTooSmall)
    ));
}

#[test]
fn each_rotation_and_flip_moves_the_corners() {
    // 200×100 so that a quarter turn shows in the size.
    let picture = quadrants(200, 100);
    let turn = |angle, flip| run(&Rotate { angle, flip }, &picture);
    // Clockwise from the top left: red, green, yellow, blue.
    assert_corners(&turn(0, None), [RED, GREEN, YELLOW, BLUE], "0");
    let quarter = turn(90, None);
    assert_eq!((quarter.width(), quarter.height()), (100, 200));
    assert_corners(&quarter, [BLUE, RED, GREEN, YELLOW], "90");
    assert_corners(&turn(180, None), [YELLOW, BLUE, RED, GREEN], "180");
    assert_corners(&turn(270, None), [GREEN, YELLOW, BLUE, RED], "270");
    let h = Some(Flip::Horizontal);
    let v = Some(Flip::Vertical);
    assert_corners(&turn(0, h), [GREEN, RED, BLUE, YELLOW], "flip h");
    assert_corners(&turn(0, v), [BLUE, YELLOW, GREEN, RED], "flip v");
    // The flip is of the turned picture.
    assert_corners(&turn(90, h), [RED, BLUE, YELLOW, GREEN], "90 then flip h");
    let bad = Rotate {
        angle: 45,
        flip: None,
    };
    assert!(matches!(
        bad.output_size((2, 2)),
        Err(MediaError::InvalidParameter { name: "angle", .. })
    ));
}

#[test]
fn the_pipeline_size_is_each_step_in_turn_held_to_the_pixel_limit() {
    let ops: Vec<Box<dyn FrameOp>> = vec![
        Box::new(Scale(2.0)),
        Box::new(Rotate {
            angle: 90,
            flip: None,
        }),
        Box::new(Crop {
            x: 0,
            y: 0,
            width: 10,
            height: 20,
        }),
    ];
    assert_eq!(output_size(&ops, (33, 21), 1 << 40).unwrap(), (10, 20));
    // The doubled picture passes the limit even though the crop would not.
    let err = output_size(&ops, (33, 21), 1000).unwrap_err();
    assert!(matches!(err, MediaError::OutputTooLarge { .. }), "{err:?}");
    let crop_first: Vec<Box<dyn FrameOp>> = vec![Box::new(Crop {
        x: 30,
        y: 0,
        width: 10,
        height: 10,
    })];
    let err = output_size(&crop_first, (33, 21), 1 << 40).unwrap_err();
    assert_eq!(err.code(), "crop_outside_image");
    assert!(matches!(
        Scale(0.01).output_size((30, 30)),
        Err(MediaError::OutputTooSmall)
    ));
    assert_eq!(Scale(0.5).output_size((33, 21)).unwrap(), (17, 11));
}

#[test]
fn a_box_works_from_a_picture_decoded_smaller() {
    // A 400×400 input decoded at 200×200 (JPEG's DCT scaling) gives the same box.
    let op = boxed(100, 50, Fit::Cover, Gravity::South);
    assert_eq!(op.decode_at_least((400, 400)), (100, 100));
    let out = op.apply_scaled(quadrants(200, 200), (400, 400)).unwrap();
    assert_eq!((out.width(), out.height()), (100, 50));
    assert_corners(
        &out,
        [BLUE, YELLOW, YELLOW, BLUE],
        "south from a smaller copy",
    );
    assert!(boxed(100, 50, Fit::Contain, Gravity::Center).only_resamples((400, 400)));
    assert!(!op.only_resamples((400, 400)));
}

#[test]
fn a_gif_output_cuts_transparency_at_half() {
    // A faint edge (alpha 1 and 100) beside opaque and half-opaque red: GIF has no
    // partial transparency, so the faint pixels vanish and the others are opaque.
    let faint = [
        (0, 0, 255, 1),
        (0, 0, 0, 100),
        (255, 0, 0, 200),
        (255, 0, 0, 255),
    ];
    let image = image::RgbaImage::from_fn(4, 1, |x, _| {
        let (r, g, b, a) = faint[x as usize];
        Rgba([r, g, b, a])
    });
    let gif = ops::encode_at(
        DynamicImage::ImageRgba8(image),
        crate::media::ImageFormat::Gif,
        None,
    )
    .unwrap();
    let decoded = image::load_from_memory(&gif).unwrap().to_rgba8();
    let alpha: Vec<u8> = decoded.pixels().map(|p| p[3]).collect();
    assert_eq!(alpha, [0, 0, 255, 255]);
    assert_eq!(decoded.get_pixel(2, 0).0, [255, 0, 0, 255]);
}
