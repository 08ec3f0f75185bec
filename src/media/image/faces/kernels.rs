//! The arithmetic of the face network, on planar maps (`[channel][row][column]`, f32):
//! 1×1 convolutions as a small matrix product, 3×3 depthwise convolutions, and the
//! rows of a strided convolution unrolled into columns (`im2col`) for the product.
//!
//! Each kernel has two bodies: one for x86-64 with AVX2 and FMA (every server CPU since
//! 2013), chosen at run time, and a portable one. Both give each output the same sum
//! in the same order whatever the part of the map being computed, so a map split into
//! bands computed on several threads is bit for bit the map computed on one.

#[cfg(target_arch = "x86_64")]
use crate::media::image::faces::simd;

/// How a 1×1 convolution's operands lie in memory: input channel `c` at
/// `x[c * x_stride..][..n]`, output channel `o` at `out[o * out_stride..][..n]`,
/// weights `[out][in]`.
pub struct Product<'a> {
    pub x: &'a [f32],
    pub x_stride: usize,
    pub inputs: usize,
    pub n: usize,
    pub weights: &'a [f32],
    pub bias: &'a [f32],
    pub relu: bool,
}

/// `out[o][p] = bias[o] + Σ_c weights[o][c] · x[c][p]` for the `bias.len()` outputs,
/// then `max(0, ·)` when `relu`.
pub fn product(p: &Product, out: &mut [f32], out_stride: usize) {
    let outputs = p.bias.len();
    assert!(p.weights.len() >= outputs * p.inputs);
    assert!(p.inputs == 0 || p.x.len() >= (p.inputs - 1) * p.x_stride + p.n);
    assert!(outputs == 0 || out.len() >= (outputs - 1) * out_stride + p.n);
    #[cfg(target_arch = "x86_64")]
    if simd() {
        // SAFETY: the CPU has AVX2 and FMA (and AVX-512 where that body runs); the
        // asserts bound every index the bodies use.
        unsafe {
            if std::arch::is_x86_feature_detected!("avx512f") {
                simd::avx512::product(p, out, out_stride);
            } else {
                simd::avx2::product(p, out, out_stride, 0);
            }
        }
        return;
    }
    product_portable(p, out, out_stride, 0);
}

/// The portable body of `product`, from pixel `from` on (inlined into the SIMD body
/// for its tail, where `madd` is one instruction).
#[inline(always)]
pub(super) fn product_portable(p: &Product, out: &mut [f32], out_stride: usize, from: usize) {
    for (o, &bias) in p.bias.iter().enumerate() {
        let w = &p.weights[o * p.inputs..(o + 1) * p.inputs];
        let row = &mut out[o * out_stride..o * out_stride + p.n];
        for (i, value) in row.iter_mut().enumerate().skip(from) {
            let mut acc = bias;
            for (c, &wc) in w.iter().enumerate() {
                acc = madd(wc, p.x[c * p.x_stride + i], acc);
            }
            *value = if p.relu { acc.max(0.0) } else { acc };
        }
    }
}

/// `a · b + c`, fused where the CPU fuses it (as the SIMD bodies do), so the tails of
/// rows computed here match the lanes computed there.
#[inline(always)]
fn madd(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if simd() {
        return a.mul_add(b, c);
    }
    a * b + c
}

/// Whether the AVX2 + FMA bodies run (cached by std after the first call).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn simd() -> bool {
    #[cfg(test)]
    if PORTABLE.with(std::cell::Cell::get) {
        return false;
    }
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(test)]
thread_local! {
    /// Set by tests to run the portable bodies on this thread.
    pub static PORTABLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
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
        unsafe { simd::avx2::depthwise3(plane, size, kernel, bias, relu, out) };
        return;
    }
    depthwise3_rows(plane, size, kernel, bias, relu, out, |_, _| 1);
}

/// The rows of `depthwise3`: `inner` computes what it can of a row's columns 1.. (the
/// SIMD body's lanes) and says where it stopped; the rest here, one by one.
#[inline(always)]
pub(super) fn depthwise3_rows(
    plane: &[f32],
    (width, height): (usize, usize),
    kernel: &[f32; 9],
    bias: f32,
    relu: bool,
    out: &mut [f32],
    inner: impl Fn(&[&[f32]; 3], &mut [f32]) -> usize,
) {
    let zeros = vec![0f32; width];
    for y in 0..height {
        let row = |r: usize| &plane[r * width..(r + 1) * width];
        let rows = [
            if y > 0 { row(y - 1) } else { &zeros[..] },
            row(y),
            if y + 1 < height {
                row(y + 1)
            } else {
                &zeros[..]
            },
        ];
        let line = &mut out[y * width..(y + 1) * width];
        let mut x = 0;
        if width >= 10 {
            line[0] = depthwise_at(&rows, kernel, bias, relu, 0);
            x = inner(&rows, line).clamp(1, width);
        }
        while x < width {
            line[x] = depthwise_at(&rows, kernel, bias, relu, x);
            x += 1;
        }
    }
}

/// One output of `depthwise3`, columns outside the row read as zero.
#[inline(always)]
fn depthwise_at(rows: &[&[f32]; 3], k: &[f32; 9], bias: f32, relu: bool, x: usize) -> f32 {
    let mut acc = bias;
    for (r, row) in rows.iter().enumerate() {
        for dx in 0..3 {
            let column = (x + dx).wrapping_sub(1);
            let value = row.get(column).copied().unwrap_or(0.0);
            acc = madd(k[3 * r + dx], value, acc);
        }
    }
    if relu {
        acc.max(0.0)
    } else {
        acc
    }
}

/// The shape of a convolution's window: `size` × `size`, moved by `stride`, `pad`
/// zeros around the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub size: usize,
    pub stride: usize,
    pub pad: usize,
}

impl Window {
    /// The output side for an input side of `side`.
    pub fn out(&self, side: usize) -> usize {
        (side + 2 * self.pad).saturating_sub(self.size) / self.stride + 1
    }
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
