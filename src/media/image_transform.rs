//! The image commands' entry points on [`Media`]: the operations of `media::image`
//! applied on the blocking pool, to a still or every frame of an animation.

use std::path::Path;

use super::{blocking, image, image_ops, ImageFormat, Media, MediaError, MediaFile};

impl Media {
    /// The image commands: applies `ops` in turn to the upright picture (EXIF
    /// orientation applied) or, for an animated GIF, WebP or APNG written in a format
    /// that animates, to every frame; writes `format` (or the input's own format,
    /// JPEG or PNG for inputs it cannot write).
    ///
    /// Checked before decoding: `ImageTooLarge` for an input past the pixel limit,
    /// `OutputTooSmall` / `OutputTooLarge` (a step past the pixel limit, a side past
    /// WebP's 16383) and an operation's own refusal (`CropOutsideImage`). Then
    /// `InvalidMedia` for a corrupt input, `UnsupportedInputFormat` for anything but
    /// an image. Transparency is kept in PNG, WebP, AVIF and GIF outputs and flattened
    /// onto white in JPEG outputs.
    pub async fn transform_image(
        &self,
        input: &MediaFile,
        ops: Vec<Box<dyn image::FrameOp>>,
        format: Option<ImageFormat>,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        self.transform_image_at(input, ops, (format, None), out_dir)
            .await
    }

    /// [`Media::transform_image`] with a still's lossy encoder at `quality` (1–100;
    /// `None`: the format's default). Errors as there.
    pub async fn transform_image_at(
        &self,
        input: &MediaFile,
        ops: Vec<Box<dyn image::FrameOp>>,
        (format, quality): (Option<ImageFormat>, Option<u8>),
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let input_format = image_ops::image_input(input)?;
        let (limit, limits) = (self.config().max_image_pixels, self.limits());
        let (path, out_dir) = (input.path.clone(), out_dir.to_owned());
        blocking(move || {
            image::pipeline::transform_image(
                &path,
                (input_format, format, quality),
                &ops,
                (limit, limits),
                &out_dir,
            )
        })
        .await
    }

    /// `resize-image` with `scale`: the output is `round(w*scale)` x `round(h*scale)`
    /// of the upright image. `InvalidParameter` for a scale that is not a positive
    /// number; otherwise errors as for [`Media::transform_image`].
    pub async fn resize_image(
        &self,
        input: &MediaFile,
        scale: f64,
        format: Option<ImageFormat>,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        image_ops::image_input(input)?;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(MediaError::InvalidParameter {
                name: "scale",
                expected: "a positive number",
            });
        }
        let ops: Vec<Box<dyn image::FrameOp>> = vec![Box::new(image::Scale(scale))];
        self.transform_image(input, ops, format, out_dir).await
    }

    /// `image-to-webp`: re-encodes an image as lossy WebP (quality 80), upright, alpha
    /// kept. Errors as for [`Media::transform_image`].
    pub async fn image_to_webp(
        &self,
        input: &MediaFile,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let ops: Vec<Box<dyn image::FrameOp>> = vec![Box::new(image::Scale(1.0))];
        let webp = Some(ImageFormat::Webp);
        self.transform_image(input, ops, webp, out_dir).await
    }
}
