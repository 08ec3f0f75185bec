//! The options that move a video's times: `trim-video`'s part and
//! `modify-video-speed`'s speed. In a file of their own, as the commands that take them
//! and the subtitles they retime (`subtitled`, which those commands burn with) both
//! read them.

use super::options::{OptionKind, OptionSpec};

/// The longest time an option may name: a day, far past the length limit of sources.
const MAX_SECONDS: f64 = 86_400.0;

/// Where the part starts; also read by `video-preview`.
pub const START: OptionSpec = OptionSpec {
    name: "start",
    doc: "trim-video, video-preview: where the part starts, in seconds from the video's start (default 0).",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: true,
        max: MAX_SECONDS,
        integer: false,
        default: Some(0.0),
    },
};

pub const END: OptionSpec = OptionSpec {
    name: "end",
    doc: "trim-video: where the part ends, in seconds from the video's start (default: the video's end; not with `duration`).",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: false,
        max: MAX_SECONDS,
        integer: false,
        default: None,
    },
};

pub const DURATION: OptionSpec = OptionSpec {
    name: "duration",
    doc: "trim-video: seconds the part lasts from `start` (default: to the video's end; not with `end`).",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: false,
        max: MAX_SECONDS,
        integer: false,
        default: None,
    },
};

/// How many times faster `modify-video-speed` plays the video.
pub const SPEED: OptionSpec = OptionSpec {
    name: "speed",
    doc: "How many times faster the video plays (0.1–16; default 1).",
    kind: OptionKind::Number {
        min: 0.1,
        min_inclusive: true,
        max: 16.0,
        integer: false,
        default: Some(1.0),
    },
};
