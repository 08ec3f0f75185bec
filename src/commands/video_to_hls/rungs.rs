//! The ladder's rungs: the fixed ladder, never above the source, and (`ladder: auto`)
//! the one fitted to the video (`video::ladder_fit`).

use std::path::Path;

use super::super::options::{OptionKind, OptionSpec};
use crate::media::video::hdr::shown_pictures;
use crate::media::video::info::VideoInfo;
use crate::media::video::ladder_fit::{self, RungToFit};
use crate::media::{Media, MediaError, MediaFile};

/// The rungs: the short side in lines, and the rate the encoder is capped at (kbit/s).
pub(super) const LADDER: [(u32, u32); 4] = [(1080, 5000), (720, 2800), (480, 1400), (360, 800)];
/// The cap of a rung under 360p (the source's own size).
pub(super) const SMALLEST_RATE_K: u32 = 600;

/// The fixed ladder, or one fitted to the video.
pub const LADDER_CHOICE: OptionSpec = OptionSpec {
    name: "ladder",
    doc: "video-to-hls: fixed (default: every rung at CRF 23 under its rate cap) or auto (each H.264 rung at the highest CRF whose SSIM, measured on samples of the video, stays within 0.003 of the fixed rung's; rungs that would repeat the one above dropped: a slide deck takes a fraction of the bytes, a busy video keeps the fixed ladder's quality).",
    kind: OptionKind::Choice {
        values: &["fixed", "auto"],
        default: Some("fixed"),
    },
};

/// One rendition: its frame size, the encoder's cap and (H.264) its CRF.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rung {
    pub size: (u32, u32),
    pub rate_k: u32,
    pub crf: u8,
}

/// The fixed ladder's CRF.
pub(super) const FIXED_CRF: u8 = 23;

/// The rungs for a source shown at `shown`, largest first: each of [`LADDER`] whose
/// short side is at most the source's (so no rung is taller than the source), at the
/// source's aspect with even sides; the source's own size alone when none fits.
pub(super) fn ladder(shown: (u32, u32)) -> Vec<Rung> {
    let (w, h) = (shown.0.max(2), shown.1.max(2));
    let short = w.min(h);
    let even = |v: f64| ((v / 2.0).round() as u32 * 2).max(2);
    let rungs: Vec<Rung> = LADDER
        .iter()
        .filter(|(lines, _)| *lines <= short)
        .map(|&(lines, rate_k)| {
            let scale = f64::from(lines) / f64::from(short);
            let size = (even(f64::from(w) * scale), even(f64::from(h) * scale));
            Rung {
                size,
                rate_k,
                crf: FIXED_CRF,
            }
        })
        .collect();
    if rungs.is_empty() {
        let size = (even(f64::from(w)), even(f64::from(h)));
        return vec![Rung {
            size,
            rate_k: SMALLEST_RATE_K,
            crf: FIXED_CRF,
        }];
    }
    rungs
}

/// The H.264 ladder fitted to `input` (module docs): each rung at its CRF, those that
/// would repeat the rung above left out. An HDR source kept as HDR (HEVC) and a
/// video too short to sample keep the fixed ladder. `true` with them when the video
/// is still (its keyframes go at segments).
pub(super) async fn fitted_ladder(
    media: &Media,
    (input, info): (&MediaFile, &VideoInfo),
    keep_hdr: bool,
    dir: &Path,
) -> Result<(Vec<Rung>, bool), MediaError> {
    let rungs = ladder(info.shown);
    let duration = info.duration.unwrap_or(0.0);
    if (keep_hdr && info.hdr.is_some()) || duration < 0.5 {
        return Ok((rungs, false));
    }
    let to_fit: Vec<RungToFit> = rungs
        .iter()
        .map(|r| RungToFit {
            size: r.size,
            rate_k: r.rate_k,
        })
        .collect();
    let scratch = dir.join("fit");
    tokio::fs::create_dir_all(&scratch).await?;
    let chain = shown_pictures(info);
    let trials = ladder_fit::measure(media, (input, duration), &chain, &to_fit, &scratch).await;
    let _ = tokio::fs::remove_dir_all(&scratch).await;
    let trials = trials?;
    let chosen = ladder_fit::choose(&trials);
    let still = ladder_fit::is_still(&trials);
    // A still video's pictures drift a little over a 6 s keyframe interval: its rungs
    // are encoded a few CRF finer, still at a fraction of the fixed ladder's bytes.
    let finer = if still { ladder_fit::STILL_CRF_DROP } else { 0 };
    let fitted = rungs
        .into_iter()
        .zip(chosen)
        .filter_map(|(rung, crf)| {
            let crf = crf?.saturating_sub(finer);
            Some(Rung { crf, ..rung })
        })
        .collect();
    Ok((fitted, still))
}
