//! `crop-image`: a box of the upright input, in its pixels, or placed by `gravity`.

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::faces;
use crate::media::image::frame_op::FrameOp;
use crate::media::image::geometry::Gravity;
use crate::media::image::smart;

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

/// `crop-image` with `gravity` and without `x`/`y`: the `width` × `height` box placed
/// by `gravity` — a side or corner, a focus point, the most salient window (`smart`)
/// or the one keeping every face (`face`, see `faces::window`). A box larger than the
/// picture is refused from the sizes alone, as [`Crop`]'s is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GravityCrop {
    pub width: u32,
    pub height: u32,
    pub gravity: Gravity,
}

impl GravityCrop {
    /// The box's top-left corner in `image`.
    fn corner(&self, image: &DynamicImage) -> Result<(u32, u32), MediaError> {
        let (w, h) = (f64::from(image.width()), f64::from(image.height()));
        let (bw, bh) = (f64::from(self.width), f64::from(self.height));
        let (left, top) = match self.gravity {
            Gravity::Face => faces::window::of_image(image, (bw, bh))?,
            Gravity::Smart => smart::window(image, (bw, bh)),
            Gravity::Focus { x, y } => (x * w - bw / 2.0, y * h - bh / 2.0),
            named => {
                let (ax, ay) = named.anchor().unwrap_or((0.5, 0.5));
                ((w - bw) * ax, (h - bh) * ay)
            }
        };
        let x = left.round().clamp(0.0, (w - bw).max(0.0)) as u32;
        let y = top.round().clamp(0.0, (h - bh).max(0.0)) as u32;
        Ok((x, y))
    }

    fn at(&self, (x, y): (u32, u32)) -> Crop {
        Crop {
            x,
            y,
            width: self.width,
            height: self.height,
        }
    }
}

impl FrameOp for GravityCrop {
    fn output_size(&self, size: (u32, u32)) -> Result<(u32, u32), MediaError> {
        self.at((0, 0)).output_size(size)
    }

    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        self.output_size((image.width(), image.height()))?;
        let corner = self.corner(&image)?;
        self.at(corner).apply(image)
    }

    fn working_memory(&self, size: (u32, u32)) -> u64 {
        match self.gravity {
            Gravity::Face => faces::working_memory(size),
            _ => 0,
        }
    }

    fn settled(&self, first: &DynamicImage) -> Option<Box<dyn FrameOp>> {
        self.settled_on(std::slice::from_ref(first))
    }

    fn samples_frames(&self) -> bool {
        self.gravity == Gravity::Face
    }

    fn settled_on(&self, frames: &[DynamicImage]) -> Option<Box<dyn FrameOp>> {
        let first = frames.first()?;
        let corner = match self.gravity {
            Gravity::Face => {
                let whole = (f64::from(first.width()), f64::from(first.height()));
                let size = (f64::from(self.width), f64::from(self.height));
                let found = faces::in_frames(frames).ok()?;
                let (left, top) = faces::window::around(&found, whole, size)
                    .unwrap_or_else(|| smart::window(first, size));
                let x = left.round().clamp(0.0, (whole.0 - size.0).max(0.0)) as u32;
                let y = top.round().clamp(0.0, (whole.1 - size.1).max(0.0)) as u32;
                (x, y)
            }
            Gravity::Smart => self.corner(first).ok()?,
            _ => return None,
        };
        Some(Box::new(self.at(corner)))
    }
}
