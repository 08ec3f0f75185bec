//! `image-to-webp`: a still image re-encoded as lossy WebP (quality 80), upright,
//! alpha kept. The same in-process path as `resize-image`, at scale 1.

use std::path::Path;

use crate::commands::formats::IMAGES;
use crate::commands::options::Options;
use crate::commands::spec::{CommandDef, CommandSpec};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = IMAGES;
const OUTPUT: MediaFormat = MediaFormat::Webp;

pub struct ImageToWebp;

impl CommandDef for ImageToWebp {
    const SPEC: CommandSpec = CommandSpec {
        name: "image-to-webp",
        summary: "An image as a lossy WebP (quality 80), transparency and animation kept.",
        inputs: INPUTS,
        options: &[
            &crate::commands::options::FACES,
            &super::pdf_page::PAGE,
            &super::metadata::METADATA,
        ],
        output: Some(OUTPUT),
        in_process: true,
    };

    async fn run(
        media: &Media,
        input: &MediaFile,
        _options: &Options,
        out_dir: &Path,
        _progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        Ok(vec![media.reencode_as_webp(input, out_dir).await?])
    }
}
