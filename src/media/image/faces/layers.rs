//! The layers of the face network on planar maps (`engine::Map`): what each of
//! `engine::Op` computes, with the buffers of maps no longer read reused (`Pool`).

use std::sync::Mutex;

use crate::media::image::faces::kernels;
use crate::media::image::faces::layer::{Conv, Map, Op};
use crate::media::image::faces::portable::{Product, Window};

/// The buffers of the maps a run no longer reads, for the maps it makes next.
#[derive(Default)]
pub(super) struct Pool(Vec<Vec<f32>>);

/// The buffers of the last run, kept for the next one (as OpenCV's `Net` keeps its
/// blobs): fresh memory costs a fault and the kernel's zeroing per page, which on
/// 2 MP photos was a fifth of a detection. One set, that of one run at 960 px at most
/// (a test holds it under `KEPT_BYTES`); a run beside another makes its own.
static KEPT: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

/// The most `KEPT` holds.
pub(super) const KEPT_BYTES: usize = 64 << 20;

impl Pool {
    /// The buffers kept by the last run (none if another run holds them).
    pub(super) fn kept() -> Pool {
        Pool(std::mem::take(&mut *lock(&KEPT)))
    }

    /// Keeps these buffers for the next run, if they are not too many and no other
    /// run's are kept.
    pub(super) fn keep(self) {
        if self.bytes() <= KEPT_BYTES {
            let mut kept = lock(&KEPT);
            if kept.is_empty() {
                *kept = self.0;
            }
        }
    }

    /// The bytes these buffers hold.
    pub(super) fn bytes(&self) -> usize {
        self.0.iter().map(|b| 4 * b.capacity()).sum()
    }

    /// A buffer whose first `len` values are zeros.
    pub(super) fn zeroed(&mut self, len: usize) -> Vec<f32> {
        let mut buffer = self.take(len);
        buffer[..len].fill(0.0);
        buffer
    }

    /// A buffer of at least `len` values, any values: every kernel writes all of its
    /// output, and a map reads only its first channels × height × width. Never
    /// shortened, so a buffer is zeroed once when it grows, not on every reuse.
    pub(super) fn take(&mut self, len: usize) -> Vec<f32> {
        let fits = (self.0.iter().enumerate())
            .filter(|(_, b)| b.len() >= len)
            .min_by_key(|(_, b)| b.len());
        let best = fits
            .or_else(|| self.0.iter().enumerate().max_by_key(|(_, b)| b.len()))
            .map(|(i, _)| i);
        let mut buffer = best.map(|i| self.0.swap_remove(i)).unwrap_or_default();
        if buffer.len() < len {
            buffer.resize(len, 0.0);
        }
        buffer
    }

    pub(super) fn give(&mut self, buffer: Vec<f32>) {
        self.0.push(buffer);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn eval(op: &Op, x: &Map, y: Option<&Map>, pool: &mut Pool) -> Result<Map, String> {
    let (c, h, w) = (x.channels, x.height, x.width);
    let plane = w * h;
    let mut like = |channels, height, width| Map {
        channels,
        height,
        width,
        data: pool.take(channels * height * width),
    };
    Ok(match op {
        Op::Conv {
            kind,
            weights,
            bias,
            relu,
        } => {
            let relu = *relu;
            match kind {
                Conv::Pointwise => {
                    let mut out = like(bias.len(), h, w);
                    let p = Product {
                        x: &x.data,
                        x_stride: plane,
                        inputs: c,
                        n: plane,
                        weights,
                        bias,
                        relu,
                    };
                    kernels::product(&p, &mut out.data, plane);
                    out
                }
                Conv::Depthwise3 => {
                    let mut out = like(c, h, w);
                    for ch in 0..c {
                        let k: &[f32; 9] = weights[9 * ch..9 * ch + 9].try_into().expect("9");
                        let range = ch * plane..(ch + 1) * plane;
                        let (src, dest) = (&x.data[range.clone()], &mut out.data[range]);
                        kernels::depthwise3(src, (w, h), k, bias[ch], relu, dest);
                    }
                    out
                }
                Conv::General(window) => {
                    let mut out = like(bias.len(), window.out(h), window.out(w));
                    general(x, *window, weights, bias, relu, &mut out.data);
                    out
                }
            }
        }
        Op::Relu => {
            let mut out = like(c, h, w);
            let n = c * plane;
            for (o, v) in out.data[..n].iter_mut().zip(&x.data[..n]) {
                *o = v.max(0.0);
            }
            out
        }
        Op::MaxPool2 => {
            let mut out = like(c, h / 2, w / 2);
            let (oh, ow) = (h / 2, w / 2);
            for ch in 0..c {
                for oy in 0..oh {
                    let r0 = &x.data[ch * plane + 2 * oy * w..][..w];
                    let r1 = &x.data[ch * plane + (2 * oy + 1) * w..][..w];
                    let dest = &mut out.data[(ch * oh + oy) * ow..][..ow];
                    let pairs = r0.chunks_exact(2).zip(r1.chunks_exact(2));
                    for (d, (a, b)) in dest.iter_mut().zip(pairs) {
                        *d = a[0].max(a[1]).max(b[0].max(b[1]));
                    }
                }
            }
            out
        }
        Op::Upsample(f) => {
            let (oh, ow) = (h * f, w * f);
            let mut out = like(c, oh, ow);
            for ch in 0..c {
                for oy in 0..oh {
                    let src = &x.data[ch * plane + (oy / f) * w..][..w];
                    let dest = &mut out.data[(ch * oh + oy) * ow..][..ow];
                    for (d, &v) in dest.chunks_exact_mut(*f).zip(src) {
                        d.fill(v);
                    }
                }
            }
            out
        }
        Op::Add => {
            let y = y.ok_or("an addition of one map")?;
            if (y.channels, y.height, y.width) != (c, h, w) {
                return Err("an addition of maps of different shapes".into());
            }
            let mut out = like(c, h, w);
            let n = c * plane;
            let pairs = x.data[..n].iter().zip(&y.data[..n]);
            for (o, (a, b)) in out.data[..n].iter_mut().zip(pairs) {
                *o = a + b;
            }
            out
        }
    })
}

/// A convolution over all the input channels with `window`: bands of output rows
/// unrolled into columns, then the product of the weights with them, into `out`.
fn general(x: &Map, window: Window, weights: &[f32], bias: &[f32], relu: bool, out: &mut [f32]) {
    let (oh, ow) = (window.out(x.height), window.out(x.width));
    let taps = x.channels * window.size * window.size;
    // Bands of about 64 K values of columns: they stay in the core's cache.
    let band = (65_536 / (taps * ow).max(1)).max(1);
    let mut cols = Vec::new();
    let mut y = 0;
    while y < oh {
        let rows = y..(y + band).min(oh);
        let n = rows.len() * ow;
        let shape = (x.channels, x.width, x.height);
        kernels::im2col(&x.data, shape, window, rows.clone(), &mut cols);
        let p = Product {
            x: &cols,
            x_stride: n,
            inputs: taps,
            n,
            weights,
            bias,
            relu,
        };
        kernels::product(&p, &mut out[y * ow..], oh * ow);
        y = rows.end;
    }
}
