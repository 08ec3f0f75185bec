//! The frames shown at some times of a video, each as a lossless PNG or BMP, upright
//! with square pixels at its displayed size: `video-poster`'s one, and `video-scenes`'
//! one a scene. BMP where the still is only a step on the way to another format: it
//! is written and read at the speed of a copy, where a 1080p PNG costs ffmpeg ~15 ms
//! of deflating and us as many of inflating, for the same pixels (neither carries an
//! ICC profile from a video frame).
//!
//! Each frame is the one a player shows then (`shown_frame`: one ffprobe run reads
//! the packets around every time), decoded by seeking to its start; or, where the
//! caller knows where an accurate seek starts at its frame (`video-scenes` on a video
//! of a constant rate, [`Frames::SeekedTo`]), sought there without the probe. One ffmpeg run
//! takes a batch of them, one input each (seeking to the keyframe before its frame,
//! decoding forward to it) and one output each: a start of Debian's ffmpeg or ffprobe
//! costs ~0.1–0.2 s of a core (`ffmpeg::warm`), which a poster a process and two
//! probes a poster paid six times over for six scenes — more than the seeks' decoding.
//! A batch holds at most [`BATCH_PIXELS`] of frames, so a batch of 4K inputs keeps
//! few decoders open at once. Several frames are cut into a batch a core, run at once
//! with one decoder thread an input, and each batch's stills are handed on as soon as
//! it ends: `video-scenes`' six 1080p posters on 2 cores took 0.73 s from the first
//! probe to the last WebP as one batch and then the encodes, 0.50 s as two batches
//! each encoding as it ends (docs/PERFORMANCE.md).

use std::ffi::OsString;
use std::future::Future;
use std::path::Path;
use std::sync::Mutex;

use futures::StreamExt;

use crate::format::MediaFormat;
use crate::media::cores;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::ffmpeg::transcode::quiet_args;
use crate::media::file::{output_path, MediaFile};
use crate::media::lending::run_pieces;
use crate::media::video::hdr::shown_pictures;
use crate::media::video::info::VideoInfo;
use crate::media::video::shown_frame::frames_shown_at;

/// Seconds before the frame's start that the seek aims at (see `trim-video`).
const SEEK_MARGIN: f64 = 0.0005;
/// The most pixels of frames one ffmpeg run decodes at once: eight 1080p inputs.
const BATCH_PIXELS: u64 = 8 * 1920 * 1080;
/// Stills of one run handed on at once (the runs themselves run a CPU slot each).
const ENCODES_A_RUN: usize = 2;

/// Which frames [`stills_then`] makes stills of.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Frames<'a> {
    /// The frames shown at these seconds, found from the packets around them.
    ShownAt(&'a [f64]),
    /// The frames an accurate seek to these seconds starts at (known without a probe:
    /// `video-scenes` on a video of a constant rate).
    SeekedTo(&'a [f64]),
}

impl Frames<'_> {
    pub fn len(&self) -> usize {
        match self {
            Frames::ShownAt(times) => times.len(),
            Frames::SeekedTo(seeks) => seeks.len(),
        }
    }
}

/// The `frames` of `input` (described by `info`), in their order, each
/// made a file by `then` from its still (a file of `format`, PNG else BMP, in
/// `out_dir`, which `then` owns: it deletes what it does not hand back). The runs are
/// spread over the cores (the first on the step's own CPU slot, each further one on a
/// slot borrowed from the engine), a decoder thread an input, and each run's stills
/// go to `then` as soon as it ends, so the first posters are encoded while later
/// frames are decoded. None left behind on failure.
pub(crate) async fn stills_then<F, Fut>(
    media: &Media,
    input: &MediaFile,
    info: &VideoInfo,
    frames: Frames<'_>,
    (format, out_dir): (MediaFormat, &Path),
    then: F,
) -> Result<Vec<MediaFile>, MediaError>
where
    F: Fn(MediaFile) -> Fut + Sync,
    Fut: Future<Output = Result<MediaFile, MediaError>> + Send,
{
    let format = if format == MediaFormat::Png {
        MediaFormat::Png
    } else {
        MediaFormat::Bmp
    };
    let seeks: Vec<f64> = match frames {
        Frames::ShownAt(times) => frames_shown_at(media, input, times)
            .await?
            .iter()
            .map(|s| (s.start - SEEK_MARGIN).max(0.0))
            .collect(),
        Frames::SeekedTo(seeks) => seeks.to_vec(),
    };
    let threads = (cores() / seeks.len().max(1)).max(1);
    let per_run = seeks.len().div_ceil(cores()).clamp(1, batch(info));
    let batches: Vec<&[f64]> = seeks.chunks(per_run).collect();
    // Each run's files and its error, if any: every run is let finish (none is
    // dropped half done, its files unknown), then the files of a failed call deleted.
    let made: Mutex<Vec<Vec<Result<MediaFile, MediaError>>>> =
        Mutex::new(batches.iter().map(|_| Vec::new()).collect());
    // The first run on the step's own CPU slot, each further one on a slot borrowed
    // from the engine, as a chunked encode's chunks.
    run_pieces(media.lender(), batches.len(), |i| {
        let (made, run) = (&made, (batches[i], threads));
        let then = &then;
        async move {
            let results = match batch_run(media, input, info, run, (format, out_dir)).await {
                Ok(stills) => {
                    let encoded = futures::stream::iter(stills).map(then);
                    encoded.buffered(ENCODES_A_RUN).collect().await
                }
                Err(e) => vec![Err(e)],
            };
            made.lock().unwrap_or_else(|e| e.into_inner())[i] = results;
            Ok(())
        }
    })
    .await?;
    let made: Vec<_> = made.into_inner().unwrap_or_else(|e| e.into_inner());
    let made: Vec<_> = made.into_iter().flatten().collect();
    if made.iter().any(Result::is_err) {
        remove_all(made.iter().flatten()).await;
    }
    made.into_iter().collect()
}

/// Deletes `files`, best effort: the stills of a call that failed.
async fn remove_all(files: impl IntoIterator<Item = &MediaFile>) {
    for file in files {
        let _ = tokio::fs::remove_file(&file.path).await;
    }
}

/// How many frames of `info`'s size one run takes.
fn batch(info: &VideoInfo) -> usize {
    let (w, h) = info.shown;
    let pixels = (u64::from(w) * u64::from(h)).max(1);
    (BATCH_PIXELS / pixels).clamp(1, 8) as usize
}

/// One ffmpeg run: the frame starting just after each of `seeks`, a file of `format`
/// each.
async fn batch_run(
    media: &Media,
    input: &MediaFile,
    info: &VideoInfo,
    (seeks, threads): (&[f64], usize),
    (format, out_dir): (MediaFormat, &Path),
) -> Result<Vec<MediaFile>, MediaError> {
    let outputs: Vec<MediaFile> = seeks
        .iter()
        .map(|_| MediaFile {
            path: output_path(out_dir, format),
            format,
        })
        .collect();
    let args = batch_args(
        input,
        info,
        (seeks, threads),
        &outputs,
        media.config().max_video_seconds,
    );
    let ran = media.runner().run(&media.config().ffmpeg, args).await;
    if let Err(e) = ran {
        remove_all(&outputs).await;
        return Err(e);
    }
    Ok(outputs)
}

/// The command line of [`batch_run`]: an input a seek, then an output an input.
fn batch_args(
    input: &MediaFile,
    info: &VideoInfo,
    (seeks, threads): (&[f64], usize),
    outputs: &[MediaFile],
    max_seconds: f64,
) -> Vec<OsString> {
    let mut args = quiet_args();
    for seek in seeks {
        let seek = format!("{seek:.6}");
        let max = max_seconds.to_string();
        let threads = threads.to_string();
        let head = ["-threads", &threads, "-ss", &seek, "-t", &max];
        args.extend(head.map(OsString::from));
        args.extend(["-f", demuxer(input.format), "-i"].map(OsString::from));
        args.push(file_url(&input.path));
    }
    for (n, output) in outputs.iter().enumerate() {
        // Each encoder's own pixel layout: no conversion added after ours.
        let (pixels, codec) = match output.format {
            MediaFormat::Png => ("rgb24", "png"),
            _ => ("bgr24", "bmp"),
        };
        let video = format!("{},format={pixels}", shown_pictures(info));
        let map = format!("{n}:v:0");
        let tail = [
            "-map",
            &map,
            "-map_metadata",
            "-1",
            "-vf",
            &video,
            "-frames:v",
            "1",
            "-c:v",
            codec,
            "-f",
            "image2",
        ];
        args.extend(tail.map(OsString::from));
        args.push(file_url(&output.path));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_input_seeks_and_feeds_its_own_png() {
        let input = MediaFile {
            path: "/in/clip.mp4".into(),
            format: MediaFormat::Mp4,
        };
        let png = |name: &str| MediaFile {
            path: format!("/out/{name}.png").into(),
            format: MediaFormat::Png,
        };
        let bmp = MediaFile {
            path: "/out/c.bmp".into(),
            format: MediaFormat::Bmp,
        };
        let args = batch_args(
            &input,
            &VideoInfo::default(),
            (&[1.5, 20.0, 30.0], 1),
            &[png("a"), png("b"), bmp],
            600.0,
        );
        let line: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let line = line.join(" ");
        assert!(
            line.contains("-threads 1 -ss 1.500000 -t 600 -f mov -i file:/in/clip.mp4"),
            "{line}"
        );
        assert!(line.contains("-ss 20.000000 -t 600"), "{line}");
        assert!(line.contains("-map 1:v:0 -map_metadata -1 -vf"), "{line}");
        assert!(
            line.contains("-frames:v 1 -c:v png -f image2 file:/out/b.png"),
            "{line}"
        );
        assert!(
            line.ends_with("bgr24 -frames:v 1 -c:v bmp -f image2 file:/out/c.bmp"),
            "{line}"
        );
        let sized = |shown| VideoInfo {
            shown,
            ..VideoInfo::default()
        };
        assert_eq!(batch(&sized((3840, 2160))), 2);
        assert_eq!(batch(&sized((640, 360))), 8);
    }

    #[tokio::test]
    async fn a_seek_a_quarter_frame_before_a_frame_is_the_frame_shown_at_it() {
        let dir = tempfile::tempdir().unwrap();
        let clip = crate::media::testutil::clip_with_cuts(
            dir.path(),
            (160, 120),
            [1.2, 1.2, 1.2],
            "ultrafast",
        );
        let media = crate::media::testutil::media();
        let info = crate::media::video::inspect::read_info(&media, &clip)
            .await
            .unwrap();
        // Frames 0, 29, 30 (the first of the second scene) and 61 at 25 fps.
        let frames = [0.0f64, 29.0, 30.0, 61.0];
        let shown: Vec<f64> = frames.iter().map(|f| (f + 0.25) / 25.0).collect();
        let seeks: Vec<f64> = frames
            .iter()
            .map(|f| ((f - 0.25) / 25.0).max(0.0))
            .collect();
        let keep = |still: MediaFile| async move { Ok(still) };
        let out = (MediaFormat::Bmp, dir.path());
        let by_probe = stills_then(&media, &clip, &info, Frames::ShownAt(&shown), out, keep)
            .await
            .unwrap();
        let by_seek = stills_then(&media, &clip, &info, Frames::SeekedTo(&seeks), out, keep)
            .await
            .unwrap();
        let read = |f: &MediaFile| std::fs::read(&f.path).unwrap();
        for (a, b) in by_probe.iter().zip(&by_seek) {
            assert_eq!(read(a), read(b));
        }
        assert_eq!(by_seek.len(), 4);
        assert_ne!(
            read(&by_seek[1]),
            read(&by_seek[2]),
            "the cut is between them"
        );
    }
}
