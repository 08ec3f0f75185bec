//! `rotate-image`: quarter turns clockwise (`angle` 90, 180 or 270) and/or a mirror
//! (`flip` horizontal or vertical, of the turned picture); a still or every frame of
//! an animation, in the input's own format. Pixels are moved, never resampled.

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options};
use crate::commands::formats::IMAGES;
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::error_code::Code;
use crate::media::image::{Flip, FrameOp, Rotate};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

pub const ANGLE: OptionSpec = OptionSpec::integer(
    "angle",
    "rotate-image: degrees clockwise, 90, 180 or 270.",
    90.0,
    270.0,
    None,
);

pub const FLIP: OptionSpec = OptionSpec {
    name: "flip",
    doc: "rotate-image: mirror the (turned) picture, horizontal or vertical.",
    kind: OptionKind::Choice {
        values: Flip::NAMES,
        default: None,
    },
};

pub struct RotateImage;

impl CommandDef for RotateImage {
    const SPEC: CommandSpec = CommandSpec {
        name: "rotate-image",
        summary: "An image turned clockwise by `angle` (90, 180, 270) and/or mirrored (`flip`), in the input's format; animations frame by frame.",
        inputs: IMAGES,
        options: &[&ANGLE, &FLIP, &crate::commands::options::FACES, &super::pdf_page::PAGE, &super::metadata::METADATA],
        output: None,
        in_process: true,
    };

    /// The input's format where it can be written, else JPEG (PNG with transparency).
    fn output(input: MediaFormat, _options: &Options) -> MediaFormat {
        crate::commands::formats::image_output(input, None)
    }

    /// One image, its sides swapped by a quarter turn.
    fn predict(input: Shape, options: &Options) -> Prediction {
        let size = input
            .size
            .map(|size| rotate(options).output_size(size).unwrap_or(size));
        Prediction::one(None, Shape { size, ..input })
    }

    /// An angle of a quarter turn, and something to do.
    fn check(options: &Options) -> Result<(), OptionProblem> {
        match options.optional_number(&ANGLE) {
            Some(angle) if ![90.0, 180.0, 270.0].contains(&angle) => Err(OptionProblem {
                code: Code::InvalidOptionValue,
                option: "angle",
                detail: format!("`angle` is 90, 180 or 270 (degrees clockwise), not {angle}."),
            }),
            None if !options.has(&FLIP) => Err(OptionProblem {
                code: Code::InvalidOptionCombination,
                option: "angle",
                detail: "rotate-image needs `angle`, `flip` or both.".into(),
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
        let ops: Vec<Box<dyn FrameOp>> = vec![Box::new(rotate(options))];
        Ok(vec![
            media.transform_image(input, ops, None, out_dir).await?,
        ])
    }
}

fn rotate(options: &Options) -> Rotate {
    Rotate {
        angle: options.optional_number(&ANGLE).unwrap_or(0.0) as u16,
        flip: options.text(&FLIP).and_then(|name| Flip::from_name(&name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_turn_swaps_the_sides_and_other_angles_are_refused() {
        let shape = Shape {
            size: Some((200, 100)),
            frames: Some(1),
            seconds: None,
        };
        let quarter = Options::of(&[("angle", 90.into())]);
        assert_eq!(
            RotateImage::predict(shape, &quarter).shape.size,
            Some((100, 200))
        );
        assert!(RotateImage::check(&quarter).is_ok());
        assert!(RotateImage::check(&Options::of(&[("flip", "vertical".into())])).is_ok());
        let odd = RotateImage::check(&Options::of(&[("angle", 100.into())])).unwrap_err();
        assert_eq!(odd.code, Code::InvalidOptionValue);
        let nothing = RotateImage::check(&Options::default()).unwrap_err();
        assert_eq!(nothing.code, Code::InvalidOptionCombination);
    }
}
