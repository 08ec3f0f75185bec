//! Grey-level dilation by a disc: the outline drawn around text.

/// `fill` (a `w`×`h` coverage map, row by row) grown by a disc of `radius` pixels:
/// each pixel the maximum of the pixels within `radius` of it (text outlines).
///
/// A disc rather than a square keeps the outline's corners round. Each row of the disc
/// is a horizontal maximum of its half-width, computed once per distinct width into
/// one buffer that every row of that width then reads; each horizontal maximum costs a
/// few operations per pixel whatever the width ([`row_max`]). So the outline keeps two
/// canvases besides the letters' (the result and one horizontal maximum), whatever its
/// radius: the caller counts them.
#[inline(never)]
pub fn dilate_disc(fill: &[f32], (w, h): (usize, usize), radius: usize) -> Vec<f32> {
    let r = radius as isize;
    let half_widths: Vec<usize> = (-r..=r)
        .map(|dy| (((r * r - dy * dy) as f64).sqrt().round()) as usize)
        .collect();
    let mut out = vec![0f32; w * h];
    let mut rows = vec![0f32; w * h];
    let mut scratch = (Vec::new(), Vec::new());
    let mut done = vec![false; radius + 1];
    for &hw in &half_widths {
        if std::mem::replace(&mut done[hw], true) {
            continue;
        }
        for (src, dst) in fill.chunks_exact(w).zip(rows.chunks_exact_mut(w)) {
            row_max(src, hw, dst, &mut scratch);
        }
        for (i, dy) in (-r..=r).enumerate() {
            if half_widths[i] != hw {
                continue;
            }
            for y in 0..h as isize {
                let sy = y + dy;
                if sy < 0 || sy >= h as isize {
                    continue;
                }
                let (dst, src) = (y as usize * w, sy as usize * w);
                for (o, &v) in out[dst..dst + w].iter_mut().zip(&rows[src..src + w]) {
                    if v > *o {
                        *o = v;
                    }
                }
            }
        }
    }
    out
}

/// Each pixel of `row`'s maximum over the `half` pixels either side (outside the row:
/// 0, which coverage never goes under), into `out`. Van Herk and Gil-Werman's method:
/// maxima running forward and backward within blocks of the window's length, so any
/// window is the larger of two lookups, at three operations a pixel for any `half`.
#[inline(never)]
fn row_max(row: &[f32], half: usize, out: &mut [f32], (fwd, bwd): &mut (Vec<f32>, Vec<f32>)) {
    let (n, k) = (row.len(), 2 * half + 1);
    let m = n + 2 * half;
    let at = |p: usize| {
        if p >= half && p < half + n {
            row[p - half]
        } else {
            0.0
        }
    };
    fwd.resize(m, 0.0);
    bwd.resize(m, 0.0);
    for p in 0..m {
        fwd[p] = if p % k == 0 {
            at(p)
        } else {
            fwd[p - 1].max(at(p))
        };
    }
    for p in (0..m).rev() {
        bwd[p] = if p == m - 1 || (p + 1) % k == 0 {
            at(p)
        } else {
            bwd[p + 1].max(at(p))
        };
    }
    for (x, o) in out.iter_mut().enumerate() {
        *o = bwd[x].max(fwd[x + k - 1]);
    }
}
