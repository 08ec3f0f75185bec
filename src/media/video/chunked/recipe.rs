//! An encode that may be split, as the single-process recipe and the chunks both run it.

use crate::media::ffmpeg::transcode::map_args;
use crate::media::video::chunked::part;
use crate::media::video::chunked::part::Part;
use crate::media::video::chunked::plan::Chunk;

/// An encode that may be split: the video filter and encoder options, the audio
/// encoder options (empty without audio) and the muxer, each run the same way in
/// the single-process recipe and in the chunks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SplitRecipe {
    pub filter: String,
    pub video: Vec<String>,
    pub audio: Vec<String>,
    pub muxer: &'static str,
    /// Frames between the encoder's own keyframes (its `-g`, stated in `video`):
    /// chunks are cut only there.
    pub keyframe_interval: u64,
    /// What decoding a source frame costs against encoding one (see
    /// `plan::plan`): a chunk decodes the source from the keyframe before its cut.
    pub decode_weight: f64,
    /// Options of the finished file alone (MP4's `-movflags +faststart`): given to the
    /// single-process run and to the join, not to the pieces, which are read once.
    pub muxer_options: Vec<String>,
    /// Seconds of output a second of source lasts (about `1 / speed` when `filter`
    /// retimes the frames, on the output rate's own grid; else 1): each chunk's place
    /// in the join is its frames' source length times this. The filter must then keep
    /// every frame (one out per one in).
    pub time_scale: f64,
    /// Cores one chunk's encoder keeps busy: a machine's cores are cut into one chunk
    /// per this many (1 for Theora and VP9; `--x264-cores-per-chunk` for x264).
    pub cores_per_chunk: usize,
    /// Whether `filter` reads a file of this node besides the source (an overlay's
    /// picture): then the chunks run on this node's slots only, never on another node.
    pub local_only: bool,
    /// The part of the source encoded, where not the whole (see `part`).
    pub part: Option<Part>,
    /// A filter that draws subtitles (`media::subtitles::burn_filter`) on the frames as
    /// they come from the source, before `filter`: its cues are timed from the
    /// encode's first frame, so a chunk runs it on its frames at their place in the
    /// whole (see [`burn_at`]).
    pub burn: Option<String>,
}

impl SplitRecipe {
    /// The single-process recipe: both streams in one run.
    pub fn whole(&self) -> Vec<String> {
        let mut args = map_args(!self.audio.is_empty());
        args.extend([
            "-vf".to_string(),
            burn_at(self.burn.as_deref(), None, &self.filter),
        ]);
        args.extend(self.video.iter().cloned());
        args.extend(self.audio.iter().cloned());
        args.extend(self.muxer_options.iter().cloned());
        args.extend(["-f".to_string(), self.muxer.to_string()]);
        args
    }

    /// The options before `-i` and the recipe after it of `chunk`'s video.
    pub(super) fn chunk(&self, chunk: &Chunk, rate: f64) -> (Vec<String>, Vec<String>) {
        let seek = match &self.part {
            Some(part) => Some(part.seek(chunk, rate)),
            None => chunk.seek(rate),
        };
        let seek = seek.map(|s| vec!["-ss".to_string(), part::seconds(s)]);
        // The seek leaves the first kept frame at its source time: restarted at zero,
        // the chunk's frames fall on the output rate's grid as the whole video's do.
        let at = chunk.start as f64 / rate;
        let filter = burn_at(self.burn.as_deref(), Some(at), &self.filter);
        let filter = format!("setpts=PTS-STARTPTS,{filter}");
        let mut args: Vec<String> = ["-map", "0:v:0", "-an", "-sn", "-dn", "-vf"]
            .map(String::from)
            .into();
        args.push(filter);
        let rest = self.part.as_ref().and_then(|p| p.rest(chunk, rate));
        if !chunk.last {
            args.extend(["-frames:v".to_string(), chunk.count.to_string()]);
        } else if let Some(rest) = rest {
            args.extend(["-t".to_string(), part::seconds(rest)]);
        }
        args.extend(self.video.iter().cloned());
        args.extend(["-f".to_string(), self.muxer.to_string()]);
        (seek.unwrap_or_default(), args)
    }

    /// The recipe of the audio alone.
    pub(super) fn audio_only(&self) -> Vec<String> {
        let mut args: Vec<String> = ["-map", "0:a:0", "-vn", "-sn", "-dn"]
            .map(String::from)
            .into();
        args.extend(self.audio.iter().cloned());
        args.extend(self.part.iter().flat_map(Part::audio_cut));
        args.extend(["-f".to_string(), self.audio_muxer().to_string()]);
        args
    }

    /// The container of the audio piece: the output's, but Ogg for WebM. Opus read
    /// back from Matroska comes out earlier by its pre-skip (6.5 ms) than it went in,
    /// so a copy of it would start that much off the single-process encode's audio;
    /// from Ogg it comes back as the encoder made it.
    pub(super) fn audio_muxer(&self) -> &'static str {
        match self.muxer {
            "webm" => "ogg",
            muxer => muxer,
        }
    }

    /// The options before `-i` and the recipe after it of the audio piece.
    pub(super) fn audio_piece(&self) -> (Vec<String>, Vec<String>) {
        let input = self.part.iter().flat_map(Part::audio_input).collect();
        (input, self.audio_only())
    }
}

/// `filter` after `burn` (when given) for frames starting at `at` seconds into the
/// encode (`None`: the whole encode, which starts at zero). A chunk's frames are
/// restarted at zero, so they are moved to their place for the cues to be drawn at
/// the whole's times, then restarted again.
pub(crate) fn burn_at(burn: Option<&str>, at: Option<f64>, filter: &str) -> String {
    match (burn, at) {
        (None, _) => filter.to_string(),
        (Some(burn), None) => format!("{burn},{filter}"),
        (Some(burn), Some(at)) => {
            let at = part::seconds(at);
            format!("setpts=PTS+{at}/TB,{burn},setpts=PTS-STARTPTS,{filter}")
        }
    }
}
