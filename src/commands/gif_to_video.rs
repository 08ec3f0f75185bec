//! `gif-to-video`: an animated GIF, WebP or APNG as an H.264 MP4 with its exact timing.
//!
//! The GIF is read block by block first ([`super::gif`]): limits come from its headers,
//! frames without a colour table get the palette browsers give them, and the length of
//! the animation is known to the centisecond. ffmpeg then decodes and encodes it with
//! one video frame per GIF frame, in the GIF's own time base (1/100 s).
//!
//! ffmpeg 5 does not carry a frame's duration through libx264, so the last frame of a
//! variable-rate MP4 would last one tick. The `setts` bitstream filter sets the last
//! packet's duration to what is left of the animation; without B-frames packets come
//! in presentation order, so that packet is the last frame shown.
//!
//! Animated WebP and APNG: ffmpeg 5.1 cannot decode an animated WebP, and its APNG
//! decoder is not ours (limits, damaged files, the default image). Both are decoded
//! here, a frame at a time, by the frames `resize-image` uses (`media::animation`),
//! flattened onto white and written losslessly to a temporary APNG of whole frames,
//! each with its delay in milliseconds, which ffmpeg reads through its `apng` demuxer
//! (named, as every input): variable frame durations reach ffmpeg exactly, and no
//! more than a frame is ever held in memory. Measured against the alternatives: raw
//! frames through a pipe have no timestamps (a fine fixed rate repeats each frame
//! tens of times), and PNG files listed in an ffconcat file need the `concat` demuxer,
//! which probes each listed file by guess.

use std::path::Path;

use super::{Prediction, Shape};
use crate::media::gif::{self, GifScan};
use crate::media::transcode::{run_to_file, VideoInfo, VideoLimits, X264};
use crate::media::video::{video_size, BT709_TAGS};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

pub const NAME: &str = "gif-to-video";
/// What it does, in a sentence (the command catalog, `GET /v1/commands`).
pub const SUMMARY: &str =
    "An animated GIF, WebP or APNG as an H.264 MP4, with the animation's own timing.";
/// GIF, and animated WebP and APNG: a still WebP or PNG fails
/// `unsupported_input_format` saying so (see [`run`]).
pub const INPUTS: &[MediaFormat] = &[MediaFormat::Gif, MediaFormat::Webp, MediaFormat::Png];
pub const OUTPUT: MediaFormat = MediaFormat::Mp4;

/// One video as long as the animation, at the screen's size fitted to 4K.
pub fn predict(input: Shape) -> Prediction {
    let size = input.size.map(|(w, h)| video_size(w, h));
    Prediction::one(Some(OUTPUT), Shape { size, ..input })
}

/// One video frame per GIF frame, each for its own delay, the last one included
/// (delays under 20 ms count as 100 ms, as in browsers), so the video lasts the sum
/// of the delays. Frames without a colour table are drawn in opaque black, as
/// browsers draw them. Transparency is flattened onto white; the pixel limit applies
/// to the screen and every frame's extent.
///
/// A WebP or PNG must be animated: a still one fails `unsupported_input_format` (a
/// still has no length to give the video; `image-to-video` takes it, with a duration).
/// An APNG's default image that is not a frame of the animation is left out, as
/// animating viewers leave it out.
pub async fn run(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    match input.format {
        MediaFormat::Gif => run_gif(media, input, out_dir, progress).await,
        MediaFormat::Webp | MediaFormat::Png => {
            animated::run(media, input, out_dir, progress).await
        }
        other => Err(MediaError::unsupported(other, INPUTS)),
    }
}

async fn run_gif(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let bytes = tokio::fs::read(&input.path).await?;
    let scan = gif::scan(&bytes)?;
    check(&scan, &media.limits())?;
    let tail = gif_to_video_args(&scan);
    let expected = Some(scan.seconds());
    // Frames without a colour table get one in a repaired copy; ffmpeg reads that.
    let repaired = scan.needs_palette.then(|| MediaFile {
        path: out_dir.join(format!("palette-{}.gif", uuid::Uuid::new_v4().simple())),
        format: MediaFormat::Gif,
    });
    if let Some(copy) = &repaired {
        tokio::fs::write(&copy.path, gif::with_default_palettes(&bytes)).await?;
    }
    let source = repaired.as_ref().unwrap_or(input);
    let result = run_to_file(media, source, tail, OUTPUT, expected, out_dir, progress).await;
    if let Some(copy) = repaired {
        // Best effort: the step directory is removed with the job anyway.
        let _ = tokio::fs::remove_file(&copy.path).await;
    }
    result
}

/// The video limits, checked on what the headers say before anything is decoded.
fn check(scan: &GifScan, limits: &VideoLimits) -> Result<(), MediaError> {
    // The same limits, and messages, as every video source: the frame size is the
    // extent of the screen and every frame.
    let info = VideoInfo {
        width: scan.extent.0,
        height: scan.extent.1,
        duration: Some(scan.seconds()),
        frames: Some(scan.frames),
        ..VideoInfo::default()
    };
    info.check(limits)
}

/// ffmpeg arguments after the input.
fn gif_to_video_args(scan: &GifScan) -> Vec<String> {
    let (w, h) = video_size(scan.screen.0, scan.screen.1);
    // Each frame is laid over a white copy of itself (drawbox fills the whole frame),
    // so the timestamps stay the GIF's own; then converted like image-to-video.
    let graph = format!(
        "[0:v:0]split[bg][fg];[bg]drawbox=c=white:t=fill[white];\
         [white][fg]overlay=format=auto,\
         scale={w}:{h}:flags=lanczos:out_color_matrix=bt709:out_range=tv,format=yuv420p[v]"
    );
    // The last frame lasts until the end of the animation (see the module's docs).
    let last_duration = last_duration(scan.last_start_cs, scan.total_cs);
    let mut args = vec![
        "-filter_complex".to_string(),
        graph,
        "-map".into(),
        "[v]".into(),
    ];
    // Timestamps in the input's own time base (1/100 s for GIF): ffmpeg's default of
    // 1/frame-rate would round uneven delays onto a grid, merging or shifting frames.
    args.extend(timed_h264_args("-1", last_duration, "100"));
    args
}

/// The encoder half shared by GIF and the other animations: variable frame rate in
/// `time_base`, H.264 without B-frames, the last packet's duration set by `setts`
/// (see the module's docs), in an MP4 track of `timescale`.
fn timed_h264_args(time_base: &str, last_duration: String, timescale: &str) -> Vec<String> {
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
fn last_duration(start: u64, total: u64) -> String {
    format!(
        "setts=pts=PTS:dts=DTS:duration='if(gte(PTS\\,{start})\\,max({total}-PTS\\,1)\\,DURATION)'"
    )
}

mod animated;

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(frames: u64, last_start_cs: u64, total_cs: u64) -> GifScan {
        GifScan {
            screen: (98, 61),
            extent: (98, 61),
            frames,
            last_start_cs,
            total_cs,
            needs_palette: false,
        }
    }

    #[test]
    fn gif_to_video_flattens_onto_white_and_ends_the_last_frame_on_time() {
        let args = gif_to_video_args(&scan(5, 330, 410)).join(" ");
        assert!(args.contains("drawbox=c=white:t=fill"), "{args}");
        assert!(args.contains("scale=98:60"), "{args}");
        assert!(args.contains("-fps_mode vfr -enc_time_base -1"), "{args}");
        assert!(args.contains("-bf 0"), "{args}");
        assert!(
            args.contains("duration='if(gte(PTS\\,330)\\,max(410-PTS\\,1)\\,DURATION)'"),
            "{args}"
        );
        assert!(args.contains("-video_track_timescale 100"), "{args}");
        assert!(args.ends_with("+faststart -f mp4"), "{args}");
    }

    #[test]
    fn limits_are_checked_on_the_extent_the_length_and_the_frames() {
        let limits = VideoLimits {
            max_seconds: 10.0,
            max_pixels: 100 * 100,
            max_frames: 5,
        };
        assert!(check(&scan(5, 900, 1000), &limits).is_ok());
        let mut wide = scan(1, 0, 10);
        wide.extent = (65535, 66601);
        assert!(matches!(
            check(&wide, &limits),
            Err(MediaError::VideoTooLarge {
                width: 65535,
                height: 66601,
                ..
            })
        ));
        assert!(matches!(
            check(&scan(2, 900, 1001), &limits),
            Err(MediaError::VideoTooLong { .. })
        ));
        assert!(matches!(
            check(&scan(6, 0, 60), &limits),
            Err(MediaError::TooManyFrames { frames: 6, .. })
        ));
    }
}
