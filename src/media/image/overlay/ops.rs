//! The `watermark` and `text` frame operations.

use std::sync::Arc;

use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions};
use image::{DynamicImage, RgbaImage};

use crate::media::error::MediaError;
use crate::media::image::frame_op::FrameOp;
use crate::media::image::geometry::{Colour, Gravity};
use crate::media::image::overlay::compose::*;
use crate::media::image::text;

/// `watermark`: `image` laid over the picture at `gravity`, `margin` pixels from the
/// edges, scaled to `overlay_width` of the picture's width (its aspect kept, never
/// taller than the picture), its transparency kept and multiplied by `opacity`.
pub struct Watermark {
    /// The overlay, as fetched and decoded (upright).
    pub image: RgbaImage,
    pub gravity: Gravity,
    pub margin: u32,
    /// 0–1.
    pub opacity: f32,
    /// The overlay's width as a fraction of the picture's (0–1].
    pub overlay_width: f32,
    scaled: PerSize,
}

/// The overlay's size, not its pixels: what a log line or a test failure needs.
impl std::fmt::Debug for Watermark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watermark")
            .field("image", &self.image.dimensions())
            .field("gravity", &self.gravity)
            .field("margin", &self.margin)
            .field("opacity", &self.opacity)
            .field("overlay_width", &self.overlay_width)
            .finish()
    }
}

impl Watermark {
    /// `image` with every other option at its default.
    pub fn new(image: RgbaImage) -> Watermark {
        Watermark {
            image,
            gravity: DEFAULT_GRAVITY,
            margin: DEFAULT_MARGIN,
            opacity: DEFAULT_OPACITY,
            overlay_width: DEFAULT_OVERLAY_WIDTH,
            scaled: PerSize::default(),
        }
    }

    /// The overlay's size on a picture of `base` pixels: `overlay_width` × the
    /// picture's width, the height by the overlay's aspect, each at least 1 pixel; an
    /// overlay that would be taller than the picture is made as tall as it instead.
    pub fn overlay_size(&self, base: (u32, u32)) -> (u32, u32) {
        let (ow, oh) = (
            f64::from(self.image.width().max(1)),
            f64::from(self.image.height().max(1)),
        );
        let fraction = f64::from(self.overlay_width).clamp(0.0, 1.0);
        let mut w = (fraction * f64::from(base.0)).round().max(1.0);
        let mut h = (w * oh / ow).round().max(1.0);
        if h > f64::from(base.1) {
            h = f64::from(base.1.max(1));
            w = (h * ow / oh).round().max(1.0);
        }
        (w as u32, h as u32)
    }

    /// The overlay at its size for a picture of `base` pixels (made once per size).
    pub fn scaled_for(&self, base: (u32, u32)) -> Result<Arc<RgbaImage>, MediaError> {
        self.scaled
            .get(base, || scale(&self.image, self.overlay_size(base)))
    }
}

impl FrameOp for Watermark {
    /// The overlay as read, scaled for the picture, and the copy it is converted
    /// through.
    fn working_memory(&self, size: (u32, u32)) -> u64 {
        let (w, h) = self.overlay_size(size);
        let (iw, ih) = self.image.dimensions();
        4 * (u64::from(iw) * u64::from(ih) + 2 * u64::from(w) * u64::from(h))
    }

    fn output_size(&self, size: (u32, u32)) -> Result<(u32, u32), MediaError> {
        Ok(size)
    }

    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        let size = (image.width(), image.height());
        let top = self.scaled_for(size)?;
        let at = place(size, top.dimensions(), self.gravity, self.margin);
        over_rgba(image, |base| composite(base, &top, at, self.opacity))
    }
}

/// `image` resized to `size`: Lanczos3, alpha premultiplied while filtering so the
/// transparent parts do not darken the edges.
fn scale(image: &RgbaImage, size: (u32, u32)) -> Result<RgbaImage, MediaError> {
    if image.dimensions() == size {
        return Ok(image.clone());
    }
    let mut out = RgbaImage::new(size.0, size.1);
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
    mediaedit_pixels::resize_rgba(image, &mut out, &options)
        .map_err(|e| MediaError::InvalidMedia(format!("the overlay could not be scaled: {e}")))?;
    Ok(out)
}

/// `text`: `text` drawn at `gravity`, `margin` pixels from the edges, in `colour` with
/// a thin dark outline. `font_size` is in pixels, 5 % of the picture's height when
/// `None`. Text wider (or taller) than the picture within its margins is drawn smaller,
/// just enough to fit, so no letter is cut off.
pub struct Text {
    pub text: String,
    pub gravity: Gravity,
    pub margin: u32,
    pub font_size: Option<f32>,
    pub colour: Colour,
    drawn: PerSize,
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Text")
            .field("text", &self.text)
            .field("gravity", &self.gravity)
            .field("margin", &self.margin)
            .field("font_size", &self.font_size)
            .field("colour", &self.colour)
            .finish()
    }
}

impl Text {
    /// `text` with every other option at its default.
    pub fn new(text: impl Into<String>) -> Text {
        Text {
            text: text.into(),
            gravity: DEFAULT_GRAVITY,
            margin: DEFAULT_MARGIN,
            font_size: None,
            colour: DEFAULT_TEXT_COLOUR,
            drawn: PerSize::default(),
        }
    }

    /// The font size used on a picture of `base` pixels: the one asked for (or the
    /// default), made smaller when the text would not fit inside the margins.
    pub fn font_size_for(&self, base: (u32, u32)) -> f32 {
        let asked = self
            .font_size
            .unwrap_or(DEFAULT_FONT_SIZE_FRACTION * base.1 as f32)
            .max(1.0);
        let room = |side: u32| (side.saturating_sub(2 * self.margin)).max(1) as f32;
        let (room_w, room_h) = (room(base.0), room(base.1));
        let mut size = asked;
        // The outline does not scale with the size, so one step may leave the text a
        // hair too wide: a few steps settle it.
        for _ in 0..4 {
            let laid = text::layout(&self.text, size);
            let over = f32::max(laid.width / room_w, laid.height / room_h);
            if over <= 1.0 || size <= 1.0 {
                break;
            }
            size = (size / over).floor().max(1.0);
        }
        size
    }

    /// The text drawn for a picture of `base` pixels (made once per size).
    pub fn drawn_for(&self, base: (u32, u32)) -> Result<Arc<RgbaImage>, MediaError> {
        self.drawn.get(base, || {
            Ok(text::render_text(
                &self.text,
                self.font_size_for(base),
                self.colour,
            ))
        })
    }
}

impl FrameOp for Text {
    /// The canvas the text is drawn on (`text::Layout::memory`).
    fn working_memory(&self, size: (u32, u32)) -> u64 {
        text::layout(&self.text, self.font_size_for(size)).memory()
    }

    fn output_size(&self, size: (u32, u32)) -> Result<(u32, u32), MediaError> {
        Ok(size)
    }

    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        let size = (image.width(), image.height());
        let top = self.drawn_for(size)?;
        let at = place(size, top.dimensions(), self.gravity, self.margin);
        over_rgba(image, |base| composite(base, &top, at, 1.0))
    }
}
