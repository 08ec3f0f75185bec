//! What is known of a video source before it is processed: [`VideoInfo`] (and a
//! stored output's [`Extent`]), and its check against the [`VideoLimits`]. Read by
//! `video::inspect`.

use crate::media::error::MediaError;
use crate::media::image::yuv::Matrix;
use crate::media::limits::VideoLimits;
use crate::media::video::hdr_source::Hdr;
use crate::media::video::probe::{self, Probe};

/// What a video's headers say of its size, length and frame count, read in this
/// process (`mp4::read_extent`, `mkv::read_extent`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Extent {
    pub width: u32,
    pub height: u32,
    pub duration: Option<f64>,
    pub frames: u64,
}

/// What the probe says about a video source, as the recipes need it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct VideoInfo {
    /// Coded size (before rotation).
    pub width: u32,
    pub height: u32,
    /// Seconds, when known.
    pub duration: Option<f64>,
    /// Frames of the video stream, from the container or counted.
    pub frames: Option<u64>,
    /// Average frame rate, when known.
    pub frame_rate: Option<f64>,
    /// The base rate every frame time is a multiple of (`r_frame_rate`), when known.
    pub base_rate: Option<f64>,
    pub has_audio: bool,
    /// The video codec (`h264`, …) and pixel format (`yuv420p`, …), when known.
    pub codec: Option<String>,
    pub pix_fmt: Option<String>,
    /// Square pixels (or none stated), and no display rotation: frames show as stored.
    pub shown_as_stored: bool,
    /// The size frames are shown at, which is the size ffmpeg hands them on at: pixels
    /// made square as [`crate::media::ffmpeg::transcode::SQUARE_PIXELS`] does, a quarter turn applied.
    pub shown: (u32, u32),
    /// The matrix of the YCbCr values the filters hand on: the source's, or BT.709
    /// for an HDR source (tone-mapped to BT.709 first, `video::hdr`).
    pub matrix: Matrix,
    /// HLG or PQ: the source is HDR, and its 8-bit outputs are tone-mapped.
    pub hdr: Option<Hdr>,
}

impl VideoInfo {
    /// Reads the fields of the first video stream; `InvalidMedia` without one.
    pub fn from_probe(probe: &Probe) -> Result<VideoInfo, MediaError> {
        let video = probe
            .video()
            .ok_or_else(|| MediaError::InvalidMedia("it has no video stream".into()))?;
        let size = (
            video.width.filter(|w| *w > 0),
            video.height.filter(|h| *h > 0),
        );
        let (Some(width), Some(height)) = size else {
            return Err(MediaError::InvalidMedia(
                "its video stream has no frame size".into(),
            ));
        };
        let positive = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);
        let frames = video.nb_frames.filter(|n| *n > 0).or(video.nb_read_packets);
        let frame_rate = positive(video.avg_frame_rate.as_deref().and_then(probe::parse_rate));
        // The honest length is the longest any part of the file admits to: a container
        // that declares a short duration over long streams must not slip past the
        // length limit, nor shrink the GIF palette's memory estimate.
        let from_frames = frames.zip(frame_rate).map(|(n, rate)| n as f64 / rate);
        let duration = std::iter::once(probe.format.duration)
            .chain(probe.streams.iter().map(|s| s.duration))
            .chain(std::iter::once(from_frames))
            .filter_map(positive)
            .reduce(f64::max);
        let hdr = Hdr::from_probe(video);
        Ok(VideoInfo {
            width,
            height,
            duration,
            frames,
            frame_rate,
            base_rate: positive(video.frame_rate()),
            has_audio: probe.audio().is_some(),
            codec: video.codec_name.clone(),
            pix_fmt: video.pix_fmt.clone(),
            shown_as_stored: video.has_square_pixels() && !video.is_rotated(),
            shown: video.shown_size(width, height),
            matrix: match hdr {
                Some(_) => Matrix::Bt709,
                None => Matrix::from_probe(video.color_space.as_deref()),
            },
            hdr,
        })
    }

    /// Checks the source against `limits`, each violation with its own error.
    pub fn check(&self, limits: &VideoLimits) -> Result<(), MediaError> {
        let pixels = u64::from(self.width) * u64::from(self.height);
        if pixels > limits.max_pixels {
            return Err(MediaError::VideoTooLarge {
                width: self.width,
                height: self.height,
                limit: limits.max_pixels,
            });
        }
        if let Some(seconds) = self.duration.filter(|s| *s > limits.max_seconds) {
            return Err(MediaError::VideoTooLong {
                seconds,
                limit: limits.max_seconds,
            });
        }
        if let Some(frames) = self.frames.filter(|n| *n > limits.max_frames) {
            return Err(MediaError::TooManyFrames {
                frames,
                limit: limits.max_frames,
                what: "frames a video may have",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests;
