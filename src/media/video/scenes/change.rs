//! How much the picture changes from one frame to the next, and which changes are
//! cuts (the measure is described in `super`'s docs).

/// How many times the mean change of the [`WINDOW`] frames each side a cut's must be.
const RATIO: f64 = 2.5;
const WINDOW: usize = 2;

/// BT.601 luma of one RGB pixel. Rounded by adding a half and truncating, as
/// `round` does for values that cannot be negative, where `f32::round` is a call
/// into libm for every pixel.
pub(super) fn luma(p: &[u8]) -> u8 {
    let y = 0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2]);
    (y + 0.5) as u8
}

/// One RGB pixel as hue 0–179 (degrees halved, as OpenCV's 8-bit HSV), chroma
/// (max − min) and value (max), 0–255. Written without branches (each case computed,
/// one chosen) so that a picture's pixels are converted eight at a time.
#[inline]
pub(super) fn hsv(p: &[u8]) -> [u8; 3] {
    let (r, g, b) = (f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let spread = max - min;
    let over = spread.max(1.0);
    let degrees = if max == r {
        60.0 * (g - b) / over
    } else if max == g {
        120.0 + 60.0 * (b - r) / over
    } else {
        240.0 + 60.0 * (r - g) / over
    };
    let degrees = if degrees < 0.0 {
        degrees + 360.0
    } else {
        degrees
    };
    // Rounded as in `luma`: `degrees` is not negative; grey has no hue.
    let half = if spread == 0.0 {
        0
    } else {
        (degrees / 2.0 + 0.5) as u16
    };
    let hue = if half >= 180 { half - 180 } else { half };
    [hue as u8, spread as u8, max as u8]
}

/// A picture of RGB pixels as [`hsv`] pixels.
pub(super) fn hsv_picture(rgb: &[u8]) -> Vec<[u8; 3]> {
    rgb.chunks_exact(3).map(hsv).collect()
}

/// The mean change of hue (round its circle, weighed by the lesser chroma), chroma and
/// value between two pictures, averaged: 0–255 (hue's is at most 90). The sums fit
/// 32 bits up to 187 000 pixels (90 × 255 each), eleven times the pictures analysed.
pub(super) fn content_change(a: &[[u8; 3]], b: &[[u8; 3]]) -> f64 {
    let (mut hues, mut chromas, mut values) = (0u32, 0u32, 0u32);
    for (p, q) in a.iter().zip(b) {
        let hue = p[0].abs_diff(q[0]);
        // Over 255: scaled back once, at the end.
        hues += u32::from(hue.min(180 - hue)) * u32::from(p[1].min(q[1]));
        chromas += u32::from(p[1].abs_diff(q[1]));
        values += u32::from(p[2].abs_diff(q[2]));
    }
    let n = a.len().max(1) as f64;
    let hue = f64::from(hues) / 255.0;
    (hue + f64::from(chromas) + f64::from(values)) / n / 3.0
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
