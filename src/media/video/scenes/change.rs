//! How much the picture changes from one frame to the next, and which changes are
//! cuts (the measure is described in `super`'s docs).

/// How many times the mean change of the [`WINDOW`] frames each side a cut's must be.
const RATIO: f64 = 2.5;
const WINDOW: usize = 2;

/// A picture as planes of hue 0–179 (degrees halved, as OpenCV's 8-bit HSV), chroma
/// (max − min) and value (max), 0–255.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Hsv {
    hue: Vec<u8>,
    chroma: Vec<u8>,
    value: Vec<u8>,
}

impl Hsv {
    /// The picture of `pixels` pixels in `gbr`, ffmpeg's planar `gbrp`: the green
    /// plane, the blue, the red. Planes, not RGB triples, so that the pixels are
    /// converted several at a time (21 µs for 128², against 68 µs a pixel at a time).
    pub fn of_gbr(gbr: &[u8], pixels: usize) -> Hsv {
        let [g, b, r] = planes(gbr, pixels);
        let mut picture = Hsv {
            hue: vec![0; pixels],
            chroma: vec![0; pixels],
            value: vec![0; pixels],
        };
        for i in 0..pixels {
            let [h, c, v] = hsv(r[i], g[i], b[i]);
            picture.hue[i] = h;
            picture.chroma[i] = c;
            picture.value[i] = v;
        }
        picture
    }

    pub fn is_empty(&self) -> bool {
        self.hue.is_empty()
    }
}

/// The BT.601 luma of each pixel of `gbr` (as [`Hsv::of_gbr`] reads it). Rounded by
/// adding a half and truncating, as `round` does for values that cannot be negative,
/// where `f32::round` is a call into libm for every pixel.
pub(super) fn luma_of_gbr(gbr: &[u8], pixels: usize) -> Vec<u8> {
    let [g, b, r] = planes(gbr, pixels);
    (0..pixels)
        .map(|i| {
            let y = 0.299 * f32::from(r[i]) + 0.587 * f32::from(g[i]) + 0.114 * f32::from(b[i]);
            // SAFETY: 0 <= y + 0.5 < 256.
            unsafe { (y + 0.5).to_int_unchecked::<u8>() }
        })
        .collect()
}

/// The green, blue and red planes of a `gbrp` picture of `pixels` pixels, each
/// exactly that long (so the loops over them check no bounds).
fn planes(gbr: &[u8], pixels: usize) -> [&[u8]; 3] {
    [0, 1, 2].map(|k| &gbr[k * pixels..(k + 1) * pixels])
}

/// One pixel's hue, chroma and value (see [`Hsv`]). Without branches (each case's
/// numerator and base chosen, one division) and with unchecked conversions of values
/// known to be in range, so that a loop over planes converts eight pixels at a time.
#[inline(always)]
fn hsv(r: u8, g: u8, b: u8) -> [u8; 3] {
    let (r, g, b) = (f32::from(r), f32::from(g), f32::from(b));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let spread = max - min;
    let is_r = max == r;
    let is_g = !is_r & (max == g);
    let numerator = if is_r {
        g - b
    } else if is_g {
        b - r
    } else {
        r - g
    };
    let base = if is_r {
        0.0
    } else if is_g {
        120.0
    } else {
        240.0
    };
    let degrees = base + 60.0 * numerator / spread.max(1.0);
    let degrees = degrees + if degrees < 0.0 { 360.0 } else { 0.0 };
    // SAFETY: 0 <= degrees < 360, and spread and max are whole numbers in 0..=255.
    let (half, spread, max) = unsafe {
        (
            (degrees * 0.5 + 0.5).to_int_unchecked::<u16>(),
            spread.to_int_unchecked::<u8>(),
            max.to_int_unchecked::<u8>(),
        )
    };
    // Grey has no hue; rounding takes 359.5° and up round to 0.
    let half = if spread == 0 { 0 } else { half };
    let hue = half - if half >= 180 { 180 } else { 0 };
    [hue as u8, spread, max]
}

/// The mean change of hue (round its circle, weighed by the lesser chroma), chroma and
/// value between two pictures, averaged: 0–255 (hue's is at most 90). The sums fit
/// 32 bits up to 187 000 pixels (90 × 255 each), eleven times the pictures analysed.
pub(super) fn content_change(a: &Hsv, b: &Hsv) -> f64 {
    let n = a.hue.len().min(b.hue.len());
    let (a_hue, a_chroma, a_value) = (&a.hue[..n], &a.chroma[..n], &a.value[..n]);
    let (b_hue, b_chroma, b_value) = (&b.hue[..n], &b.chroma[..n], &b.value[..n]);
    let (mut hues, mut chromas, mut values) = (0u32, 0u32, 0u32);
    for i in 0..n {
        let hue = a_hue[i].abs_diff(b_hue[i]);
        // Over 255: scaled back once, at the end.
        hues += u32::from(hue.min(180 - hue)) * u32::from(a_chroma[i].min(b_chroma[i]));
        chromas += u32::from(a_chroma[i].abs_diff(b_chroma[i]));
        values += u32::from(a_value[i].abs_diff(b_value[i]));
    }
    let hue = f64::from(hues) / 255.0;
    (hue + f64::from(chromas) + f64::from(values)) / n.max(1) as f64 / 3.0
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

    /// One pixel as a one-pixel picture.
    fn pixel([r, g, b]: [u8; 3]) -> Hsv {
        Hsv::of_gbr(&[g, b, r], 1)
    }

    #[test]
    fn hsv_is_opencv_s_eight_bit_hsv() {
        assert_eq!(hsv(255, 0, 0), [0, 255, 255]);
        assert_eq!(hsv(0, 255, 0), [60, 255, 255]);
        assert_eq!(hsv(0, 0, 255), [120, 255, 255]);
        assert_eq!(hsv(128, 128, 128), [0, 0, 128]);
        assert_eq!(hsv(255, 0, 1), [0, 255, 255]);
        assert_eq!(hsv(255, 0, 128), [165, 255, 255]);
        let picture = Hsv::of_gbr(&[0, 255, 0, 0, 255, 0], 2);
        assert_eq!(picture.hue, [0, 60]);
        assert_eq!(picture.value, [255, 255]);
        // Red either side of 0°: near on the circle.
        let (a, b) = (pixel([255, 0, 8]), pixel([255, 8, 0]));
        assert!(content_change(&a, &b) < 2.0, "{a:?} {b:?}");
        // Grey tinted blue, or near-black: the hue swings a quarter turn, yet the
        // pixels barely change.
        let (grey, tinted) = (pixel([120, 120, 120]), pixel([120, 120, 124]));
        assert!(content_change(&grey, &tinted) < 3.0);
        let (dark, darker) = (pixel([3, 1, 1]), pixel([1, 1, 2]));
        assert!(content_change(&dark, &darker) < 2.0);
        // Red to blue: a third of the circle at full chroma.
        let change = content_change(&pixel([255, 0, 0]), &pixel([0, 0, 255]));
        assert!((change - 20.0).abs() < 0.01, "{change}");
        assert_eq!(luma_of_gbr(&[255, 0, 0, 255, 0, 255], 2), [150, 105]);
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
