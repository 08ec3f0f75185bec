//! `resize-image` to a `width` × `height` box (docs/API.md, "Image options"): how the
//! picture meets the box (`fit`), where a crop or a pad goes (`gravity`), and
//! `withoutEnlargement`.

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::faces;
use crate::media::image::frame_op::{side, FrameOp};
use crate::media::image::geometry::{Colour, Fit, Gravity};
use crate::media::image::pixels::{pad, resample, Region};
use crate::media::image::smart;

/// Resizes to a box. With one side only, the other follows the aspect (every `fit`
/// then gives the same picture). With both:
/// - `Contain`: the largest picture inside the box, aspect kept;
/// - `Cover`: the smallest covering the box, aspect kept, the overflow cropped at
///   `gravity` (`Focus` centres the kept window on its point as far as the picture
///   allows; `Smart` keeps the most salient window, see `smart`; `Face` keeps every
///   face, see `faces::window`);
/// - `Fill`: stretched to the box;
/// - `Pad`: contained, then placed at `gravity` on a box of `background`. Without a
///   `background` the padding is transparent; an output format without alpha (JPEG)
///   flattens transparency onto white, so there it is white, as docs/API.md says.
///
/// `without_enlargement` never scales up: a smaller picture is kept at its size
/// (cropped to the box where it overflows, for `Cover`; each side at most its own,
/// for `Fill`; still padded to the whole box, for `Pad`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxResize {
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub fit: Fit,
    pub gravity: Gravity,
    pub background: Option<Colour>,
    pub without_enlargement: bool,
}

/// What a box makes of an input, in the input's pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Plan {
    /// The part of the input kept (its position is a placeholder when `smart`).
    region: Region,
    /// Whether `region`'s position is chosen from the pixels.
    smart: bool,
    /// The size `region` is resampled to.
    scaled: (u32, u32),
    /// The output: `scaled`, or the box it is padded to.
    canvas: (u32, u32),
    /// Where `scaled` lies on `canvas`.
    at: (u32, u32),
}

impl BoxResize {
    fn plan(&self, (w, h): (u32, u32)) -> Result<Plan, MediaError> {
        let (wf, hf) = (f64::from(w), f64::from(h));
        let whole = Region::whole((w, h));
        let enlarge = |s: f64| {
            if self.without_enlargement {
                s.min(1.0)
            } else {
                s
            }
        };
        let sized = |s: f64| Ok::<_, MediaError>((side(wf * s, true)?, side(hf * s, true)?));
        let simple = |size: (u32, u32)| Plan {
            region: whole,
            smart: false,
            scaled: size,
            canvas: size,
            at: (0, 0),
        };
        let (bw, bh) = match (self.width, self.height) {
            (Some(bw), None) => return Ok(simple(sized(enlarge(f64::from(bw) / wf))?)),
            (None, Some(bh)) => return Ok(simple(sized(enlarge(f64::from(bh) / hf))?)),
            (Some(bw), Some(bh)) => (bw, bh),
            (None, None) => {
                return Err(MediaError::InvalidParameter {
                    name: "width",
                    expected: "given, or height given",
                })
            }
        };
        if bw == 0 || bh == 0 {
            return Err(MediaError::OutputTooSmall);
        }
        let (bwf, bhf) = (f64::from(bw), f64::from(bh));
        Ok(match self.fit {
            Fit::Contain | Fit::Pad => {
                let s = enlarge((bwf / wf).min(bhf / hf));
                let (cw, ch) = sized(s)?;
                let scaled = (cw.min(bw), ch.min(bh));
                if self.fit == Fit::Contain {
                    simple(scaled)
                } else {
                    let (ax, ay) = self.gravity.anchor().unwrap_or((0.5, 0.5));
                    let x = (f64::from(bw - scaled.0) * ax.clamp(0.0, 1.0)).round() as u32;
                    let y = (f64::from(bh - scaled.1) * ay.clamp(0.0, 1.0)).round() as u32;
                    Plan {
                        canvas: (bw, bh),
                        at: (x, y),
                        ..simple(scaled)
                    }
                }
            }
            Fit::Fill if self.without_enlargement => simple((bw.min(w), bh.min(h))),
            Fit::Fill => simple((bw, bh)),
            Fit::Cover => {
                let s = enlarge((bwf / wf).max(bhf / hf));
                let (sw, sh) = sized(s)?;
                let canvas = (bw.min(sw), bh.min(sh));
                let rw = (f64::from(canvas.0) / s).min(wf);
                let rh = (f64::from(canvas.1) / s).min(hf);
                let (left, top, smart) = match self.gravity {
                    Gravity::Smart | Gravity::Face => (0.0, 0.0, true),
                    Gravity::Focus { x, y } => (
                        (x * wf - rw / 2.0).clamp(0.0, wf - rw),
                        (y * hf - rh / 2.0).clamp(0.0, hf - rh),
                        false,
                    ),
                    named => {
                        let (ax, ay) = named.anchor().unwrap_or((0.5, 0.5));
                        ((wf - rw) * ax, (hf - rh) * ay, false)
                    }
                };
                let mut region = Region {
                    left,
                    top,
                    width: rw,
                    height: rh,
                };
                if (f64::from(canvas.0), f64::from(canvas.1)) == (rw, rh) {
                    // Kept at its size: a crop of whole pixels, copied as it is.
                    region.left = region.left.round();
                    region.top = region.top.round();
                }
                Plan {
                    region,
                    smart,
                    ..simple(canvas)
                }
            }
        })
    }

    /// The kept region of `image` (the input of `nominal` size, held at its own size).
    fn region_of(
        &self,
        plan: &Plan,
        image: &DynamicImage,
        nominal: (u32, u32),
    ) -> Result<Region, MediaError> {
        let actual = (image.width(), image.height());
        let region = plan.region.rescaled(nominal, actual);
        if !plan.smart {
            return Ok(region);
        }
        let size = (region.width, region.height);
        let (left, top) = if self.gravity == Gravity::Face {
            faces::window::of_image(image, size)?
        } else {
            smart::window(image, size)
        };
        Ok(Region {
            left,
            top,
            ..region
        })
    }
}

impl FrameOp for BoxResize {
    fn output_size(&self, size: (u32, u32)) -> Result<(u32, u32), MediaError> {
        Ok(self.plan(size)?.canvas)
    }

    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        let size = (image.width(), image.height());
        self.apply_scaled(image, size)
    }

    fn decode_at_least(&self, (w, h): (u32, u32)) -> (u32, u32) {
        let Ok(plan) = self.plan((w, h)) else {
            return (w, h);
        };
        // The whole input at the scale the kept region is resampled at: larger than
        // the input when enlarging, which only a vector source (SVG) can be drawn at;
        // a bitmap decodes at its own size.
        let fx = f64::from(plan.scaled.0) / plan.region.width;
        let fy = f64::from(plan.scaled.1) / plan.region.height;
        let at_least = |side: u32, f: f64| (f64::from(side) * f).ceil().max(1.0) as u32;
        (at_least(w, fx), at_least(h, fy))
    }

    fn apply_scaled(
        &self,
        image: DynamicImage,
        size: (u32, u32),
    ) -> Result<DynamicImage, MediaError> {
        let plan = self.plan(size)?;
        let region = self.region_of(&plan, &image, size)?;
        let scaled = resample(&image, region, plan.scaled)?;
        if plan.canvas == plan.scaled {
            return Ok(scaled);
        }
        let background = self.background.unwrap_or(Colour::TRANSPARENT);
        Ok(pad(scaled, plan.canvas, plan.at, background))
    }

    fn only_resamples(&self, size: (u32, u32)) -> bool {
        self.plan(size).is_ok_and(|plan| {
            plan.region == Region::whole(size) && plan.canvas == plan.scaled && !plan.smart
        })
    }

    fn working_memory(&self, size: (u32, u32)) -> u64 {
        let faces = self.gravity == Gravity::Face && self.plan(size).is_ok_and(|p| p.smart);
        if faces {
            faces::working_memory(size)
        } else {
            0
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
        let size = (first.width(), first.height());
        let plan = self.plan(size).ok().filter(|plan| plan.smart)?;
        let region = if self.gravity == Gravity::Face {
            // One window for the faces of every sampled frame.
            let region = plan.region;
            let whole = (f64::from(size.0), f64::from(size.1));
            let window = (region.width, region.height);
            let found = faces::in_frames(frames).ok()?;
            let (left, top) = faces::window::around(&found, whole, window)
                .unwrap_or_else(|| smart::window(first, window));
            Region {
                left,
                top,
                ..region
            }
        } else {
            self.region_of(&plan, first, size).ok()?
        };
        let x = (region.left + region.width / 2.0) / f64::from(size.0);
        let y = (region.top + region.height / 2.0) / f64::from(size.1);
        Some(Box::new(BoxResize {
            gravity: Gravity::Focus { x, y },
            ..*self
        }))
    }
}
