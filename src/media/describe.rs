//! What an output file is, for `attributes.outputs`: its size and, for videos and
//! GIFs, its length and frame count (for audio, its length and no size). Read from headers (in process for images, GIFs
//! and plain MP4s; ffprobe for the rest) when the file is stored, so reading an edit
//! never probes anything.

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;
use crate::media::image::codec::gif;
use crate::media::image::decode;
use crate::media::video::ffprobe;
use crate::media::video::info::Extent;

/// Bytes of an image read to find its size (our outputs carry no metadata before it).
const IMAGE_HEAD_BYTES: u64 = 1 << 16;

/// The metadata of one output file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Described {
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
    /// Seconds, for videos and GIFs.
    pub duration: Option<f64>,
    /// For videos and GIFs.
    pub frames: Option<u64>,
}

impl Media {
    /// Describes `file`, an output this service made. `InvalidMedia` when its headers
    /// cannot be read, which would be a fault of ours.
    pub async fn describe(&self, file: &MediaFile) -> Result<Described, MediaError> {
        if file.format.is_image() {
            let (head, bytes) = crate::media::work::read_image_head_and_len(file, IMAGE_HEAD_BYTES)
                .await
                .ok_or_else(unreadable)?;
            let header = decode::open(&head, file.format, u64::MAX)?.header();
            return Ok(Described {
                bytes,
                width: header.width,
                height: header.height,
                duration: None,
                frames: None,
            });
        }
        let bytes = tokio::fs::metadata(&file.path).await?.len();
        let (width, height, duration, frames) = match file.format {
            MediaFormat::Hls => described_stream(file).await?,
            // Text: no picture of its own.
            MediaFormat::Vtt | MediaFormat::Mpd => (0, 0, None, None),
            // Sound only: no picture, its length from ffprobe.
            format if format.is_audio() => {
                let info = crate::media::video::audio::inspect_audio(self, file).await?;
                (0, 0, info.duration, None)
            }
            MediaFormat::Gif => {
                let all = tokio::fs::read(&file.path).await?;
                let scan = gif::scan(&all)?;
                let (width, height) = scan.screen;
                (width, height, Some(scan.seconds()), Some(scan.frames))
            }
            // Videos: a plain MP4/MOV or WebM from its headers in this process; anything
            // else by ffprobe (through the probe cache for MP4/MOV).
            format => match read_extent(file, self.config().header_readers).await? {
                Some(e) => (e.width, e.height, e.duration, Some(e.frames)),
                None if format.is_iso_bmff_video() => {
                    let info = crate::media::video::inspect::read_info(self, file).await?;
                    (info.width, info.height, info.duration, info.frames)
                }
                None => described_by_ffprobe(self, file).await?,
            },
        };
        Ok(Described {
            bytes,
            width,
            height,
            duration: duration.map(|d| (d * 1000.0).round() / 1000.0),
            frames,
        })
    }
}

/// [`Extent`] of an MP4/MOV (`mp4`) or Matroska (`mkv`) file from its headers, if
/// they are plain; `None` for other formats, or with the header readers off.
async fn read_extent(file: &MediaFile, enabled: bool) -> Result<Option<Extent>, MediaError> {
    let read: fn(&std::path::Path) -> Option<Extent> = match file.format {
        _ if !enabled => return Ok(None),
        MediaFormat::Webm | MediaFormat::Mkv => crate::media::video::mkv::read_extent,
        format if format.is_iso_bmff_video() => crate::media::video::mp4::read_extent,
        _ => return Ok(None),
    };
    let path = file.path.clone();
    crate::media::blocking(move || Ok(read(&path))).await
}

fn unreadable() -> MediaError {
    MediaError::InvalidMedia("an output could not be read back".into())
}

/// An HLS stream as its master playlist tells it: the largest rendition's size, and
/// the length of its media playlist.
async fn described_stream(
    file: &MediaFile,
) -> Result<(u32, u32, Option<f64>, Option<u64>), MediaError> {
    let master = tokio::fs::read_to_string(&file.path).await?;
    let variants = crate::media::video::hls::variants(&master);
    let largest = variants
        .iter()
        .filter_map(|v| Some((v.resolution()?, v)))
        .max_by_key(|((w, h), _)| u64::from(*w) * u64::from(*h));
    let Some(((width, height), variant)) = largest else {
        return Err(unreadable());
    };
    let base = file.path.parent().ok_or_else(unreadable)?;
    let media = tokio::fs::read_to_string(base.join(&variant.uri)).await?;
    let seconds = crate::media::video::hls::MediaPlaylist::parse(&media).seconds();
    Ok((width, height, Some(seconds), None))
}

/// Width, height, seconds and frames as ffprobe reads them.
async fn described_by_ffprobe(
    media: &Media,
    file: &MediaFile,
) -> Result<(u32, u32, Option<f64>, Option<u64>), MediaError> {
    let probe = ffprobe::run(media, &file.path, file.format, true).await?;
    let video = probe.video().ok_or_else(unreadable)?;
    let duration = probe.format.duration.or(video.duration);
    let (width, height) = (video.width.unwrap_or(0), video.height.unwrap_or(0));
    Ok((width, height, duration, video.nb_read_packets))
}
