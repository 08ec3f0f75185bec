//! The typed options of an edit, and how each command declares the ones it uses.
//!
//! Options are one object per edit (the interface document): every command reads the
//! fields it declares in its `OPTIONS` table, with the range and default given there.
//! The request walk (`edits::options`) collects those tables from the commands of the
//! pipeline.

use crate::media::ImageFormat;

/// Options with defaults filled in (decisions.md §5); each field belongs to the
/// command that declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// `image-to-video`.
    pub fps: f64,
    /// `image-to-video`.
    pub duration: f64,
    /// `resize-image`.
    pub scale: f64,
    /// `resize-image`; `None` keeps the input's format.
    pub format: Option<ImageFormat>,
    /// `modify-video-speed`.
    pub speed: f64,
}

impl Default for Options {
    fn default() -> Self {
        use super::{image_to_video, modify_video_speed, resize_image};
        Options {
            fps: image_to_video::DEFAULT_FPS,
            duration: image_to_video::DEFAULT_DURATION,
            scale: resize_image::DEFAULT_SCALE,
            format: None,
            speed: modify_video_speed::DEFAULT_SPEED,
        }
    }
}

/// One option a command reads.
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
}

/// What values an option takes, and where a valid one goes.
pub enum OptionKind {
    /// A finite number within `(min, max]`, or `[min, max]` when `min_inclusive`.
    Number {
        min: f64,
        min_inclusive: bool,
        max: f64,
        /// The value when the request names none.
        default: f64,
        set: fn(&mut Options, f64),
    },
    /// An image format name: `jpeg` (or `jpg`), `png`, `webp`.
    ImageFormat { set: fn(&mut Options, ImageFormat) },
}
