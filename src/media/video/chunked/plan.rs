//! Where a video is cut for a chunked encode, decided from its headers alone.

use crate::media::video::info::VideoInfo;

/// Chunks per core: one. A chunk costs its process and, worse, the decode of the
/// source from the keyframe before its cut, which for the common source (one keyframe
/// in 10 s) is every frame before it: two chunks a core cost a 1080p Theora encode
/// 1.5 s more CPU than one, more than evening out scenes of different cost gained.
const CHUNKS_PER_CORE: usize = 1;
/// Frames between a source's keyframes assumed when a cut's decode cost is estimated:
/// x264's default (10 s at 25 fps), the longest interval common sources have.
const SOURCE_KEYFRAME_INTERVAL: u64 = 250;
/// Fewest frames in a chunk: below this the process costs more than it saves whatever
/// the frame size.
const MIN_FRAMES: u64 = 8;

/// Frames `start..start + count` of the source, the `index`th piece.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chunk {
    pub index: usize,
    pub start: u64,
    pub count: u64,
    /// The last chunk reads to the end of the source, as the single-process encode does,
    /// so that it ends the way that one would.
    pub last: bool,
}

/// A video's chunks at its constant frame `rate`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub chunks: Vec<Chunk>,
    pub rate: f64,
    pub frames: u64,
    /// Seconds of output a second of source lasts (see `SplitRecipe::time_scale`).
    pub time_scale: f64,
}

impl Plan {
    /// Seconds `chunk` lasts in the output.
    pub fn seconds(&self, chunk: &Chunk) -> f64 {
        chunk.seconds(self.rate) * self.time_scale
    }
}

impl Chunk {
    /// Where an input seek (`-ss`) lands so that it keeps this chunk's first frame and
    /// drops the one before: half a frame early (ffmpeg's accurate seek drops decoded
    /// frames before the seek point). `None` for the first chunk, which needs no seek.
    pub fn seek(&self, rate: f64) -> Option<f64> {
        (self.start > 0).then(|| (self.start as f64 - 0.5) / rate)
    }

    /// Seconds this chunk's frames last in the source.
    pub fn seconds(&self, rate: f64) -> f64 {
        self.count as f64 / rate
    }
}

/// The chunks of a source described by `info`, each about `min_work` pixel-frames or
/// more, on a machine of `cores` cores, cut only where the encoder puts a keyframe of
/// its own (every `keyframe_interval` frames from the start), so that splitting adds
/// none: a VP9 keyframe costs as much as a dozen other frames. `None` where splitting
/// does not pay or cannot be exact: one core, `min_work` 0 (splitting off), too little
/// work for two chunks, or a source whose frame count or constant rate is unknown (a
/// variable-rate source could not be cut on exact frame times). The cuts are placed
/// so that the chunks cost the same by `costs` (see [`balanced_starts`]).
pub(crate) fn plan(
    info: &VideoInfo,
    min_work: u64,
    cores: usize,
    keyframe_interval: u64,
    costs: &FrameCosts,
) -> Option<Plan> {
    if cores < 2 || min_work == 0 {
        return None;
    }
    let frames = info.frames?;
    let rate = info.frame_rate?;
    let base = info.base_rate?;
    if (rate - base).abs() > base * 0.001 {
        return None;
    }
    let pixels = u64::from(info.shown.0) * u64::from(info.shown.1);
    let work = pixels.saturating_mul(frames);
    let count = (cores * CHUNKS_PER_CORE)
        .min(usize::try_from(work / min_work).unwrap_or(usize::MAX))
        .min(usize::try_from(frames / MIN_FRAMES).unwrap_or(usize::MAX)) as u64;
    let mut starts = balanced_starts(frames, count, keyframe_interval.max(1), costs);
    starts.dedup();
    if starts.len() < 2 {
        return None;
    }
    starts.push(frames);
    let last = starts.len() - 2;
    let chunks = starts
        .windows(2)
        .enumerate()
        .map(|(index, w)| Chunk {
            index,
            start: w[0],
            count: w[1] - w[0],
            last: index == last,
        })
        .collect();
    Some(Plan {
        chunks,
        rate,
        frames,
        time_scale: 1.0,
    })
}

/// What each frame of a source costs a chunk, relative to the others.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct FrameCosts {
    /// What decoding a frame costs against encoding it.
    pub decode_weight: f64,
    /// Each frame's cost to encode, in presentation order; a frame not listed costs 1.
    pub frames: Vec<f64>,
}

/// Bytes a pixel at which a source frame costs twice what a frame of nothing costs to
/// encode: fitted on 1080p Theora of three scenes of a clip (a test pattern at 0.016
/// bytes a pixel, 68 ms a frame; a fractal zoom at 0.022, 80 ms; noise at 0.143,
/// 129 ms). A frame's bytes in the source say how busy it is before it is decoded.
const BYTES_PER_PIXEL_DOUBLING: f64 = 0.127;

impl FrameCosts {
    /// Every frame alike.
    pub fn uniform(decode_weight: f64) -> FrameCosts {
        FrameCosts {
            decode_weight,
            frames: Vec::new(),
        }
    }

    /// Frames costing by their size in the source (`bytes`, in presentation order) in a
    /// picture of `pixels`.
    pub fn from_bytes(decode_weight: f64, bytes: &[u64], pixels: u64) -> FrameCosts {
        let doubling = BYTES_PER_PIXEL_DOUBLING * pixels.max(1) as f64;
        FrameCosts {
            decode_weight,
            frames: bytes.iter().map(|b| 1.0 + *b as f64 / doubling).collect(),
        }
    }
}

/// Where `count` chunks of `frames` start, each cut on a multiple of `gop`, so that
/// they cost about the same: a chunk encodes its frames and decodes the source from
/// the keyframe before its cut (assumed [`SOURCE_KEYFRAME_INTERVAL`] frames back at
/// most) to its end, each frame weighing its cost in `costs`, a decoded one
/// `decode_weight` of that. A later chunk decodes more, so it is given less. The
/// common cost is found by bisection: the least that `count` chunks reach.
fn balanced_starts(frames: u64, count: u64, gop: u64, costs: &FrameCosts) -> Vec<u64> {
    let weight = costs.decode_weight;
    // prefix[i]: the cost of frames 0..i.
    let mut prefix = vec![0.0; frames as usize + 1];
    for i in 0..frames as usize {
        prefix[i + 1] = prefix[i] + costs.frames.get(i).copied().unwrap_or(1.0);
    }
    let sum = |from: u64, to: u64| prefix[to as usize] - prefix[from as usize];
    let cost = |start: u64, end: u64| {
        sum(start, end) + weight * sum(start.saturating_sub(SOURCE_KEYFRAME_INTERVAL), end)
    };
    // The first frame at which a chunk from `start` costs `target`, on the grid.
    let end_for = |start: u64, target: f64| {
        let (mut low, mut high) = (start, frames);
        while low < high {
            let mid = (low + high) / 2;
            if cost(start, mid) < target {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        ((low as f64) / gop as f64).round() as u64 * gop
    };
    // The starts of chunks that each cost `target` at most but the last, which holds
    // the rest; `None` where a chunk could not reach the next keyframe of the grid.
    let starts_for = |target: f64| {
        let mut starts = vec![0];
        let mut start = 0;
        loop {
            let end = end_for(start, target);
            if end >= frames || cost(start, frames) <= target {
                return Some(starts);
            }
            if end <= start {
                return None;
            }
            starts.push(end);
            start = end;
        }
    };
    let fits = |target: f64| starts_for(target).is_some_and(|s| s.len() as u64 <= count);
    // The least common cost that `count` chunks reach.
    let (mut low, mut high) = (0.0, cost(0, frames));
    for _ in 0..50 {
        let target = (low + high) / 2.0;
        if fits(target) {
            high = target;
        } else {
            low = target;
        }
    }
    starts_for(high).unwrap_or_else(|| vec![0])
}

#[cfg(test)]
mod tests;
