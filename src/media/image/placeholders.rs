//! What a page shows while an image output loads (docs/API.md, "Placeholders"): a
//! BlurHash of 4×3 components, a ThumbHash (base64) and the dominant colour. All three
//! come from one copy of the output at most 32 pixels on a side: a ThumbHash decodes
//! to 32 pixels at most and a 4×3 BlurHash holds less, so a larger copy would add
//! nothing to them but time (at 100 pixels, ThumbHash's own limit, the two hashes took
//! 4.5 ms an output, a third of a whole 2 MP JPEG resize; at 32, about a tenth of it).
//! An output encoded here from pixels in memory gets them from those pixels
//! ([`kept`]); any other is read back, a JPEG decoded straight at 1/8 of its size.

use crate::media::blocking;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;
use crate::media::image::decode;
use crate::media::image::peak;

mod hashes;
pub use hashes::has_placeholders;
pub use hashes::placeholders_of;
pub use hashes::Placeholders;
use hashes::SMALL_SIDE;

pub(crate) mod kept;

impl Media {
    /// The placeholders of `file`, an output this service made; `None` for a format
    /// without them (videos). `InvalidMedia` when it cannot be decoded, which would be
    /// a fault of ours.
    pub async fn placeholders(&self, file: &MediaFile) -> Result<Option<Placeholders>, MediaError> {
        if !has_placeholders(file.format) {
            return Ok(None);
        }
        let (path, format) = (file.path.clone(), file.format);
        let memory = self.memory().clone();
        blocking(move || {
            let bytes = std::fs::read(&path)?;
            // Our own output, already held to the output limits when it was made.
            let opened = decode::open(&bytes, format, u64::MAX)?;
            let decoded = opened.decoded_size(SMALL_SIDE, SMALL_SIDE);
            let peak = peak::decoding((bytes.len() as u64, format), decoded);
            let _lease = memory.reserve(peak, "Computing an output's placeholders")?;
            let orientation = opened.header().orientation;
            let mut image = opened.decode(SMALL_SIDE, SMALL_SIDE)?;
            image.apply_orientation(orientation);
            placeholders_of(&image).map(Some)
        })
        .await
    }
}

#[cfg(test)]
mod tests;
