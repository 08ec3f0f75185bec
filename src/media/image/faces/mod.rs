//! Faces: where they are in a picture (`detect`), and what the commands do with them —
//! `gravity: face` keeps them in a crop (`window`), `blur-faces` hides them (`hide`),
//! `faces: true` reports them.
//!
//! - `model`: the network (YuNet-n, shipped in the binary); `engine` and `kernels`
//!   run it (tract reads the ONNX file, and runs it in the tests as the reference).
//! - `boxes`: the network's outputs read as boxes, and non-maximum suppression.
//! - `window`: the crop window around the faces.
//! - `hide`: blurring or pixelating boxes of a picture.
//!
//! The picture is brought down to at most [`DETECT_SIDE`] pixels a side before the
//! network sees it ([`CROP_SIDE`] for `gravity: face`): the network finds faces from
//! about 10–20 pixels up, so faces of 40 pixels in a 2 MP photo are found at a cost
//! that stays within a few tens of milliseconds on one core whatever the input's size.

mod boxes;
mod detector;
mod engine;
mod face;
mod file;
pub mod hide;
mod kernels;
mod layer;
mod layers;
mod model;
mod portable;
mod read;
#[cfg(target_arch = "x86_64")]
mod simd_avx2;
pub mod window;

#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod tests;

pub use detector::{
    detect, detect_for_crop, in_frames, scaled_size, working_memory, CROP_SIDE, DETECT_SIDE,
};
pub use face::Face;
