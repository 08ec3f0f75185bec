//! `blur-faces`: every face of an image, of every frame of an animation or of a video,
//! blurred or pixelated (`style`), each face's box grown by `padding`. Images keep
//! their format (or take `format`), videos become MP4. The detector is
//! `media::image::faces`; videos are `media::video::faces`.
//!
//! Also the home of `faces`, the flag every image command takes to report the faces
//! of its output (`attributes.outputs[].faces`, found by the store stage).

use std::path::Path;

use image::DynamicImage;

use super::options::FACES;
use super::options::{OptionKind, OptionSpec, Options, FORMAT};
use super::watermark::{output_of, predict_same_size};
use crate::commands::spec::CommandDef;
use crate::commands::spec::{CommandSpec, Prediction, Shape};
use crate::media::image::faces::hide::{hide, Style};
use crate::media::image::faces::{self, DETECT_SIDE};
use crate::media::image::FrameOp;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

const INPUTS: &[MediaFormat] = crate::media::IMAGES_AND_VIDEOS;

pub const STYLE: OptionSpec = OptionSpec {
    name: "style",
    doc: "blur-faces: how a face is hidden: blur (default) or pixelate.",
    kind: OptionKind::Choice {
        values: Style::NAMES,
        default: Some("blur"),
    },
};

pub const PADDING: OptionSpec = OptionSpec {
    name: "padding",
    doc: "blur-faces: room hidden around each face, as a fraction of its box's side on each side (0–1; default 0.2).",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: true,
        max: 1.0,
        integer: false,
        default: Some(0.2),
    },
};

pub struct BlurFaces;

impl CommandDef for BlurFaces {
    const SPEC: CommandSpec = CommandSpec {
        name: "blur-faces",
        summary: "Every face of an image, animation or video blurred or pixelated (`style`, `padding`); images keep their format (or `format`), videos become MP4.",
        inputs: INPUTS,
        options: &[&STYLE, &PADDING, &FORMAT, &FACES],
        output: None,
        in_process: false,
    };

    fn output(input: MediaFormat, options: &Options) -> MediaFormat {
        output_of(input, options)
    }

    fn predict(input: Shape, options: &Options) -> Prediction {
        predict_same_size(input, options)
    }

    /// Decoding and encoding, plus a detection per frame (per sample for a video) on
    /// at most `DETECT_SIDE`² pixels.
    fn cost(work: Work, _options: &Options) -> u64 {
        let side = u64::from(DETECT_SIDE);
        work.total()
            .saturating_add(work.frames.max(1).saturating_mul(side * side / 4))
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let style = options
            .text(&STYLE)
            .and_then(|name| Style::from_name(&name))
            .unwrap_or(Style::Blur);
        let padding = options.number(&PADDING);
        let out = if input.format.is_video() {
            let hiding = (style, padding);
            media
                .blur_faces_video(input, hiding, out_dir, progress)
                .await?
        } else {
            let op: Box<dyn FrameOp> = Box::new(HideFaces { style, padding });
            let format = options.image_format(&FORMAT);
            media
                .transform_image(input, vec![op], format, out_dir)
                .await?
        };
        Ok(vec![out])
    }
}

/// The faces of each picture found and hidden (every frame of an animation: a face
/// moves).
#[derive(Debug, Clone, Copy)]
struct HideFaces {
    style: Style,
    padding: f64,
}

impl FrameOp for HideFaces {
    fn output_size(&self, size: (u32, u32)) -> Result<(u32, u32), MediaError> {
        Ok(size)
    }

    fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        let found = faces::detect(&image)?;
        Ok(hide(image, &found, self.style, self.padding))
    }

    /// The detector's, and a face's blur buffer (at most the picture, 16 bytes a pixel).
    fn working_memory(&self, (w, h): (u32, u32)) -> u64 {
        faces::working_memory((w, h)) + 16 * u64::from(w) * u64::from(h)
    }
}
