//! The MP4 both paths write: its formats, and the timing of its H.264 stream.

use crate::media::ffmpeg::transcode::X264;
use crate::media::video::h264::BT709_TAGS;
use crate::media::MediaFormat;

/// GIF, and animated WebP and APNG: a still WebP or PNG fails
/// `unsupported_input_format` saying so (see [`run`]).
pub(super) const INPUTS: &[MediaFormat] = &[MediaFormat::Gif, MediaFormat::Webp, MediaFormat::Png];

pub(super) const OUTPUT: MediaFormat = MediaFormat::Mp4;

/// The encoder half of every animation: variable frame rate in
/// `time_base`, H.264 without B-frames, the last packet's duration set by `setts`
/// (see the module's docs), in an MP4 track of `timescale`.
pub(super) fn timed_h264_args(
    time_base: &str,
    last_duration: String,
    timescale: &str,
) -> Vec<String> {
    let mut args: Vec<String> = ["-fps_mode", "vfr", "-enc_time_base", time_base]
        .map(String::from)
        .into();
    args.extend(X264.map(String::from));
    args.extend(["-bf", "0"].map(String::from));
    args.extend(BT709_TAGS.map(String::from));
    args.extend(["-bsf:v".to_string(), last_duration]);
    args.extend(["-video_track_timescale", timescale].map(String::from));
    args.extend(["-movflags", "+faststart", "-f", "mp4"].map(String::from));
    args
}

/// The `setts` expression that makes the packet starting at or after `start` last
/// until `total` (in the encoder's time base).
pub(super) fn last_duration(start: u64, total: u64) -> String {
    format!(
        "setts=pts=PTS:dts=DTS:duration='if(gte(PTS\\,{start})\\,max({total}-PTS\\,1)\\,DURATION)'"
    )
}
