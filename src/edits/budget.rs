//! How many files an edit can produce, known before anything runs.
//!
//! Every command turns one file into one, except `extract-frames`, which turns a video
//! into one file per frame: at least one, and exactly `max(1, round(fps × duration))`
//! when the video is the output of `image-to-video`. The product along the pipeline,
//! times the number of assets, is the fewest files the edit can end with; when even
//! that passes the limit, the edit is refused at creation (`too_many_outputs`), and
//! the engine checks the same bound again as real frame counts become known.

use crate::commands::{Command, Options, Shape};

/// Files one input of `commands[0]` becomes at least, after each command in turn:
/// element `i` is the bound after `commands[i]`. Each command predicts what it makes
/// of what the one before predicted; the source itself is of unknown shape.
pub fn min_files_per_input(commands: &[Command], options: &Options) -> Vec<u64> {
    let mut files: u64 = 1;
    let mut shape = Shape::default();
    commands
        .iter()
        .map(|command| {
            let predicted = command.predict(shape, options);
            files = files.saturating_mul(predicted.files);
            shape = predicted.shape;
            files
        })
        .collect()
}

/// The first command after which `assets` inputs are bound to give more than `limit`
/// files, with that bound; `None` when the edit can stay within the limit.
pub fn first_command_over(
    commands: &[Command],
    options: &Options,
    assets: u64,
    limit: u64,
) -> Option<(usize, u64)> {
    min_files_per_input(commands, options)
        .into_iter()
        .map(|per_input| per_input.saturating_mul(assets))
        .enumerate()
        .find(|(_, files)| *files > limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Command::*;

    fn options(fps: f64, duration: f64) -> Options {
        Options::of(&[("fps", fps.into()), ("duration", duration.into())])
    }

    #[test]
    fn a_frame_fan_out_after_image_to_video_multiplies_by_its_frame_count() {
        let pipeline = [ExtractFrames, ImageToVideo, ExtractFrames];
        assert_eq!(
            min_files_per_input(&pipeline, &options(100.0, 10.0)),
            [1, 1, 1000]
        );
        let pipeline = [ImageToVideo, ExtractFrames, ImageToVideo, ExtractFrames];
        assert_eq!(
            min_files_per_input(&pipeline, &options(25.0, 2.0)),
            [1, 50, 50, 2500]
        );
        // Any other command in between forgets the frame count: at least one frame.
        let pipeline = [ImageToVideo, ModifyVideoSpeed, ExtractFrames];
        assert_eq!(
            min_files_per_input(&pipeline, &options(25.0, 2.0)),
            [1, 1, 1]
        );
    }

    #[test]
    fn the_first_command_over_the_limit_is_named_with_its_bound() {
        let pipeline = [ExtractFrames, ImageToVideo, ExtractFrames];
        let opts = options(100.0, 10.0);
        assert_eq!(first_command_over(&pipeline, &opts, 2, 2000), None);
        assert_eq!(
            first_command_over(&pipeline, &opts, 3, 2000),
            Some((2, 3000))
        );
        assert_eq!(first_command_over(&[ResizeImage], &opts, 20, 2000), None);
        assert_eq!(
            first_command_over(&[ResizeImage], &opts, 20, 10),
            Some((0, 20))
        );
    }
}
