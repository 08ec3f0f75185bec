//! What the H.264 outputs share: colour tags, exact frame rates, and the frame size
//! that fits a 4K box (used by `image-to-video` and `gif-to-video`).

/// Colour tags of every H.264 output: BT.709 limited range, matching the conversion
/// the filters do, so players do not guess (and guess wrong for small sizes).
pub(crate) const BT709_TAGS: [&str; 8] = [
    "-colorspace",
    "bt709",
    "-color_primaries",
    "bt709",
    "-color_trc",
    "bt709",
    "-color_range",
    "tv",
];

/// H.264 players reject larger frames; portrait pictures get the same box turned.
const MAX_LONG_SIDE: u32 = 3840;
const MAX_SHORT_SIDE: u32 = 2160;

/// A frame rate as an exact fraction, so the frame count, the stream rate and the
/// duration all agree (29.97 is `2997/100`, not a float ffmpeg rounds its own way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameRate {
    pub num: u64,
    pub den: u64,
}

impl FrameRate {
    /// `fps` to the nearest thousandth of a frame per second.
    pub fn from_fps(fps: f64) -> Option<FrameRate> {
        const DEN: u64 = 1000;
        if !fps.is_finite() || fps <= 0.0 || fps > 1e6 {
            return None;
        }
        let num = (fps * DEN as f64).round() as u64;
        if num == 0 {
            return None;
        }
        let divisor = gcd(num, DEN);
        Some(FrameRate {
            num: num / divisor,
            den: DEN / divisor,
        })
    }

    /// `max(1, round(duration * fps))`.
    pub fn frames_for(self, duration: f64) -> u64 {
        ((duration * self.num as f64 / self.den as f64).round() as u64).max(1)
    }

    /// ffmpeg's rational syntax, e.g. `2997/100`.
    pub fn to_ffmpeg(self) -> String {
        format!("{}/{}", self.num, self.den)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The video size for an upright picture: its own size, scaled down (aspect kept) to
/// fit 3840x2160 or 2160x3840, then rounded down to even as yuv420p requires. Rounding
/// down never leaves the box; 2 is the smallest side.
pub(crate) fn video_size(width: u32, height: u32) -> (u32, u32) {
    let (max_w, max_h) = if width >= height {
        (MAX_LONG_SIDE, MAX_SHORT_SIDE)
    } else {
        (MAX_SHORT_SIDE, MAX_LONG_SIDE)
    };
    let (mut w, mut h) = (width, height);
    if w > max_w || h > max_h {
        let scale = f64::min(
            f64::from(max_w) / f64::from(w),
            f64::from(max_h) / f64::from(h),
        );
        w = ((f64::from(w) * scale).round() as u32).min(max_w);
        h = ((f64::from(h) * scale).round() as u32).min(max_h);
    }
    let even = |side: u32| (side & !1).max(2);
    (even(w), even(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_rate_is_an_exact_fraction() {
        let rate = |fps| FrameRate::from_fps(fps).unwrap();
        assert_eq!(rate(25.0), FrameRate { num: 25, den: 1 });
        assert_eq!(
            rate(29.97),
            FrameRate {
                num: 2997,
                den: 100
            }
        );
        assert_eq!(rate(0.5), FrameRate { num: 1, den: 2 });
        assert_eq!(rate(29.97).to_ffmpeg(), "2997/100");
        assert_eq!(FrameRate::from_fps(0.0), None);
        assert_eq!(FrameRate::from_fps(f64::NAN), None);
        assert_eq!(FrameRate::from_fps(0.0001), None);
    }

    #[test]
    fn frames_round_and_never_drop_to_zero() {
        let rate = |fps| FrameRate::from_fps(fps).unwrap();
        assert_eq!(rate(25.0).frames_for(5.0), 125);
        assert_eq!(rate(29.97).frames_for(1.0), 30);
        assert_eq!(rate(0.5).frames_for(4.0), 2);
        assert_eq!(rate(0.5).frames_for(0.1), 1);
    }

    #[test]
    fn video_size_rounds_down_to_even() {
        assert_eq!(video_size(33, 21), (32, 20));
        assert_eq!(video_size(640, 480), (640, 480));
        assert_eq!(video_size(1, 1), (2, 2));
    }

    #[test]
    fn video_size_fits_the_4k_box_in_either_orientation() {
        assert_eq!(video_size(5000, 3000), (3600, 2160));
        assert_eq!(video_size(3000, 5000), (2160, 3600));
        assert_eq!(video_size(8000, 1000), (3840, 480));
        assert_eq!(video_size(3840, 2160), (3840, 2160));
        assert_eq!(video_size(4000, 4000), (2160, 2160));
    }
}
