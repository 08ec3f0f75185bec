//! WebVTT's time stamps, for the files `video-storyboard` and `video-scenes` write.

/// `hh:mm:ss.ttt` of `ms` milliseconds.
pub(super) fn timestamp(ms: u64) -> String {
    let (h, m, s, t) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    format!("{h:02}:{m:02}:{s:02}.{t:03}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_timestamp_is_hours_minutes_seconds_and_milliseconds() {
        assert_eq!(super::timestamp(3_723_004), "01:02:03.004");
        assert_eq!(super::timestamp(0), "00:00:00.000");
    }
}
