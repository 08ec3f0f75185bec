//! Where the CPU has AVX-512 (16 lanes, 32 registers): `kernels::product` on 8 outputs ×
//! 32 pixels at a time, the same sums in the same order as the other bodies.

use std::arch::x86_64::*;

use crate::media::image::faces::portable::Product;
use crate::media::image::faces::simd_avx2;

#[target_feature(enable = "avx512f,avx2,fma")]
pub unsafe fn product(p: &Product, out: &mut [f32], out_stride: usize) {
    let outputs = p.bias.len();
    let mut i = 0;
    while i + 32 <= p.n {
        let mut o = 0;
        while o + 8 <= outputs {
            block::<8>(p, out, out_stride, i, o);
            o += 8;
        }
        while o < outputs {
            block::<1>(p, out, out_stride, i, o);
            o += 1;
        }
        i += 32;
    }
    simd_avx2::product(p, out, out_stride, i);
}

/// Outputs `o..o + R` at pixels `i..i + 32` (`R` known when compiled, so the
/// accumulators stay in registers).
#[inline(always)]
unsafe fn block<const R: usize>(
    p: &Product,
    out: &mut [f32],
    out_stride: usize,
    i: usize,
    o: usize,
) {
    let (x, w, ci) = (p.x.as_ptr(), p.weights.as_ptr(), p.inputs);
    let zero = _mm512_setzero_ps();
    let mut acc = [[zero; 2]; R];
    for (j, a) in acc.iter_mut().enumerate() {
        let b = _mm512_set1_ps(p.bias[o + j]);
        *a = [b, b];
    }
    for c in 0..ci {
        let xp = x.add(c * p.x_stride + i);
        let (x0, x1) = (_mm512_loadu_ps(xp), _mm512_loadu_ps(xp.add(16)));
        for (j, a) in acc.iter_mut().enumerate() {
            let wv = _mm512_set1_ps(*w.add((o + j) * ci + c));
            a[0] = _mm512_fmadd_ps(wv, x0, a[0]);
            a[1] = _mm512_fmadd_ps(wv, x1, a[1]);
        }
    }
    for (j, a) in acc.iter().enumerate() {
        let op = out.as_mut_ptr().add((o + j) * out_stride + i);
        let (a0, a1) = if p.relu {
            (_mm512_max_ps(a[0], zero), _mm512_max_ps(a[1], zero))
        } else {
            (a[0], a[1])
        };
        _mm512_storeu_ps(op, a0);
        _mm512_storeu_ps(op.add(16), a1);
    }
}
