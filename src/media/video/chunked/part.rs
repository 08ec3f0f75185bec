//! A part of the source encoded in chunks instead of the whole (`trim-video`): the plan
//! covers the part's frames, each chunk's seek is moved on by the part's start, the
//! last chunk ends where the single-process encode's output `-t` ends it, and the
//! audio is read and cut once, as that encode reads and cuts it.

use super::plan::Chunk;

/// `frames` frames of the source from its frame `first`, which starts `start` seconds
/// into the file; the output cut at `length` seconds (ffmpeg's output `-t`) when
/// given; the audio read from an input seek to `audio_seek`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    pub start: f64,
    pub first: u64,
    pub frames: u64,
    pub length: Option<f64>,
    pub audio_seek: f64,
}

impl Part {
    /// Where `chunk`'s input seek lands: half a frame before its first frame (see
    /// `Chunk::seek`), counted from the part's start; the first chunk seeks too.
    pub fn seek(&self, chunk: &Chunk, rate: f64) -> f64 {
        (self.start + (chunk.start as f64 - 0.5) / rate).max(0.0)
    }

    /// The output `-t` of the last chunk, `chunk`: what is left of the part's length
    /// after the frames before it, so that ffmpeg drops the same frames at the end as
    /// the single-process encode's `-t` does (a count that then differs is caught by
    /// the join's frame check). `None` when the part runs to the source's end.
    pub fn rest(&self, chunk: &Chunk, rate: f64) -> Option<f64> {
        self.length.map(|l| l - chunk.start as f64 / rate)
    }

    /// The part's entries of `all`, one for each frame of the source; `None` when
    /// `all` is too short.
    pub fn of<T: Clone>(&self, all: &[T]) -> Option<Vec<T>> {
        let first = usize::try_from(self.first).ok()?;
        let end = first.checked_add(usize::try_from(self.frames).ok()?)?;
        all.get(first..end).map(<[T]>::to_vec)
    }

    /// The options before the input of the audio piece.
    pub fn audio_input(&self) -> Vec<String> {
        vec!["-ss".into(), seconds(self.audio_seek)]
    }

    /// The options that cut the audio where the single-process encode does.
    pub fn audio_cut(&self) -> Vec<String> {
        self.length
            .map(|l| vec!["-t".into(), seconds(l)])
            .unwrap_or_default()
    }
}

/// Frames a part of `length` seconds at a constant `rate` keeps from its first: those
/// starting before `length` as ffmpeg reads it (to the microsecond), one starting
/// exactly there excluded, as the output `-t` drops it.
pub(crate) fn frames_within(length: f64, rate: f64) -> u64 {
    let length = (length * 1e6).round() / 1e6;
    (length * rate - 1e-6).ceil().max(0.0) as u64
}

/// Seconds as ffmpeg's options are given them here: to the microsecond.
pub(crate) fn seconds(s: f64) -> String {
    format!("{s:.6}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(start: u64, last: bool) -> Chunk {
        Chunk {
            index: 1,
            start,
            count: 10,
            last,
        }
    }

    #[test]
    fn a_part_s_chunks_seek_from_its_start_and_the_last_keeps_what_is_left_of_its_length() {
        let part = Part {
            start: 2.04,
            first: 51,
            frames: 50,
            length: Some(2.0),
            audio_seek: 2.0395,
        };
        assert!((part.seek(&chunk(0, false), 25.0) - 2.02).abs() < 1e-9);
        assert!((part.seek(&chunk(25, true), 25.0) - 3.02).abs() < 1e-9);
        assert!((part.rest(&chunk(25, true), 25.0).unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(part.audio_input(), ["-ss", "2.039500"]);
        assert_eq!(part.audio_cut(), ["-t", "2.000000"]);
        let to_end = Part {
            length: None,
            ..part
        };
        assert_eq!(to_end.rest(&chunk(25, true), 25.0), None);
        assert!(to_end.audio_cut().is_empty());
        let bytes: Vec<u64> = (0..120).collect();
        assert_eq!(part.of(&bytes), Some((51..101).collect()));
        assert_eq!(part.of(&bytes[..100]), None);
    }

    #[test]
    fn a_part_keeps_the_frames_starting_before_its_length() {
        assert_eq!(frames_within(2.0, 25.0), 50);
        assert_eq!(frames_within(1.5, 25.0), 38);
        assert_eq!(frames_within(1.999_999_999_9, 25.0), 50);
        assert_eq!(frames_within(2.000_000_000_1, 25.0), 50);
        assert_eq!(frames_within(2.01, 25.0), 51);
        // 29.97 fps: 3 s hold 89.91 frame lengths, so 90 frames start within it.
        assert_eq!(frames_within(3.0, 30000.0 / 1001.0), 90);
        // Seven frame lengths read as 0.233567 s, just past the eighth frame's start.
        assert_eq!(frames_within(1001.0 / 30000.0 * 7.0, 30000.0 / 1001.0), 8);
    }
}
