//! The cues as a command's output shows them. `trim-video` keeps the part from
//! `start` (to `end`): a cue is cut to the part and shifted to start with it, one
//! wholly outside it dropped. `modify-video-speed` divides every time by the speed.

use super::cues::{Cue, Subtitles};

impl Subtitles {
    /// The cues of the part `start..end` seconds (to the end when `None`), made to
    /// count from its start.
    pub fn trimmed(&self, start: f64, end: Option<f64>) -> Subtitles {
        let from = (start.max(0.0) * 1000.0).round() as u64;
        let to = end.map(|e| (e.max(0.0) * 1000.0).round() as u64);
        let cues = self
            .cues
            .iter()
            .filter(|c| c.end > from && to.map_or(true, |to| c.start < to))
            .map(|c| Cue {
                start: c.start.max(from) - from,
                end: to.map_or(c.end, |to| c.end.min(to)) - from,
                text: c.text.clone(),
            })
            .collect();
        Subtitles { cues }
    }

    /// The cues of the video played `speed` times as fast.
    pub fn sped(&self, speed: f64) -> Subtitles {
        let at = |ms: u64| (ms as f64 / speed).round() as u64;
        let cues = self
            .cues
            .iter()
            .map(|c| Cue {
                start: at(c.start),
                end: at(c.end),
                text: c.text.clone(),
            })
            .collect();
        Subtitles { cues }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cue(start: u64, end: u64) -> Cue {
        Cue {
            start,
            end,
            text: "x".into(),
        }
    }

    #[test]
    fn a_trim_shifts_cuts_and_drops_cues_and_a_speed_divides_their_times() {
        let subs = Subtitles {
            cues: vec![
                cue(0, 900),
                cue(500, 1500),
                cue(2000, 2500),
                cue(2900, 4000),
            ],
        };
        let trimmed = subs.trimmed(1.0, Some(3.0));
        assert_eq!(
            trimmed.cues,
            vec![cue(0, 500), cue(1000, 1500), cue(1900, 2000)]
        );
        assert_eq!(
            subs.trimmed(2.2, None).cues,
            vec![cue(0, 300), cue(700, 1800)]
        );
        assert_eq!(subs.sped(2.0).cues[3], cue(1450, 2000));
        assert_eq!(subs.sped(0.5).cues[1], cue(1000, 3000));
    }
}
