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
//! `codecs` chooses the renditions' video: H.264 (the default), AV1 (SVT-AV1 at the
//! preset and CRF of `video-to-webm`'s, a keyframe every 2 s by GOP length), or both,
//! one ladder each, H.264's first, all from the same decode, in chunks alike (SVT-AV1's
//! GOP length puts a key frame, closed GOP, at every segment a chunk starts on), and
//! its variants' `CODECS`, which ffmpeg leaves out, are read from their init sections
//! (`hls_codecs`).
//!
//! `ladder: auto` fits the H.264 ladder to the video (`video::ladder_fit`): each
//! rung's CRF from trial encodes of samples of it, a rung that would repeat the one
//! above dropped.
//!
//! The output is the master playlist; its media playlists, init sections and segments
//! are stored beside it (`storage::OutputKey::companion`) and reached through it
//! (docs/API.md, "HLS and storyboards"). `dash: true` adds a DASH manifest after it
//! over the same segments (`manifest`).

use std::path::Path;

use super::subtitled::{burn_for, check_language, BURN_SUBTITLES, SUBTITLES_LANGUAGE};
use super::video_to_audio::{loudness_target, LOUDNESS};
use super::video_to_webm::{CODEC, KEEP_HDR};
use crate::commands::formats::VIDEOS;
use crate::commands::options::Options;
use crate::commands::spec::{Beside, CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::error_code::Code;
use crate::media::ffmpeg::input::file_url;
use crate::media::subtitles::hls::add_rendition;
use crate::media::video::chunked::ladder::{self, LadderRecipe};
use crate::media::video::hdr::{kept_pictures, sdr_tags, shown_pictures};
use crate::media::video::info::VideoInfo;
use crate::media::video::loudness::audio_filter_args;
use crate::media::video::{hls, hls_codecs, hls_variants};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};
use codecs::{codecs, encoder, VideoCodec, CODECS};
use manifest::DASH;
use rungs::{fitted_ladder, ladder, Rung, LADDER_CHOICE};

mod codecs;
mod manifest;
mod rungs;

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Hls;

/// Seconds per segment, and between keyframes (a divisor of it: segments cut there).
const SEGMENT_SECONDS: u32 = 6;
const KEYFRAME_SECONDS: u32 = 2;
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
        options: &[
            &CODECS,
            &CODEC,
            &LADDER_CHOICE,
            &KEEP_HDR,
            &LOUDNESS,
            &BURN_SUBTITLES,
            &SUBTITLES_LANGUAGE,
            &DASH,
        ],
        output: Some(OUTPUT),
        in_process: false,
    };

    /// The master, and after it the DASH manifest when asked for.
    fn predict(input: Shape, options: &Options) -> Prediction {
        let size = input.size.map(|shown| ladder(shown)[0].size);
        let mut prediction = Prediction::one(Some(OUTPUT), Shape { size, ..input });
        if options.flag(&DASH) {
            prediction.files = 2;
            prediction.beside = Some(Beside {
                format: MediaFormat::Mpd,
                size: None,
                after: true,
            });
        }
        prediction
    }

    /// `codec` on its own names AV1 here; VP9 is `video-to-webm`'s alone. The
    /// subtitles' language is a language tag.
    fn check(options: &Options) -> Result<(), OptionProblem> {
        check_language(options)?;
        let vp9 = options.text(&CODEC).as_deref() == Some("vp9");
        match options.has(&CODEC) && !options.has(&CODECS) && vp9 {
            true => Err(OptionProblem {
                code: Code::InvalidOptionCombination,
                option: "codec",
                detail: "video-to-hls writes H.264 or AV1 (`codecs`); VP9 is video-to-webm's"
                    .into(),
            }),
            false => Ok(()),
        }
    }

    /// The decode, and every rung's encoding: each rung's pixels over every frame, an
    /// AV1 rung counted twice (SVT-AV1's preset costs about twice x264 veryfast).
    fn cost(work: Work, options: &Options) -> u64 {
        let shown = square_size(work.pixels);
        let per_ladder: u64 = ladder(shown)
            .iter()
            .map(|r| u64::from(r.size.0) * u64::from(r.size.1))
            .sum();
        let weight: u64 = codecs(options)
            .iter()
            .map(|c| if *c == VideoCodec::Av1 { 2 } else { 1 })
            .sum();
        let encoded = per_ladder.saturating_mul(weight);
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
        run(media, input, options, out_dir, progress).await
    }
}

/// A picture of `pixels` as if 16:9, for the cost when only the pixels are known.
fn square_size(pixels: u64) -> (u32, u32) {
    let height = ((pixels as f64) * 9.0 / 16.0).sqrt().round() as u32;
    ((height * 16 / 9).max(2), height.max(2))
}

async fn run(
    media: &Media,
    input: &MediaFile,
    options: &Options,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, MediaError> {
    let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
    let codecs = codecs(options);
    // A directory of its own: the playlists and segments are many files.
    let dir = out_dir.join(format!("hls-{}", uuid::Uuid::new_v4().simple()));
    tokio::fs::create_dir_all(&dir).await?;
    let (fitted, still) = match options.text(&LADDER_CHOICE).as_deref() == Some("auto") {
        true => fitted_ladder(media, (input, &info), options.flag(&KEEP_HDR), &dir).await?,
        false => (ladder(info.shown), false),
    };
    // A still video's keyframes go at segments (`video::ladder_fit`).
    let keyframe_seconds = match still {
        true => SEGMENT_SECONDS,
        false => KEYFRAME_SECONDS,
    };
    let rungs: Vec<(VideoCodec, Rung)> = codecs
        .iter()
        .flat_map(|c| {
            let rungs = match c {
                VideoCodec::H264 => fitted.clone(),
                VideoCodec::Av1 => ladder(info.shown),
            };
            rungs.into_iter().map(move |r| (*c, r))
        })
        .collect();
    for i in 0..rungs.len() {
        // ffmpeg writes into the rungs' directories but makes none behind `file:`.
        tokio::fs::create_dir_all(dir.join(format!("v{i}"))).await?;
    }
    let target = loudness_target(media, input, (options, info.has_audio), (None, None));
    let target = target.await?;
    let keep_hdr = options.flag(&KEEP_HDR);
    let mut recipe = recipe(&rungs, (&info, keep_hdr), keyframe_seconds, &dir);
    recipe.audio.splice(0..0, audio_filter_args(&[], target));
    recipe.burn = burn_for(options, &info, out_dir).await?;
    let output = dir.join("v%v").join("index.m3u8");
    let master = dir.join(MASTER);
    // The encode, then the master's variants ffmpeg left out, measured rates, AV1
    // codecs and subtitle rendition, then the DASH manifest of it all.
    let finished = async {
        ladder::encode(media, (input, &info), &recipe, out_dir, &output, progress).await?;
        let sizes: Vec<(u32, u32)> = rungs.iter().map(|(_, rung)| rung.size).collect();
        hls_variants::restore_variants(&master, &sizes).await?;
        hls::state_bandwidths(&master).await?;
        hls_codecs::state_av1_codecs(&master, info.has_audio).await?;
        if let Some(subtitles) = options.subtitles() {
            let language = options.text(&SUBTITLES_LANGUAGE);
            let language = language.as_deref().unwrap_or("und");
            add_rendition(&master, subtitles, language).await?;
        }
        let mut made = vec![MediaFile {
            path: master.clone(),
            format: OUTPUT,
        }];
        if options.flag(&DASH) {
            made.push(manifest::write(&master, &dir).await?);
        }
        Ok::<_, MediaError>(made)
    }
    .await;
    if finished.is_err() {
        // Best effort: partial playlists must not be mistaken for an output.
        let _ = tokio::fs::remove_dir_all(&dir).await;
        let _ = tokio::fs::remove_file(manifest::manifest_path(&dir)).await;
    }
    finished
}

/// The ladder's recipe for a source described by `info`: one decode split into every
/// rung, each scaled and encoded, muxed as HLS with fMP4 segments into `dir` (`v<i>/`
/// per rung). Run in one process or in chunks (`ladder::encode`), the same parts.
/// `keep_hdr`: an HDR source's renditions are 10-bit HEVC tagged as the source.
/// `keyframe_seconds`: between forced keyframes, a divisor of [`SEGMENT_SECONDS`].
fn recipe(
    rungs: &[(VideoCodec, Rung)],
    (info, keep_hdr): (&VideoInfo, bool),
    keyframe_seconds: u32,
    dir: &Path,
) -> LadderRecipe {
    let n = rungs.len();
    let labels: String = (0..n).map(|i| format!("[s{i}]")).collect();
    let kept = info.hdr.filter(|_| keep_hdr);
    let (shown, pix_fmt) = match kept {
        Some(_) => (kept_pictures(), "yuv420p10le"),
        None => (shown_pictures(info), "yuv420p"),
    };
    let mut graph = format!("{shown},format={pix_fmt},split={n}{labels}");
    for (i, (_, rung)) in rungs.iter().enumerate() {
        let (w, h) = rung.size;
        graph.push_str(&format!(
            ";[s{i}]scale={w}:{h}:flags=bicubic,setsar=1[v{i}]"
        ));
    }
    let gop = info.frame_rate.map_or(50, |rate| {
        (rate * f64::from(keyframe_seconds)).round().max(1.0) as u64
    });
    let mut video = Vec::new();
    for (i, (codec, rung)) in rungs.iter().enumerate() {
        video.extend(encoder(*codec, kept.is_some(), (gop, rung.crf), i));
        if *codec == VideoCodec::H264 {
            let rate = rung.rate_k;
            video.extend([
                format!("-maxrate:v:{i}"),
                format!("{rate}k"),
                format!("-bufsize:v:{i}"),
                format!("{}k", rate * 2),
            ]);
        }
    }
    video.extend(match kept {
        Some(hdr) => hdr.source_tags(),
        None => sdr_tags(info),
    });
    video.extend(["-pix_fmt", pix_fmt].map(String::from));
    let keyframes = format!("expr:gte(t,n_forced*{keyframe_seconds})");
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
        // HEVC (`keepHdr`) is encoded whole: its chunk joins are not measured. AV1 is
        // chunked as H.264 is: its key frames every `gop` frames fall on every segment.
        segment_frames: segment_frames(info.frame_rate, keyframe_seconds)
            .filter(|_| kept.is_none()),
        lead_in: info.frame_rate.map_or(0, |rate| {
            (rate * f64::from(keyframe_seconds)).round() as u64
        }),
        burn: None,
    }
}

/// Frames per segment at `rate`, where keyframes fall a whole number of frames apart:
/// at 25 or 30 fps every forced keyframe falls a fixed number of frames after the last,
/// so a chunk cut on one keeps the pattern; at 29.97 the gap varies by a frame, and the
/// ladder is encoded whole.
fn segment_frames(rate: Option<f64>, keyframe_seconds: u32) -> Option<u64> {
    let rate = rate?;
    let gap = rate * f64::from(keyframe_seconds);
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
mod tests;
