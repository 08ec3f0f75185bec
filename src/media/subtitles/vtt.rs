//! WebVTT written from cues: whole, or cut in segments for an HLS subtitle rendition.
//!
//! An HLS rendition's segments each hold every cue that overlaps their span, at its
//! times in the whole video (a cue across a boundary is in both: players drop the
//! duplicate), under `X-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000`: the fMP4
//! segments' times start at zero, so local time zero is media time zero, as hls.js
//! and Safari map it.

use super::cues::Subtitles;

/// `ms` as WebVTT's `hh:mm:ss.mmm`.
fn timestamp(ms: u64) -> String {
    let (h, m, s) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60);
    format!("{h:02}:{m:02}:{s:02}.{:03}", ms % 1000)
}

/// The cues overlapping `from..to` milliseconds (all of them when `None`), as WebVTT
/// cue blocks.
fn cue_blocks(subs: &Subtitles, span: Option<(u64, u64)>, out: &mut String) {
    for cue in &subs.cues {
        if let Some((from, to)) = span {
            let inside =
                cue.end > from && cue.start < to || cue.start == cue.end && cue.start == from;
            if !inside {
                continue;
            }
        }
        out.push_str(&format!(
            "{} --> {}\n",
            timestamp(cue.start),
            timestamp(cue.end)
        ));
        out.push_str(&cue.text);
        out.push_str("\n\n");
    }
}

/// The whole file as WebVTT.
pub fn whole_vtt(subs: &Subtitles) -> String {
    let mut out = String::from("WEBVTT\n\n");
    cue_blocks(subs, None, &mut out);
    out
}

/// One WebVTT file per segment of `lengths` seconds each, in order.
pub fn segmented_vtt(subs: &Subtitles, lengths: &[f64]) -> Vec<String> {
    let mut at = 0.0;
    lengths
        .iter()
        .map(|length| {
            let from = (at * 1000.0_f64).round() as u64;
            at += length;
            let to = (at * 1000.0_f64).round() as u64;
            let mut out = String::from("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n\n");
            cue_blocks(subs, Some((from, to)), &mut out);
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::subtitles::cues::Cue;

    #[test]
    fn segments_hold_the_cues_that_overlap_them_at_their_whole_video_times() {
        let cue = |start, end, text: &str| Cue {
            start,
            end,
            text: text.into(),
        };
        let subs = Subtitles {
            cues: vec![
                cue(500, 1500, "one"),
                cue(5500, 6500, "two"),
                cue(7000, 3_723_004, "three"),
            ],
        };
        let whole = whole_vtt(&subs);
        assert!(
            whole.starts_with("WEBVTT\n\n00:00:00.500 --> 00:00:01.500\none\n\n"),
            "{whole}"
        );
        assert!(
            whole.contains("00:00:07.000 --> 01:02:03.004\nthree"),
            "{whole}"
        );
        let parts = segmented_vtt(&subs, &[6.0, 6.0, 2.5]);
        assert_eq!(parts.len(), 3);
        assert!(parts
            .iter()
            .all(|p| p.starts_with("WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n\n")));
        assert!(
            parts[0].contains("one") && parts[0].contains("two") && !parts[0].contains("three")
        );
        assert!(
            !parts[1].contains("one") && parts[1].contains("two") && parts[1].contains("three")
        );
        assert!(parts[2].contains("three") && !parts[2].contains("two"));
    }
}
