//! Per-frame image operations: what the image commands (resize to a box, crop,
//! rotate, watermark, text) do to one upright picture, the same for a still image
//! and for every frame of an animation.
//!
//! A [`FrameOp`] knows its output size from its input size alone, before any pixel
//! is decoded, so the pixel limits, the budgets and the dry run can judge an edit
//! from the headers ([`output_size`]); then it maps each decoded frame.
//!
//! - `frame_op`: [`FrameOp`] and [`output_size`]; this file holds only the `mod` lines
//!   and the re-exports for the code outside the folder.
//! - `geometry`: the shared words (`gravity`, `fit`, colours).
//! - `scale`: [`Scale`], `resize-image`'s `scale`.
//! - `resize_box`: [`BoxResize`], `resize-image` to a `width` × `height` box.
//! - `crop`, `rotate`: [`Crop`] and [`Rotate`].
//! - `smart`: the saliency measure behind `gravity: smart`.
//! - `faces`: the face detector behind `gravity: face`, `blur-faces` and `faces: true`.
//! - `pixels`: resampling a region, padding.
//! - `pipeline`: the operations applied to a still or to every frame, then encoded.
//! - `codec`: the decoders and encoders of this process; `decode`: headers, pixel
//!   limits, EXIF orientation (`exif`) and decoding to upright pixels.
//! - `ops`: target sizes, resizing, flattening and encoding; `colour`: ICC profiles;
//!   `yuv`: 4:2:0 pictures for and from video.
//! - `placeholders`: the blurhash, thumbhash and dominant colour of an image output.
//! - `quality`: `quality: auto` and `format: best`, by SSIMULACRA2 score.

pub(crate) mod codec;
pub(crate) mod colour;
mod crop;
pub(crate) mod decode;
pub(crate) mod exif;
pub mod faces;
mod frame_op;
mod geometry;
pub mod metadata;
pub(crate) mod ops;
pub mod overlay;
pub(crate) mod peak;
pub(crate) mod pipeline;
mod pixels;
pub(crate) mod placeholders;
pub mod quality;
mod resize_box;
mod rotate;
mod scale;
pub(crate) mod smart;
pub mod text;
pub(crate) mod yuv;

pub use crop::{Crop, GravityCrop};
pub use frame_op::{output_size, FrameOp};
pub use geometry::{Colour, Fit, Gravity};
pub use resize_box::BoxResize;
pub use rotate::{Flip, Rotate};
pub use scale::Scale;
pub use smart::window as smart_window;

#[cfg(test)]
mod smart_tests;
#[cfg(test)]
mod tests;
