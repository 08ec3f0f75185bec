//! What an output file is, for `attributes.outputs`: its size and, for videos and
//! GIFs, its length and frame count (for audio, its length and no size). Read from headers (in process for images, GIFs
//! and plain MP4s; ffprobe for the rest) when the file is stored, so reading an edit
//! never probes anything.

use super::{decode, gif, probe, transcode, Media, MediaError, MediaFile, MediaFormat};

/// Bytes of an image read to find its size (our outputs carry no metadata before it).
const IMAGE_HEAD_BYTES: u64 = 1 << 16;

/// What a video's headers say of its size, length and frame count, read in this
/// process (`mp4::read_extent`, `mkv::read_extent`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Extent {
    pub width: u32,
    pub height: u32,
    pub duration: Option<f64>,
    pub frames: u64,
}

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
            let (head, bytes) = super::work::read_image_head_and_len(file, IMAGE_HEAD_BYTES)
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
            // Sound only: no picture, its length from ffprobe.
            format if format.is_audio() => {
                let info = super::audio::inspect_audio(self, file).await?;
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
            format => match read_extent(file).await? {
                Some(e) => (e.width, e.height, e.duration, Some(e.frames)),
                None if format.is_iso_bmff_video() => {
                    let info = transcode::read_info(self, file).await?;
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
/// they are plain; `None` for other formats.
async fn read_extent(file: &MediaFile) -> Result<Option<Extent>, MediaError> {
    let read: fn(&std::path::Path) -> Option<Extent> = match file.format {
        MediaFormat::Webm | MediaFormat::Mkv => super::mkv::read_extent,
        format if format.is_iso_bmff_video() => super::mp4::read_extent,
        _ => return Ok(None),
    };
    let path = file.path.clone();
    super::blocking(move || Ok(read(&path))).await
}

fn unreadable() -> MediaError {
    MediaError::InvalidMedia("an output could not be read back".into())
}

/// Width, height, seconds and frames as ffprobe reads them.
async fn described_by_ffprobe(
    media: &Media,
    file: &MediaFile,
) -> Result<(u32, u32, Option<f64>, Option<u64>), MediaError> {
    let probe = probe::run(media, &file.path, file.format, true).await?;
    let video = probe.video().ok_or_else(unreadable)?;
    let duration = probe.format.duration.or(video.duration);
    let (width, height) = (video.width.unwrap_or(0), video.height.unwrap_or(0));
    Ok((width, height, duration, video.nb_read_packets))
}
