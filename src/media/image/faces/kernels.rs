//! The arithmetic of the face network, on planar maps (`[channel][row][column]`, f32):
//! 1×1 convolutions as a small matrix product, 3×3 depthwise convolutions, and the
//! rows of a strided convolution unrolled into columns (`im2col`) for the product.
//!
//! Each kernel has a portable body (`portable`) and a SIMD one for x86-64 (`simd_avx2`:
//! AVX2 and FMA, every server CPU since 2013), chosen at run time. All give each output the same sum in the same order whatever the part
//! of the map being computed, so a map split into bands computed on several threads
//! would be bit for bit the map computed on one.

#[cfg(target_arch = "x86_64")]
use crate::media::image::faces::portable::simd;
use crate::media::image::faces::portable::{self, Product, Window};
#[cfg(target_arch = "x86_64")]
use crate::media::image::faces::simd_avx2;

/// `out[o][p] = bias[o] + Σ_c weights[o][c] · x[c][p]` for the `bias.len()` outputs,
/// then `max(0, ·)` when `relu`.
pub fn product(p: &Product, out: &mut [f32], out_stride: usize) {
    let outputs = p.bias.len();
    assert!(p.weights.len() >= outputs * p.inputs);
    assert!(p.inputs == 0 || p.x.len() >= (p.inputs - 1) * p.x_stride + p.n);
    assert!(outputs == 0 || out.len() >= (outputs - 1) * out_stride + p.n);
    #[cfg(target_arch = "x86_64")]
    if simd() {
        // SAFETY: the CPU has AVX2 and FMA; the asserts bound every index the body uses.
        unsafe { simd_avx2::product(p, out, out_stride, 0) };
        return;
    }
    portable::product_portable(p, out, out_stride, 0);
}

/// A 3×3 depthwise convolution, stride 1, one pixel of zero padding, of one channel of
/// `width` × `height`: `kernel` row by row, then `max(0, ·)` when `relu`.
pub fn depthwise3(
    plane: &[f32],
    size: (usize, usize),
    kernel: &[f32; 9],
    bias: f32,
    relu: bool,
    out: &mut [f32],
) {
    assert!(plane.len() >= size.0 * size.1 && out.len() >= size.0 * size.1);
    #[cfg(target_arch = "x86_64")]
    if simd() {
        // SAFETY: the CPU has AVX2 and FMA; the body reads and writes within the rows.
        unsafe { simd_avx2::depthwise3(plane, size, kernel, bias, relu, out) };
        return;
    }
    portable::depthwise3_rows(plane, size, kernel, bias, relu, out, |_, _| 1);
}

/// Output rows `rows` of a convolution with window `w` over `input` (`channels` planes
/// of `width` × `height`) as columns: row `(c, ky, kx)` of `cols` holds, for every
/// output pixel of those rows, the input value under that tap (0 in the padding).
pub fn im2col(
    input: &[f32],
    (channels, width, height): (usize, usize, usize),
    w: Window,
    rows: std::ops::Range<usize>,
    cols: &mut Vec<f32>,
) {
    let out_w = w.out(width);
    let n = rows.len() * out_w;
    cols.resize(channels * w.size * w.size * n, 0.0);
    let mut at = 0;
    for c in 0..channels {
        let plane = &input[c * width * height..(c + 1) * width * height];
        for ky in 0..w.size {
            for kx in 0..w.size {
                // The output columns whose tap falls inside the row: lo..hi.
                let lo = w.pad.saturating_sub(kx).div_ceil(w.stride).min(out_w);
                let hi = (width + w.pad)
                    .saturating_sub(kx)
                    .div_ceil(w.stride)
                    .clamp(lo, out_w);
                for oy in rows.clone() {
                    let iy = (oy * w.stride + ky).wrapping_sub(w.pad);
                    let dest = &mut cols[at..at + out_w];
                    at += out_w;
                    if iy >= height {
                        dest.fill(0.0);
                        continue;
                    }
                    dest[..lo].fill(0.0);
                    dest[hi..].fill(0.0);
                    let first = lo * w.stride + kx - w.pad;
                    let line = &plane[iy * width + first..(iy + 1) * width];
                    for (d, &v) in dest[lo..hi].iter_mut().zip(line.iter().step_by(w.stride)) {
                        *d = v;
                    }
                }
            }
        }
    }
}
