//! How many files an edit can produce, known before anything runs.
//!
//! Every command turns one file into one, except `extract-frames`, which turns a video
//! into one file per frame: at least one, and exactly `max(1, round(fps × duration))`
//! when the video is the output of `image-to-video`. The product along the pipeline,
//! times the number of assets, is the fewest files the edit can end with; when even
//! that passes the limit, the edit is refused at creation (`too_many_outputs`), and
//! the engine checks the same bound again as real frame counts become known.

use super::command::Command;
use super::options::Options;

/// Files one input of `commands[0]` becomes at least, after each command in turn:
/// element `i` is the bound after `commands[i]`.
pub fn min_files_per_input(commands: &[Command], options: &Options) -> Vec<u64> {
    let mut files: u64 = 1;
    // Frames of the current files, when a command of the pipeline fixes them.
    let mut frames: Option<u64> = None;
    commands
        .iter()
        .map(|command| {
            match command {
                Command::ExtractFrames => {
                    files = files.saturating_mul(frames.unwrap_or(1));
                    frames = Some(1);
                }
                Command::ImageToVideo => frames = Some(image_to_video_frames(options)),
                _ => frames = None,
            }
            files
        })
        .collect()
}

/// The frames `image-to-video` writes: exactly `round(duration × fps)`, at least one.
pub fn image_to_video_frames(options: &Options) -> u64 {
    ((options.duration * options.fps).round() as u64).max(1)
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
        Options {
            fps,
            duration,
            ..Options::default()
        }
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

    #[test]
    fn image_to_video_writes_at_least_one_frame() {
        assert_eq!(image_to_video_frames(&options(1.0, 0.2)), 1);
        assert_eq!(image_to_video_frames(&options(30.0, 0.5)), 15);
    }
}
