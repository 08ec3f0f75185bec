//! Choices made from several frames of an animation: `gravity: face` keeps one crop
//! for every frame, so it must see the faces of the whole animation, not only of its
//! first frame (a face may walk in later). A first pass decodes the animation and keeps
//! at most [`SAMPLES`] frames spread evenly over it; the operations settle on those.

use std::sync::Arc;

use image::DynamicImage;

use crate::format::MediaFormat;
use crate::media::animation::reader::open;
use crate::media::error::MediaError;
use crate::media::image::pipeline::{settle_on, Settled};
use crate::media::image::FrameOp;
use crate::media::limits::VideoLimits;
use crate::media::memory::MemoryBudget;

/// Frames an operation settles on at most.
pub const SAMPLES: usize = 8;

/// `ops` settled on frames sampled from `bytes` (an animation of `format`), or `None`
/// when no operation of `ops` looks at more than the first frame.
pub(super) fn settled<'a>(
    bytes: &[u8],
    format: MediaFormat,
    ops: &'a [Box<dyn FrameOp>],
    (limits, memory): (&VideoLimits, &Arc<MemoryBudget>),
) -> Result<Option<Settled<'a>>, MediaError> {
    if !ops.iter().any(|op| op.samples_frames()) {
        return Ok(None);
    }
    let mut animation = open(bytes, format, limits)?;
    let (w, h) = animation.size;
    // The samples, and one frame more while the set is thinned.
    let bytes_held = (SAMPLES as u64 + 1) * 4 * u64::from(w) * u64::from(h);
    let what = format!("Sampling the frames of a {w}x{h} animation");
    let _lease = memory.reserve(bytes_held, &what)?;
    // Every `step`-th frame; past SAMPLES kept, every other one is dropped and the step
    // doubles, so the samples stay spread over an animation of any (unknown) length.
    let step_for =
        |declared: Option<u64>| declared.map_or(1, |n| n.div_ceil(SAMPLES as u64).max(1));
    let mut step = step_for(animation.declared);
    let mut kept: Vec<(u64, DynamicImage)> = Vec::new();
    for (index, frame) in (&mut animation).enumerate() {
        let (rgba, _) = frame?;
        let index = index as u64;
        if index % step == 0 {
            kept.push((index, DynamicImage::ImageRgba8(rgba)));
            if kept.len() > SAMPLES {
                step *= 2;
                kept.retain(|(i, _)| i % step == 0);
            }
        }
    }
    let frames = kept.into_iter().map(|(_, frame)| frame).collect();
    Ok(Some(settle_on(ops, frames)?))
}
