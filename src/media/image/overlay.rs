//! One picture laid over another (the `watermark` and `text` commands): where it goes
//! ([`place`]), how it blends ([`composite`]), and the two frame operations built on
//! them. The output always has the input's size; what falls outside it is cut off.

use image::RgbaImage;

use crate::media::error::MediaError;
use crate::media::image::frame_op::FrameOp;
use crate::media::image::geometry::Gravity;

mod ops;
pub use ops::{Text, Watermark};

mod compose;
pub use compose::composite;
pub use compose::place;
pub use compose::DEFAULT_FONT_SIZE_FRACTION;
pub use compose::DEFAULT_GRAVITY;
pub use compose::DEFAULT_MARGIN;
pub use compose::DEFAULT_OPACITY;
pub use compose::DEFAULT_OVERLAY_WIDTH;
pub use compose::DEFAULT_TEXT_COLOUR;

/// A picture laid over another, what `watermark` and `text` share: the picture for a
/// base of a given size (made once per size) and where it goes. Still images and
/// animations take it as a [`FrameOp`]; videos through `Media::overlay_on_video`, which
/// lays the same picture at the same place.
pub trait Overlay: FrameOp {
    /// The picture laid over a base of `base` size.
    fn picture_for(&self, base: (u32, u32)) -> Result<std::sync::Arc<RgbaImage>, MediaError>;

    /// Where it goes, and how opaque it is: gravity, margin, opacity.
    fn placement(&self) -> (Gravity, u32, f32);
}

impl Overlay for Watermark {
    fn picture_for(&self, base: (u32, u32)) -> Result<std::sync::Arc<RgbaImage>, MediaError> {
        self.scaled_for(base)
    }

    fn placement(&self) -> (Gravity, u32, f32) {
        (self.gravity, self.margin, self.opacity)
    }
}

impl Overlay for Text {
    fn picture_for(&self, base: (u32, u32)) -> Result<std::sync::Arc<RgbaImage>, MediaError> {
        self.drawn_for(base)
    }

    /// The colour's own alpha is in the picture already.
    fn placement(&self) -> (Gravity, u32, f32) {
        (self.gravity, self.margin, 1.0)
    }
}

#[cfg(test)]
mod tests;
