//! The three placeholders of a picture: from a copy at most 32 pixels on a side.

use crate::format::MediaFormat;
use crate::media::error::MediaError;
use base64::Engine;
use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions};
use image::{DynamicImage, RgbaImage};

/// The longest side of the copy the placeholders are computed from.
pub(super) const SMALL_SIDE: u32 = 32;

/// BlurHash's components across and down.
pub(super) const BLURHASH_COMPONENTS: (u32, u32) = (4, 3);

/// The placeholders of one image output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholders {
    /// 4×3 components; transparent parts as if on white (BlurHash has no alpha).
    pub blurhash: String,
    /// Standard base64 (with padding) of the ThumbHash bytes; alpha kept.
    pub thumbhash: String,
    /// `#rrggbb`: the average of the most common colour (see [`dominant_colour`]).
    pub dominant_color: String,
}

/// Whether outputs of `format` get placeholders: the still and animated image formats
/// (an animation's first frame stands for it).
pub fn has_placeholders(format: MediaFormat) -> bool {
    matches!(
        format,
        MediaFormat::Jpeg
            | MediaFormat::Png
            | MediaFormat::Webp
            | MediaFormat::Avif
            | MediaFormat::Jxl
            | MediaFormat::Gif
    )
}

/// The placeholders of a decoded picture (any size: it is shrunk first).
pub fn placeholders_of(image: &DynamicImage) -> Result<Placeholders, MediaError> {
    placeholders_of_small(&small_copy(image)?)
}

/// The placeholders of a copy already at most [`SMALL_SIDE`] pixels on a side.
pub(super) fn placeholders_of_small(small: &RgbaImage) -> Result<Placeholders, MediaError> {
    let (w, h) = small.dimensions();
    let thumb = thumbhash::rgba_to_thumb_hash(w as usize, h as usize, small.as_raw());
    let (cx, cy) = BLURHASH_COMPONENTS;
    let mut opaque = small.clone();
    on_white_in_place(&mut opaque);
    let blurhash = blurhash::encode(cx, cy, w, h, opaque.as_raw())
        .map_err(|e| MediaError::InvalidMedia(format!("no blurhash: {e}")))?;
    Ok(Placeholders {
        blurhash,
        thumbhash: base64::engine::general_purpose::STANDARD.encode(thumb),
        dominant_color: dominant_colour(small),
    })
}

/// How many times the copy's size the picture is first sampled at (nearest pixel)
/// before the Lanczos3 pass: 4×4 samples a pixel of the copy, so a 12 MP picture
/// costs a 128-pixel sampling rather than a pass over all of it (or a copy of it).
/// At 8, hashing 125 thumbnails of 320×180 (sampled at 256×144, most of each) took 5 %
/// of the edit's CPU.
pub(super) const SAMPLES_PER_SIDE: u8 = 4;

/// `image` as RGBA, shrunk (aspect kept, Lanczos3 over a supersampled grid, alpha
/// premultiplied) to fit [`SMALL_SIDE`]; a smaller one is only converted.
pub(super) fn small_copy(image: &DynamicImage) -> Result<RgbaImage, MediaError> {
    let (w, h) = (image.width(), image.height());
    if w <= SMALL_SIDE && h <= SMALL_SIDE {
        return Ok(image.to_rgba8());
    }
    let (sw, sh) = small_size(w, h);
    // The copy in the picture's own pixel type (the resizer maps like to like), made
    // RGBA once small.
    let mut small = DynamicImage::new(sw, sh, image.color());
    let alg = ResizeAlg::SuperSampling(FilterType::Lanczos3, SAMPLES_PER_SIDE);
    mediaedit_pixels::resize(image, &mut small, &ResizeOptions::new().resize_alg(alg))
        .map_err(|e| MediaError::InvalidMedia(format!("the placeholder copy failed: {e}")))?;
    Ok(small.to_rgba8())
}

/// The size of the small copy of a `w`×`h` picture: aspect kept, the longer side
/// [`SMALL_SIDE`].
pub(crate) fn small_size(w: u32, h: u32) -> (u32, u32) {
    let scale = f64::from(SMALL_SIDE) / f64::from(w.max(h));
    let side = |s: u32| ((f64::from(s) * scale).round() as u32).clamp(1, SMALL_SIDE);
    (side(w), side(h))
}

/// The pixels composited onto opaque white.
pub(super) fn on_white_in_place(image: &mut RgbaImage) {
    for px in image.chunks_exact_mut(4) {
        let a = u32::from(px[3]);
        for c in &mut px[..3] {
            *c = ((u32::from(*c) * a + 255 * (255 - a) + 127) / 255) as u8;
        }
        px[3] = 255;
    }
}

/// The dominant colour: pixels are counted in buckets of 16 levels per channel,
/// weighted by their alpha; the answer is the mean colour of the fullest bucket, so a
/// flat region comes out as its exact colour and a photo as its most common hue rather
/// than a grey average of everything. A fully transparent picture gives `#000000`.
pub fn dominant_colour(image: &RgbaImage) -> String {
    const LEVELS: usize = 16;
    let bucket = |px: &[u8]| {
        let q = |c: u8| usize::from(c) * LEVELS / 256;
        (q(px[0]) * LEVELS + q(px[1])) * LEVELS + q(px[2])
    };
    // Per bucket: the alpha weight and the weighted sums of each channel.
    let mut sums = vec![[0u64; 4]; LEVELS * LEVELS * LEVELS];
    for px in image.as_raw().chunks_exact(4) {
        let a = u64::from(px[3]);
        let sum = &mut sums[bucket(px)];
        sum[0] += a;
        for c in 0..3 {
            sum[c + 1] += a * u64::from(px[c]);
        }
    }
    let best = sums
        .iter()
        .max_by_key(|s| s[0])
        .copied()
        .unwrap_or_default();
    if best[0] == 0 {
        return "#000000".into();
    }
    let mean = |c: usize| ((best[c] + best[0] / 2) / best[0]) as u8;
    crate::media::image::geometry::Colour([mean(1), mean(2), mean(3), 255]).hex_rgb()
}
