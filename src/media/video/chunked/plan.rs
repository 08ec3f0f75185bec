//! Where a video is cut for a chunked encode, decided from its headers alone.

use crate::media::video::info::VideoInfo;

/// Chunks per core at most: more than one evens out chunks that encode at different
/// speeds (a scene of noise beside a still one) at the cost of one more process and
/// one more keyframe each.
const CHUNKS_PER_CORE: usize = 2;
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
}

impl Chunk {
    /// Where an input seek (`-ss`) lands so that it keeps this chunk's first frame and
    /// drops the one before: half a frame early (ffmpeg's accurate seek drops decoded
    /// frames before the seek point). `None` for the first chunk, which needs no seek.
    pub fn seek(&self, rate: f64) -> Option<f64> {
        (self.start > 0).then(|| (self.start as f64 - 0.5) / rate)
    }

    /// Seconds this chunk lasts in the output.
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
/// variable-rate source could not be cut on exact frame times).
pub(crate) fn plan(
    info: &VideoInfo,
    min_work: u64,
    cores: usize,
    keyframe_interval: u64,
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
    // Even cuts, each moved to the nearest keyframe of the encoder's own.
    let gop = keyframe_interval.max(1);
    let mut starts: Vec<u64> = (0..count)
        .map(|i| (i * frames / count.max(1) + gop / 2) / gop * gop)
        .filter(|start| *start < frames)
        .collect();
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::video::info::tests::info;

    fn clip(frames: u64, rate: f64, (w, h): (u32, u32)) -> VideoInfo {
        VideoInfo {
            frames: Some(frames),
            frame_rate: Some(rate),
            base_rate: Some(rate),
            shown: (w, h),
            ..info(None, false)
        }
    }

    #[test]
    fn a_long_clip_is_cut_into_even_chunks_that_cover_every_frame_once() {
        let plan = plan(&clip(250, 25.0, (1920, 1080)), 100_000_000, 2, 1).unwrap();
        assert_eq!(plan.chunks.len(), 4);
        let mut next = 0;
        for chunk in &plan.chunks {
            assert_eq!(chunk.start, next);
            next += chunk.count;
        }
        assert_eq!(next, 250);
        assert!(plan.chunks.last().unwrap().last);
        assert_eq!(plan.chunks[0].seek(25.0), None);
        let seek = plan.chunks[1].seek(25.0).unwrap();
        assert_eq!(plan.chunks[1].start, 62);
        assert!((seek - 61.5 / 25.0).abs() < 1e-9, "{seek}");
    }

    #[test]
    fn short_small_variable_rate_or_one_core_sources_stay_whole() {
        let small = clip(120, 30.0, (176, 144));
        assert_eq!(plan(&small, 100_000_000, 16, 1), None);
        let big = clip(250, 25.0, (1920, 1080));
        assert_eq!(plan(&big, 100_000_000, 1, 1), None);
        assert_eq!(plan(&big, 0, 16, 1), None);
        let variable = VideoInfo {
            base_rate: Some(30.0),
            ..big.clone()
        };
        assert_eq!(plan(&variable, 100_000_000, 16, 1), None);
        let unknown = VideoInfo {
            frames: None,
            ..big
        };
        assert_eq!(plan(&unknown, 100_000_000, 16, 1), None);
    }

    #[test]
    fn chunks_keep_a_least_size_in_work_and_frames() {
        // 0.5 G of work in chunks of at least 0.2 G: two, even on many cores.
        let plan = plan(&clip(250, 25.0, (1920, 1080)), 200_000_000, 16, 1).unwrap();
        assert_eq!(plan.chunks.len(), 2);
        // A tiny threshold still leaves 8 frames a chunk.
        let plan = super::plan(&clip(20, 25.0, (64, 64)), 1, 16, 1).unwrap();
        assert_eq!(plan.chunks.len(), 2);
    }

    #[test]
    fn cuts_fall_on_the_encoders_own_keyframes() {
        // VP9 puts a keyframe every 128 frames: 10 s at 25 fps is cut once, at 128.
        let plan = plan(&clip(250, 25.0, (1920, 1080)), 100_000_000, 2, 128).unwrap();
        let starts: Vec<u64> = plan.chunks.iter().map(|c| c.start).collect();
        assert_eq!(starts, [0, 128]);
        assert_eq!(plan.chunks[1].count, 122);
        assert!(plan.chunks[1].last && !plan.chunks[0].last);
        // Every 12 frames (Theora): 250 frames in four cut at 60, 120 and 192.
        let plan = super::plan(&clip(250, 25.0, (1920, 1080)), 100_000_000, 2, 12).unwrap();
        let starts: Vec<u64> = plan.chunks.iter().map(|c| c.start).collect();
        assert_eq!(starts, [0, 60, 120, 192]);
        // Shorter than one interval: nothing to cut.
        assert_eq!(
            super::plan(&clip(120, 25.0, (1920, 1080)), 1, 16, 128),
            None
        );
    }
}
