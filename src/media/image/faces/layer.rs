//! What the face network is made of: planar maps and the layers between them (read by
//! `read`, computed by `layers`, run in order by `engine`).

use crate::media::image::faces::portable::Window;

/// A planar map: `channels` planes of `height` rows of `width`.
pub struct Map {
    pub channels: usize,
    pub height: usize,
    pub width: usize,
    /// At least `channels × height × width` values (a reused buffer may be longer).
    pub data: Vec<f32>,
}

/// The forms of convolution the network has.
pub enum Conv {
    /// 1×1, stride 1.
    Pointwise,
    /// 3×3, stride 1, padding 1, one input channel per output channel.
    Depthwise3,
    /// Any square window over all the input channels.
    General(Window),
}

/// One layer.
pub enum Op {
    Conv {
        kind: Conv,
        weights: Vec<f32>,
        bias: Vec<f32>,
        relu: bool,
    },
    Relu,
    MaxPool2,
    Upsample(usize),
    Add,
}
