//! SSIMULACRA2: how far a decoded trial is from the reference, 100 for the same
//! picture, 70 "high quality", 50 "medium", 30 "low".
//!
//! Our own run of the metric (licence: LICENSE-ssimulacra2 beside this file): the
//! computation of libjxl's `tools/ssimulacra2.cc` (BSD-3-Clause) as the `ssimulacra2`
//! crate ports it (rust-av, BSD-2-Clause; its weights and blur constants are copied
//! here), which the tests take as the reference (scores within 0.05). Why not the crate
//! itself: `quality: auto` scores up to four trials against one reference, and the
//! crate redoes the reference's half of the work for each (its XYB pyramid, its blurred
//! means and squares: two of the five blurs), and its `mul_add`s are calls to a
//! software `fmaf` on baseline x86-64. A `q:auto` render took 6–8 times a
//! fixed-quality one, most of it in the crate; the goal is 3.
//!
//! The metric reads linear RGB; 8-bit sRGB pixels are linearised through one table.
//! Transparency is composited onto white on both sides (the metric has no alpha; what a
//! page shows over a light background). At each of six scales (halved each time) both
//! pictures go to XYB, made positive; per channel, the SSIM of the blurred means and
//! (co)variances and the "edge difference" of each picture from its blurred self are
//! averaged as means and 4-norms, and a fixed weighting of those 108 numbers, bent by a
//! polynomial and a power, is the score.

use image::DynamicImage;

use super::blur::blur;
use super::xyb::{halved, linear, xyb, Planes};
use crate::media::cores::joined;
use crate::media::error::MediaError;

/// The scales: the picture, then halved five times (while at least 8 pixels a side).
const SCALES: usize = 6;

/// What a scale of the reference keeps for every trial: its XYB planes, their blurred
/// means and blurred squares.
struct ReferenceScale {
    xyb: Planes,
    mean: [Vec<f32>; 3],
    square_mean: [Vec<f32>; 3],
}

/// The picture every trial is scored against, with its half of the metric done.
pub(crate) struct Reference {
    scales: Vec<ReferenceScale>,
    /// Each channel's working planes, kept from trial to trial.
    scratch: [Scratch; 3],
}

/// The planes one channel's comparison writes. Kept, because fresh ones cost a page
/// fault and a page cleared per 4 KiB written: a tenth of a score.
#[derive(Default)]
struct Scratch {
    temp: Vec<f32>,
    mean: Vec<f32>,
    square_mean: Vec<f32>,
    cross_mean: Vec<f32>,
    product: Vec<f32>,
}

impl Scratch {
    /// Every plane `len` values long (shorter ones keep their memory).
    fn sized(&mut self, len: usize) -> &mut Scratch {
        for plane in [
            &mut self.temp,
            &mut self.mean,
            &mut self.square_mean,
            &mut self.cross_mean,
            &mut self.product,
        ] {
            plane.resize(len, 0.0);
        }
        self
    }
}

impl Reference {
    /// `image` (the picture written at full quality, decoded) as the reference.
    pub fn of(image: &DynamicImage) -> Reference {
        let mut scales = Vec::new();
        for_each_scale(linear(image), |xyb| {
            let width = xyb.width;
            let [(m0, s0), (m1, s1), (m2, s2)] = per_channel([(); 3], |c, ()| {
                let plane = &xyb.channels[c];
                let mut temp = vec![0f32; plane.len()];
                let mut mean = vec![0f32; plane.len()];
                blur(plane, width, &mut temp, &mut mean);
                let squared: Vec<f32> = plane.iter().map(|v| v * v).collect();
                let mut square_mean = vec![0f32; plane.len()];
                blur(&squared, width, &mut temp, &mut square_mean);
                (mean, square_mean)
            });
            scales.push(ReferenceScale {
                xyb,
                mean: [m0, m1, m2],
                square_mean: [s0, s1, s2],
            });
        });
        Reference {
            scales,
            scratch: Default::default(),
        }
    }

    /// The score of `distorted` (decoded, the reference's size) against it.
    pub fn score(&mut self, distorted: &DynamicImage) -> Result<f64, MediaError> {
        let size = (distorted.width() as usize, distorted.height() as usize);
        let reference_size = self.scales.first().map(|s| (s.xyb.width, s.xyb.height));
        if reference_size != Some(size) {
            return Err(MediaError::InvalidMedia(
                "a trial could not be scored: its size is not the reference's, or the \
                 pictures are under 8 pixels a side"
                    .into(),
            ));
        }
        let mut averages = Vec::with_capacity(SCALES);
        let mut scales = self.scales.iter();
        let scratch = &mut self.scratch;
        for_each_scale(linear(distorted), |xyb| {
            if let Some(reference) = scales.next() {
                averages.push(compare(reference, &xyb, scratch));
            }
        });
        Ok(weighted(&averages))
    }
}

/// The SSIMULACRA2 score of `distorted` against `reference` (two pictures of one size,
/// at least 8 pixels on a side).
pub fn score(reference: &DynamicImage, distorted: &DynamicImage) -> Result<f64, MediaError> {
    Reference::of(reference).score(distorted)
}

/// Calls `each` with the positive XYB planes of `linear` at each scale: the picture,
/// then halved while the last one was at least 8 pixels a side (as the crate and
/// libjxl do: the last may be smaller).
fn for_each_scale(mut linear: Planes, mut each: impl FnMut(Planes)) {
    for scale in 0..SCALES {
        if linear.width < 8 || linear.height < 8 {
            break;
        }
        if scale > 0 {
            linear = halved(&linear);
        }
        each(xyb(&linear));
    }
}

/// Per channel, the SSIM's mean and 4-norm, then the edge difference's artefact mean,
/// 4-norm, detail-lost mean and 4-norm, of one scale.
struct ScaleAverages {
    ssim: [[f64; 2]; 3],
    edge: [[f64; 4]; 3],
}

/// One scale of a trial against the reference's, its three channels at once.
fn compare(
    reference: &ReferenceScale,
    trial: &Planes,
    scratch: &mut [Scratch; 3],
) -> ScaleAverages {
    let len = trial.width * trial.height;
    let scratch = scratch.each_mut().map(|s| s.sized(len));
    let [(ssim0, edge0), (ssim1, edge1), (ssim2, edge2)] =
        per_channel(scratch, |c, s| compare_channel(reference, trial, c, s));
    ScaleAverages {
        ssim: [ssim0, ssim1, ssim2],
        edge: [edge0, edge1, edge2],
    }
}

/// `work` on each of three channels at once: two on threads of their own, the third
/// here (on two cores, one and a half channels' time where one thread beside took two).
fn per_channel<I: Send, T: Send>(inputs: [I; 3], work: impl Fn(usize, I) -> T + Sync) -> [T; 3] {
    let [first, second, third] = inputs;
    let work = &work;
    std::thread::scope(|scope| {
        let first = scope.spawn(move || work(0, first));
        let second = scope.spawn(move || work(1, second));
        let third = work(2, third);
        [joined(first), joined(second), third]
    })
}

/// Channel `c` of one scale, in `scratch` (planes of the scale's size): the trial's
/// blurred mean, square and product with the reference, then the SSIM and
/// edge-difference averages.
fn compare_channel(
    reference: &ReferenceScale,
    trial: &Planes,
    c: usize,
    scratch: &mut Scratch,
) -> ([f64; 2], [f64; 4]) {
    let width = trial.width;
    let (one, two) = (&reference.xyb.channels[c], &trial.channels[c]);
    let Scratch {
        temp,
        mean,
        square_mean,
        cross_mean,
        product,
    } = scratch;
    blur(two, width, temp, mean);
    for (p, v) in product.iter_mut().zip(two) {
        *p = v * v;
    }
    blur(product, width, temp, square_mean);
    for ((p, a), b) in product.iter_mut().zip(one).zip(two) {
        *p = a * b;
    }
    blur(product, width, temp, cross_mean);
    let means = (&reference.mean[c][..], &mean[..]);
    let squares = (&reference.square_mean[c][..], &square_mean[..]);
    (
        ssim(means, squares, cross_mean),
        edge_difference((one, means.0), (two, mean)),
    )
}

/// The mean and 4-norm of 1 − SSIM (floored at 0) over the pixels.
fn ssim((mu1, mu2): (&[f32], &[f32]), (s11, s22): (&[f32], &[f32]), s12: &[f32]) -> [f64; 2] {
    const C2: f32 = 0.0009;
    let mut sums = [0f64; 2];
    for i in 0..mu1.len() {
        let (m1, m2) = (mu1[i], mu2[i]);
        let difference = m1 - m2;
        let numerator_mean = 1.0 - difference * difference;
        let numerator_spread = 2.0 * (s12[i] - m1 * m2) + C2;
        let denominator_spread = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + C2;
        let d = (1.0 - f64::from(numerator_mean * numerator_spread / denominator_spread)).max(0.0);
        sums[0] += d;
        sums[1] += d.powi(4);
    }
    let n = mu1.len() as f64;
    [sums[0] / n, (sums[1] / n).sqrt().sqrt()]
}

/// How much more (artefacts) or less (detail lost) the trial departs from its blurred
/// self than the reference does: the mean and 4-norm of each.
fn edge_difference((one, mu1): (&[f32], &[f32]), (two, mu2): (&[f32], &[f32])) -> [f64; 4] {
    let mut sums = [0f64; 4];
    for i in 0..one.len() {
        let d = (1.0 + f64::from((two[i] - mu2[i]).abs()))
            / (1.0 + f64::from((one[i] - mu1[i]).abs()))
            - 1.0;
        let (artefact, lost) = (d.max(0.0), (-d).max(0.0));
        sums[0] += artefact;
        sums[1] += artefact.powi(4);
        sums[2] += lost;
        sums[3] += lost.powi(4);
    }
    let n = one.len() as f64;
    [
        sums[0] / n,
        (sums[1] / n).sqrt().sqrt(),
        sums[2] / n,
        (sums[3] / n).sqrt().sqrt(),
    ]
}

/// The score from every scale's averages: libjxl's weights, polynomial and power.
fn weighted(scales: &[ScaleAverages]) -> f64 {
    let mut sum = 0f64;
    let mut weights = WEIGHTS.iter();
    let mut add = |value: f64| sum += weights.next().copied().unwrap_or(0.0) * value.abs();
    for c in 0..3 {
        for scale in scales {
            for n in 0..2 {
                add(scale.ssim[c][n]);
                add(scale.edge[c][n]);
                add(scale.edge[c][n + 2]);
            }
        }
    }
    let s = sum * 0.956_238_261_683_484_4;
    let s = (6.248_496_625_763_138e-5 * s * s).mul_add(
        s,
        2.326_765_642_916_932f64.mul_add(s, -0.020_884_521_182_843_837 * s * s),
    );
    if s > 0.0 {
        s.powf(0.627_633_646_783_138_7).mul_add(-10.0, 100.0)
    } else {
        100.0
    }
}

/// libjxl's weights of the 108 averages: per channel, per scale, per SSIM and edge
/// term (the crate's table).
#[rustfmt::skip]
const WEIGHTS: [f64; 108] = [
    0.0, 0.000_737_660_670_740_658_6, 0.0, 0.0,
    0.000_779_348_168_286_730_9, 0.0, 0.0, 0.000_437_115_573_010_737_9,
    0.0, 1.104_172_642_665_734_6, 0.000_662_848_341_292_71, 0.000_152_316_327_837_187_52,
    0.0, 0.001_640_643_745_659_975_4, 0.0, 1.842_245_552_053_929_8,
    11.441_172_603_757_666, 0.0, 0.000_798_910_943_601_516_3, 0.000_176_816_438_078_653,
    0.0, 1.878_759_497_954_638_7, 10.949_069_906_051_42, 0.0,
    0.000_728_934_699_150_807_2, 0.967_793_708_062_683_3, 0.0, 0.000_140_034_242_854_358_84,
    0.998_176_697_785_496_7, 0.000_319_497_559_344_350_53, 0.000_455_099_211_379_206_3, 0.0,
    0.0, 0.001_364_876_616_324_339_8, 0.0, 0.0,
    0.0, 0.0, 0.0, 7.466_890_328_078_848,
    0.0, 17.445_833_984_131_262, 0.000_623_560_163_404_146_6, 0.0,
    0.0, 6.683_678_146_179_332, 0.000_377_244_079_796_112_96, 1.027_889_937_768_264,
    225.205_153_008_492_74, 0.0, 0.0, 19.213_238_186_143_016,
    0.001_140_152_458_661_836_1, 0.001_237_755_635_509_985, 176.393_175_984_506_94, 0.0,
    0.0, 24.433_009_998_704_76, 0.285_208_026_121_177_57, 0.000_448_543_692_383_340_8,
    0.0, 0.0, 0.0, 34.779_063_444_837_72,
    44.835_625_328_877_896, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.000_868_055_657_329_169_8, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.000_531_319_187_435_874_7,
    0.0, 0.000_165_338_141_613_791_12, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.000_417_917_180_325_133_6,
    0.001_729_082_823_472_283_3, 0.0, 0.002_082_700_584_663_643_7, 0.0,
    0.0, 8.826_982_764_996_862, 23.192_433_439_989_26, 0.0,
    95.108_049_881_108_6, 0.986_397_803_440_068_2, 0.983_438_279_246_535_3, 0.001_228_640_504_827_849_3,
    171.266_725_589_730_7, 0.980_785_887_243_537_9, 0.0, 0.0,
    0.0, 0.000_513_006_458_899_067_9, 0.0, 0.000_108_540_578_584_115_37,
];

#[cfg(test)]
mod tests;
