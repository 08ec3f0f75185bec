//! The detector itself: a picture shrunk to the network's input, run, decoded into
//! faces in the picture's pixels.

use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions};
use image::{DynamicImage, RgbImage};

use crate::media::error::MediaError;
use crate::media::image::faces::boxes;
use crate::media::image::faces::face::Face;
use crate::media::image::faces::model;

/// The longest side of the copy the network runs on to find every face
/// (`blur-faces`, `faces: true`): faces from about 20 pixels of a 2 MP photo up.
pub const DETECT_SIDE: u32 = 960;

/// The longest side of the copy the network runs on for `gravity: face`. A crop is
/// decided by the faces that matter to it — the people of the picture, not the smallest
/// faces of a crowd behind them, which a crop around the larger ones keeps or loses
/// alike — so it looks at a copy 0.44 times as large (and as long to run): faces from
/// about 30 pixels of a 2 MP photo up (bench/faces.py measures its recall too).
pub const CROP_SIDE: u32 = 640;

/// The network's inputs are whole multiples of its coarsest stride.
const ALIGN: u32 = 32;

/// The size of the network's input for a picture of `size`: at most `side` a side
/// (aspect kept), each side then padded up to a multiple of 32.
fn detect_size((w, h): (u32, u32), side: u32) -> ((u32, u32), (u32, u32)) {
    let k = (f64::from(side) / f64::from(w.max(h))).min(1.0);
    let scaled = (
        ((f64::from(w) * k).round() as u32).max(1),
        ((f64::from(h) * k).round() as u32).max(1),
    );
    let padded = (
        scaled.0.div_ceil(ALIGN) * ALIGN,
        scaled.1.div_ceil(ALIGN) * ALIGN,
    );
    (scaled, padded)
}

/// The size of the copy of a picture of `size` the network sees (before padding).
pub fn scaled_size(size: (u32, u32)) -> (u32, u32) {
    detect_size(size, DETECT_SIDE).0
}

/// Bytes detection holds on a picture of `size` (at `DETECT_SIDE`; `CROP_SIDE` holds
/// less): the scaled copy, the network's input and its maps (at most 160 bytes per
/// input pixel, the peak measured of tract's run, which kept more maps than ours),
/// and room for the weights.
pub fn working_memory(size: (u32, u32)) -> u64 {
    let (scaled, padded) = detect_size(size, DETECT_SIDE);
    let pixels = u64::from(padded.0) * u64::from(padded.1);
    3 * u64::from(scaled.0) * u64::from(scaled.1) + 160 * pixels + (8 << 20)
}

/// Every face in `image`, in its pixels, most confident first.
pub fn detect(image: &DynamicImage) -> Result<Vec<Face>, MediaError> {
    detect_at(image, DETECT_SIDE)
}

/// The faces `gravity: face` keeps in a crop of `image` (see [`CROP_SIDE`]).
pub fn detect_for_crop(image: &DynamicImage) -> Result<Vec<Face>, MediaError> {
    detect_at(image, CROP_SIDE)
}

/// The faces of `image` seen on a copy of at most `side` pixels a side.
fn detect_at(image: &DynamicImage, side: u32) -> Result<Vec<Face>, MediaError> {
    let (w, h) = (image.width(), image.height());
    let ((sw, sh), (pw, ph)) = detect_size((w, h), side);
    let small = small_rgb(image, (sw, sh));
    // Planar BGR (the channel order the network was trained on), 0–255, zero padding.
    let plane = (pw * ph) as usize;
    let mut input = model::zeroed(3 * plane);
    let (blue, rest) = input.split_at_mut(plane);
    let (green, red) = rest.split_at_mut(plane);
    let row_len = 3 * sw as usize;
    for (y, row) in small.as_raw().chunks_exact(row_len).enumerate() {
        let start = y * pw as usize;
        let (b, g, r) = (
            &mut blue[start..start + sw as usize],
            &mut green[start..start + sw as usize],
            &mut red[start..start + sw as usize],
        );
        for (i, p) in row.chunks_exact(3).enumerate() {
            r[i] = f32::from(p[0]);
            g[i] = f32::from(p[1]);
            b[i] = f32::from(p[2]);
        }
    }
    drop(small);
    let raw = model::run(input, ph as usize, pw as usize)?;
    let found = boxes::decode(&raw, (pw, ph), (sw, sh));
    let (fx, fy) = (f64::from(w) / f64::from(sw), f64::from(h) / f64::from(sh));
    Ok(found.into_iter().map(|f| f.scaled(fx, fy)).collect())
}

/// `image` as RGB of `size` (alpha dropped: a face is a face under any opacity).
fn small_rgb(image: &DynamicImage, (sw, sh): (u32, u32)) -> RgbImage {
    // An RGB picture is read where it is (a 2 MP copy is a few ms).
    let converted;
    let rgb = match image {
        DynamicImage::ImageRgb8(_) => image,
        other => {
            converted = DynamicImage::ImageRgb8(other.to_rgb8());
            &converted
        }
    };
    if (sw, sh) == (image.width(), image.height()) {
        return rgb.to_rgb8();
    }
    let mut small = DynamicImage::new_rgb8(sw, sh);
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Bilinear));
    match mediaedit_pixels::resize(rgb, &mut small, &options) {
        Ok(()) => small.into_rgb8(),
        Err(_) => rgb
            .resize_exact(sw, sh, image::imageops::FilterType::Triangle)
            .into_rgb8(),
    }
}

/// The faces of every picture of `frames` (frames of one animation, one size), all
/// together: the union a crop kept for the whole animation must hold.
pub fn in_frames(frames: &[DynamicImage]) -> Result<Vec<Face>, MediaError> {
    let mut all = Vec::new();
    for frame in frames {
        crate::media::cancel::checkpoint()?;
        all.extend(detect_for_crop(frame)?);
    }
    Ok(all)
}
