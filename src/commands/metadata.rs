//! `metadata: keep | copyright` on the image commands that declare it: once the
//! command has written its outputs, what the policy lets through of the source's EXIF
//! and XMP is put into each image output (`media::image::metadata`). `strip`, the
//! default, leaves the outputs as the encoders wrote them: pixels only.

use super::options::{OptionKind, OptionSpec, Options};
use crate::media::image::metadata::{carried, insert, Policy};
use crate::media::{MediaError, MediaFile};

/// What of the source's metadata an image output keeps (`media::image::metadata`).
pub const METADATA: OptionSpec = OptionSpec {
    name: "metadata",
    doc: "What of the source's metadata an image output keeps: strip (the default: no EXIF, XMP or comments; the ICC profile applied to the pixels), keep (EXIF with its Orientation set to 1, and XMP), copyright (a fresh EXIF of the source's Artist and Copyright only). Written into JPEG, PNG, WebP, JPEG XL and AVIF outputs; GIF carries none.",
    kind: OptionKind::Choice {
        values: &["strip", "keep", "copyright"],
        default: Some("strip"),
    },
};

/// `outputs`, made from `input`, with the metadata `options` keeps written into them.
pub(super) async fn carry(
    declared: bool,
    input: &MediaFile,
    options: &Options,
    outputs: Vec<MediaFile>,
) -> Result<Vec<MediaFile>, MediaError> {
    let policy = options
        .text(&METADATA)
        .map_or(Policy::Strip, |name| Policy::from_name(&name));
    if !declared || policy == Policy::Strip {
        return Ok(outputs);
    }
    let (source, format) = (input.path.clone(), input.format);
    let targets: Vec<_> = outputs
        .iter()
        .map(|file| (file.path.clone(), file.format))
        .collect();
    tokio::task::spawn_blocking(move || -> Result<(), MediaError> {
        let kept = carried(&std::fs::read(&source)?, format, policy);
        if kept.is_empty() {
            return Ok(());
        }
        for (path, format) in targets {
            let encoded = std::fs::read(&path)?;
            let written = insert(encoded, format, &kept);
            std::fs::write(&path, written)?;
        }
        Ok(())
    })
    .await
    .map_err(|e| MediaError::Io(std::io::Error::other(e.to_string())))??;
    Ok(outputs)
}
