//! The AVX2 + FMA bodies of `kernels` (x86-64 CPUs since 2013; AVX-512 would give the
//! product twice the lanes, but its intrinsics need Rust 1.89, past this crate's
//! `rust-version`). Each sums in the order
//! the portable body does (bias, then input by input, one FMA each), so the bodies give
//! the same bits wherever the CPU fuses multiply-adds.

use std::arch::x86_64::*;

use crate::media::image::faces::portable::{self, Product};

/// `kernels::product` from pixel `from` on: 4 outputs × 16 pixels at a time (eight
/// accumulators, two loads and four broadcasts per eight FMAs; twelve accumulators
/// spill one of them to the stack, with all sixteen registers taken), then 8 pixels.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn product(p: &Product, out: &mut [f32], out_stride: usize, from: usize) {
    let outputs = p.bias.len();
    let mut i = from;
    while i + 16 <= p.n {
        let mut o = 0;
        while o + 4 <= outputs {
            block::<4, 2>(p, out, out_stride, i, o);
            o += 4;
        }
        while o < outputs {
            block::<1, 2>(p, out, out_stride, i, o);
            o += 1;
        }
        i += 16;
    }
    while i + 8 <= p.n {
        for o in 0..outputs {
            block::<1, 1>(p, out, out_stride, i, o);
        }
        i += 8;
    }
    if i < p.n {
        portable::product_portable(p, out, out_stride, i);
    }
}

/// Outputs `o..o + R` at pixels `i..i + 8 V` (`R` and `V` known when compiled, so the
/// accumulators stay in registers).
#[inline(always)]
unsafe fn block<const R: usize, const V: usize>(
    p: &Product,
    out: &mut [f32],
    out_stride: usize,
    i: usize,
    o: usize,
) {
    let (x, w, ci) = (p.x.as_ptr(), p.weights.as_ptr(), p.inputs);
    let zero = _mm256_setzero_ps();
    let mut acc = [[zero; V]; R];
    for (j, a) in acc.iter_mut().enumerate() {
        *a = [_mm256_set1_ps(p.bias[o + j]); V];
    }
    for c in 0..ci {
        let xp = x.add(c * p.x_stride + i);
        let xs: [__m256; V] = std::array::from_fn(|v| _mm256_loadu_ps(xp.add(8 * v)));
        for (j, a) in acc.iter_mut().enumerate() {
            let wv = _mm256_set1_ps(*w.add((o + j) * ci + c));
            for (av, xv) in a.iter_mut().zip(&xs) {
                *av = _mm256_fmadd_ps(wv, *xv, *av);
            }
        }
    }
    for (j, a) in acc.iter().enumerate() {
        let op = out.as_mut_ptr().add((o + j) * out_stride + i);
        for (v, av) in a.iter().enumerate() {
            let value = if p.relu {
                _mm256_max_ps(*av, zero)
            } else {
                *av
            };
            _mm256_storeu_ps(op.add(8 * v), value);
        }
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
