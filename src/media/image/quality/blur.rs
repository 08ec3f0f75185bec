//! The Gaussian blur (σ 1.5) of SSIMULACRA2: libjxl's recursive Gaussian (Charalampidis
//! 2016, three cosine terms, radius 5), as the `ssimulacra2` crate ports it (BSD-2-Clause,
//! the rust-av project): a forward recursion along each row, then along each column.
//!
//! Ours differs in how it runs, not in what it computes: plain multiplies and adds where
//! the crate writes `mul_add` (which, built for baseline x86-64 without FMA, is a call to
//! a software `fmaf` per term: a sixth of a score's time), the columns in blocks of
//! [`BLOCK`] and the rows in blocks of [`ROWS`], held in arrays the compiler keeps in
//! vector registers.

use std::sync::OnceLock;

/// Columns the vertical pass carries at once.
const BLOCK: usize = 64;
/// Rows the horizontal pass carries at once.
const ROWS: usize = 8;

/// The recursion's constants, derived from σ once.
struct Kernel {
    radius: usize,
    /// Per term: the row pass's weights of the input, the previous and the one before.
    row_in: [f32; 3],
    row_prev: [f32; 3],
    row_prev2: [f32; 3],
    /// Per term: the column pass's weights of the input and the previous output.
    column_in: [f32; 3],
    column_prev: [f32; 3],
}

fn kernel() -> &'static Kernel {
    static KERNEL: OnceLock<Kernel> = OnceLock::new();
    KERNEL.get_or_init(|| Kernel::for_sigma(1.5))
}

impl Kernel {
    /// The constants of libjxl's `CreateRecursiveGaussian` (the crate's build script).
    fn for_sigma(sigma: f64) -> Kernel {
        use std::f64::consts::PI;
        let radius = 3.2795f64.mul_add(sigma, 0.2546).round();
        let step = PI / (2.0 * radius);
        let omega = [step, 3.0 * step, 5.0 * step];
        let p = [
            1.0 / (0.5 * omega[0]).tan(),
            -1.0 / (0.5 * omega[1]).tan(),
            1.0 / (0.5 * omega[2]).tan(),
        ];
        let r = [
            p[0] * p[0] / omega[0].sin(),
            -p[1] * p[1] / omega[1].sin(),
            p[2] * p[2] / omega[2].sin(),
        ];
        let rho = omega.map(|w| (-0.5 * sigma * sigma * w * w).exp() / radius);
        let d13 = p[0].mul_add(r[1], -r[0] * p[1]);
        let d35 = p[1].mul_add(r[2], -r[1] * p[2]);
        let d51 = p[2].mul_add(r[0], -r[2] * p[0]);
        let (zeta15, zeta35) = (d35 / d13, d51 / d13);
        let a = invert([p, r, [zeta15, zeta35, 1.0]]);
        let gamma = [
            1.0,
            radius.mul_add(radius, -sigma * sigma),
            zeta15.mul_add(rho[0], zeta35 * rho[1]) + rho[2],
        ];
        let beta: [f64; 3] = std::array::from_fn(|i| {
            a[i][0].mul_add(gamma[0], a[i][1].mul_add(gamma[1], a[i][2] * gamma[2]))
        });
        let n2: [f64; 3] = std::array::from_fn(|i| -beta[i] * (omega[i] * (radius + 1.0)).cos());
        let d1: [f64; 3] = omega.map(|w| -2.0 * w.cos());
        Kernel {
            radius: radius as usize,
            row_in: n2.map(|n| n as f32),
            row_prev: d1.map(|d| -d as f32),
            row_prev2: [-1.0; 3],
            column_in: n2.map(|n| n as f32),
            column_prev: d1.map(|d| d as f32),
        }
    }
}

/// The inverse of a 3×3 matrix by Cramer's rule.
fn invert(m: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let minor = |r0: usize, r1: usize, c0: usize, c1: usize| {
        m[r0][c0].mul_add(m[r1][c1], -(m[r1][c0] * m[r0][c1]))
    };
    let cofactor = [
        [minor(1, 2, 1, 2), -minor(1, 2, 0, 2), minor(1, 2, 0, 1)],
        [-minor(0, 2, 1, 2), minor(0, 2, 0, 2), -minor(0, 2, 0, 1)],
        [minor(0, 1, 1, 2), -minor(0, 1, 0, 2), minor(0, 1, 0, 1)],
    ];
    let determinant = m[0][0].mul_add(
        cofactor[0][0],
        m[0][1].mul_add(cofactor[0][1], m[0][2] * cofactor[0][2]),
    );
    std::array::from_fn(|i| std::array::from_fn(|j| cofactor[j][i] / determinant))
}

/// `plane` (`width` × `height`) blurred into `out`, `temp` a scratch plane of its size.
pub(super) fn blur(plane: &[f32], width: usize, temp: &mut [f32], out: &mut [f32]) {
    let k = kernel();
    let height = plane.len() / width;
    let mut lanes = Lanes::new(k, width);
    let mut y = 0;
    while y < height {
        let rows = ROWS.min(height - y);
        lanes.blur_rows(k, &plane[y * width..], &mut temp[y * width..], rows);
        y += rows;
    }
    let mut x = 0;
    while x < width {
        let columns = BLOCK.min(width - x);
        blur_columns(k, &temp[x..], &mut out[x..], (width, height), columns);
        x += columns;
    }
}

/// The row pass's [`ROWS`] rows interleaved, one vector lane each: the recursion then
/// reads and writes whole lane groups in order, where reading each row at its own
/// place (bounds checked, past either end zero) made the row pass four times as slow
/// as the column pass. The values and the order of every operation are the same.
struct Lanes {
    width: usize,
    /// Zeroes where the recursion reaches past the row: twice the radius before it
    /// (its first step reads that far back), the radius after it.
    input: Vec<[f32; ROWS]>,
    output: Vec<[f32; ROWS]>,
}

impl Lanes {
    fn new(k: &Kernel, width: usize) -> Lanes {
        Lanes {
            width,
            input: vec![[0.0; ROWS]; width + 3 * k.radius],
            output: vec![[0.0; ROWS]; width],
        }
    }

    /// The row pass over `rows` (≤ [`ROWS`]) rows starting at the slices' start, side
    /// by side: one row's recursion waits on each step's result, [`ROWS`] of them fill
    /// the vector lanes while they wait.
    fn blur_rows(&mut self, k: &Kernel, input: &[f32], output: &mut [f32], rows: usize) {
        let (width, radius) = (self.width, k.radius);
        let lead = 2 * radius;
        for (r, row) in input.chunks(width).take(rows).enumerate() {
            let lanes = self.input[lead..lead + width].iter_mut();
            for (lane, value) in lanes.zip(row) {
                lane[r] = *value;
            }
        }
        if rows < ROWS {
            // The last block's unused lanes: zero, not the block before's rows.
            for lane in &mut self.input {
                lane[rows..].fill(0.0);
            }
        }
        let mut prev = [[0f32; ROWS]; 3];
        let mut prev2 = [[0f32; ROWS]; 3];
        // Step n of the recursion (from 1 − radius) reads the row at n ± radius − 1.
        for step in 0..width + radius - 1 {
            let (before, after) = (&self.input[step], &self.input[step + lead]);
            let mut sum = [0f32; ROWS];
            for r in 0..ROWS {
                sum[r] = before[r] + after[r];
            }
            let mut total = [0f32; ROWS];
            for t in 0..3 {
                let mut out = [0f32; ROWS];
                for r in 0..ROWS {
                    let o = k.row_prev2[t] * prev2[t][r] + sum[r] * k.row_in[t];
                    out[r] = k.row_prev[t] * prev[t][r] + o;
                    total[r] += out[r];
                }
                prev2[t] = prev[t];
                prev[t] = out;
            }
            if step + 1 >= radius {
                self.output[step + 1 - radius] = total;
            }
        }
        for (r, row) in output.chunks_mut(width).take(rows).enumerate() {
            for (value, lane) in row.iter_mut().zip(&self.output) {
                *value = lane[r];
            }
        }
    }
}

/// The column pass over `columns` (≤ [`BLOCK`]) columns starting at the slices' start.
fn blur_columns(
    k: &Kernel,
    input: &[f32],
    output: &mut [f32],
    (width, height): (usize, usize),
    columns: usize,
) {
    let radius = k.radius as isize;
    let zeroes = [0f32; BLOCK];
    let mut prev = [[0f32; BLOCK]; 3];
    let mut prev2 = [[0f32; BLOCK]; 3];
    let row = |y: isize| -> &[f32] {
        if (0..height as isize).contains(&y) {
            &input[y as usize * width..][..columns]
        } else {
            &zeroes[..columns]
        }
    };
    for n in (1 - radius)..height as isize {
        let (top, bottom) = (row(n - radius - 1), row(n + radius - 1));
        let mut sum = [0f32; BLOCK];
        for i in 0..columns {
            sum[i] = top[i] + bottom[i];
        }
        let mut total = [0f32; BLOCK];
        for t in 0..3 {
            let (w_in, w_prev) = (k.column_in[t], k.column_prev[t]);
            let mut out = [0f32; BLOCK];
            for i in 0..BLOCK {
                out[i] = sum[i] * w_in - (prev[t][i] * w_prev + prev2[t][i]);
                total[i] += out[i];
            }
            prev2[t] = prev[t];
            prev[t] = out;
        }
        if n >= 0 {
            output[n as usize * width..][..columns].copy_from_slice(&total[..columns]);
        }
    }
}
