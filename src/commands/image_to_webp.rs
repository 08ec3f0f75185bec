//! `image-to-webp`: a still image re-encoded as lossy WebP (quality 80), upright,
//! alpha kept. The same in-process path as `resize-image`, at scale 1.

use std::path::Path;

use super::IMAGES;
use crate::media::{Media, MediaError, MediaFile, MediaFormat};

pub const NAME: &str = "image-to-webp";
/// What it does, in a sentence (the command catalog, `GET /v1/commands`).
pub const SUMMARY: &str = "An image as a lossy WebP (quality 80), transparency and animation kept.";
pub const INPUTS: &[MediaFormat] = IMAGES;
pub const OUTPUT: MediaFormat = MediaFormat::Webp;

pub async fn run(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
) -> Result<MediaFile, MediaError> {
    media.image_to_webp(input, out_dir).await
}
