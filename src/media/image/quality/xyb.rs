//! The pictures SSIMULACRA2 compares, as it takes them (`score.rs`; the same licence,
//! LICENSE-ssimulacra2): 8-bit sRGB to linear RGB planes, halved for each scale, then
//! to libjxl's XYB, shifted to be positive.

use image::DynamicImage;

/// Three planes of one size, row by row.
pub(super) struct Planes {
    pub width: usize,
    pub height: usize,
    pub channels: [Vec<f32>; 3],
}

/// `image` as linear RGB planes, transparency composited onto white.
pub(super) fn linear(image: &DynamicImage) -> Planes {
    let table = srgb_to_linear();
    let (width, height) = (image.width() as usize, image.height() as usize);
    let mut channels: [Vec<f32>; 3] = std::array::from_fn(|_| vec![0f32; width * height]);
    let [r, g, b] = &mut channels;
    let planes = r.iter_mut().zip(g.iter_mut()).zip(b.iter_mut());
    match image {
        DynamicImage::ImageRgb8(rgb) => {
            for (((r, g), b), p) in planes.zip(rgb.as_raw().chunks_exact(3)) {
                (*r, *g, *b) = (
                    table[p[0] as usize],
                    table[p[1] as usize],
                    table[p[2] as usize],
                );
            }
        }
        other => {
            let rgba = match other {
                DynamicImage::ImageRgba8(rgba) => std::borrow::Cow::Borrowed(rgba),
                other => std::borrow::Cow::Owned(other.to_rgba8()),
            };
            for (((r, g), b), p) in planes.zip(rgba.as_raw().chunks_exact(4)) {
                let alpha = f32::from(p[3]) / 255.0;
                let on_white = |c: u8| table[c as usize] * alpha + (1.0 - alpha);
                (*r, *g, *b) = (on_white(p[0]), on_white(p[1]), on_white(p[2]));
            }
        }
    }
    Planes {
        width,
        height,
        channels,
    }
}

/// `planes` at half the size (rounded up), each pixel the mean of the 2×2 it covers
/// (the last row and column repeated past an odd edge).
pub(super) fn halved(planes: &Planes) -> Planes {
    let (w, h) = (planes.width, planes.height);
    let (out_w, out_h) = (w.div_ceil(2), h.div_ceil(2));
    let channels = std::array::from_fn(|c| {
        let plane = &planes.channels[c];
        let mut out = Vec::with_capacity(out_w * out_h);
        for oy in 0..out_h {
            let rows = [(oy * 2).min(h - 1) * w, (oy * 2 + 1).min(h - 1) * w];
            for ox in 0..out_w {
                let columns = [(ox * 2).min(w - 1), (ox * 2 + 1).min(w - 1)];
                let mut sum = 0f32;
                for row in rows {
                    for column in columns {
                        sum += plane[row + column];
                    }
                }
                out.push(sum * 0.25);
            }
        }
        out
    });
    Planes {
        width: out_w,
        height: out_h,
        channels,
    }
}

/// Linear RGB to XYB (libjxl's opsin absorbance, cube root, bias), then shifted to be
/// positive as SSIMULACRA2 takes it: X × 14 + 0.42, Y + 0.01, B − Y + 0.55. Large
/// planes are converted in two halves at once.
pub(super) fn xyb(linear: &Planes) -> Planes {
    let len = linear.width * linear.height;
    let mut channels: [Vec<f32>; 3] = std::array::from_fn(|_| vec![0f32; len]);
    let half = if len >= 1 << 16 { len / 2 } else { len };
    let [x, y, b] = &mut channels;
    let ((x0, x1), (y0, y1), (b0, b1)) = (
        x.split_at_mut(half),
        y.split_at_mut(half),
        b.split_at_mut(half),
    );
    let rgb = |range: std::ops::Range<usize>| linear.channels.each_ref().map(|c| &c[range.clone()]);
    std::thread::scope(|scope| {
        if half < len {
            let second = rgb(half..len);
            scope.spawn(move || xyb_of(second, [x1, y1, b1]));
        }
        xyb_of(rgb(0..half), [x0, y0, b0]);
    });
    Planes {
        width: linear.width,
        height: linear.height,
        channels,
    }
}

/// [`xyb`] of the pixels `rgb` into `out`.
fn xyb_of(rgb: [&[f32]; 3], out: [&mut [f32]; 3]) {
    const M: [[f32; 3]; 3] = [
        [0.30, 1.0 - 0.078 - 0.30, 0.078],
        [0.23, 1.0 - 0.078 - 0.23, 0.078],
        [
            0.243_422_69,
            0.204_767_45,
            1.0 - 0.243_422_69 - 0.204_767_45,
        ],
    ];
    const BIAS: f32 = 0.003_793_073_4;
    let cube_root_bias = cube_root(BIAS);
    let [r, g, b] = rgb;
    let [out_x, out_y, out_b] = out;
    for i in 0..r.len() {
        let mixed = M.map(|m| {
            let v = m[0] * r[i] + (m[1] * g[i] + (m[2] * b[i] + BIAS));
            cube_root(v) - cube_root_bias
        });
        let (x, y) = (0.5 * (mixed[0] - mixed[1]), 0.5 * (mixed[0] + mixed[1]));
        out_x[i] = x * 14.0 + 0.42;
        out_y[i] = y + 0.01;
        out_b[i] = (mixed[2] - y) + 0.55;
    }
}

/// The cube root of `v` (0 for any value ≤ 0) as libm's, rounded to f32: a guess from
/// a third of the exponent (musl's, within 4 %) refined by two Halley steps (cubic
/// convergence), the second in f64 so that it rounds as libm does; a fraction of the
/// time of libm's `cbrtf` call, which was a fifth of a score.
pub(super) fn cube_root(v: f32) -> f32 {
    if v <= 0.0 {
        return 0.0;
    }
    let guess = f32::from_bits(v.to_bits() / 3 + 709_958_130);
    let cube = guess * guess * guess;
    let near = f64::from(guess * (cube + 2.0 * v) / (2.0 * cube + v));
    let (v, cube) = (f64::from(v), near * near * near);
    (near * (cube + 2.0 * v) / (2.0 * cube + v)) as f32
}

/// The sRGB transfer function, inverted, for each 8-bit value.
fn srgb_to_linear() -> [f32; 256] {
    std::array::from_fn(|i| {
        let c = i as f32 / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    })
}
