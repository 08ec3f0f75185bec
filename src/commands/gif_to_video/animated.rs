//! `gif-to-video` for GIF, animated WebP and APNG: frames decoded here (by the decoders
//! the image commands use), handed to ffmpeg as a lossless APNG of whole frames with
//! millisecond delays (see the parent's docs).

use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;

use image::DynamicImage;

use crate::commands::gif_to_video::h264::{last_duration, timed_h264_args, INPUTS, OUTPUT};
use crate::media::animation::{self, is_animated, Animation};
use crate::media::ffmpeg::transcode::run_demuxed_to_file;
use crate::media::image::codec::apng::ApngWriter;
use crate::media::image::ops::flatten_onto_white;
use crate::media::image::peak;
use crate::media::limits::VideoLimits;
use crate::media::memory::MemoryBudget;
use crate::media::video::h264::video_size;
use crate::media::{blocking, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

/// A delay this short or shorter shows for [`SHORT_DELAY_SHOWN_MS`], as Chromium and
/// Firefox show animated WebP and APNG: 0 ms frames would not be video frames at all.
const SHORT_DELAY_MS: u64 = 10;
const SHORT_DELAY_SHOWN_MS: u64 = 100;

/// When each frame starts, in milliseconds, as the video will show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Timing {
    pub screen: (u32, u32),
    pub frames: u64,
    pub last_start_ms: u64,
    pub total_ms: u64,
}

/// The delay a frame of `delay_ms` is shown for in the video: whole milliseconds, short
/// ones lengthened (see [`SHORT_DELAY_MS`]).
pub(super) fn shown_ms(delay_ms: f64) -> u64 {
    let ms = delay_ms.round().max(0.0) as u64;
    if ms <= SHORT_DELAY_MS {
        SHORT_DELAY_SHOWN_MS
    } else {
        ms
    }
}

pub(super) async fn run(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let (path, format, dir, limits) = (
        input.path.clone(),
        input.format,
        out_dir.to_owned(),
        media.limits(),
    );
    let memory = media.memory().clone();
    let (frames, timing) = blocking(move || {
        let bytes = std::fs::read(&path)?;
        // A GIF of one frame is a video of one frame, lasting its delay.
        if format != MediaFormat::Gif && !is_animated(&bytes, format) {
            return Err(MediaError::UnsupportedInputFormat {
                found: Some(format!("a still {} (not animated)", format.name())),
                takes: INPUTS.to_vec(),
            });
        }
        // Removed when dropped, whatever ffmpeg does with it.
        let mut frames = tempfile::Builder::new()
            .prefix(".frames-")
            .suffix(".png")
            .tempfile_in(&dir)?;
        let timing = write_frames(&bytes, format, (&limits, &memory), frames.as_file_mut())?;
        Ok((frames, timing))
    })
    .await?;
    let tail = ffmpeg_args(&timing);
    let expected = Some(timing.total_ms as f64 / 1000.0);
    let source = (frames.path(), "apng");
    let result =
        run_demuxed_to_file(media, source, tail, OUTPUT, (expected, out_dir), progress).await;
    drop(frames);
    result
}

/// Writes the frames of `bytes` into `out` as an opaque APNG, each for the delay the
/// video shows it; the timing written.
fn write_frames(
    bytes: &[u8],
    format: MediaFormat,
    (limits, memory): (&VideoLimits, &Arc<MemoryBudget>),
    out: &mut std::fs::File,
) -> Result<Timing, MediaError> {
    let animation = animation::open(bytes, format, limits)?;
    let (screen, frames) = (animation.size, declared_frames(&animation));
    // A frame at a time, each written out as it comes: the encoder holds one.
    let peak = peak::animation(bytes.len() as u64, screen, Some(1), &[]);
    let what = format!("Reading a {}x{} animation", screen.0, screen.1);
    let _lease = memory.reserve(peak, &what)?;
    let writer = ApngWriter::new(
        BufWriter::new(out),
        screen,
        png::ColorType::Rgb,
        frames,
        0,
        false,
    )
    .map_err(|e| handover_failed(format, e))?;
    write_animation(animation, format, writer)
}

/// The frame count `animation` declares, as `acTL` states it.
pub(super) fn declared_frames(animation: &Animation) -> u32 {
    u32::try_from(animation.declared.unwrap_or(0)).unwrap_or(u32::MAX)
}

pub(super) fn handover_failed(format: MediaFormat, e: png::EncodingError) -> MediaError {
    MediaError::InvalidMedia(format!(
        "the {} frames could not be handed on ({e})",
        format.name()
    ))
}

/// Writes every frame of `animation` (of `format`), flattened onto white, into
/// `writer`, each for the delay the video shows it; the timing written.
pub(super) fn write_animation<W: std::io::Write>(
    animation: Animation,
    format: MediaFormat,
    mut writer: ApngWriter<W>,
) -> Result<Timing, MediaError> {
    let screen = animation.size;
    let declared = animation.declared.unwrap_or(0);
    let failed = |e| handover_failed(format, e);
    let (mut count, mut elapsed) = (0u64, 0u64);
    let mut last_start_ms = 0;
    for frame in animation {
        let (rgba, delay_ms) = frame?;
        let shown = shown_ms(delay_ms);
        let rgb = flatten_onto_white(DynamicImage::ImageRgba8(rgba));
        writer.add(rgb.as_raw(), shown as f64).map_err(failed)?;
        (last_start_ms, elapsed, count) = (elapsed, elapsed + shown, count + 1);
    }
    if count != declared {
        return Err(MediaError::InvalidMedia(format!(
            "the {} has {count} frames where it declares {declared}",
            format.name()
        )));
    }
    writer.finish().map_err(failed)?;
    Ok(Timing {
        screen,
        frames: count,
        last_start_ms,
        total_ms: elapsed,
    })
}

/// ffmpeg arguments after the input: timestamps in milliseconds, the delays written.
pub(super) fn ffmpeg_args(timing: &Timing) -> Vec<String> {
    let (w, h) = video_size(timing.screen.0, timing.screen.1);
    let graph = format!(
        "[0:v:0]scale={w}:{h}:flags=lanczos:out_color_matrix=bt709:out_range=tv,format=yuv420p[v]"
    );
    let mut args = vec![
        "-filter_complex".to_string(),
        graph,
        "-map".into(),
        "[v]".into(),
    ];
    let last = last_duration(timing.last_start_ms, timing.total_ms);
    args.extend(timed_h264_args("1:1000", last, "1000"));
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_delays_show_for_a_tenth_of_a_second_and_others_to_the_millisecond() {
        assert_eq!(shown_ms(0.0), 100);
        assert_eq!(shown_ms(10.0), 100);
        assert_eq!(shown_ms(11.0), 11);
        assert_eq!(shown_ms(1000.0 / 3.0), 333);
    }

    #[test]
    fn timestamps_are_milliseconds_and_the_last_frame_ends_on_time() {
        let timing = Timing {
            screen: (99, 50),
            frames: 3,
            last_start_ms: 300,
            total_ms: 1300,
        };
        let args = ffmpeg_args(&timing).join(" ");
        assert!(args.contains("scale=98:50"), "{args}");
        assert!(args.contains("-enc_time_base 1:1000"), "{args}");
        assert!(args.contains("max(1300-PTS\\,1)"), "{args}");
        assert!(args.contains("-video_track_timescale 1000"), "{args}");
    }
}
