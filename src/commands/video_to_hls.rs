//! `video-to-hls`: an adaptive HLS stream — H.264 + AAC in fMP4 (CMAF) segments of
//! 6 s, a ladder of 1080p, 720p, 480p and 360p renditions never above the source
//! (the source's own size alone when it is under 360p), one media playlist each and a
//! master playlist with `BANDWIDTH`, `AVERAGE-BANDWIDTH`, `RESOLUTION` and `CODECS`.
//!
//! The ladder comes from one decode: one ffmpeg process whose `split` filter feeds
//! every rendition's scaler and encoder, so the source is read and decoded once
//! however many rungs there are. Each rung is capped-CRF x264 (`veryfast`, CRF 23,
//! `-maxrate` by rung) with a keyframe every 2 s, so segments cut at the same
//! instants in every rendition and a player can switch between them at any segment.
//! A long video is encoded in chunks of whole segments where that pays, with the same
//! recipe (`chunked::ladder`): the same playlists and segments, in parallel.
//!
//! The output is one file, the master playlist; its media playlists, init sections
//! and segments are stored beside it (`storage::OutputKey::companion`) and reached
//! through it (docs/API.md, "HLS and storyboards").

use std::path::Path;

use super::subtitled::{burn_for, check_language, BURN_SUBTITLES, SUBTITLES_LANGUAGE};
use super::video_to_audio::{loudness_target, LOUDNESS};
use super::video_to_webm::KEEP_HDR;
use crate::commands::formats::VIDEOS;
use crate::commands::options::Options;
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::media::ffmpeg::input::file_url;
use crate::media::ffmpeg::transcode::X264;
use crate::media::subtitles::hls::add_rendition;
use crate::media::video::chunked::ladder::{self, LadderRecipe};
use crate::media::video::hdr::{kept_pictures, sdr_tags, shown_pictures};
use crate::media::video::hls;
use crate::media::video::info::VideoInfo;
use crate::media::video::loudness::audio_filter_args;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Hls;

/// The rungs: the short side in lines, and the rate the encoder is capped at (kbit/s).
const LADDER: [(u32, u32); 4] = [(1080, 5000), (720, 2800), (480, 1400), (360, 800)];
/// The cap of a rung under 360p (the source's own size).
const SMALLEST_RATE_K: u32 = 600;
/// Seconds per segment, and between keyframes (a divisor of it: segments cut there).
const SEGMENT_SECONDS: u32 = 6;
const KEYFRAME_SECONDS: u32 = 2;
/// The renditions of `keepHdr`: 10-bit HEVC (Main 10) tagged `hvc1`, as Apple's HLS
/// players require, every forced keyframe an IDR so each segment decodes alone.
const HEVC_10BIT: [&str; 14] = [
    "-c:v",
    "libx265",
    "-preset",
    "veryfast",
    "-crf",
    "23",
    "-profile:v",
    "main10",
    "-tag:v",
    "hvc1",
    "-forced-idr",
    "1",
    "-x265-params",
    "log-level=error",
];
/// The AAC rate of every rendition.
const AUDIO_RATE: &str = "128k";
/// The master playlist's name in the output directory.
pub(crate) const MASTER: &str = "master.m3u8";

pub struct VideoToHls;

impl CommandDef for VideoToHls {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-to-hls",
        summary: "A video as an adaptive HLS stream: H.264 + AAC in fMP4 segments, a ladder \
                  of 1080p, 720p, 480p and 360p never above the source, and a master playlist.",
        inputs: INPUTS,
        options: &[&KEEP_HDR, &LOUDNESS, &BURN_SUBTITLES, &SUBTITLES_LANGUAGE],
        output: Some(OUTPUT),
        in_process: false,
    };

    fn check(options: &Options) -> Result<(), OptionProblem> {
        check_language(options)
    }

    fn predict(input: Shape, _options: &Options) -> Prediction {
        let size = input.size.map(|shown| ladder(shown)[0].size);
        Prediction::one(Some(OUTPUT), Shape { size, ..input })
    }

    /// The decode, and every rung's encoding: each rung's pixels over every frame.
    fn cost(work: Work, _options: &Options) -> u64 {
        let shown = square_size(work.pixels);
        let encoded: u64 = ladder(shown)
            .iter()
            .map(|r| u64::from(r.size.0) * u64::from(r.size.1))
            .sum();
        work.total()
            .saturating_add(encoded.saturating_mul(work.frames.max(1)))
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        Ok(vec![run(media, input, options, out_dir, progress).await?])
    }
}

/// A picture of `pixels` as if 16:9, for the cost when only the pixels are known.
fn square_size(pixels: u64) -> (u32, u32) {
    let height = ((pixels as f64) * 9.0 / 16.0).sqrt().round() as u32;
    ((height * 16 / 9).max(2), height.max(2))
}

/// One rendition: its frame size and the encoder's cap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rung {
    size: (u32, u32),
    rate_k: u32,
}

/// The rungs for a source shown at `shown`, largest first: each of [`LADDER`] whose
/// short side is at most the source's (so no rung is taller than the source), at the
/// source's aspect with even sides; the source's own size alone when none fits.
fn ladder(shown: (u32, u32)) -> Vec<Rung> {
    let (w, h) = (shown.0.max(2), shown.1.max(2));
    let short = w.min(h);
    let even = |v: f64| ((v / 2.0).round() as u32 * 2).max(2);
    let rungs: Vec<Rung> = LADDER
        .iter()
        .filter(|(lines, _)| *lines <= short)
        .map(|&(lines, rate_k)| {
            let scale = f64::from(lines) / f64::from(short);
            let size = (even(f64::from(w) * scale), even(f64::from(h) * scale));
            Rung { size, rate_k }
        })
        .collect();
    if rungs.is_empty() {
        let size = (even(f64::from(w)), even(f64::from(h)));
        return vec![Rung {
            size,
            rate_k: SMALLEST_RATE_K,
        }];
    }
    rungs
}

async fn run(
    media: &Media,
    input: &MediaFile,
    options: &Options,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
    let rungs = ladder(info.shown);
    // A directory of its own: the playlists and segments are many files.
    let dir = out_dir.join(format!("hls-{}", uuid::Uuid::new_v4().simple()));
    for i in 0..rungs.len() {
        // ffmpeg writes into the rungs' directories but makes none behind `file:`.
        tokio::fs::create_dir_all(dir.join(format!("v{i}"))).await?;
    }
    let target = loudness_target(media, input, (options, info.has_audio), (None, None));
    let target = target.await?;
    let mut recipe = recipe(&rungs, (&info, options.flag(&KEEP_HDR)), &dir);
    recipe.audio.splice(0..0, audio_filter_args(&[], target));
    recipe.burn = burn_for(options, &info, out_dir).await?;
    let output = dir.join("v%v").join("index.m3u8");
    let ran = ladder::encode(media, (input, &info), &recipe, out_dir, &output, progress).await;
    let master = dir.join(MASTER);
    let finished = match ran {
        Ok(()) => hls::state_bandwidths(&master).await,
        Err(e) => Err(e),
    };
    let finished = match (finished, options.subtitles()) {
        (Ok(()), Some(subtitles)) => {
            let language = options.text(&SUBTITLES_LANGUAGE);
            let language = language.as_deref().unwrap_or("und");
            add_rendition(&master, subtitles, language).await
        }
        (finished, _) => finished,
    };
    if let Err(e) = finished {
        // Best effort: partial playlists must not be mistaken for an output.
        let _ = tokio::fs::remove_dir_all(&dir).await;
        return Err(e);
    }
    Ok(MediaFile {
        path: master,
        format: OUTPUT,
    })
}

/// The ladder's recipe for a source described by `info`: one decode split into every
/// rung, each scaled and encoded, muxed as HLS with fMP4 segments into `dir` (`v<i>/`
/// per rung). Run in one process or in chunks (`ladder::encode`), the same parts.
/// `keep_hdr`: an HDR source's renditions are 10-bit HEVC tagged as the source.
fn recipe(rungs: &[Rung], (info, keep_hdr): (&VideoInfo, bool), dir: &Path) -> LadderRecipe {
    let n = rungs.len();
    let labels: String = (0..n).map(|i| format!("[s{i}]")).collect();
    let kept = info.hdr.filter(|_| keep_hdr);
    let (shown, pix_fmt) = match kept {
        Some(_) => (kept_pictures(), "yuv420p10le"),
        None => (shown_pictures(info), "yuv420p"),
    };
    let mut graph = format!("{shown},format={pix_fmt},split={n}{labels}");
    for (i, rung) in rungs.iter().enumerate() {
        let (w, h) = rung.size;
        graph.push_str(&format!(
            ";[s{i}]scale={w}:{h}:flags=bicubic,setsar=1[v{i}]"
        ));
    }
    let (mut video, tags): (Vec<String>, _) = match kept {
        Some(hdr) => (HEVC_10BIT.map(String::from).into(), hdr.source_tags()),
        None => (X264.map(String::from).into(), sdr_tags(info)),
    };
    video.extend(tags);
    video.extend(["-pix_fmt", pix_fmt].map(String::from));
    for (i, rung) in rungs.iter().enumerate() {
        let rate = rung.rate_k;
        video.extend([
            format!("-maxrate:v:{i}"),
            format!("{rate}k"),
            format!("-bufsize:v:{i}"),
            format!("{}k", rate * 2),
        ]);
    }
    let keyframes = format!("expr:gte(t,n_forced*{KEYFRAME_SECONDS})");
    video.extend(["-force_key_frames".to_string(), keyframes]);
    let audio = match info.has_audio {
        true => ["-c:a", "aac", "-b:a", AUDIO_RATE, "-ac", "2"]
            .map(String::from)
            .into(),
        false => Vec::new(),
    };
    LadderRecipe {
        graph,
        renditions: n,
        video,
        audio,
        muxer: muxer(n, info.has_audio, dir),
        // HEVC is encoded whole: the chunk joins are measured on x264's ends only.
        segment_frames: segment_frames(info.frame_rate).filter(|_| kept.is_none()),
        lead_in: info.frame_rate.map_or(0, |rate| {
            (rate * f64::from(KEYFRAME_SECONDS)).round() as u64
        }),
        burn: None,
    }
}

/// Frames per segment at `rate`, where keyframes fall a whole number of frames apart:
/// at 25 or 30 fps every forced keyframe falls a fixed number of frames after the last,
/// so a chunk cut on one keeps the pattern; at 29.97 the gap varies by a frame, and the
/// ladder is encoded whole.
fn segment_frames(rate: Option<f64>) -> Option<u64> {
    let rate = rate?;
    let gap = rate * f64::from(KEYFRAME_SECONDS);
    let whole = (gap - gap.round()).abs() < 1e-6 && gap >= 1.0;
    whole.then(|| (rate * f64::from(SEGMENT_SECONDS)).round() as u64)
}

/// The HLS muxer's arguments: `n` variants (with audio, the `i`th video and audio
/// stream each), 6 s fMP4 segments into `dir`.
fn muxer(n: usize, has_audio: bool, dir: &Path) -> Vec<String> {
    let streams: Vec<String> = (0..n)
        .map(|i| match has_audio {
            true => format!("v:{i},a:{i}"),
            false => format!("v:{i}"),
        })
        .collect();
    let segments = dir.join("v%v").join("seg%d.mp4");
    [
        "-f",
        "hls",
        "-hls_time",
        &SEGMENT_SECONDS.to_string(),
        "-hls_playlist_type",
        "vod",
        "-hls_segment_type",
        "fmp4",
        "-hls_flags",
        "independent_segments",
        "-hls_fmp4_init_filename",
        "init.mp4",
        "-hls_segment_filename",
        &path_url(&segments),
        "-master_pl_name",
        MASTER,
        "-var_stream_map",
        &streams.join(" "),
    ]
    .map(String::from)
    .into()
}

fn path_url(path: &Path) -> String {
    file_url(path).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(shown: (u32, u32)) -> Vec<(u32, u32)> {
        ladder(shown).iter().map(|r| r.size).collect()
    }

    #[test]
    fn the_ladder_never_rises_above_the_source_and_always_has_a_rung() {
        assert_eq!(
            sizes((1920, 1080)),
            [(1920, 1080), (1280, 720), (854, 480), (640, 360)]
        );
        assert_eq!(sizes((1280, 720)), [(1280, 720), (854, 480), (640, 360)]);
        assert_eq!(sizes((1000, 600)), [(800, 480), (600, 360)]);
        // Portrait: rungs by the short side, so no rung is taller than the source.
        assert_eq!(sizes((720, 1280)), [(720, 1280), (480, 854), (360, 640)]);
        // Under 360p: the source's own size, made even.
        assert_eq!(sizes((321, 241)), [(322, 242)]);
        for shown in [(1920, 1080), (64, 48), (720, 1280), (4000, 3000)] {
            let rungs = ladder(shown);
            assert!(!rungs.is_empty());
            assert!(rungs.iter().all(|r| r.size.1 <= shown.1.max(2) + 1));
        }
    }

    fn source(has_audio: bool) -> VideoInfo {
        crate::media::video::info::tests::info(Some(25.0), has_audio)
    }

    #[test]
    fn one_decode_is_split_into_every_rung_in_one_hls_muxer() {
        let rungs = ladder((1920, 1080));
        let dir = Path::new("/tmp/x");
        let recipe = recipe(&rungs, (&source(true), false), dir);
        let args = recipe.whole().join(" ");
        assert!(args.contains("split=4[s0][s1][s2][s3]"), "{args}");
        assert!(args.contains("[s3]scale=640:360"), "{args}");
        assert!(
            args.contains("-maxrate:v:0 5000k -bufsize:v:0 10000k"),
            "{args}"
        );
        assert!(args.contains("-hls_segment_type fmp4"), "{args}");
        assert!(
            args.contains("-var_stream_map v:0,a:0 v:1,a:1 v:2,a:2 v:3,a:3"),
            "{args}"
        );
        assert_eq!(args.matches("-map 0:a:0").count(), 4, "{args}");
        // 6 s at 25 fps: chunks are cut between segments, every 150 frames.
        assert_eq!(recipe.segment_frames, Some(150));
        assert_eq!(recipe.lead_in, 50);
        let silent = super::recipe(&rungs[3..], (&source(false), false), dir)
            .whole()
            .join(" ");
        assert!(silent.contains("-var_stream_map v:0"), "{silent}");
        assert!(!silent.contains("-c:a"), "{silent}");
    }

    #[test]
    fn only_rates_with_whole_frames_between_keyframes_are_split() {
        assert_eq!(segment_frames(Some(30.0)), Some(180));
        assert_eq!(segment_frames(Some(12.5)), Some(75));
        assert_eq!(segment_frames(Some(30000.0 / 1001.0)), None);
        assert_eq!(segment_frames(None), None);
    }

    #[test]
    fn the_cost_counts_every_rung_s_encoding_besides_the_decode() {
        let work = Work {
            pixels: 1920 * 1080,
            frames: 10,
        };
        let cost = VideoToHls::cost(work, &Options::default());
        assert!(cost > work.total() * 2, "{cost}");
    }
}
