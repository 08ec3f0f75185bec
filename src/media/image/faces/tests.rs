//! The detector on a real photograph: `testdata/astronaut.jpg` is NASA's portrait of
//! Eileen Collins (public domain; scikit-image's `astronaut`), 256 × 256, her face
//! about at (84–140, 36–108).

use image::DynamicImage;

use super::hide::{hide, padded, Style};
use super::{boxes::iou, detect, Face};

pub(super) fn astronaut() -> DynamicImage {
    let bytes = include_bytes!("testdata/astronaut.jpg");
    image::load_from_memory(bytes).expect("the fixture decodes")
}

/// Where the face is, by eye (forehead to chin, ear to ear).
const FACE: Face = Face {
    x: 86.0,
    y: 38.0,
    width: 54.0,
    height: 68.0,
    score: 1.0,
};

#[test]
fn the_face_of_a_portrait_is_found_where_it_is_and_nothing_else() {
    let faces = detect(&astronaut()).unwrap();
    assert_eq!(faces.len(), 1, "{faces:?}");
    assert!(iou(&faces[0], &FACE) > 0.5, "{:?}", faces[0]);
    assert!(faces[0].score > 0.8, "{:?}", faces[0]);
}

#[test]
fn detection_is_the_same_on_every_run_and_at_any_scale() {
    let image = astronaut();
    assert_eq!(detect(&image).unwrap(), detect(&image).unwrap());
    // Four times larger: the same face, in the larger picture's pixels.
    let large = image.resize_exact(1024, 1024, image::imageops::FilterType::Triangle);
    let faces = detect(&large).unwrap();
    assert_eq!(faces.len(), 1, "{faces:?}");
    assert!(
        iou(&faces[0].scaled(0.25, 0.25), &FACE) > 0.5,
        "{:?}",
        faces[0]
    );
}

#[test]
fn a_picture_without_a_face_has_none() {
    let flat = DynamicImage::new_rgb8(300, 200);
    assert!(detect(&flat).unwrap().is_empty());
    // The astronaut's lower half: her suit, the flag, no face.
    let lower = astronaut().crop_imm(0, 140, 256, 116);
    assert!(detect(&lower).unwrap().is_empty());
}

#[test]
fn hiding_a_face_changes_its_box_and_nothing_outside_it() {
    let image = astronaut();
    let faces = detect(&image).unwrap();
    for style in [Style::Blur, Style::Pixelate] {
        let hidden = hide(image.clone(), &faces, style, 0.2).to_rgb8();
        let (x, y, w, h) = padded(&faces[0], 0.2, (256, 256)).unwrap();
        let original = image.to_rgb8();
        let mut inside = 0u64;
        for (px, py, p) in hidden.enumerate_pixels() {
            let o = original.get_pixel(px, py);
            let d: u64 = (0..3).map(|c| u64::from(p[c].abs_diff(o[c]))).sum();
            if px >= x && px < x + w && py >= y && py < y + h {
                inside += d;
            } else {
                assert_eq!(d, 0, "({px}, {py}) outside the box changed");
            }
        }
        let mean = inside as f64 / f64::from(w * h);
        assert!(mean > 10.0, "{style:?}: mean change {mean}");
        if style == Style::Blur {
            // The face is no longer found.
            assert!(detect(&DynamicImage::ImageRgb8(hidden)).unwrap().is_empty());
        }
    }
}
