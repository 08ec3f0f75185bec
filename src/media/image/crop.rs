//! `crop-image`: a box of the upright input, in its pixels.

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::frame_op::FrameOp;

/// Keeps the `width` × `height` box whose top-left corner is (`x`, `y`) of the
/// upright input. A box not wholly inside the picture is refused from the sizes
/// alone (`CropOutsideImage`), before anything is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crop {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl FrameOp for Crop {
    fn output_size(&self, (w, h): (u32, u32)) -> Result<(u32, u32), MediaError> {
        if self.width == 0 || self.height == 0 {
            return Err(MediaError::OutputTooSmall);
        }
        let right = u64::from(self.x) + u64::from(self.width);
        let bottom = u64::from(self.y) + u64::from(self.height);
        if right > u64::from(w) || bottom > u64::from(h) {
            return Err(MediaError::CropOutsideImage {
                x: self.x,
                y: self.y,
                width: self.width,
                height: self.height,
                image_width: w,
                image_height: h,
            });
        }
        Ok((self.width, self.height))
    }

    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        self.output_size((image.width(), image.height()))?;
        Ok(image.crop_imm(self.x, self.y, self.width, self.height))
    }
}
