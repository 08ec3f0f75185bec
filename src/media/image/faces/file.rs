//! `faces: true`: the faces of an image output, read back from the file the store
//! stage is about to upload, so the boxes are in the output's own pixels whatever the
//! commands before did to the picture.

use crate::media::blocking;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;
use crate::media::image::faces::detector::{detect, working_memory};
use crate::media::image::faces::face::Face;
use crate::media::image::pipeline::load_upright;

impl Media {
    /// The faces of `file`, an image (an animation's first frame), in its pixels,
    /// rounded as `attributes.outputs[].faces` shows them, most confident first. The
    /// decoded picture and the detector are charged to the memory budget.
    pub async fn faces_of(&self, file: &MediaFile) -> Result<Vec<Face>, MediaError> {
        let (path, format) = (file.path.clone(), file.format);
        let limit = self.config().max_image_pixels;
        let memory = self.memory().clone();
        blocking(move || {
            let bytes = std::fs::read(&path)?;
            let whole = |w, h| Ok((w, h));
            let (image, _picture) = load_upright(&bytes, format, limit, whole, &memory)?;
            drop(bytes);
            let (w, h) = (image.width(), image.height());
            let what = format!("Finding faces in a {w}x{h} picture");
            let _detector = memory.reserve(working_memory((w, h)), &what)?;
            Ok(detect(&image)?.into_iter().map(Face::rounded).collect())
        })
        .await
    }
}
