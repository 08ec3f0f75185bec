//! `rotate-image`: quarter turns clockwise and mirroring.

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::frame_op::FrameOp;

/// A mirroring: `Horizontal` swaps left and right, `Vertical` top and bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flip {
    Horizontal,
    Vertical,
}

impl Flip {
    pub const NAMES: &'static [&'static str] = &["horizontal", "vertical"];

    pub fn from_name(name: &str) -> Option<Flip> {
        match name {
            "horizontal" => Some(Flip::Horizontal),
            "vertical" => Some(Flip::Vertical),
            _ => None,
        }
    }
}

/// Turns the picture `angle` degrees clockwise (0, 90, 180 or 270), then mirrors it
/// as `flip` says: the flip is of the turned picture, as the viewer sees it.
/// Lossless: pixels are moved, never resampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotate {
    pub angle: u16,
    pub flip: Option<Flip>,
}

impl FrameOp for Rotate {
    fn output_size(&self, (w, h): (u32, u32)) -> Result<(u32, u32), MediaError> {
        match self.angle {
            0 | 180 => Ok((w, h)),
            90 | 270 => Ok((h, w)),
            _ => Err(MediaError::InvalidParameter {
                name: "angle",
                expected: "0, 90, 180 or 270",
            }),
        }
    }

    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        self.output_size((image.width(), image.height()))?;
        let turned = match self.angle {
            90 => image.rotate90(),
            180 => image.rotate180(),
            270 => image.rotate270(),
            _ => image,
        };
        Ok(match self.flip {
            Some(Flip::Horizontal) => turned.fliph(),
            Some(Flip::Vertical) => turned.flipv(),
            None => turned,
        })
    }
}
