//! The limits every decoder of moving pictures checks a source against (a leaf: the
//! image, animation and video layers all read it).

/// Limits a video source is checked against before any processing.
#[derive(Debug, Clone, Copy)]
pub struct VideoLimits {
    pub max_seconds: f64,
    pub max_pixels: u64,
    pub max_frames: u64,
}
