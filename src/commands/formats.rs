//! The formats the commands read, and the one an image command writes.

use crate::media::MediaFormat;

/// The still images the image commands read.
pub(super) const IMAGES: &[MediaFormat] = crate::media::IMAGE_INPUTS;

/// The containers the video commands read.
pub(super) const VIDEOS: &[MediaFormat] = crate::media::VIDEO_CONTAINERS;

/// The format an image command writes for an `input` image: `asked` (its `format`
/// option), else the input's own where it can be written, else JPEG (PNG once the
/// decoded picture turns out to have transparency, `media::image::pipeline`).
pub(super) fn image_output(
    input: MediaFormat,
    asked: Option<crate::media::ImageFormat>,
) -> MediaFormat {
    let kept = crate::media::ImageFormat::from_media_format(input);
    asked
        .or(kept)
        .unwrap_or(crate::media::ImageFormat::Jpeg)
        .media_format()
}
