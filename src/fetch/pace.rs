//! The rules that end a download from a source that stalls, long before the total
//! timeout would: a source that holds a fetch open while sending next to nothing costs
//! a fetch slot for as long as it likes otherwise.
//!
//! Two rules, both reported as [`Stall`] (code `source_timeout`):
//! - **first byte**: the response headers *and* the first byte of the body must arrive
//!   within `first_byte_timeout` of sending the request (each redirect hop anew);
//! - **minimum speed**: from the first body byte on, time is cut into consecutive
//!   windows of `min_speed_window`; a window that ends with fewer than
//!   `min_bytes_per_sec × window` bytes ends the download. A body that is complete
//!   before its first window ends is never judged, so small files are never affected.
//!   A source that slows down mid-way is caught at the end of the window in which it
//!   slowed, or of the next one: within two windows.

use std::time::{Duration, Instant};

/// The stall rules' settings.
#[derive(Debug, Clone, Copy)]
pub struct StallLimits {
    /// Limit from sending a request to the first byte of its body.
    pub first_byte_timeout: Duration,
    /// Bytes per second a download must keep up, averaged over each window; 0 turns
    /// the speed rule off.
    pub min_bytes_per_sec: u64,
    /// Length of the windows the speed is averaged over; must not be zero.
    pub min_speed_window: Duration,
}

/// How a source stalled; the message is the end of a sentence a client can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Stall {
    /// Nothing of the body (or not even the headers) within the first-byte limit.
    #[error(
        "the source sent no data within {secs} s of the request; \
         use a URL that serves the file directly from a host that answers promptly"
    )]
    NoFirstByte { secs: u64 },
    /// A window ended with too few bytes.
    #[error(
        "the source sent only {bytes} bytes in {secs} s, slower than the minimum of \
         {min_per_sec} bytes per second; serve the file from a faster host"
    )]
    TooSlow {
        bytes: u64,
        secs: u64,
        min_per_sec: u64,
    },
}

/// The state of the stall rules for one response.
#[derive(Debug)]
pub(super) struct Pace {
    limits: StallLimits,
    /// When the request was sent.
    requested: Instant,
    /// When the current window started; `None` until the first body byte.
    window_start: Option<Instant>,
    /// Bytes received in the current window.
    window_bytes: u64,
}

impl Pace {
    pub(super) fn new(limits: StallLimits, requested: Instant) -> Self {
        Pace {
            limits,
            requested,
            window_start: None,
            window_bytes: 0,
        }
    }

    /// When the rules must next be checked if no data arrives: the first-byte deadline
    /// before the first byte, the end of the current window after it (`None` when the
    /// speed rule is off).
    pub(super) fn deadline(&self) -> Option<Instant> {
        match self.window_start {
            None => Some(self.requested + self.limits.first_byte_timeout),
            Some(_) if self.limits.min_bytes_per_sec == 0 => None,
            Some(start) => Some(start + self.limits.min_speed_window),
        }
    }

    /// Checks the rules at `now`: `Err` when the first byte is overdue or a window
    /// ended too slow. A window that ended fast enough starts the next one at `now`.
    pub(super) fn check(&mut self, now: Instant) -> Result<(), Stall> {
        let Some(deadline) = self.deadline() else {
            return Ok(());
        };
        if now < deadline {
            return Ok(());
        }
        if self.window_start.is_none() {
            return Err(Stall::NoFirstByte {
                secs: self.limits.first_byte_timeout.as_secs(),
            });
        }
        let window = self.limits.min_speed_window.as_secs_f64();
        let needed = (self.limits.min_bytes_per_sec as f64 * window).ceil() as u64;
        if self.window_bytes < needed {
            return Err(Stall::TooSlow {
                bytes: self.window_bytes,
                secs: self.limits.min_speed_window.as_secs(),
                min_per_sec: self.limits.min_bytes_per_sec,
            });
        }
        self.window_start = Some(now);
        self.window_bytes = 0;
        Ok(())
    }

    /// Records `n` body bytes received at `now`, after checking the rules: bytes that
    /// arrive after a deadline do not rescue the window that ended before them.
    pub(super) fn received(&mut self, n: u64, now: Instant) -> Result<(), Stall> {
        self.check(now)?;
        if self.window_start.is_none() {
            self.window_start = Some(now);
        }
        self.window_bytes += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> StallLimits {
        StallLimits {
            first_byte_timeout: Duration::from_secs(15),
            min_bytes_per_sec: 100,
            min_speed_window: Duration::from_secs(10),
        }
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn no_first_byte_within_the_limit_is_a_stall() {
        let t0 = Instant::now();
        let mut pace = Pace::new(limits(), t0);
        assert_eq!(pace.deadline(), Some(t0 + secs(15.0)));
        assert_eq!(pace.check(t0 + secs(14.9)), Ok(()));
        assert_eq!(
            pace.check(t0 + secs(15.0)),
            Err(Stall::NoFirstByte { secs: 15 })
        );
    }

    #[test]
    fn a_first_byte_after_the_limit_does_not_count() {
        let t0 = Instant::now();
        let mut pace = Pace::new(limits(), t0);
        assert!(pace.received(5000, t0 + secs(16.0)).is_err());
    }

    #[test]
    fn a_small_file_done_within_its_first_window_is_never_judged() {
        let t0 = Instant::now();
        let mut pace = Pace::new(limits(), t0);
        // 10 bytes over 9 s is far under 100 B/s, but the window never ends.
        for i in 0..10 {
            assert_eq!(
                pace.received(1, t0 + secs(1.0 + f64::from(i) * 0.9)),
                Ok(())
            );
        }
    }

    #[test]
    fn a_window_under_the_minimum_speed_ends_the_download() {
        let t0 = Instant::now();
        let mut pace = Pace::new(limits(), t0);
        pace.received(1, t0 + secs(1.0)).unwrap();
        assert_eq!(pace.deadline(), Some(t0 + secs(11.0)));
        // 999 bytes in the window: one short of 100 B/s × 10 s.
        pace.received(998, t0 + secs(10.0)).unwrap();
        assert_eq!(
            pace.check(t0 + secs(11.0)),
            Err(Stall::TooSlow {
                bytes: 999,
                secs: 10,
                min_per_sec: 100
            })
        );
    }

    #[test]
    fn a_fast_window_starts_the_next_one_and_a_later_stall_is_caught() {
        let t0 = Instant::now();
        let mut pace = Pace::new(limits(), t0);
        pace.received(1000, t0 + secs(1.0)).unwrap();
        assert_eq!(pace.check(t0 + secs(11.0)), Ok(()));
        assert_eq!(pace.deadline(), Some(t0 + secs(21.0)));
        pace.received(10, t0 + secs(12.0)).unwrap();
        assert!(matches!(
            pace.check(t0 + secs(21.0)),
            Err(Stall::TooSlow { bytes: 10, .. })
        ));
    }

    #[test]
    fn a_zero_minimum_turns_the_speed_rule_off_but_not_the_first_byte_rule() {
        let t0 = Instant::now();
        let mut pace = Pace::new(
            StallLimits {
                min_bytes_per_sec: 0,
                ..limits()
            },
            t0,
        );
        assert!(pace.deadline().is_some());
        pace.received(1, t0 + secs(1.0)).unwrap();
        assert_eq!(pace.deadline(), None);
        assert_eq!(pace.check(t0 + secs(3600.0)), Ok(()));
    }
}
