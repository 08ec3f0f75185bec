//! The cues of a subtitles file: the types every part of `subtitles` shares.

use serde::{Deserialize, Serialize};

/// One cue: shown from `start` to `end` (milliseconds), its text's lines joined by
/// `\n`, with the markup the file had (`<i>`, `<b>`, WebVTT's voice and class spans).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cue {
    pub start: u64,
    pub end: u64,
    pub text: String,
}

/// The cues of one subtitles file, in the file's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Subtitles {
    pub cues: Vec<Cue>,
}

impl Cue {
    /// The text without markup: tags dropped, WebVTT's character references read.
    pub fn plain_text(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        let mut in_tag = false;
        for c in self.text.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                _ if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&nbsp;", "\u{a0}")
            .replace("&amp;", "&")
    }
}
