//! How much decoding a file is, from its headers alone: the engine's cost estimate
//! (which CPU slots a step waits for, and the per-edit work budget) reads this before
//! the step runs.

use std::io::Read;

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::file::MediaFile;
use crate::media::image::codec::gif;
use crate::media::image::decode;

/// Bytes of an image read to find its size: enough for the size chunk of a PNG or
/// WebP, and for the frame header of a JPEG behind its metadata segments.
const IMAGE_HEAD_BYTES: u64 = 1 << 20;

/// Decoded pixels per frame and frames of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    pub pixels: u64,
    pub frames: u64,
}

impl Work {
    /// Pixels × frames.
    pub fn total(self) -> u64 {
        self.pixels.saturating_mul(self.frames.max(1))
    }
}

impl Media {
    /// The work in `file` as its headers tell it, or `None` when they cannot be read:
    /// the step that reads the file then reports what is wrong with it, with the
    /// error it would report anyway.
    pub async fn measure_work(&self, file: &MediaFile) -> Option<Work> {
        match file.format {
            format if format.is_image() => {
                let head = read_image_head(file, IMAGE_HEAD_BYTES).await?;
                let limit = self.config().max_image_pixels;
                let header = decode::open(&head, format, limit).ok()?.header();
                let pixels = u64::from(header.width) * u64::from(header.height);
                Some(Work { pixels, frames: 1 })
            }
            MediaFormat::Gif => {
                let bytes = tokio::fs::read(&file.path).await.ok()?;
                let scan = gif::scan(&bytes).ok()?;
                let (width, height) = scan.extent;
                Some(Work {
                    pixels: u64::from(width) * u64::from(height),
                    frames: scan.frames,
                })
            }
            format if format.is_video() => {
                let info = crate::media::video::inspect::inspect(self, file, &[file.format])
                    .await
                    .ok()?;
                let frames = info.frames.or_else(|| {
                    let seconds = info.duration?;
                    Some((seconds * info.frame_rate.unwrap_or(30.0)).ceil() as u64)
                })?;
                Some(Work {
                    pixels: u64::from(info.width) * u64::from(info.height),
                    frames,
                })
            }
            _ => None,
        }
    }
}

/// The start of an image, enough for its header: `max` bytes, or all of a TIFF, HEIF or
/// AVIF, whose directory or item locations may point anywhere, or an SVG, whose size
/// is known once the whole document is parsed.
pub(super) async fn read_image_head(file: &MediaFile, max: u64) -> Option<Vec<u8>> {
    read_image_head_and_len(file, max)
        .await
        .map(|(head, _)| head)
}

/// [`read_image_head`] and the file's length, in one blocking call: describing 125
/// frames with one `tokio::fs` call per open, read and stat took 11 ms of thread
/// hand-offs at the end of an edit.
pub(super) async fn read_image_head_and_len(file: &MediaFile, max: u64) -> Option<(Vec<u8>, u64)> {
    let whole = matches!(
        file.format,
        MediaFormat::Tiff
            | MediaFormat::Heif
            | MediaFormat::Avif
            | MediaFormat::Jxl
            | MediaFormat::Svg
    );
    let path = file.path.clone();
    let read = tokio::task::spawn_blocking(move || {
        let handle = std::fs::File::open(&path)?;
        let len = handle.metadata()?.len();
        let mut head = Vec::new();
        handle
            .take(if whole { u64::MAX } else { max })
            .read_to_end(&mut head)?;
        Ok::<_, std::io::Error>((head, len))
    });
    read.await.ok()?.ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::testutil;

    #[tokio::test]
    async fn an_image_is_its_pixels_once_and_a_clip_its_frame_times_its_frames() {
        let dir = tempfile::tempdir().unwrap();
        let media = testutil::media();
        let png = testutil::encode(testutil::two_tone(40, 30).into(), image::ImageFormat::Png);
        let png = testutil::write_file(dir.path(), "a.png", &png, MediaFormat::Png);
        let work = media.measure_work(&png).await.unwrap();
        assert_eq!(
            work,
            Work {
                pixels: 1200,
                frames: 1
            }
        );
        assert_eq!(work.total(), 1200);

        let clips = [
            ("a.gif", MediaFormat::Gif, &[][..]),
            ("a.mp4", MediaFormat::Mp4, &["-pix_fmt", "yuv420p"][..]),
        ];
        for (name, format, args) in clips {
            let path = testutil::ffmpeg_clip(dir.path(), name, args);
            let clip = MediaFile { path, format };
            let work = media.measure_work(&clip).await.unwrap();
            assert_eq!(
                work,
                Work {
                    pixels: 32 * 32,
                    frames: 2
                },
                "{name}"
            );
        }
    }

    #[tokio::test]
    async fn a_file_whose_header_cannot_be_read_has_no_estimate() {
        let dir = tempfile::tempdir().unwrap();
        let junk = b"\x89PNG\r\n\x1a\nnot really";
        let junk = testutil::write_file(dir.path(), "junk.png", junk, MediaFormat::Png);
        assert_eq!(testutil::media().measure_work(&junk).await, None);
    }
}
