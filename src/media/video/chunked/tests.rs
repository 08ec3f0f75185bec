//! Chunked encodes against the single-process encode of the same recipe, on a clip
//! with scene cuts and audio, by what ffprobe and ffmpeg's SSIM filter say.

use std::process::Command;
use std::sync::Mutex;

use super::plan::{self, Plan};
use super::*;
use crate::media::testutil::{clip_with_cuts, media, tempdir};

mod clips;

pub(crate) use clips::{audio_delayed, ssim};
use clips::{audio_seconds, audio_start, video_times};

fn ogg() -> SplitRecipe {
    SplitRecipe {
        filter: "format=yuv420p".into(),
        video: ["-c:v", "libtheora", "-q:v", "6", "-g", "12"]
            .map(String::from)
            .into(),
        audio: ["-c:a", "libvorbis", "-q:a", "4"].map(String::from).into(),
        muxer: "ogg",
        keyframe_interval: 12,
        decode_weight: 0.1,
        muxer_options: Vec::new(),
        time_scale: 1.0,
        cores_per_chunk: 1,
        local_only: false,
        part: None,
        burn: None,
    }
}

fn webm() -> SplitRecipe {
    let video = [
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
    ];
    SplitRecipe {
        filter: "format=yuv420p".into(),
        video: video
            .into_iter()
            .chain(["-b:v", "0", "-crf", "35", "-g", "40"])
            .map(String::from)
            .collect(),
        audio: ["-c:a", "libopus", "-b:a", "96k"].map(String::from).into(),
        muxer: "webm",
        keyframe_interval: 40,
        decode_weight: 0.1,
        muxer_options: Vec::new(),
        time_scale: 1.0,
        cores_per_chunk: 1,
        local_only: false,
        part: None,
        burn: None,
    }
}

/// Encodes `source` whole and in three chunks with `recipe`, and holds the chunked
/// file to the whole one: every frame once at the whole one's times, the audio as
/// long, SSIM within 0.003 and size within `size_slack`.
async fn chunked_matches_whole(recipe: SplitRecipe, format: MediaFormat, size_slack: f64) {
    chunked_matches_whole_with_audio_after(recipe, format, size_slack, 0.0).await;
}

/// [`chunked_matches_whole`] of a source whose audio starts `delay` seconds after its
/// video; the audio must start where the single-process encode starts it.
async fn chunked_matches_whole_with_audio_after(
    recipe: SplitRecipe,
    format: MediaFormat,
    size_slack: f64,
    delay: f64,
) {
    let dir = tempdir();
    // 4 s, 100 frames.
    let mut source = clip_with_cuts(dir.path(), (320, 240), [1.4, 1.4, 1.2], "medium");
    if delay > 0.0 {
        source = audio_delayed(&source, delay);
    }
    let media = media();
    let info = crate::media::video::inspect::inspect(&media, &source, &[MediaFormat::Mp4])
        .await
        .unwrap();
    let whole = transcode::run_to_file(
        &media,
        &source,
        recipe.whole(),
        format,
        None,
        dir.path(),
        &|_| {},
    )
    .await
    .unwrap();
    // Three chunks of unequal length on the encoder's keyframes, whatever the cores of
    // this machine.
    let plan: Plan = plan::plan(&info, 1, 2, 1, &plan::FrameCosts::uniform(0.08)).unwrap();
    let gop = recipe.keyframe_interval;
    let cuts = [0, gop * (36 / gop).max(1), gop * (72 / gop).max(2), 100];
    let chunks = cuts
        .windows(2)
        .enumerate()
        .map(|(index, w)| plan::Chunk {
            index,
            start: w[0],
            count: w[1] - w[0],
            last: index == 2,
        })
        .collect();
    let time_scale = recipe.time_scale;
    let plan = Plan {
        chunks,
        time_scale,
        ..plan
    };
    let reported = Mutex::new(Vec::new());
    let report = |f: f64| reported.lock().unwrap().push(f);
    let chunked = Chunked {
        media: &media,
        input: &source,
        recipe: &recipe,
        plan: &plan,
        format,
        farm: None,
    };
    let joined = chunked
        .run(dir.path(), &report)
        .await
        .unwrap()
        .expect("the frames add up");

    let (times, whole_times) = (video_times(&joined.path), video_times(&whole.path));
    assert_eq!(times.len(), 100);
    assert_eq!(
        times, whole_times,
        "every frame once, at the single-process times"
    );
    let step = times.windows(2).map(|w| w[1] - w[0]);
    let frame = 0.04 * time_scale;
    assert!(step.clone().all(|d| (d - frame).abs() < 0.002), "{times:?}");
    let (audio, whole_audio) = (audio_seconds(&joined.path), audio_seconds(&whole.path));
    assert!(
        (audio - whole_audio).abs() < 0.03 && audio > 3.9 * time_scale,
        "{audio} vs {whole_audio}"
    );
    let (start, whole_start) = (audio_start(&joined.path), audio_start(&whole.path));
    assert!(
        (start - whole_start).abs() < 0.002 && whole_start >= delay - 0.05,
        "the audio starts at {start}, in one process at {whole_start}"
    );
    let (q, whole_q) = (
        ssim(&joined.path, &source.path),
        ssim(&whole.path, &source.path),
    );
    assert!(
        (q - whole_q).abs() <= 0.003,
        "SSIM {q} chunked, {whole_q} whole"
    );
    let size = std::fs::metadata(&joined.path).unwrap().len() as f64;
    let whole_size = std::fs::metadata(&whole.path).unwrap().len() as f64;
    assert!(
        (size / whole_size - 1.0).abs() <= size_slack,
        "{size} vs {whole_size}"
    );
    let reported = reported.into_inner().unwrap();
    assert_eq!(reported.last(), Some(&1.0));
    assert!(reported.windows(2).all(|w| w[0] <= w[1]), "{reported:?}");
    // Only the output is left: the chunks went with their directory.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    let sources = if delay > 0.0 { 2 } else { 1 };
    assert_eq!(
        left.len(),
        sources + 2,
        "sources, whole and joined: {left:?}"
    );
}

#[tokio::test]
async fn theora_in_chunks_matches_the_single_process_encode() {
    chunked_matches_whole(ogg(), MediaFormat::Ogv, 0.05).await;
}

#[tokio::test]
async fn vp9_in_chunks_matches_the_single_process_encode() {
    chunked_matches_whole(webm(), MediaFormat::Webm, 0.05).await;
}

#[tokio::test]
async fn audio_that_starts_late_starts_as_late_in_chunks_as_in_one_process() {
    chunked_matches_whole_with_audio_after(ogg(), MediaFormat::Ogv, 0.05, 0.5).await;
    chunked_matches_whole_with_audio_after(webm(), MediaFormat::Webm, 0.05, 0.5).await;
    chunked_matches_whole_with_audio_after(x264_faster(), MediaFormat::Mp4, 0.05, 0.5).await;
}

/// x264 in MP4, retimed as `modify-video-speed` does at speed 1.5 (25 fps become 37.5).
fn x264_faster() -> SplitRecipe {
    let video = ["-fps_mode", "vfr", "-c:v", "libx264", "-preset", "veryfast"];
    let audio = ["-af", "atempo=1.5", "-c:a", "aac", "-b:a", "128k"];
    let parts = (
        video
            .into_iter()
            .chain(["-crf", "23"])
            .map(String::from)
            .collect(),
        audio.map(String::from).into(),
    );
    let filter = "setpts=PTS/1.5,fps=75/2,format=yuv420p".to_string();
    SplitRecipe::x264(&media(), filter, parts, 1.0 / 1.5)
}

#[tokio::test]
async fn x264_in_mp4_chunks_matches_the_single_process_encode_and_keeps_its_retiming() {
    chunked_matches_whole(x264_faster(), MediaFormat::Mp4, 0.05).await;
}

#[test]
fn the_concat_list_states_every_chunk_but_the_last_by_its_exact_length() {
    let info = VideoInfo {
        frames: Some(100),
        frame_rate: Some(25.0),
        base_rate: Some(25.0),
        shown: (320, 240),
        ..VideoInfo::default()
    };
    // Four even chunks: decoding counted free.
    let plan = plan::plan(&info, 1, 4, 1, &plan::FrameCosts::uniform(0.0)).unwrap();
    let media = media();
    let input = MediaFile {
        path: "in.mp4".into(),
        format: MediaFormat::Mp4,
    };
    let recipe = ogg();
    let chunked = Chunked {
        media: &media,
        input: &input,
        recipe: &recipe,
        plan: &plan,
        format: MediaFormat::Ogv,
        farm: None,
    };
    assert_eq!(
        chunked.concat_list(),
        "ffconcat version 1.0\nfile chunk-0.ogv\nduration 1.000000000\n\
         file chunk-1.ogv\nduration 1.000000000\nfile chunk-2.ogv\nduration 1.000000000\n\
         file chunk-3.ogv\n"
    );
    let (before, after) = recipe.chunk(&plan.chunks[1], 25.0);
    assert_eq!(before, ["-ss", "0.980000"]);
    assert!(after
        .join(" ")
        .contains("-vf setpts=PTS-STARTPTS,format=yuv420p -frames:v 25 -c:v libtheora"));
    // Burned cues: each chunk's frames are put at their place in the whole for them.
    let burning = SplitRecipe {
        burn: Some("ass=filename=c.ass".into()),
        ..recipe.clone()
    };
    let (_, after) = burning.chunk(&plan.chunks[1], 25.0);
    assert!(after.join(" ").contains(
        "-vf setpts=PTS-STARTPTS,setpts=PTS+1.000000/TB,ass=filename=c.ass,setpts=PTS-STARTPTS,format=yuv420p"
    ));
    assert!(burning
        .whole()
        .join(" ")
        .contains("-vf ass=filename=c.ass,format=yuv420p"));
    let (before, after) = recipe.chunk(&plan.chunks[3], 25.0);
    assert_eq!(before, ["-ss", "2.980000"]);
    assert!(
        !after.join(" ").contains("-frames:v"),
        "the last chunk reads to the end"
    );
}

#[tokio::test]
async fn an_mpeg_ts_is_encoded_in_one_process_as_its_seeks_may_find_no_keyframe() {
    let dir = tempdir();
    // 4 s with a tone and one keyframe, at its start: a seek to 2 s would decode nothing.
    let path = dir.path().join("far.ts");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=160x120:rate=25:duration=4")
        .args(["-f", "lavfi", "-i", "sine=duration=4"])
        .args([
            "-c:v", "libx264", "-g", "250", "-c:a", "aac", "-f", "mpegts",
        ])
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    // ffmpeg behind a script that logs each run's arguments.
    let (wrapper, log) = crate::media::testutil::logging_ffmpeg(dir.path());
    let media = Media::new(crate::media::MediaConfig {
        ffmpeg: wrapper,
        min_chunk_work: 1,
        ..media().config().clone()
    });
    let input = MediaFile {
        path,
        format: MediaFormat::MpegTs,
    };
    let out = convert(
        &media,
        &input,
        &[MediaFormat::MpegTs],
        |_| ogg(),
        MediaFormat::Ogv,
        dir.path(),
        &|_| {},
    )
    .await
    .unwrap();
    assert_eq!(video_times(&out.path).len(), 100, "every frame");
    let runs = std::fs::read_to_string(&log).unwrap();
    assert_eq!(runs.lines().count(), 1, "one run: {runs}");
    assert!(!runs.contains("-ss"), "no seek: {runs}");
}
