//! The portable arithmetic of the face network's kernels (`kernels`), and what the
//! SIMD bodies (`simd_avx2`) share with it: the operands of a 1×1
//! product, a convolution's window, the rows of a depthwise convolution with their
//! borders, and one multiply-add.

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
pub(super) fn madd(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if simd() {
        return a.mul_add(b, c);
    }
    a * b + c
}

/// Whether the AVX2 + FMA bodies run (cached by std after the first call).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn simd() -> bool {
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
pub(super) fn depthwise_at(
    rows: &[&[f32]; 3],
    k: &[f32; 9],
    bias: f32,
    relu: bool,
    x: usize,
) -> f32 {
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
