//! The AVX2 + FMA bodies of `kernels` (x86-64 CPUs since 2013). Each sums in the order
//! the portable body does (bias, then input by input, one FMA each), so the bodies give
//! the same bits wherever the CPU fuses multiply-adds.

use std::arch::x86_64::*;

use crate::media::image::faces::portable::{self, Product};

/// `kernels::product` on 4 outputs × 16 pixels at a time, from pixel `from` on.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn product(p: &Product, out: &mut [f32], out_stride: usize, from: usize) {
    let outputs = p.bias.len();
    let (x, w, ci) = (p.x.as_ptr(), p.weights.as_ptr(), p.inputs);
    let o_ptr = out.as_mut_ptr();
    let zero = _mm256_setzero_ps();
    let finish = |v: __m256| if p.relu { _mm256_max_ps(v, zero) } else { v };
    let mut i = from;
    while i + 16 <= p.n {
        let mut o = 0;
        while o + 4 <= outputs {
            let mut acc = [[zero; 2]; 4];
            for (j, a) in acc.iter_mut().enumerate() {
                let b = _mm256_set1_ps(p.bias[o + j]);
                *a = [b, b];
            }
            for c in 0..ci {
                let xp = x.add(c * p.x_stride + i);
                let (x0, x1) = (_mm256_loadu_ps(xp), _mm256_loadu_ps(xp.add(8)));
                for (j, a) in acc.iter_mut().enumerate() {
                    let wv = _mm256_set1_ps(*w.add((o + j) * ci + c));
                    a[0] = _mm256_fmadd_ps(wv, x0, a[0]);
                    a[1] = _mm256_fmadd_ps(wv, x1, a[1]);
                }
            }
            for (j, a) in acc.iter().enumerate() {
                let op = o_ptr.add((o + j) * out_stride + i);
                _mm256_storeu_ps(op, finish(a[0]));
                _mm256_storeu_ps(op.add(8), finish(a[1]));
            }
            o += 4;
        }
        while o < outputs {
            let b = _mm256_set1_ps(p.bias[o]);
            let mut a = [b, b];
            for c in 0..ci {
                let xp = x.add(c * p.x_stride + i);
                let wv = _mm256_set1_ps(*w.add(o * ci + c));
                a[0] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xp), a[0]);
                a[1] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xp.add(8)), a[1]);
            }
            let op = o_ptr.add(o * out_stride + i);
            _mm256_storeu_ps(op, finish(a[0]));
            _mm256_storeu_ps(op.add(8), finish(a[1]));
            o += 1;
        }
        i += 16;
    }
    if i < p.n {
        portable::product_portable(p, out, out_stride, i);
    }
}

/// `kernels::depthwise3`, its rows' inner columns 8 at a time.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn depthwise3(
    plane: &[f32],
    size: (usize, usize),
    kernel: &[f32; 9],
    bias: f32,
    relu: bool,
    out: &mut [f32],
) {
    portable::depthwise3_rows(plane, size, kernel, bias, relu, out, |rows, line| {
        // SAFETY: the rows are `line.len()` long; the body reads within them.
        unsafe { depthwise_row(rows, kernel, bias, relu, line) }
    });
}

/// Columns 1.. of one output row of `kernels::depthwise3`, 8 at a time while all
/// three taps are inside the row; the column the rest starts at.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn depthwise_row(
    rows: &[&[f32]; 3],
    k: &[f32; 9],
    bias: f32,
    relu: bool,
    line: &mut [f32],
) -> usize {
    let width = line.len();
    let kv: [__m256; 9] = std::array::from_fn(|t| _mm256_set1_ps(k[t]));
    let (b, zero) = (_mm256_set1_ps(bias), _mm256_setzero_ps());
    let mut x = 1;
    // Four vectors at a time: four chains of nine dependent FMAs side by side (one
    // chain alone waits on each FMA's latency).
    while x + 33 <= width {
        let mut acc = [b; 4];
        for (r, row) in rows.iter().enumerate() {
            let rp = row.as_ptr().add(x - 1);
            for t in 0..3 {
                for (v, a) in acc.iter_mut().enumerate() {
                    let value = _mm256_loadu_ps(rp.add(8 * v + t));
                    *a = _mm256_fmadd_ps(kv[3 * r + t], value, *a);
                }
            }
        }
        for (v, a) in acc.iter().enumerate() {
            let a = if relu { _mm256_max_ps(*a, zero) } else { *a };
            _mm256_storeu_ps(line.as_mut_ptr().add(x + 8 * v), a);
        }
        x += 32;
    }
    while x + 9 <= width {
        let mut acc = b;
        for (r, row) in rows.iter().enumerate() {
            let rp = row.as_ptr().add(x - 1);
            acc = _mm256_fmadd_ps(kv[3 * r], _mm256_loadu_ps(rp), acc);
            acc = _mm256_fmadd_ps(kv[3 * r + 1], _mm256_loadu_ps(rp.add(1)), acc);
            acc = _mm256_fmadd_ps(kv[3 * r + 2], _mm256_loadu_ps(rp.add(2)), acc);
        }
        if relu {
            acc = _mm256_max_ps(acc, zero);
        }
        _mm256_storeu_ps(line.as_mut_ptr().add(x), acc);
        x += 8;
    }
    x
}
