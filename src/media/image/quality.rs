//! `quality: auto` and `format: best` (docs/API.md, "Quality by eye"): the lowest
//! quality whose output scores at least `targetScore` on SSIMULACRA2 against the
//! picture written at full quality (quality 100 in the same format), and the smallest
//! of several formats so chosen.
//!
//! A fixed quality is a compromise over every picture: the one a user must pick to keep
//! every photo of a set good enough is far more than most of them need (a sky takes
//! little, foliage much). The search gives each picture just enough, at a bounded cost:
//! at most [`MAX_TRIALS`] trial encodes (the first beside the reference's, on a second
//! thread), on a mosaic of tiles cut at the output's own scale, [`SCORED_PIXELS`] in
//! all, when the output is larger (the metric's time grows with the pixels). The first
//! trial is the format's usual quality for the target. While the target is bracketed
//! only on one side, the next is stepped from the nearest trial along the format's
//! typical slope of score over quality near the target; once a failing and a passing
//! trial bracket it, interpolated between the two. The search stops early when a
//! passing trial is within [`CLOSE_ENOUGH`] of the target or no whole quality lies
//! between the two.

mod blur;
mod score;
mod xyb;

use std::sync::Arc;

use image::DynamicImage;

use crate::format::ImageFormat;
use crate::media::cancel;
use crate::media::cores::joined;
use crate::media::error::MediaError;
use crate::media::image::codec;
use crate::media::image::codec::avif;
use crate::media::image::decode;
use crate::media::image::ops::{encode_at, encode_webp_quick};
use crate::media::memory::MemoryBudget;
pub use score::score;
use score::Reference;

/// SSIMULACRA2's "high quality": the score `quality: auto` aims at by default.
pub const DEFAULT_TARGET: f64 = 70.0;
/// Trial encodes one choice may take.
pub const MAX_TRIALS: usize = 4;
/// The most pixels a trial is scored on (a 512×512 picture's worth): larger outputs
/// are scored on a [`mosaic`] of tiles cut from them.
pub const SCORED_PIXELS: u64 = 512 * 512;
/// Tiles a side of the mosaic a larger picture is scored on.
const GRID: u32 = 4;
/// Memory per scored pixel: the metric's planes (the two pictures in linear RGB and
/// XYB, their products and five blurred planes of three channels, in `f32`), the
/// reference kept across the trials, and a trial encoded and decoded.
const SCORING_BYTES_PER_PIXEL: u64 = 200;
/// What the interpolation aims above the target, so the trial it picks tends to pass.
const AIM_ABOVE: f64 = 0.5;
/// A passing trial this close to the target ends the search. Two points, not one:
/// on 25 photographs (docs/PERFORMANCE.md) the last trial a closer stop adds gains
/// about 1 % of the bytes and costs a quarter of the search's time.
const CLOSE_ENOUGH: f64 = 2.0;

/// The lossy encoder's quality an output is written at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quality {
    /// 1–100, or the format's default.
    Fixed(Option<u8>),
    /// The lowest that scores `target` (see the module docs).
    Auto { target: f64 },
    /// The format's default at its quicker effort: WebP at libwebp's method 2 rather
    /// than 4 (a 1080p still 2.4× faster, 6 % more bytes at the same quality); the
    /// other formats as `Fixed(None)`. For previews made many at a time, where the
    /// encodes are most of the work: `video-scenes`' posters.
    Quick,
}

/// The format a still is written in.
#[derive(Debug, Clone, PartialEq)]
pub enum FormatChoice {
    /// This one, or (`None`) the input's own where it can be written.
    Given(Option<ImageFormat>),
    /// `format: best`: the smallest of these (see [`encode_best`]).
    Best(Vec<ImageFormat>),
}

/// The quality `quality: auto` chose for an output, and the score it measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chosen {
    pub quality: u8,
    /// SSIMULACRA2 against the picture at quality 100, one decimal.
    pub score: f64,
}

/// Whether `format` has a quality to choose.
pub fn is_lossy(format: ImageFormat) -> bool {
    matches!(
        format,
        ImageFormat::Jpeg | ImageFormat::Webp | ImageFormat::Avif | ImageFormat::Jxl
    )
}

/// `image` written as `format` at `quality`, with the quality chosen when it was
/// `auto` on a lossy format (a lossless one is written as it always is). The search's
/// memory is charged to `memory` (`too_much_work` past one step's limit).
pub(crate) fn encode_with(
    image: DynamicImage,
    format: ImageFormat,
    quality: Quality,
    memory: &Arc<MemoryBudget>,
) -> Result<(Vec<u8>, Option<Chosen>), MediaError> {
    match quality {
        Quality::Auto { target } if is_lossy(format) => {
            let (bytes, chosen) = encode_auto(image, format, target, memory)?;
            Ok((bytes, Some(chosen)))
        }
        Quality::Auto { .. } => Ok((encode_at(image, format, None)?, None)),
        Quality::Fixed(quality) => Ok((encode_at(image, format, quality)?, None)),
        Quality::Quick if format == ImageFormat::Webp => Ok((encode_webp_quick(&image)?, None)),
        Quality::Quick => Ok((encode_at(image, format, None)?, None)),
    }
}

/// `format: best`: `image` in each of `formats` at `quality`, the smallest kept. JPEG
/// is left out for a picture with transparency (it would flatten it); with nothing
/// left, PNG.
pub(crate) fn encode_best(
    image: DynamicImage,
    formats: &[ImageFormat],
    quality: Quality,
    memory: &Arc<MemoryBudget>,
) -> Result<(ImageFormat, Vec<u8>, Option<Chosen>), MediaError> {
    let transparent = has_transparency(&image);
    let candidates: Vec<ImageFormat> = formats
        .iter()
        .copied()
        .filter(|f| !(transparent && *f == ImageFormat::Jpeg))
        .collect();
    let Some((last, rest)) = candidates.split_last() else {
        return Ok((
            ImageFormat::Png,
            encode_at(image, ImageFormat::Png, None)?,
            None,
        ));
    };
    let mut best: Option<(ImageFormat, Vec<u8>, Option<Chosen>)> = None;
    for format in rest {
        cancel::checkpoint()?;
        let (bytes, chosen) = encode_with(image.clone(), *format, quality, memory)?;
        if !best
            .as_ref()
            .is_some_and(|(_, b, _)| b.len() <= bytes.len())
        {
            best = Some((*format, bytes, chosen));
        }
    }
    cancel::checkpoint()?;
    let (bytes, chosen) = encode_with(image, *last, quality, memory)?;
    Ok(match best {
        Some(kept) if kept.1.len() <= bytes.len() => kept,
        _ => (*last, bytes, chosen),
    })
}

/// Whether any pixel of `image` is less than opaque.
fn has_transparency(image: &DynamicImage) -> bool {
    match image {
        DynamicImage::ImageRgba8(rgba) => rgba.pixels().any(|p| p.0[3] < 255),
        other => other.color().has_alpha() && other.to_rgba8().pixels().any(|p| p.0[3] < 255),
    }
}

/// The lowest quality whose `format` output of `image` scores `target` (module docs).
fn encode_auto(
    image: DynamicImage,
    format: ImageFormat,
    target: f64,
    memory: &Arc<MemoryBudget>,
) -> Result<(Vec<u8>, Chosen), MediaError> {
    let (width, height) = (image.width(), image.height());
    if width < 8 || height < 8 {
        // Too small for the metric, and too small for the quality to matter.
        let full = Chosen {
            quality: 100,
            score: 100.0,
        };
        return Ok((encode_at(image, format, Some(100))?, full));
    }
    let what = format!("Choosing the quality of a {width}x{height} picture");
    let scored_pixels = (u64::from(width) * u64::from(height)).min(SCORED_PIXELS);
    let _lease = memory.reserve(scored_pixels * SCORING_BYTES_PER_PIXEL, &what)?;
    let copy = mosaic(&image);
    let scored = copy.as_ref().unwrap_or(&image);
    let size = (scored.width(), scored.height());
    let trial = |quality: u8| encode_at(scored.clone(), format, Some(quality));
    let decoded = |bytes: &[u8]| decode_trial(bytes, format, size);
    let mut search = Search::new(format, target);
    let first = search.first;
    // The reference and the first trial at once: neither needs the other, and a second
    // core, where there is one, takes half the wait for two encodes off every choice.
    let (reference, first_trial) = std::thread::scope(|scope| {
        let reference = scope.spawn(|| -> Result<_, MediaError> {
            let full = match format {
                // Lossless: the pixels of quality 100 at any speed (see `avif`).
                ImageFormat::Avif => avif::encode_lossless_quickly(scored)?,
                _ => trial(100)?,
            };
            let reference = Reference::of(&decoded(&full)?);
            Ok((full, reference))
        });
        let first_trial = trial(first).and_then(|bytes| Ok((decoded(&bytes)?, bytes)));
        (joined(reference), first_trial)
    });
    let (full, mut reference) = reference?;
    // The passing trial's bytes, which are the output when it was scored at full size
    // (not the quick lossless AVIF: its file is larger than quality 100's).
    let mut kept = Some((100, full)).filter(|_| format != ImageFormat::Avif);
    let (picture, bytes) = first_trial?;
    if search.record(first, reference.score(&picture)?) {
        kept = Some((first, bytes));
    }
    while let Some(quality) = search.next() {
        cancel::checkpoint()?;
        let bytes = trial(quality)?;
        let score = reference.score(&decoded(&bytes)?)?;
        if search.record(quality, score) {
            kept = Some((quality, bytes));
        }
    }
    let (quality, score) = search.pass;
    let chosen = Chosen {
        quality,
        score: (score * 10.0).round() / 10.0,
    };
    let bytes = match (copy, kept) {
        (None, Some((q, bytes))) if q == quality => bytes,
        _ => encode_at(image, format, Some(quality))?,
    };
    Ok((bytes, chosen))
}

/// A trial (or the reference) decoded at `size`: a WebP by libwebp, which wrote it
/// (`codec::webp`; about 1.7 ms against the upload decoder's 5 at 512 × 512, three or
/// four times a search).
fn decode_trial(
    bytes: &[u8],
    format: ImageFormat,
    size: (u32, u32),
) -> Result<DynamicImage, MediaError> {
    if format == ImageFormat::Webp {
        let picture = codec::webp::decode_by_libwebp(bytes);
        if let Some(picture) = picture.filter(|p| (p.width(), p.height()) == size) {
            return Ok(picture);
        }
    }
    decode::open(bytes, format.media_format(), u64::MAX)?.decode(size.0, size.1)
}

/// What a picture larger than [`SCORED_PIXELS`] is scored on: [`GRID`] × [`GRID`]
/// tiles cut from it at its own scale, from the middles of as many even cells, side by
/// side (`None` for a picture no larger: itself). At its own scale, because the viewer
/// sees the artefacts there: a copy shrunk to that many pixels merged what the encoder
/// smeared (the Hubble deep field, 800 px wide as WebP: at least 70 on a shrunk copy,
/// 67.9 whole by an independent scorer).
fn mosaic(image: &DynamicImage) -> Option<DynamicImage> {
    use image::{GenericImage, GenericImageView};
    let (width, height) = (image.width(), image.height());
    if u64::from(width) * u64::from(height) <= SCORED_PIXELS {
        return None;
    }
    // Tiles on the codecs' 16-pixel blocks, as large as fit the budget (or the side).
    let side = (SCORED_PIXELS as f64).sqrt() as u32 / GRID / 16 * 16;
    let (tile_w, tile_h) = (side.min(width), side.min(height));
    let mut mosaic = DynamicImage::new(tile_w * GRID, tile_h * GRID, image.color());
    let start = |cell: u32, along: u32, tile: u32| {
        ((2 * cell + 1) * along / (2 * GRID))
            .saturating_sub(tile / 2)
            .min(along - tile)
    };
    for row in 0..GRID {
        for column in 0..GRID {
            let (x, y) = (start(column, width, tile_w), start(row, height, tile_h));
            let tile = image.view(x, y, tile_w, tile_h);
            mosaic
                .copy_from(&*tile, column * tile_w, row * tile_h)
                .expect("a tile inside the mosaic");
        }
    }
    Some(mosaic)
}

/// The bounded search over qualities (module docs).
#[derive(Debug)]
struct Search {
    target: f64,
    /// The first trial.
    first: u8,
    /// Points of score a step of quality is typically worth near the target.
    slope: f64,
    /// The lowest passing quality so far and its score.
    pass: (u8, f64),
    /// The highest failing quality below it and its score.
    fail: Option<(u8, f64)>,
    trials: usize,
}

impl Search {
    fn new(format: ImageFormat, target: f64) -> Search {
        // Where each format's outputs of photographs score about 70 (JPEG 85 scores
        // about 86; WebP 80 and AVIF's default about 70), moved with the target, and
        // how many points a step of quality is worth there: fitted to the score curves
        // of 25 photographs (docs/PERFORMANCE.md), which are far flatter near 70 than
        // the line to quality 100 (WebP's rises 0.5 a step at 70, 1.4 a step on average
        // from there to 100).
        let (usual, slope) = match format {
            ImageFormat::Jpeg => (62.0, 0.6),
            ImageFormat::Webp => (73.0, 0.5),
            _ => (57.0, 1.0),
        };
        let first = (usual + (target - DEFAULT_TARGET) * 1.5).clamp(1.0, 99.0) as u8;
        Search {
            target,
            first,
            slope,
            pass: (100, 100.0),
            fail: None,
            trials: 0,
        }
    }

    /// The next quality to try, or `None` when the search is over.
    fn next(&self) -> Option<u8> {
        let (pass_q, pass_s) = self.pass;
        let floor = self.fail.map_or(0, |(q, _)| q);
        if self.trials >= MAX_TRIALS
            || pass_q <= floor + 1
            || (pass_q < 100 && pass_s - self.target < CLOSE_ENOUGH)
        {
            return None;
        }
        let aim = self.target + AIM_ABOVE;
        let guess = match (self.trials, self.fail) {
            (0, _) => f64::from(self.first),
            // Up from the failing trial at the format's slope: full quality's 100 is
            // no guide to where the curve crosses the target.
            (_, Some((fail_q, fail_s))) if pass_q == 100 => {
                f64::from(fail_q) + (aim - fail_s) / self.slope
            }
            // Along the line through the two trials that bracket the target.
            (_, Some((fail_q, fail_s))) => {
                let slope = (pass_s - fail_s).max(0.01) / f64::from(pass_q - fail_q);
                f64::from(fail_q) + (aim - fail_s) / slope
            }
            // Down from the passing trial at the format's slope.
            (_, None) => f64::from(pass_q) - (pass_s - aim) / self.slope,
        };
        let guess = guess
            .ceil()
            .clamp(f64::from(floor + 1), f64::from(pass_q - 1));
        Some(guess as u8)
    }

    /// Records a trial; `true` when it passed and is the lowest passing so far.
    fn record(&mut self, quality: u8, score: f64) -> bool {
        self.trials += 1;
        if score >= self.target {
            if quality < self.pass.0 {
                self.pass = (quality, score);
                // Scores are not strictly monotonic: a failure above a pass is moot.
                self.fail = self.fail.filter(|(q, _)| *q < quality);
                return true;
            }
        } else if !self.fail.is_some_and(|(q, _)| quality <= q) {
            self.fail = Some((quality, score));
        }
        false
    }
}

#[cfg(test)]
mod tests;
