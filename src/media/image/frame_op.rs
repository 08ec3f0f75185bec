//! The one operation on an upright picture every image command is made of, and the
//! output size a list of them predicts before anything is decoded.

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::ops;

/// One operation on an upright picture (a still image or one frame of an animation).
pub trait FrameOp: Send + Sync + std::fmt::Debug {
    /// The size of the output for an input of `size` (width, height), known before
    /// decoding: `OutputTooSmall` or an operation's own refusal (`crop_outside_image`)
    /// come from here; [`output_size`] adds the pixel limit.
    fn output_size(&self, size: (u32, u32)) -> Result<(u32, u32), MediaError>;

    /// The operation on one decoded picture of the size given to `output_size`.
    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError>;

    /// The smallest picture this operation can make the same output from, for an
    /// input of `size`: a JPEG is shrunk while decoding (DCT scaling) to no less than
    /// this, which makes a large downscale several times cheaper. The default needs
    /// every pixel.
    fn decode_at_least(&self, size: (u32, u32)) -> (u32, u32) {
        size
    }

    /// [`FrameOp::apply`] to a picture that stands for an input of `size` but was
    /// decoded smaller (at least [`FrameOp::decode_at_least`]). The default brings it
    /// to `size` first; resampling operations work from it directly.
    fn apply_scaled(
        &self,
        image: DynamicImage,
        size: (u32, u32),
    ) -> Result<DynamicImage, MediaError> {
        self.apply(ops::resize(image, size.0, size.1)?)
    }

    /// Whether, for an input of `size`, the operation only resamples the whole
    /// picture to its output size. Such an operation commutes with turning the
    /// picture upright, so it runs on the stored picture first (the same result for
    /// less work: the smaller picture is the one turned).
    fn only_resamples(&self, _size: (u32, u32)) -> bool {
        false
    }

    /// For an animation: this operation with every choice it makes from the pixels
    /// (the window `gravity: smart` picks) made once, from `first`, the first frame,
    /// so that every frame gets the same box. `None` when it makes no such choice.
    fn settled(&self, _first: &DynamicImage) -> Option<Box<dyn FrameOp>> {
        None
    }

    /// Whether [`FrameOp::settled_on`] wants several frames of an animation rather
    /// than its first (`gravity: face`: a face may enter after the first frame).
    fn samples_frames(&self) -> bool {
        false
    }

    /// [`FrameOp::settled`] from `frames`, frames sampled across the animation (the
    /// first one first), as this operation sees them. The default looks at the first.
    fn settled_on(&self, frames: &[DynamicImage]) -> Option<Box<dyn FrameOp>> {
        self.settled(frames.first()?)
    }

    /// Bytes the operation holds on an input of `size` besides the input and its output
    /// picture (the text it draws, the overlay it scales): charged to the step with the
    /// pictures before anything is decoded (`media::memory`).
    fn working_memory(&self, _size: (u32, u32)) -> u64 {
        0
    }
}

/// The size `ops` make of a picture of `size`, applied in turn, each step held to
/// `max_pixels`: the pure prediction the pipeline checks before decoding, and the dry
/// run's. `OutputTooLarge` when a step (not only the last) would pass the limit,
/// `OutputTooSmall` or an operation's own refusal otherwise.
pub fn output_size(
    ops: &[Box<dyn FrameOp>],
    size: (u32, u32),
    max_pixels: u64,
) -> Result<(u32, u32), MediaError> {
    ops.iter().try_fold(size, |size, op| {
        let (w, h) = op.output_size(size)?;
        if u64::from(w) * u64::from(h) > max_pixels {
            return Err(MediaError::OutputTooLarge {
                width: w.into(),
                height: h.into(),
                limit: max_pixels,
            });
        }
        Ok((w, h))
    })
}

/// A side computed in floating point as a pixel count: rounded, at least 1 when
/// `at_least_one` (a box side), else `OutputTooSmall` under 1; saturating at
/// `u32::MAX`, which no pixel limit lets through.
pub(crate) fn side(value: f64, at_least_one: bool) -> Result<u32, MediaError> {
    let rounded = value.round();
    if rounded < 1.0 || rounded.is_nan() {
        return if at_least_one {
            Ok(1)
        } else {
            Err(MediaError::OutputTooSmall)
        };
    }
    Ok(if rounded >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        rounded as u32
    })
}
