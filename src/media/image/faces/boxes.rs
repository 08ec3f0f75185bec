//! The network's outputs read as face boxes.
//!
//! YuNet is anchor-free: each cell of its three grids (strides 8, 16 and 32 pixels)
//! predicts a class score and an objectness, both 0–1, whose geometric mean is the
//! face's confidence (as OpenCV's `FaceDetectorYN` reads it), and a box: its centre
//! as an offset from the cell's corner in strides, its sides as the log of their
//! length in strides. Overlapping boxes of one face are then reduced to the most
//! confident (non-maximum suppression).

use super::model::RawOutputs;
use crate::media::image::faces::face::Face;

/// The strides of the three grids, in input pixels.
const STRIDES: [u32; 3] = [8, 16, 32];

/// The least confidence kept. Tuned on the benchmark's photos (bench/faces.py): from
/// 0.6 down recall hardly grows while false faces appear on textured backgrounds.
pub const MIN_SCORE: f32 = 0.6;

/// Boxes overlapping a more confident one by more than this (intersection over union)
/// are the same face.
const NMS_IOU: f64 = 0.3;

/// The faces in `raw`, the outputs for an input of `padded` size whose picture fills
/// its top-left `scaled` part; in that picture's pixels, most confident first.
pub(super) fn decode(raw: &RawOutputs, padded: (u32, u32), scaled: (u32, u32)) -> Vec<Face> {
    let mut found = Vec::new();
    for (level, &stride) in STRIDES.iter().enumerate() {
        let cols = (padded.0 / stride) as usize;
        let rows = (padded.1 / stride) as usize;
        let (cls, obj, bbox) = (&raw.cls[level], &raw.obj[level], &raw.bbox[level]);
        let cells = (cols * rows)
            .min(cls.len())
            .min(obj.len())
            .min(bbox.len() / 4);
        let s = f64::from(stride);
        for cell in 0..cells {
            let score = (cls[cell].clamp(0.0, 1.0) * obj[cell].clamp(0.0, 1.0)).sqrt();
            if score < MIN_SCORE {
                continue;
            }
            let (col, row) = ((cell % cols) as f64, (cell / cols) as f64);
            let b = &bbox[4 * cell..4 * cell + 4];
            let cx = (col + f64::from(b[0])) * s;
            let cy = (row + f64::from(b[1])) * s;
            let w = f64::from(b[2]).exp() * s;
            let h = f64::from(b[3]).exp() * s;
            // Clipped to the picture (not its padding).
            let x0 = (cx - w / 2.0).max(0.0);
            let y0 = (cy - h / 2.0).max(0.0);
            let x1 = (cx + w / 2.0).min(f64::from(scaled.0));
            let y1 = (cy + h / 2.0).min(f64::from(scaled.1));
            if x1 - x0 < 1.0 || y1 - y0 < 1.0 || !(x0.is_finite() && y0.is_finite()) {
                continue;
            }
            found.push(Face {
                x: x0,
                y: y0,
                width: x1 - x0,
                height: y1 - y0,
                score: f64::from(score),
            });
        }
    }
    suppress(found)
}

/// Non-maximum suppression: the most confident box of each overlapping group. Ties
/// keep the grids' order, so the result is the same on every run.
pub(super) fn suppress(mut faces: Vec<Face>) -> Vec<Face> {
    faces.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut kept: Vec<Face> = Vec::new();
    for face in faces {
        if kept.iter().all(|k| iou(k, &face) <= NMS_IOU) {
            kept.push(face);
        }
    }
    kept
}

/// Intersection over union of two boxes.
pub fn iou(a: &Face, b: &Face) -> f64 {
    let w = (a.right().min(b.right()) - a.x.max(b.x)).max(0.0);
    let h = (a.bottom().min(b.bottom()) - a.y.max(b.y)).max(0.0);
    let inter = w * h;
    let union = a.width * a.height + b.width * b.height - inter;
    if union <= 0.0 {
        0.0
    } else {
        inter / union
    }
}
