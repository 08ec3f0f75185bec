//! ffmpeg's `-progress pipe:1` reports, turned into a fraction of the work done.
//!
//! ffmpeg prints blocks of `key=value` lines about twice a second, each block ending
//! with `progress=continue` (or `progress=end`). The output position is `out_time_us`
//! (microseconds); `out_time_ms` is, despite its name, also microseconds, and is read
//! when `out_time_us` is missing. Before the first frame both may be `N/A` or negative.

/// A sink for the progress of one operation: called with 0.0–1.0, never decreasing.
pub type ProgressFn<'a> = &'a (dyn Fn(f64) + Send + Sync);

/// Turns progress lines into fractions of an expected output duration.
#[derive(Debug, Clone)]
pub(crate) struct ProgressParser {
    /// Seconds of output expected; `None` when unknown (then only `progress=end`
    /// counts).
    expected: Option<f64>,
    last: f64,
}

impl ProgressParser {
    pub fn new(expected_seconds: Option<f64>) -> Self {
        ProgressParser {
            expected: expected_seconds.filter(|s| s.is_finite() && *s > 0.0),
            last: 0.0,
        }
    }

    /// Reads one line; returns the new fraction (0.0–1.0) when the line moved it
    /// forward. Fractions stop just short of 1.0 until `progress=end`.
    pub fn line(&mut self, line: &str) -> Option<f64> {
        let (key, value) = line.trim().split_once('=')?;
        let fraction = match key {
            "out_time_us" | "out_time_ms" => {
                let micros: i64 = value.trim().parse().ok()?;
                let expected = self.expected?;
                (micros as f64 / 1e6 / expected).clamp(0.0, 0.999)
            }
            "progress" if value.trim() == "end" => 1.0,
            _ => return None,
        };
        (fraction > self.last).then(|| {
            self.last = fraction;
            fraction
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_follows_out_time_against_the_expected_duration() {
        let mut parser = ProgressParser::new(Some(4.0));
        let report = "frame=10\nfps=0.00\nout_time_us=N/A\nout_time_ms=-5000\nprogress=continue\n\
                      frame=25\nout_time_us=1000000\nout_time_ms=1000000\nout_time=00:00:01.000000\n\
                      progress=continue\nout_time_us=3000000\nout_time_us=2000000\nprogress=end\n";
        let fractions: Vec<f64> = report.lines().filter_map(|l| parser.line(l)).collect();
        assert_eq!(fractions, [0.25, 0.75, 1.0]);
    }

    #[test]
    fn progress_never_reaches_one_before_the_end_and_tolerates_junk() {
        let mut parser = ProgressParser::new(Some(1.0));
        assert_eq!(parser.line("out_time_us=5000000"), Some(0.999));
        assert_eq!(parser.line("garbage"), None);
        assert_eq!(parser.line("out_time_us=abc"), None);
        assert_eq!(parser.line("progress=end"), Some(1.0));

        let mut unknown = ProgressParser::new(None);
        assert_eq!(unknown.line("out_time_ms=1000000"), None);
        assert_eq!(unknown.line("progress=end"), Some(1.0));
        assert_eq!(ProgressParser::new(Some(0.0)).line("out_time_us=1"), None);
    }
}
