//! Loudness normalisation (`loudness`, EBU R128): a measuring pass, then the audio
//! filter that brings a track to the target integrated loudness.
//!
//! Why two passes: a one-pass `loudnorm` adjusts its gain as it goes (its dynamic
//! mode), which misses the target on short or uneven tracks and pumps on quiet ones.
//! Measured first — integrated loudness, loudness range and true peak, by ffmpeg's
//! BS.1770 meter (`ebur128`, read from stdout so that nothing depends on the log
//! level) — the second pass is `loudnorm` in its linear mode: one gain over the whole
//! track, exact to a tenth of a LU. Where that gain would lift the true peak above
//! [`TRUE_PEAK`], `loudnorm` falls back on its own dynamic mode, whose true-peak
//! limiter keeps it under. The ceiling is 1 dB under the −1 dBTP promised, for the
//! overshoot of the lossy encoders after it (AAC, Opus, Vorbis, MP3).

use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::transcode::quiet_input_args;
use crate::media::file::MediaFile;

/// The lowest and highest target (LUFS) the option takes.
pub(crate) const MIN_TARGET: f64 = -70.0;
pub(crate) const MAX_TARGET: f64 = -5.0;
/// The true-peak ceiling given to `loudnorm` (dBTP); see the module's doc.
const TRUE_PEAK: f64 = -2.0;
/// Quieter than this (LUFS) is silence as far as normalising goes: left as it is
/// rather than lifted by 50 dB or more into noise.
const SILENCE: f64 = -69.0;

/// What the measuring pass found of a track.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Measured {
    /// Integrated loudness, LUFS.
    pub integrated: f64,
    /// Loudness range, LU.
    pub range: f64,
    /// True peak, dBTP.
    pub true_peak: f64,
}

impl Measured {
    /// Reads the last values `ebur128`'s metadata printed (each frame prints the
    /// figures so far; the last are the whole track's). `None` without all three.
    fn parse_last<'a>(lines: impl Iterator<Item = &'a str>) -> Option<Measured> {
        let (mut integrated, mut range, mut peak) = (None, None, None);
        for line in lines {
            let value = |key: &str| line.strip_prefix(key)?.trim().parse::<f64>().ok();
            if let Some(v) = value("lavfi.r128.I=") {
                integrated = Some(v);
            } else if let Some(v) = value("lavfi.r128.LRA=") {
                range = Some(v);
            } else if let Some(v) = value("lavfi.r128.true_peak=") {
                peak = Some(v);
            }
        }
        let peak = peak?;
        Some(Measured {
            integrated: integrated?,
            range: range?,
            // Printed as a linear ratio; a silent track's 0 is −∞ dBTP.
            true_peak: if peak > 0.0 {
                20.0 * peak.log10()
            } else {
                -120.0
            },
        })
    }

    /// The audio filter that brings a track measured as this to `target` LUFS, then
    /// back to 48 kHz (`loudnorm` works, and hands on, at 192 kHz) in stereo or mono;
    /// `None` for silence, which is left alone.
    pub fn filter(self, target: f64) -> Option<String> {
        if !self.integrated.is_finite() || self.integrated < SILENCE {
            return None;
        }
        let range = (self.range.ceil() + 1.0).clamp(7.0, 50.0);
        Some(format!(
            "loudnorm=I={target}:TP={TRUE_PEAK}:LRA={range}:measured_I={i:.2}:\
             measured_TP={tp:.2}:measured_LRA={lra:.2}:measured_thresh={thresh:.2}:\
             offset=0:linear=true,aresample=48000,aformat=channel_layouts=stereo|mono",
            i = self.integrated,
            tp = self.true_peak.max(-99.0),
            lra = self.range,
            // The relative gate of BS.1770: 10 LU under the integrated loudness.
            thresh = self.integrated - 10.0,
        ))
    }
}

/// Measures the first audio track of `input`; `span` (start, length in seconds) limits
/// it to the part an output keeps, and `through` (filters, e.g. `atempo`) makes it
/// what the output's filters make of it before it is normalised. `Ok(None)` when the
/// meter printed nothing (no audio decoded).
pub(crate) async fn measure(
    media: &Media,
    input: &MediaFile,
    span: (Option<f64>, Option<f64>),
    through: Option<&str>,
) -> Result<Option<Measured>, MediaError> {
    let mut args = quiet_input_args(input, media.config().max_video_seconds);
    args.extend(["-map", "0:a:0", "-vn", "-sn", "-dn"].map(Into::into));
    if let Some(start) = span.0.filter(|s| *s > 0.0) {
        args.extend(["-ss".into(), format!("{start:.6}").into()]);
    }
    if let Some(length) = span.1 {
        args.extend(["-t".into(), format!("{length:.6}").into()]);
    }
    // `pipe\:1` is escaped for the filter graph; `ametadata` prints every frame's
    // figures there.
    let meter = "ebur128=metadata=1:peak=true,ametadata=mode=print:file=pipe\\\\:1";
    let chain = match through {
        Some(filters) => format!("{filters},{meter}"),
        None => meter.to_string(),
    };
    args.extend(["-af", &chain, "-f", "null", "-"].map(Into::into));
    // Only the latest line of each of the three figures is kept: a long track prints
    // ten lines every 100 ms.
    const KEYS: [&str; 3] = ["lavfi.r128.I=", "lavfi.r128.LRA=", "lavfi.r128.true_peak="];
    let mut kept: [String; 3] = Default::default();
    media
        .runner()
        .run_streaming(&media.config().ffmpeg, args, &mut |line: &str| {
            if let Some(k) = KEYS.iter().position(|key| line.starts_with(key)) {
                kept[k] = line.to_string();
            }
        })
        .await?;
    Ok(Measured::parse_last(kept.iter().map(String::as_str)))
}

/// The `-af` of an output normalised to `target` LUFS by `measured`, after the
/// filters `before` (e.g. `atempo`); `before` alone when there is nothing to normalise.
pub(crate) fn audio_filter_args(
    before: &[String],
    target: Option<(f64, Option<Measured>)>,
) -> Vec<String> {
    let mut chain: Vec<String> = before.to_vec();
    if let Some((target, Some(measured))) = target {
        chain.extend(measured.filter(target));
    }
    if chain.is_empty() {
        return Vec::new();
    }
    vec!["-af".to_string(), chain.join(",")]
}

/// Puts the normalising filter of `target` into output options `args` that encode
/// audio: after the filters of an `-af` there, else as an `-af` before `-c:a`; nothing
/// where no audio is encoded (no `-c:a`) or nothing is to be done.
pub(crate) fn add_to_audio(args: &mut Vec<String>, target: Option<(f64, Option<Measured>)>) {
    let Some(filter) = target.and_then(|(target, measured)| measured?.filter(target)) else {
        return;
    };
    if let Some(at) = args.iter().position(|a| a == "-af") {
        if let Some(chain) = args.get_mut(at + 1) {
            chain.push(',');
            chain.push_str(&filter);
        }
    } else if let Some(at) = args.iter().position(|a| a == "-c:a") {
        args.splice(at..at, ["-af".to_string(), filter]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_figures_the_meter_printed_are_the_track_s() {
        let printed = "frame:0\nlavfi.r128.I=-70.000\nlavfi.r128.LRA=0.000\n\
            lavfi.r128.true_peak=0.100\nframe:1\nlavfi.r128.I=-23.500\n\
            lavfi.r128.LRA=4.200\nlavfi.r128.true_peak=0.500\n";
        let m = Measured::parse_last(printed.lines()).unwrap();
        assert_eq!((m.integrated, m.range), (-23.5, 4.2));
        assert!((m.true_peak - -6.02).abs() < 0.01, "{m:?}");
        assert_eq!(Measured::parse_last("frame:0".lines()), None);
    }

    #[test]
    fn a_measured_track_is_normalised_linearly_and_silence_is_left_alone() {
        let m = Measured {
            integrated: -23.5,
            range: 4.2,
            true_peak: -6.0,
        };
        let filter = m.filter(-16.0).unwrap();
        assert!(
            filter.starts_with("loudnorm=I=-16:TP=-2:LRA=7:measured_I=-23.50"),
            "{filter}"
        );
        assert!(filter.contains("measured_thresh=-33.50:offset=0:linear=true"));
        let silent = Measured {
            integrated: -70.0,
            ..m
        };
        assert_eq!(silent.filter(-16.0), None);
        let before = ["atempo=2".to_string()];
        let args = audio_filter_args(&before, Some((-16.0, Some(m)))).join(" ");
        assert!(args.starts_with("-af atempo=2,loudnorm="), "{args}");
        assert!(audio_filter_args(&[], None).is_empty());
        let mut retimed: Vec<String> = ["-af", "atempo=2", "-c:a", "aac"].map(String::from).into();
        add_to_audio(&mut retimed, Some((-16.0, Some(m))));
        assert!(
            retimed[1].starts_with("atempo=2,loudnorm=I=-16"),
            "{retimed:?}"
        );
        let mut plain: Vec<String> = ["-map", "0:a:0", "-c:a", "aac"].map(String::from).into();
        add_to_audio(&mut plain, Some((-16.0, Some(m))));
        assert_eq!(plain[2], "-af", "{plain:?}");
        let mut silent: Vec<String> = ["-an"].map(String::from).into();
        add_to_audio(&mut silent, Some((-16.0, Some(m))));
        assert_eq!(silent, ["-an"]);
    }
}
