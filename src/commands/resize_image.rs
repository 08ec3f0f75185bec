//! `resize-image`: scales a still image or every frame of an animation by `scale`, or
//! fits it to a `width` × `height` box (`fit`, `gravity`, `background`,
//! `withoutEnlargement`), written in `format` or in the input's own format. The
//! pixel work is `media::image`'s (`Scale`, `BoxResize`).

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options, FOCUS_X, FOCUS_Y, HEIGHT, WIDTH};
use crate::commands::formats::IMAGES;
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::error_code::Code;
use crate::media::image::quality::{self, FormatChoice, Quality};
use crate::media::image::{output_size, BoxResize, Fit, FrameOp, Gravity, Scale};
use crate::media::video::frames::FrameOutput;
use crate::media::{ImageFormat, Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

pub const SCALE: OptionSpec = OptionSpec::number(
    "scale",
    "Each side is multiplied by this (more than 0, at most 16; default 1). Not with width or height.",
    0.0,
    16.0,
    1.0,
);

pub const FIT: OptionSpec = OptionSpec {
    name: "fit",
    doc: "How the picture meets the box: contain (inside it, the default), cover (fills it, the overflow cropped at gravity), fill (stretched), pad (contained, then padded with background).",
    kind: OptionKind::Choice {
        values: Fit::NAMES,
        default: Some("contain"),
    },
};

pub const GRAVITY: OptionSpec = OptionSpec {
    name: "gravity",
    doc: "Where a cover crop, a pad or crop-image's box goes: center (default), a side or corner, focus (focusX, focusY), smart (the most salient region) or face (every detected face kept, smart when there is none).",
    kind: OptionKind::Choice {
        values: Gravity::NAMES,
        default: Some("center"),
    },
};

pub const BACKGROUND: OptionSpec = OptionSpec {
    name: "background",
    doc: "The padding of fit pad, #RRGGBB or #RRGGBBAA; transparent where the format has alpha, else white.",
    kind: OptionKind::Colour { default: None },
};

pub const WITHOUT_ENLARGEMENT: OptionSpec = OptionSpec {
    name: "withoutEnlargement",
    doc: "Never scale up (default false).",
    kind: OptionKind::Flag { default: false },
};

pub const QUALITY: OptionSpec = OptionSpec {
    name: "quality",
    doc: "The lossy encoder's quality, 1–100, for a still written as JPEG (default 85), WebP (80) AVIF or JPEG XL (90: distance 1); or auto: the lowest whose output scores at least targetScore (SSIMULACRA2) against the picture at quality 100. PNG and GIF are lossless and animations keep their defaults.",
    kind: OptionKind::NumberOr {
        min: 1.0,
        max: 100.0,
        word: "auto",
    },
};

pub const TARGET_SCORE: OptionSpec = OptionSpec {
    name: "targetScore",
    doc: "With quality auto or format best: the SSIMULACRA2 score the output must reach against the picture at quality 100 (1–100; 90 visually lossless, 70 high, 50 medium; default 70).",
    kind: OptionKind::Number {
        min: 1.0,
        min_inclusive: true,
        max: 100.0,
        integer: false,
        default: Some(quality::DEFAULT_TARGET),
    },
};

/// `resize-image`'s `format`: an image format, or `best`.
pub const FORMAT_OR_BEST: OptionSpec = OptionSpec {
    name: "format",
    doc: "The output format: jpeg (or jpg), png, webp, avif or jxl; best: the smallest of JPEG (for a picture without transparency), WebP and AVIF, each at quality auto unless quality is a number; the input's by default.",
    kind: OptionKind::Choice {
        values: &["jpeg", "jpg", "png", "webp", "avif", "jxl", "best"],
        default: None,
    },
};

/// The formats `format: best` picks from, in the order a tie keeps.
const BEST_OF: [ImageFormat; 3] = [ImageFormat::Avif, ImageFormat::Webp, ImageFormat::Jpeg];

pub struct ResizeImage;

impl CommandDef for ResizeImage {
    const SPEC: CommandSpec = CommandSpec {
        name: "resize-image",
        summary: "An image scaled by `scale` or fitted to a `width` × `height` box (`fit`, `gravity`), as JPEG, PNG, WebP, AVIF or JPEG XL (`format`; the input's by default); animations stay animated.",
        inputs: IMAGES,
        options: &[
            &SCALE,
            &WIDTH,
            &HEIGHT,
            &FIT,
            &GRAVITY,
            &FOCUS_X,
            &FOCUS_Y,
            &BACKGROUND,
            &WITHOUT_ENLARGEMENT,
            &FORMAT_OR_BEST,
            &QUALITY,
            &TARGET_SCORE,
            &crate::commands::options::FACES,
            &super::pdf_page::PAGE,
            &super::metadata::METADATA,
        ],
        output: None,
        in_process: true,
    };

    /// The `format` option's format, or the input's.
    ///
    /// Without `format`, the input's format where it can be written; else JPEG, or PNG
    /// once the decoded picture turns out to have transparency
    /// (`media::image::pipeline::default_output`).
    fn output(input: MediaFormat, options: &Options) -> MediaFormat {
        crate::commands::formats::image_output(input, options.image_format(&FORMAT_OR_BEST))
    }

    /// One image of the size the operation makes (a refused size: none).
    fn predict(input: Shape, options: &Options) -> Prediction {
        let ops = ops(options);
        let size = input
            .size
            .map(|size| output_size(&ops, size, u64::MAX).unwrap_or((0, 0)));
        // `best`: not known before the encoders have run.
        let format = options
            .image_format(&FORMAT_OR_BEST)
            .map(ImageFormat::media_format);
        Prediction::one(format, Shape { size, ..input })
    }

    /// Decoding the input, or encoding an enlarged output where that is more.
    fn cost(work: Work, options: &Options) -> u64 {
        let enlarged = match (options.has(&WIDTH) || options.has(&HEIGHT), work.pixels) {
            (false, pixels) => {
                let scale = options.number(&SCALE);
                (pixels as f64 * scale * scale) as u64
            }
            // The box's pixels; a side not given taken as the other (the aspect is
            // not known here).
            (true, _) => {
                let (w, h) = (
                    options.optional_number(&WIDTH),
                    options.optional_number(&HEIGHT),
                );
                let (w, h) = (w.or(h).unwrap_or(1.0), h.or(w).unwrap_or(1.0));
                (w * h) as u64
            }
        };
        work.total().max(enlarged)
    }

    /// `scale` is one way to size the output, the box another; `targetScore` is read
    /// only when a quality is chosen.
    fn check(options: &Options) -> Result<(), OptionProblem> {
        if options.has(&TARGET_SCORE) && !matches!(quality_of(options), Quality::Auto { .. }) {
            return Err(OptionProblem {
                code: Code::InvalidOptionCombination,
                option: "targetScore",
                detail: "`targetScore` is the score `quality: auto` aims at; send it with `quality: \"auto\"` or `format: \"best\"`.".into(),
            });
        }
        if options.has(&SCALE) && (options.has(&WIDTH) || options.has(&HEIGHT)) {
            let option = if options.has(&WIDTH) {
                "width"
            } else {
                "height"
            };
            return Err(OptionProblem {
                code: Code::InvalidOptionCombination,
                option,
                detail:
                    "`scale` and a `width`/`height` box are two ways to size the output; send one."
                        .into(),
            });
        }
        Ok(())
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        _progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let (format, quality) = (format_of(options), quality_of(options));
        if let (false, FormatChoice::Given(format), Quality::Fixed(None)) =
            (is_box(options), &format, quality)
        {
            let scale = options.number(&SCALE);
            return Ok(vec![
                media.scale_image(input, scale, *format, out_dir).await?,
            ]);
        }
        let resized = media
            .transform_image_at(input, ops(options), (format, quality), out_dir)
            .await?;
        Ok(vec![resized])
    }
}

/// The `format` option: a format, the input's (`None`), or `best` of all three lossy
/// formats (a render's `f:best` names those its client takes: `best:webp,jpeg`).
pub(crate) fn format_of(options: &Options) -> FormatChoice {
    match options.text(&FORMAT_OR_BEST).as_deref() {
        Some("best") => FormatChoice::Best(BEST_OF.to_vec()),
        Some(text) if text.starts_with("best:") => FormatChoice::Best(
            text["best:".len()..]
                .split(',')
                .filter_map(ImageFormat::from_option_name)
                .collect(),
        ),
        _ => FormatChoice::Given(options.image_format(&FORMAT_OR_BEST)),
    }
}

/// The `quality` option: a number, `auto` (at `targetScore`), or the format's default
/// (`auto` under `format: best`).
pub(crate) fn quality_of(options: &Options) -> Quality {
    let auto = Quality::Auto {
        target: options.number(&TARGET_SCORE),
    };
    match (options.text(&QUALITY).as_deref(), format_of(options)) {
        (Some("auto"), _) => auto,
        (_, FormatChoice::Best(_)) if !options.has(&QUALITY) => auto,
        _ => Quality::Fixed(options.optional_number(&QUALITY).map(|q| q as u8)),
    }
}

/// Whether the output is sized by a box rather than `scale`.
pub(crate) fn is_box(options: &Options) -> bool {
    options.has(&WIDTH) || options.has(&HEIGHT)
}

/// The operation the options ask for.
fn ops(options: &Options) -> Vec<Box<dyn FrameOp>> {
    if !is_box(options) {
        return vec![Box::new(Scale(options.number(&SCALE)))];
    }
    let side = |spec| options.optional_number(spec).map(|n| n as u32);
    let focus = (options.number(&FOCUS_X), options.number(&FOCUS_Y));
    let gravity = options
        .text(&GRAVITY)
        .and_then(|name| Gravity::from_name(&name, focus))
        .unwrap_or(Gravity::Center);
    let fit = options
        .text(&FIT)
        .and_then(|name| Fit::from_name(&name))
        .unwrap_or(Fit::Contain);
    vec![Box::new(BoxResize {
        width: side(&WIDTH),
        height: side(&HEIGHT),
        fit,
        gravity,
        background: options.colour(&BACKGROUND),
        without_enlargement: options.flag(&WITHOUT_ENLARGEMENT),
    })]
}

/// What each decoded frame becomes when this command follows `extract-frames` (the
/// two run as one step, see `Fused`): the frame scaled and encoded in the `format`
/// option, or WebP, the format `extract-frames` would have handed on. `None` for a
/// box, a quality or `format: best`, which the fused step does not do: the two then
/// run one after the other.
pub(crate) fn frame_output(options: &Options, max_pixels: u64) -> Option<FrameOutput> {
    let plain = matches!(
        (format_of(options), quality_of(options)),
        (FormatChoice::Given(_), Quality::Fixed(None))
    );
    (!is_box(options) && plain).then(|| FrameOutput::Resized {
        scale: options.number(&SCALE),
        format: options
            .image_format(&FORMAT_OR_BEST)
            .unwrap_or(ImageFormat::Webp),
        max_pixels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_keeps_the_input_format_unless_one_is_asked_for() {
        let mut options = Options::default();
        assert_eq!(
            ResizeImage::output(MediaFormat::Png, &options),
            MediaFormat::Png
        );
        options.set("format", "webp".into());
        assert_eq!(
            ResizeImage::output(MediaFormat::Png, &options),
            MediaFormat::Webp
        );
    }

    #[test]
    fn an_enlarging_resize_costs_its_output_and_predicts_its_size() {
        let mut options = Options::default();
        options.set("scale", 2.0.into());
        let work = Work {
            pixels: 1000,
            frames: 1,
        };
        assert_eq!(ResizeImage::cost(work, &options), 4000);
        let shape = Shape {
            size: Some((30, 21)),
            frames: Some(1),
            seconds: None,
        };
        assert_eq!(
            ResizeImage::predict(shape, &options).shape.size,
            Some((60, 42))
        );
    }

    #[test]
    fn a_box_is_predicted_by_its_fit_and_refused_with_scale() {
        let shape = Shape {
            size: Some((400, 200)),
            frames: Some(1),
            seconds: None,
        };
        let size = |pairs: &[(&'static str, serde_json::Value)]| {
            ResizeImage::predict(shape, &Options::of(pairs)).shape.size
        };
        let (w, h) = (("width", 100.into()), ("height", 100.into()));
        assert_eq!(size(&[w.clone(), h.clone()]), Some((100, 50)));
        assert_eq!(
            size(&[w.clone(), h.clone(), ("fit", "cover".into())]),
            Some((100, 100))
        );
        assert_eq!(size(std::slice::from_ref(&w)), Some((100, 50)));
        let both = Options::of(&[w, ("scale", 2.0.into())]);
        let problem = ResizeImage::check(&both).unwrap_err();
        assert_eq!(problem.code, Code::InvalidOptionCombination);
        assert_eq!(problem.option, "width");
        assert!(ResizeImage::check(&Options::of(&[h])).is_ok());
    }
}
