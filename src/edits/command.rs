//! The command library of the interface document: names, accepted inputs, outputs.

use crate::media::MediaFormat;

/// One command of a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    ImageToVideo,
    GifToVideo,
    ImageToWebp,
    ResizeImage,
    ModifyVideoSpeed,
    VideoToGif,
    VideoToOgg,
    VideoToWebm,
    ExtractFrames,
}

const IMAGES: &[MediaFormat] = &[MediaFormat::Jpeg, MediaFormat::Png, MediaFormat::Webp];
const VIDEOS: &[MediaFormat] = &[MediaFormat::Mp4, MediaFormat::Mov];
const GIFS: &[MediaFormat] = &[MediaFormat::Gif];

impl Command {
    pub const ALL: [Command; 9] = [
        Command::ImageToVideo,
        Command::GifToVideo,
        Command::ImageToWebp,
        Command::ResizeImage,
        Command::ModifyVideoSpeed,
        Command::VideoToGif,
        Command::VideoToOgg,
        Command::VideoToWebm,
        Command::ExtractFrames,
    ];

    /// The name used on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Command::ImageToVideo => "image-to-video",
            Command::GifToVideo => "gif-to-video",
            Command::ImageToWebp => "image-to-webp",
            Command::ResizeImage => "resize-image",
            Command::ModifyVideoSpeed => "modify-video-speed",
            Command::VideoToGif => "video-to-gif",
            Command::VideoToOgg => "video-to-ogg",
            Command::VideoToWebm => "video-to-webm",
            Command::ExtractFrames => "extract-frames",
        }
    }

    pub fn from_name(name: &str) -> Option<Command> {
        Command::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Formats this command accepts as input.
    pub fn inputs(self) -> &'static [MediaFormat] {
        match self {
            Command::ImageToVideo | Command::ImageToWebp | Command::ResizeImage => IMAGES,
            Command::GifToVideo => GIFS,
            Command::ModifyVideoSpeed
            | Command::VideoToGif
            | Command::VideoToOgg
            | Command::VideoToWebm
            | Command::ExtractFrames => VIDEOS,
        }
    }

    pub fn accepts(self, format: MediaFormat) -> bool {
        self.inputs().contains(&format)
    }

    /// The formats this command can produce from `inputs`; `resize_format` is the
    /// `format` option when given (only `resize-image` keeps its input's format).
    pub fn outputs(
        self,
        inputs: &[MediaFormat],
        resize_format: Option<MediaFormat>,
    ) -> Vec<MediaFormat> {
        match self {
            Command::ImageToVideo | Command::GifToVideo | Command::ModifyVideoSpeed => {
                vec![MediaFormat::Mp4]
            }
            Command::ImageToWebp | Command::ExtractFrames => vec![MediaFormat::Webp],
            Command::VideoToGif => vec![MediaFormat::Gif],
            Command::VideoToOgg => vec![MediaFormat::Ogv],
            Command::VideoToWebm => vec![MediaFormat::Webm],
            Command::ResizeImage => match resize_format {
                Some(format) => vec![format],
                None => inputs
                    .iter()
                    .copied()
                    .filter(|f| self.accepts(*f))
                    .collect(),
            },
        }
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
