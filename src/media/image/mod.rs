//! Per-frame image operations: what the image commands (resize to a box, crop,
//! rotate, watermark, text) do to one upright picture, the same for a still image
//! and for every frame of an animation.
//!
//! A [`FrameOp`] knows its output size from its input size alone, before any pixel
//! is decoded, so the pixel limits, the budgets and the dry run can judge an edit
//! from the headers; then it maps each decoded frame.

mod geometry;
pub mod overlay;
pub mod text;

pub use geometry::{Colour, Fit, Gravity};

use image::DynamicImage;

use super::MediaError;

/// One operation on an upright picture (a still image or one frame of an animation).
pub trait FrameOp: Send + Sync {
    /// The size of the output for an input of `size` (width, height), known before
    /// decoding: `OutputTooSmall`/`OutputTooLarge` or an operation's own refusal
    /// (`crop_outside_image`) come from here.
    fn output_size(&self, size: (u32, u32)) -> Result<(u32, u32), MediaError>;

    /// The operation on one decoded picture of the size given to `output_size`.
    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError>;
}
