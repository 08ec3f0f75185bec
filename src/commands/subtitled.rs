//! The edit's subtitles as each command meets them. A command's input is the output
//! of the ones before it, so the cues are retimed by those: `trim-video` cuts and
//! shifts them to its part, `modify-video-speed` divides their times by its speed.
//! With `burnSubtitles`, the last command of the pipeline draws them into its frames
//! when it makes a video (the edit's video outputs), and the commands before it only
//! carry them on; `video-to-hls` also writes them as a WebVTT rendition. A
//! `trim-video` or `modify-video-speed` that ends the pipeline draws them too (then
//! re-encoding where it would copy): `trim-video` the cues of its part at its output's
//! times (`burn_retimed`), `modify-video-speed` its input's cues on the frames before
//! they are retimed.

use std::sync::Arc;

use super::options::{OptionKind, OptionSpec, Options};
use super::registry::Command;
use super::spec::OptionProblem;
use super::time_options::{DURATION, END, SPEED, START};
use crate::media::subtitles::{burn_filter, Subtitles};
use crate::media::video::chunked::SplitRecipe;
use crate::media::video::info::VideoInfo;
use crate::media::MediaError;

/// Draw the subtitles asset's cues into the video outputs.
pub const BURN_SUBTITLES: OptionSpec = OptionSpec {
    name: "burnSubtitles",
    doc: "Draw the cues of the edit's subtitles asset into the video outputs (white DejaVu Sans with a black outline, bottom centre, sized by the picture's height), retimed by trim-video and modify-video-speed before it (default false; needs a subtitles asset).",
    kind: OptionKind::Flag { default: false },
};

/// The language of `video-to-hls`'s subtitle rendition.
pub const SUBTITLES_LANGUAGE: OptionSpec = OptionSpec {
    name: "subtitlesLanguage",
    doc: "video-to-hls: the language of the subtitle rendition made of the edit's subtitles asset, a BCP 47 tag such as en or pt-BR (letters, digits and hyphens; default und, undetermined).",
    kind: OptionKind::Text { min: 2, max: 35 },
};

/// `subtitlesLanguage` as a playlist may quote it: letters, digits and hyphens, a
/// letter first.
pub(crate) fn check_language(options: &Options) -> Result<(), OptionProblem> {
    let Some(tag) = options.text(&SUBTITLES_LANGUAGE) else {
        return Ok(());
    };
    let first_letter = tag.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if first_letter && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Ok(());
    }
    Err(OptionProblem {
        code: crate::error_code::Code::InvalidOptionValue,
        option: SUBTITLES_LANGUAGE.name,
        detail: format!(
            "`subtitlesLanguage` is \"{tag}\"; it must be a BCP 47 tag such as en or pt-BR"
        ),
    })
}

impl Options {
    /// Gives the edit's subtitles to its commands.
    pub fn set_subtitles(&mut self, subtitles: Option<Arc<Subtitles>>) {
        self.subtitles = subtitles;
    }

    /// The options of the step that starts at command `c` of `commands` and runs
    /// `count` of them: the subtitles retimed by the commands before it, drawn by it
    /// when it ends the pipeline and `burnSubtitles` is on.
    pub fn for_step(&self, commands: &[Command], c: usize, count: usize) -> Options {
        let mut options = self.clone();
        if let Some(subtitles) = &self.subtitles {
            let mut retimed = (**subtitles).clone();
            for command in &commands[..c.min(commands.len())] {
                retimed = retime(*command, &retimed, self);
            }
            options.subtitles = Some(Arc::new(retimed));
            options.burn = self.flag(&BURN_SUBTITLES) && c + count >= commands.len();
        }
        options
    }

    /// The cues as this command's input shows them, when the edit has subtitles.
    pub fn subtitles(&self) -> Option<&Subtitles> {
        self.subtitles.as_deref()
    }

    /// The cues this command draws into its frames: when it is the step that ends the
    /// pipeline and `burnSubtitles` is on.
    pub fn subtitles_to_burn(&self) -> Option<&Subtitles> {
        self.subtitles.as_deref().filter(|_| self.burn)
    }
}

/// The filter that draws the cues this command burns (see
/// [`Options::subtitles_to_burn`]) into frames of a video shown as `info` says, its
/// files written under `out_dir`; `None` when it burns none.
pub(crate) async fn burn_for(
    options: &Options,
    info: &VideoInfo,
    out_dir: &std::path::Path,
) -> Result<Option<String>, MediaError> {
    match options.subtitles_to_burn() {
        Some(subtitles) => Ok(Some(burn_filter(subtitles, info.shown, out_dir).await?)),
        None => Ok(None),
    }
}

/// The filter that draws the cues this command burns as its own output shows them
/// (retimed by `command` itself: a trim's part, moved to its start), for frames timed
/// from the output's start; `None` when it burns none.
pub(crate) async fn burn_retimed(
    command: Command,
    options: &Options,
    info: &VideoInfo,
    out_dir: &std::path::Path,
) -> Result<Option<String>, MediaError> {
    match options.subtitles_to_burn() {
        Some(subtitles) => {
            let own = retime(command, subtitles, options);
            Ok(Some(burn_filter(&own, info.shown, out_dir).await?))
        }
        None => Ok(None),
    }
}

/// Gives `recipe` the filter that draws this command's cues, when it burns any: its
/// chunks then run on this node, where the script and font are.
pub(crate) async fn burn_into(
    recipe: &mut SplitRecipe,
    options: &Options,
    info: &VideoInfo,
    out_dir: &std::path::Path,
) -> Result<(), MediaError> {
    if let Some(burn) = burn_for(options, info, out_dir).await? {
        recipe.burn = Some(burn);
        recipe.local_only = true;
    }
    Ok(())
}

/// `subtitles` as `command`'s output shows them.
fn retime(command: Command, subtitles: &Subtitles, options: &Options) -> Subtitles {
    match command.name() {
        "trim-video" => {
            let start = options.number(&START);
            let end = options
                .optional_number(&END)
                .or_else(|| options.optional_number(&DURATION).map(|d| start + d));
            subtitles.trimmed(start, end)
        }
        "modify-video-speed" => subtitles.sped(options.number(&SPEED)),
        _ => subtitles.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::subtitles::Cue;
    use serde_json::json;

    #[test]
    fn each_step_meets_the_cues_retimed_by_the_steps_before_and_only_the_last_burns() {
        let cue = |start, end| Cue {
            start,
            end,
            text: "x".into(),
        };
        let subs = Subtitles {
            cues: vec![cue(1000, 2000), cue(3000, 4000)],
        };
        let mut options = Options::of(&[
            ("start", json!(0.5)),
            ("speed", json!(2)),
            ("burnSubtitles", json!(true)),
        ]);
        options.set_subtitles(Some(Arc::new(subs.clone())));
        let commands = [
            Command::TrimVideo,
            Command::ModifyVideoSpeed,
            Command::VideoToWebm,
        ];
        let first = options.for_step(&commands, 0, 1);
        assert_eq!(first.subtitles(), Some(&subs));
        assert_eq!(first.subtitles_to_burn(), None);
        let last = options.for_step(&commands, 2, 1);
        let burned = last.subtitles_to_burn().unwrap();
        assert_eq!(burned.cues, vec![cue(250, 750), cue(1250, 1750)]);
        options.set("burnSubtitles", json!(false));
        assert_eq!(options.for_step(&commands, 2, 1).subtitles_to_burn(), None);
        assert!(Options::default()
            .for_step(&commands, 2, 1)
            .subtitles()
            .is_none());
    }
}
