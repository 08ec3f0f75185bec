//! `crop-image`: the `width` × `height` box at (`x`, `y`) of the upright input, in its
//! pixels, or placed by `gravity` (`face`: around the faces); a still or every frame
//! of an animation, in the input's own format. A box not inside the picture is refused
//! from its size (`crop_outside_image`): at creation by the dry run, before decoding
//! when the edit runs.

use std::path::Path;

use super::options::FACES;
use super::options::{OptionSpec, Options};
use super::options::{FOCUS_X, FOCUS_Y, HEIGHT, WIDTH};
use super::resize_image::GRAVITY;
use crate::commands::formats::IMAGES;
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::error_code::Code;
use crate::media::image::{Crop, FrameOp, Gravity, GravityCrop};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

pub const X: OptionSpec = OptionSpec::integer(
    "x",
    "crop-image: the box's left edge, in pixels of the upright input (default 0).",
    0.0,
    1_000_000.0,
    Some(0.0),
);

pub const Y: OptionSpec = OptionSpec::integer(
    "y",
    "crop-image: the box's top edge, in pixels of the upright input (default 0).",
    0.0,
    1_000_000.0,
    Some(0.0),
);

pub struct CropImage;

impl CommandDef for CropImage {
    const SPEC: CommandSpec = CommandSpec {
        name: "crop-image",
        summary: "The `width` × `height` box at (`x`, `y`) of an image, or placed by `gravity` (`face`: around the faces); animations frame by frame, in the input's format.",
        inputs: IMAGES,
        options: &[&X, &Y, &WIDTH, &HEIGHT, &GRAVITY, &FOCUS_X, &FOCUS_Y, &FACES, &super::pdf_page::PAGE, &super::metadata::METADATA],
        output: None,
        in_process: true,
    };

    /// The input's format where it can be written, else JPEG (PNG with transparency).
    fn output(input: MediaFormat, _options: &Options) -> MediaFormat {
        crate::commands::formats::image_output(input, None)
    }

    /// One image of the box's size (none for a box outside the picture).
    fn predict(input: Shape, options: &Options) -> Prediction {
        let size = input
            .size
            .map(|size| crop(options).output_size(size).unwrap_or((0, 0)));
        Prediction::one(None, Shape { size, ..input })
    }

    fn refuse(input: Shape, options: &Options) -> Option<MediaError> {
        crop(options).output_size(input.size?).err()
    }

    /// A box is placed by `x`/`y` or by `gravity`, not both.
    fn check(options: &Options) -> Result<(), OptionProblem> {
        let placed = [&X, &Y].into_iter().find(|spec| options.has(spec));
        match placed {
            Some(spec) if options.has(&GRAVITY) => Err(OptionProblem {
                code: Code::InvalidOptionCombination,
                option: spec.name,
                detail: "`gravity` places the box itself; send it or `x`/`y`, not both.".into(),
            }),
            _ => Ok(()),
        }
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        _progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let ops: Vec<Box<dyn FrameOp>> = vec![crop(options)];
        Ok(vec![
            media.transform_image(input, ops, None, out_dir).await?,
        ])
    }
}

/// The box the options name; a side not given is the whole picture's (at most).
fn crop(options: &Options) -> Box<dyn FrameOp> {
    let whole = |spec| options.optional_number(spec).unwrap_or(f64::from(u32::MAX));
    let (width, height) = (whole(&WIDTH) as u32, whole(&HEIGHT) as u32);
    let focus = (options.number(&FOCUS_X), options.number(&FOCUS_Y));
    let gravity = options
        .has(&GRAVITY)
        .then(|| options.text(&GRAVITY))
        .flatten()
        .and_then(|name| Gravity::from_name(&name, focus));
    match gravity {
        Some(gravity) => Box::new(GravityCrop {
            width,
            height,
            gravity,
        }),
        None => Box::new(Crop {
            x: options.number(&X) as u32,
            y: options.number(&Y) as u32,
            width,
            height,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_is_predicted_and_one_outside_is_refused() {
        let shape = Shape {
            size: Some((200, 100)),
            frames: Some(1),
            seconds: None,
        };
        let inside = Options::of(&[
            ("x", 10.into()),
            ("width", 50.into()),
            ("height", 40.into()),
        ]);
        assert_eq!(
            CropImage::predict(shape, &inside).shape.size,
            Some((50, 40))
        );
        assert!(CropImage::refuse(shape, &inside).is_none());
        let outside = Options::of(&[
            ("x", 180.into()),
            ("width", 50.into()),
            ("height", 40.into()),
        ]);
        let refused = CropImage::refuse(shape, &outside).unwrap();
        assert_eq!(refused.code(), "crop_outside_image");
    }
}
