//! `gif-to-video`: an animated GIF, WebP or APNG as an H.264 MP4 with its exact timing.
//!
//! A GIF is read block by block first ([`crate::media::image::codec::gif`]): limits come from its
//! headers, and the length of the animation is known to the centisecond.
//!
//! ffmpeg 5 does not carry a frame's duration through libx264, so the last frame of a
//! variable-rate MP4 would last one tick. The `setts` bitstream filter sets the last
//! packet's duration to what is left of the animation; without B-frames packets come
//! in presentation order, so that packet is the last frame shown.
//!
//! Every animation — GIF, animated WebP and APNG — is decoded here, a frame at a time,
//! by the decoders `resize-image` uses (`media::animation`; for GIF the one GIF decoder
//! of every command, `media::gif::frames`, so a GIF comes out alike whichever command
//! takes it: ffmpeg's own GIF decoder starts a new canvas at a stray second header and
//! lays the first frame on the background colour where Pillow and the image commands
//! do not; and ffmpeg 5.1 cannot decode an animated WebP). The frames are flattened
//! onto white and written losslessly as an APNG of whole frames, each with its delay
//! in milliseconds, which ffmpeg reads through its `apng` demuxer (named, as every
//! input): variable frame durations reach ffmpeg exactly, and no more than a frame is
//! ever held in memory. A GIF's frames reach ffmpeg through a pipe while it encodes
//! (`streamed.rs`: its timing is known from its headers), an animated WebP's or APNG's
//! through a temporary file. Measured against the alternatives: raw frames through
//! a pipe have no timestamps (a fine fixed rate repeats each frame tens of times), and
//! PNG files listed in an ffconcat file need the `concat` demuxer, which probes each
//! listed file by guess.

use std::path::Path;

use crate::commands::options::Options;
use crate::commands::spec::{CommandDef, CommandSpec, Prediction, Shape};
use crate::media::image::codec::gif::{self, GifScan};
use crate::media::limits::VideoLimits;
use crate::media::video::h264::video_size;
use crate::media::video::info::VideoInfo;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

mod h264;
use h264::INPUTS;
use h264::OUTPUT;

pub struct GifToVideo;

impl CommandDef for GifToVideo {
    const SPEC: CommandSpec = CommandSpec {
        name: "gif-to-video",
        summary: "An animated GIF, WebP or APNG as an H.264 MP4, with the animation's own timing.",
        inputs: INPUTS,
        options: &[],
        output: Some(OUTPUT),
        in_process: false,
    };

    fn predict(input: Shape, _options: &Options) -> Prediction {
        predict(input)
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        _options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        Ok(vec![run(media, input, out_dir, progress).await?])
    }
}

/// One video as long as the animation, at the screen's size fitted to 4K.
fn predict(input: Shape) -> Prediction {
    let size = input.size.map(|(w, h)| video_size(w, h));
    Prediction::one(Some(OUTPUT), Shape { size, ..input })
}

/// One video frame per GIF frame, each for its own delay, the last one included
/// (delays under 20 ms count as 100 ms, as in browsers), so the video lasts the sum
/// of the delays. Frames without a colour table are drawn with a grey ramp, as Pillow
/// draws them. Transparency is flattened onto white; the pixel limit applies to the
/// screen and every frame's extent.
///
/// A WebP or PNG must be animated: a still one fails `unsupported_input_format` (a
/// still has no length to give the video; `image-to-video` takes it, with a duration).
/// An APNG's default image that is not a frame of the animation is left out, as
/// animating viewers leave it out.
async fn run(
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

/// A GIF's limits checked from its blocks, then its frames handed to ffmpeg as they
/// are decoded.
async fn run_gif(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let bytes = tokio::fs::read(&input.path).await?;
    let scan = gif::scan(&bytes)?;
    check(&scan, &media.limits())?;
    drop(bytes);
    streamed::run(media, input, &scan, out_dir, progress).await
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

mod animated;
mod streamed;

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
        }
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
