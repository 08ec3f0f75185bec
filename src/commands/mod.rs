//! The command library: one file per command, owning everything about it — its wire
//! name, the formats it takes and makes, its options (ranges, defaults), the
//! prediction of its outputs, its cost, and its execution (an ffmpeg recipe or image
//! steps over the shared capabilities of `media`), with its unit tests.
//!
//! This file is the registry's list: one `mod` line per command below, from which
//! build.rs writes the `commands!` invocation (`registry` includes it) that derives
//! the [`Command`] enum,
//! [`Command::ALL`] and the dispatch of every question to the command's own
//! [`CommandDef`]. Adding a command is one new file (a unit type implementing
//! `CommandDef`) and one `mod` line here; a command file without its line fails the
//! build.

mod formats;
mod metadata;
mod options;
mod pdf_page;
mod registry;
mod spec;
mod stored;
mod subtitled;
mod time_options;
mod vtt;

#[cfg(test)]
mod real_files;

pub use options::{OptionKind, OptionSpec, Options, SourceFile};
pub use spec::{Beside, CommandSpec, OptionProblem, Prediction, Shape};

pub use extract_frames::Fused;
pub use options::FACES;
pub use registry::Command;
pub(crate) use resize_image::quality_of;
pub use subtitled::BURN_SUBTITLES;

// The commands, in the catalog's order: one `mod` line each. build.rs reads these
// lines and writes the registry (`commands!` below) from every one whose file
// implements `CommandDef`; a command file without its line fails the build.
mod audio_waveform;
mod blur_faces;
mod crop_image;
mod extract_frames;
mod gif_to_video;
mod image_to_video;
mod image_to_webp;
mod modify_video_speed;
mod resize_image;
mod rotate_image;
mod text;
mod trim_video;
mod video_poster;
mod video_preview;
mod video_scenes;
mod video_storyboard;
mod video_to_audio;
mod video_to_gif;
mod video_to_hls;
mod video_to_ogg;
mod video_to_webm;
mod watermark;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_found_by_its_own_name() {
        for command in Command::ALL {
            assert_eq!(Command::from_name(command.name()), Some(command));
        }
        assert_eq!(Command::from_name("resize"), None);
    }

    #[test]
    fn an_option_name_means_one_kind_of_value_across_commands() {
        // A name two commands read is one option: the same spec, or specs of the
        // same kind of value (their defaults and ranges may differ). A format is a
        // name from a list, whether the list is the image formats or a command's own
        // (`video-to-audio`'s m4a, mp3, opus).
        let specs: Vec<&OptionSpec> = Command::ALL
            .iter()
            .flat_map(|c| c.options().iter().copied())
            .collect();
        let kind = |spec: &OptionSpec| match spec.kind {
            OptionKind::ImageFormat => std::mem::discriminant(&OptionKind::Choice {
                values: &[],
                default: None,
            }),
            ref other => std::mem::discriminant(other),
        };
        for a in &specs {
            for b in specs.iter().filter(|b| b.name == a.name) {
                assert_eq!(kind(a), kind(b), "`{}` is two kinds of option", a.name);
            }
        }
    }

    #[test]
    fn every_command_names_the_format_it_makes_of_every_input_it_takes() {
        // A command whose spec has no one output must say its own (the default panics).
        for command in Command::ALL {
            for input in command.inputs() {
                let made = command.output(*input, &Options::default());
                assert!(made.is_some(), "{command} of {input:?}");
            }
        }
    }
}
