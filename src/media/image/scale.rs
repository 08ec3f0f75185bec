//! `resize-image`'s `scale`: both sides multiplied by one factor.

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::frame_op::{side, FrameOp};
use crate::media::image::ops::resize;

/// Scales both sides by the factor: `round(w × scale)` × `round(h × scale)`,
/// `OutputTooSmall` when a side rounds to 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale(pub f64);

impl FrameOp for Scale {
    fn output_size(&self, (w, h): (u32, u32)) -> Result<(u32, u32), MediaError> {
        Ok((
            side(f64::from(w) * self.0, false)?,
            side(f64::from(h) * self.0, false)?,
        ))
    }

    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        let size = (image.width(), image.height());
        self.apply_scaled(image, size)
    }

    fn decode_at_least(&self, size: (u32, u32)) -> (u32, u32) {
        self.output_size(size).unwrap_or(size)
    }

    fn apply_scaled(
        &self,
        image: DynamicImage,
        size: (u32, u32),
    ) -> Result<DynamicImage, MediaError> {
        let (w, h) = self.output_size(size)?;
        resize(image, w, h)
    }

    fn only_resamples(&self, _size: (u32, u32)) -> bool {
        true
    }
}
