//! How much the picture changes from one frame to the next, and which changes are
//! cuts (the measure is described in `super`'s docs).

/// How many times the mean change of the [`WINDOW`] frames each side a cut's must be.
const RATIO: f64 = 2.5;
const WINDOW: usize = 2;

/// BT.601 luma of one RGB pixel.
pub(super) fn luma(p: &[u8]) -> u8 {
    let y = 0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2]);
    y.round().clamp(0.0, 255.0) as u8
}

/// One RGB pixel as hue 0–179 (degrees halved, as OpenCV's 8-bit HSV), chroma
/// (max − min) and value (max), 0–255.
pub(super) fn hsv(p: &[u8]) -> [u8; 3] {
    let (r, g, b) = (f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let spread = max - min;
    let degrees = if spread == 0.0 {
        0.0
    } else if max == r {
        60.0 * (g - b) / spread
    } else if max == g {
        120.0 + 60.0 * (b - r) / spread
    } else {
        240.0 + 60.0 * (r - g) / spread
    };
    let degrees = if degrees < 0.0 {
        degrees + 360.0
    } else {
        degrees
    };
    [
        ((degrees / 2.0).round() as u16 % 180) as u8,
        spread as u8,
        max as u8,
    ]
}

/// The mean change of hue (round its circle, weighed by the lesser chroma), chroma and
/// value between two pictures, averaged: 0–255 (hue's is at most 90).
pub(super) fn content_change(a: &[[u8; 3]], b: &[[u8; 3]]) -> f64 {
    let mut sums = [0u64; 3];
    for (p, q) in a.iter().zip(b) {
        let hue = p[0].abs_diff(q[0]);
        // Over 255: scaled back once, at the end.
        sums[0] += u64::from(hue.min(180 - hue)) * u64::from(p[1].min(q[1]));
        sums[1] += u64::from(p[1].abs_diff(q[1]));
        sums[2] += u64::from(p[2].abs_diff(q[2]));
    }
    let n = a.len().max(1) as f64;
    let hue = sums[0] as f64 / 255.0;
    (hue + sums[1] as f64 + sums[2] as f64) / n / 3.0
}

/// The frames that start a new shot: a change past `threshold` that stands out of its
/// neighbours' (module docs).
pub(super) fn cuts(changes: &[f64], threshold: f64) -> Vec<u64> {
    (1..changes.len())
        .filter(|&i| {
            let change = changes[i];
            let around: Vec<f64> = (i.saturating_sub(WINDOW).max(1)..=(i + WINDOW))
                .filter(|&j| j != i && j < changes.len())
                .map(|j| changes[j])
                .collect();
            let mean = around.iter().sum::<f64>() / around.len().max(1) as f64;
            change >= threshold && change >= RATIO * mean
        })
        .map(|i| i as u64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsv_is_opencv_s_eight_bit_hsv() {
        assert_eq!(hsv(&[255, 0, 0]), [0, 255, 255]);
        assert_eq!(hsv(&[0, 255, 0]), [60, 255, 255]);
        assert_eq!(hsv(&[0, 0, 255]), [120, 255, 255]);
        assert_eq!(hsv(&[128, 128, 128]), [0, 0, 128]);
        assert_eq!(hsv(&[255, 0, 1]), [0, 255, 255]);
        // Red either side of 0°: near on the circle.
        let (a, b) = (hsv(&[255, 0, 8]), hsv(&[255, 8, 0]));
        assert!(content_change(&[a], &[b]) < 2.0, "{a:?} {b:?}");
        // Grey tinted blue, or near-black: the hue swings a quarter turn, yet the
        // pixels barely change.
        let (grey, tinted) = (hsv(&[120, 120, 120]), hsv(&[120, 120, 124]));
        assert!(content_change(&[grey], &[tinted]) < 3.0);
        let (dark, darker) = (hsv(&[3, 1, 1]), hsv(&[1, 1, 2]));
        assert!(content_change(&[dark], &[darker]) < 2.0);
        // Red to blue: a third of the circle at full chroma.
        let change = content_change(&[hsv(&[255, 0, 0])], &[hsv(&[0, 0, 255])]);
        assert!((change - 20.0).abs() < 0.01, "{change}");
    }

    #[test]
    fn a_jump_is_a_cut_and_steady_change_is_not() {
        // A fade: 5 a frame; fast motion: 40 a frame with a cut of 60 in it; a cut of 80.
        let mut changes = vec![0.0];
        changes.extend([5.0; 20]);
        changes.push(80.0);
        changes.extend([40.0; 10]);
        changes.push(30.0);
        changes.extend([40.0; 10]);
        changes.push(95.0);
        changes.extend([2.0; 5]);
        assert_eq!(cuts(&changes, 27.0), vec![21, 43]);
        assert_eq!(cuts(&changes, 90.0), vec![43]);
    }
}
