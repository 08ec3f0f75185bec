//! What the audio commands share: the audio track of a video or an audio file, checked
//! against the length limit, and its loudness over time (`audio-waveform`).

use tokio::io::AsyncReadExt;

use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::transcode::quiet_input_args;
use crate::media::file::MediaFile;
use crate::media::video::ffprobe;

/// Samples a second the loudness is read at: a bar of a 1800 px waveform of a 10 min
/// track covers 2 660 of them, and a tone of up to 4 kHz still has its peaks.
pub(crate) const LOUDNESS_RATE: u32 = 8_000;

/// What the probe says of a file's first audio track.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AudioInfo {
    /// Seconds, when known.
    pub duration: Option<f64>,
    pub codec: Option<String>,
}

/// Probes `input` and checks its length against `--max-video-seconds` (a source's
/// length limit whatever it holds). `NoAudioTrack` without an audio stream;
/// `InvalidMedia` when ffprobe cannot read it.
pub(crate) async fn inspect_audio(
    media: &Media,
    input: &MediaFile,
) -> Result<AudioInfo, MediaError> {
    let probe = ffprobe::run(media, &input.path, input.format, false)
        .await
        .map_err(|e| match e {
            MediaError::ProcessFailed { stderr_tail, .. } => MediaError::InvalidMedia(format!(
                "ffprobe could not read it ({})",
                crate::media::ffmpeg::process::last_line(&stderr_tail)
            )),
            other => other,
        })?;
    let audio = probe.audio().ok_or(MediaError::NoAudioTrack)?;
    let positive = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);
    let duration = positive(audio.duration).or(positive(probe.format.duration));
    let limit = media.config().max_video_seconds;
    if let Some(seconds) = duration.filter(|s| *s > limit) {
        return Err(MediaError::VideoTooLong { seconds, limit });
    }
    Ok(AudioInfo {
        duration,
        codec: audio.codec_name.clone(),
    })
}

/// A waveform's slice of 10 ms, and a stretch of 5 of them: the shortest sound that
/// counts as loud. A click (one sample, or the few a resampler smears it over) fills
/// one slice, never a whole stretch.
const SLICE_PER_SECOND: u32 = 100;
const STRETCH_SLICES: usize = 5;

/// The loudness of a track as `audio-waveform` draws it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Loudness {
    /// From the track's start to its end, each the peak amplitude (0–1) of the mono
    /// mix in its slice of the track.
    pub bars: Vec<f32>,
    /// The level of the loudest stretch of the whole track ([`loudest_stretch`]):
    /// what a bar of full height stands for.
    pub loudest: f32,
}

/// The loudness of `input`'s first audio track, `bars` values from its start to its
/// end, and the level of its loudest stretch.
pub(crate) async fn loudness(
    media: &Media,
    input: &MediaFile,
    bars: usize,
) -> Result<Loudness, MediaError> {
    let mut args = quiet_input_args(input, media.config().max_video_seconds);
    let rate = LOUDNESS_RATE.to_string();
    let tail = [
        "-map", "0:a:0", "-ac", "1", "-ar", &rate, "-f", "f32le", "pipe:1",
    ];
    args.extend(tail.map(Into::into));
    let mut samples: Vec<f32> = Vec::new();
    let into = &mut samples;
    media
        .runner()
        .run_reading(&media.config().ffmpeg, args, |mut pipe| async move {
            // Whole-sample reads: |x| of each little-endian f32, kept at 4 bytes each
            // (10 min at 8 kHz is 19 MB).
            let mut buffer = vec![0u8; 64 * 1024];
            let mut carry: Vec<u8> = Vec::new();
            loop {
                let n = pipe.read(&mut buffer).await?;
                if n == 0 {
                    break;
                }
                carry.extend_from_slice(&buffer[..n]);
                let whole = carry.len() / 4 * 4;
                into.extend(
                    carry[..whole]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).abs()),
                );
                carry.drain(..whole);
            }
            Ok(())
        })
        .await?;
    Ok(Loudness {
        bars: bar_peaks(&samples, bars),
        loudest: loudest_stretch(&samples, (LOUDNESS_RATE / SLICE_PER_SECOND) as usize),
    })
}

/// The level of the loudest ~50 ms of `samples` (absolute values): the highest level
/// that every 10 ms slice (`slice` samples) of some 5 in a row reaches. One loud
/// sample cannot set it; a sustained sound, a word or a note, does. A track shorter
/// than a stretch is measured whole.
pub(crate) fn loudest_stretch(samples: &[f32], slice: usize) -> f32 {
    let peaks: Vec<f32> = samples
        .chunks(slice.max(1))
        .map(|chunk| {
            let finite = chunk.iter().copied().filter(|s| s.is_finite());
            finite.fold(0.0f32, f32::max).min(1.0)
        })
        .collect();
    let quietest = |stretch: &[f32]| stretch.iter().copied().fold(f32::INFINITY, f32::min);
    match peaks.len() {
        0 => 0.0,
        n if n < STRETCH_SLICES => quietest(&peaks),
        _ => peaks
            .windows(STRETCH_SLICES)
            .map(quietest)
            .fold(0.0f32, f32::max),
    }
}

/// `bars` peaks of `samples` (absolute values), each over an equal slice of them (at
/// least the one sample under it), clipped to 1.
pub(crate) fn bar_peaks(samples: &[f32], bars: usize) -> Vec<f32> {
    (0..bars)
        .map(|i| {
            let from = i * samples.len() / bars;
            let to = ((i + 1) * samples.len() / bars)
                .max(from + 1)
                .min(samples.len());
            samples
                .get(from..to)
                .unwrap_or_default()
                .iter()
                .copied()
                .filter(|s| s.is_finite())
                .fold(0.0f32, f32::max)
                .min(1.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bar_is_the_peak_of_its_slice() {
        let samples = [0.0, 0.1, 0.0, 0.0, 0.5, 0.9, 0.2, 0.3];
        assert_eq!(bar_peaks(&samples, 4), vec![0.1, 0.0, 0.9, 0.3]);
        assert_eq!(bar_peaks(&samples, 2), vec![0.1, 0.9]);
        // More bars than samples: each bar shows the sample under it (clipped to 1).
        assert_eq!(bar_peaks(&[0.5, 2.0], 4), vec![0.5, 0.5, 1.0, 1.0]);
        assert_eq!(bar_peaks(&[], 3), vec![0.0; 3]);
    }

    #[test]
    fn one_loud_sample_does_not_set_the_loudest_stretch() {
        // 100 ms of a steady 0.5, then one sample at full scale.
        let mut samples = vec![0.5; 800];
        samples.push(1.0);
        assert_eq!(loudest_stretch(&samples, 80), 0.5);
        // 60 ms at 0.9 among 0.2: a stretch of it, so it sets the level.
        let mut burst = vec![0.2; 1200];
        burst[400..880].fill(0.9);
        assert_eq!(loudest_stretch(&burst, 80), 0.9);
        assert_eq!(
            loudest_stretch(&[0.3, 0.6], 80),
            0.6,
            "shorter than a slice"
        );
        assert_eq!(loudest_stretch(&[], 80), 0.0);
    }
}
