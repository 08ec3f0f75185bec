//! `gravity: face`: the window of a picture a crop keeps so that every face is in it.
//!
//! The window is centred on the faces' centre weighted by their areas (a group photo
//! is centred on its people, a portrait with a small face in the background on the
//! portrait), then moved the least it takes to hold every face whole (with a margin
//! of a quarter of a face around each, so hair and chin stay), then kept inside the
//! picture. When the faces cannot all fit, the window is the one centred on them. With
//! no face it is `gravity: smart`'s window.

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::faces::face::Face;
use crate::media::image::smart;

/// Room kept around each face, as a fraction of its side.
const MARGIN: f64 = 0.25;

/// The top-left corner, in `image`'s pixels, of the `size` window of `image` that
/// keeps its faces (see the module); `smart`'s when it has none.
pub fn of_image(image: &DynamicImage, size: (f64, f64)) -> Result<(f64, f64), MediaError> {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    if size.0 >= w && size.1 >= h {
        return Ok((0.0, 0.0));
    }
    let faces = crate::media::image::faces::detector::detect_for_crop(image)?;
    Ok(around(&faces, (w, h), size).unwrap_or_else(|| smart::window(image, size)))
}

/// The window of `size` in a picture of `whole` size around `faces` (in its pixels);
/// `None` when there are none.
pub fn around(faces: &[Face], whole: (f64, f64), size: (f64, f64)) -> Option<(f64, f64)> {
    if faces.is_empty() {
        return None;
    }
    let (ww, wh) = (size.0.min(whole.0), size.1.min(whole.1));
    let weight: f64 = faces
        .iter()
        .map(|f| f.width * f.height)
        .sum::<f64>()
        .max(1e-9);
    let cx = faces
        .iter()
        .map(|f| (f.x + f.width / 2.0) * f.width * f.height)
        .sum::<f64>()
        / weight;
    let cy = faces
        .iter()
        .map(|f| (f.y + f.height / 2.0) * f.width * f.height)
        .sum::<f64>()
        / weight;
    let span = |lo: fn(&Face) -> f64, hi: fn(&Face) -> f64, side: fn(&Face) -> f64| {
        let a = faces
            .iter()
            .map(|f| lo(f) - MARGIN * side(f))
            .fold(f64::INFINITY, f64::min);
        let b = faces
            .iter()
            .map(|f| hi(f) + MARGIN * side(f))
            .fold(f64::NEG_INFINITY, f64::max);
        (a, b)
    };
    let (x0, x1) = span(|f| f.x, Face::right, |f| f.width);
    let (y0, y1) = span(|f| f.y, Face::bottom, |f| f.height);
    let left = fit_axis(cx, ww, (x0, x1), whole.0);
    let top = fit_axis(cy, wh, (y0, y1), whole.1);
    Some((left, top))
}

/// One axis: the start of a window of length `len` centred on `centre`, moved to hold
/// `(lo, hi)` where it fits, kept within `0..whole`.
fn fit_axis(centre: f64, len: f64, (lo, hi): (f64, f64), whole: f64) -> f64 {
    let mut start = centre - len / 2.0;
    if hi - lo <= len {
        // Holds every face: the least move from the centred window that keeps them.
        start = start.clamp(hi - len, lo);
    }
    start.clamp(0.0, (whole - len).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn face(x: f64, y: f64, side: f64) -> Face {
        Face {
            x,
            y,
            width: side,
            height: side,
            score: 0.9,
        }
    }

    #[test]
    fn a_single_face_is_centred_as_far_as_the_picture_allows() {
        let faces = [face(700.0, 100.0, 100.0)];
        // Centred on x 750: 750 - 200.
        assert_eq!(
            around(&faces, (1000.0, 500.0), (400.0, 500.0)),
            Some((550.0, 0.0))
        );
        // Near the edge: the window stops at the picture's right side.
        let edge = [face(880.0, 100.0, 100.0)];
        assert_eq!(
            around(&edge, (1000.0, 500.0), (400.0, 500.0)),
            Some((600.0, 0.0))
        );
    }

    #[test]
    fn two_faces_both_fit_though_the_larger_pulls_the_centre() {
        let faces = [face(100.0, 100.0, 200.0), face(520.0, 150.0, 50.0)];
        let (left, _) = around(&faces, (1200.0, 600.0), (600.0, 600.0)).unwrap();
        assert!(
            left <= 100.0 - 50.0,
            "the large face and its margin: {left}"
        );
        assert!(
            left + 600.0 >= 570.0 + 12.5,
            "the small face and its margin: {left}"
        );
    }

    #[test]
    fn no_face_gives_no_window() {
        assert_eq!(around(&[], (100.0, 100.0), (50.0, 50.0)), None);
    }
}
