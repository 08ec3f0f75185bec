//! `watermark`: the image at `overlay` (a URL or an upload's `src`, fetched once per
//! edit by an asset's rules) laid over an image, every frame of an animation, or a
//! video, at `gravity` (default southeast), `margin` pixels in, `overlayWidth` of the
//! picture's width, with its transparency kept and multiplied by `opacity`. Images come
//! out as `resize-image` writes them (`format`, or the input's); videos as H.264 MP4 in
//! one ffmpeg run (the `overlay` filter: one encode, no extra generation of loss).

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options, FORMAT};
use super::options::{FOCUS_X, FOCUS_Y};
use super::video_to_audio::LOUDNESS;
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::error_code::Code;
use crate::media::image::overlay::{Overlay, Watermark as WatermarkOp};
use crate::media::image::Gravity;
use crate::media::{ImageFormat, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = crate::media::IMAGES_AND_VIDEOS;

pub const OVERLAY: OptionSpec = OptionSpec {
    name: "overlay",
    doc: "watermark: the image laid over (a URL, or an upload's src), fetched as an asset is; its transparency is kept.",
    kind: OptionKind::Source {
        takes: crate::media::IMAGE_INPUTS,
    },
};

/// Where an overlay or a text goes; shared with `text`.
pub const GRAVITY: OptionSpec = OptionSpec {
    name: "gravity",
    doc: "Where the overlay or text goes: southeast (default), another corner or side, center, or focus (focusX, focusY).",
    kind: OptionKind::Choice {
        values: Gravity::NAMES,
        default: Some("southeast"),
    },
};

/// Pixels between the overlay or text and the edges; shared with `text`.
pub const MARGIN: OptionSpec = OptionSpec::integer(
    "margin",
    "Pixels between the overlay or text and the picture's edges (0–4096; default 16).",
    0.0,
    4096.0,
    Some(16.0),
);

pub const OPACITY: OptionSpec = OptionSpec {
    name: "opacity",
    doc: "watermark: how opaque the overlay is, 0–1 (default 1).",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: true,
        max: 1.0,
        integer: false,
        default: Some(1.0),
    },
};

pub const OVERLAY_WIDTH: OptionSpec = OptionSpec::number(
    "overlayWidth",
    "watermark: the overlay's width as a fraction of the picture's (more than 0, at most 1; default 0.2); its aspect is kept.",
    0.0,
    1.0,
    0.2,
);

pub struct Watermark;

impl CommandDef for Watermark {
    const SPEC: CommandSpec = CommandSpec {
        name: "watermark",
        summary: "An image (`overlay`) laid over an image, an animation or a video at `gravity`, `margin`, `opacity` and `overlayWidth`; images keep their format (or `format`), videos become MP4.",
        inputs: INPUTS,
        options: &[
            &OVERLAY,
            &GRAVITY,
            &FOCUS_X,
            &FOCUS_Y,
            &MARGIN,
            &OPACITY,
            &OVERLAY_WIDTH,
            &FORMAT,
            &LOUDNESS,
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
        let what = "the image to lay over: a URL or an upload's src";
        required(options, Self::SPEC.name, &OVERLAY, what)
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        // Fetched by the edit before its commands run (`queue::extra_source`).
        let overlay = options
            .source(&OVERLAY)
            .ok_or_else(|| MediaError::Io(std::io::Error::other("the overlay was not fetched")))?;
        let mut op = WatermarkOp::new(media.read_overlay(overlay).await?);
        op.gravity = gravity(options);
        op.margin = options.number(&MARGIN) as u32;
        op.opacity = options.number(&OPACITY) as f32;
        op.overlay_width = options.number(&OVERLAY_WIDTH) as f32;
        lay_over(media, input, op, options, out_dir, progress).await
    }
}

/// `op` laid over `input`: every frame of an image or animation, written as
/// [`output_of`] says, or a video in one ffmpeg run.
pub(crate) async fn lay_over(
    media: &Media,
    input: &MediaFile,
    op: impl Overlay + 'static,
    options: &Options,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, MediaError> {
    let out = if input.format.is_video() {
        media
            .overlay_on_video(
                input,
                &op,
                options.optional_number(&LOUDNESS),
                out_dir,
                progress,
            )
            .await?
    } else {
        let format = options.image_format(&FORMAT);
        media
            .transform_image(input, vec![Box::new(op)], format, out_dir)
            .await?
    };
    Ok(vec![out])
}

/// What `watermark` and `text` make of `input`: a video becomes MP4, an image keeps
/// its format (or takes `format`), as `resize-image` writes it.
pub(crate) fn output_of(input: MediaFormat, options: &Options) -> MediaFormat {
    match input.is_video() {
        true => MediaFormat::Mp4,
        false => crate::commands::formats::image_output(input, options.image_format(&FORMAT)),
    }
}

/// One file of the input's size (a video's sides rounded down to even).
pub(crate) fn predict_same_size(input: Shape, options: &Options) -> Prediction {
    let video = input.seconds.is_some() && input.frames != Some(1);
    let format = match video {
        true => Some(MediaFormat::Mp4),
        false => options.image_format(&FORMAT).map(ImageFormat::media_format),
    };
    let size = match video {
        true => input.size.map(|(w, h)| (w & !1, h & !1)),
        false => input.size,
    };
    Prediction::one(format, Shape { size, ..input })
}

/// The placement the options ask for.
pub(crate) fn gravity(options: &Options) -> Gravity {
    let focus = (options.number(&FOCUS_X), options.number(&FOCUS_Y));
    options
        .text(&GRAVITY)
        .and_then(|name| Gravity::from_name(&name, focus))
        .unwrap_or(Gravity::Southeast)
}

/// `missing_field` at `/options/NAME` when `command` needs `spec`'s option and it is
/// not sent.
pub(crate) fn required(
    options: &Options,
    command: &str,
    spec: &OptionSpec,
    what: &str,
) -> Result<(), OptionProblem> {
    if options.has(spec) {
        return Ok(());
    }
    Err(OptionProblem {
        code: Code::MissingField,
        option: spec.name,
        detail: format!("`{command}` needs the option `{}`: {what}.", spec.name),
    })
}
