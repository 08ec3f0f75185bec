//! The face model and what runs it: YuNet-n (libfacedetection.train, Apache-2.0,
//! `models/LICENSE-yunet`), 323 KB of ONNX compiled into the binary, read by
//! `tract-onnx` (pure Rust, MIT/Apache-2.0) and run in this process by our own kernels
//! (`engine`, `kernels`: why not tract's run is said there). Nothing is fetched at
//! build or run time and no GPU is used.
//!
//! The graph is read once and runs on inputs of any size (multiples of 32): there is
//! no plan per size to build or keep. One thread per run: the same input gives the
//! same boxes, bit for bit.

use std::sync::OnceLock;

use crate::media::error::MediaError;
use crate::media::image::faces::engine::Network;
use crate::media::image::faces::layer::Map;

/// YuNet-n, exported with dynamic height and width.
pub(super) static MODEL_BYTES: &[u8] = include_bytes!("../../../../models/yunet_n.onnx");

/// The outputs the decoder reads: class, objectness and box, per stride (the five
/// landmarks that follow are not computed).
const OUTPUTS_READ: usize = 9;

/// The network, read once.
fn network() -> Result<&'static Network, MediaError> {
    static NETWORK: OnceLock<Result<Network, String>> = OnceLock::new();
    NETWORK
        .get_or_init(|| Network::parse(MODEL_BYTES, OUTPUTS_READ))
        .as_ref()
        .map_err(|e| fault(e))
}

fn fault(why: &str) -> MediaError {
    MediaError::Io(std::io::Error::other(format!(
        "the face detector failed ({why})"
    )))
}

/// The model's twelve outputs for one input, each flattened: per stride 8, 16 and 32,
/// the class score, the objectness (both 0–1), the box (4 per cell) and the five
/// landmarks (10 per cell, unused here).
pub(super) struct RawOutputs {
    pub cls: [Vec<f32>; 3],
    pub obj: [Vec<f32>; 3],
    pub bbox: [Vec<f32>; 3],
}

/// A buffer whose first `len` values are zeros, for an input to `run` (from the
/// buffers runs keep; it may be longer).
pub(super) fn zeroed(len: usize) -> Vec<f32> {
    Network::zeroed(len)
}

/// Runs the model on `input`: BGR, 0–255, planar (`[3][height][width]`), `height`
/// and `width` multiples of 32.
pub(super) fn run(input: Vec<f32>, height: usize, width: usize) -> Result<RawOutputs, MediaError> {
    let map = Map {
        channels: 3,
        height,
        width,
        data: input,
    };
    let mut heads = network()?.run(map).map_err(|e| fault(&e))?.into_iter();
    let mut next = || {
        heads
            .next()
            .ok_or_else(|| fault("the model gave fewer outputs"))
    };
    Ok(RawOutputs {
        cls: [next()?, next()?, next()?],
        obj: [next()?, next()?, next()?],
        bbox: [next()?, next()?, next()?],
    })
}
