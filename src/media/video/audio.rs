//! What the audio commands share: the audio track of a video or an audio file, checked
//! against the length limit, and its loudness over time (`audio-waveform`).

use tokio::io::AsyncReadExt;

use crate::media::ffmpeg::transcode::quiet_input_args;
use crate::media::{video::probe, Media, MediaError, MediaFile};

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
    let probe = probe::run(media, &input.path, input.format, false)
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

/// The loudness of `input`'s first audio track, `bars` values from its start to its
/// end, each the peak amplitude (0–1) of the mono mix in its slice of the track.
pub(crate) async fn peaks(
    media: &Media,
    input: &MediaFile,
    bars: usize,
) -> Result<Vec<f32>, MediaError> {
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
    Ok(bar_peaks(&samples, bars))
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
}
