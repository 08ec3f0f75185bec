//! `text`: `text` drawn over an image, every frame of an animation, or a video, at
//! `gravity` (default southeast) `margin` pixels in, `fontSize` pixels high (5 % of the
//! picture's height by default), in `color` with a thin dark outline so it reads on any
//! background. The font is DejaVu Sans, inside the binary (Latin, Greek, Cyrillic and
//! more; its licence is in assets/fonts), shaped by rustybuzz. Outputs as `watermark`'s.

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options, FORMAT};
use super::options::{FOCUS_X, FOCUS_Y};
use super::watermark::{
    gravity, lay_over, output_of, predict_same_size, required, GRAVITY, MARGIN,
};
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::media::image::overlay::Text as TextOp;
use crate::media::image::Colour;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

pub const TEXT: OptionSpec = OptionSpec {
    name: "text",
    doc: "text: what is written, 1–200 characters of UTF-8.",
    kind: OptionKind::Text { min: 1, max: 200 },
};

pub const FONT_SIZE: OptionSpec = OptionSpec {
    name: "fontSize",
    doc: "text: the font's size in pixels (more than 0, at most 2048); 5 % of the picture's height by default. Text too wide for the picture is drawn smaller.",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: false,
        max: 2048.0,
        integer: false,
        default: None,
    },
};

pub const COLOR: OptionSpec = OptionSpec {
    name: "color",
    doc: "The colour drawn: #RRGGBB or #RRGGBBAA (text: default #FFFFFF).",
    kind: OptionKind::Colour {
        default: Some("#FFFFFF"),
    },
};

pub struct Text;

impl CommandDef for Text {
    const SPEC: CommandSpec = CommandSpec {
        name: "text",
        summary: "`text` written over an image, an animation or a video at `gravity` and `margin`, `fontSize` px in `color` with a dark outline; images keep their format (or `format`), videos become MP4.",
        inputs: crate::media::IMAGES_AND_VIDEOS,
        options: &[
            &TEXT,
            &GRAVITY,
            &FOCUS_X,
            &FOCUS_Y,
            &MARGIN,
            &FONT_SIZE,
            &COLOR,
            &FORMAT,
            &super::video_to_audio::LOUDNESS,
            &crate::commands::options::FACES,
        ],
        output: None,
        in_process: false,
    };

    fn output(input: MediaFormat, options: &Options) -> MediaFormat {
        output_of(input, options)
    }

    fn predict(input: Shape, options: &Options) -> Prediction {
        predict_same_size(input, options)
    }

    fn check(options: &Options) -> Result<(), OptionProblem> {
        required(
            options,
            Self::SPEC.name,
            &TEXT,
            "what to write, 1–200 characters",
        )
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let mut op = TextOp::new(options.text(&TEXT).unwrap_or_default());
        op.gravity = gravity(options);
        op.margin = options.number(&MARGIN) as u32;
        op.font_size = options.optional_number(&FONT_SIZE).map(|n| n as f32);
        op.colour = options.colour(&COLOR).unwrap_or(Colour::WHITE);
        lay_over(media, input, op, options, out_dir, progress).await
    }
}
