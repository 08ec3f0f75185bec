//! The face detector on photos, for bench/faces.py: one JSON line per photo with the
//! faces found (in its pixels; `faces` as `blur-faces` and `faces: true` see them,
//! `crop_faces` as `gravity: face` does) and the milliseconds, on this thread (one
//! core), of a detection and of a 512 × 512 `cover` resize with `gravity: face` and
//! with `gravity: center` (the median of `FACES_RUNS` runs each, 5 by default;
//! decoding not counted). It runs with the server's allocator (`src/main.rs`), whose
//! handling of large blocks the detector's maps go through.
//!
//! `cargo run --release --example faces -- PHOTO...`

use std::time::Instant;

use image::DynamicImage;
use mediaedit::media::image::faces::{detect, detect_for_crop, Face};
use mediaedit::media::image::{BoxResize, Fit, FrameOp, Gravity};

/// The server's allocator, as `src/main.rs` sets it.
#[global_allocator]
static ALLOCATOR: mediaedit::allocator::LargeBlocksOnHugePages =
    mediaedit::allocator::LargeBlocksOnHugePages;

fn main() {
    mediaedit::allocator::return_large_buffers();
    for path in std::env::args().skip(1) {
        let photo = image::open(&path).expect("a photo the image crate reads");
        let photo = DynamicImage::ImageRgb8(photo.into_rgb8());
        let faces = detect(&photo).expect("detection runs");
        let crop_faces = detect_for_crop(&photo).expect("detection runs");
        let detect_ms = median(|| {
            detect(&photo).expect("detection runs");
        });
        let resize = |gravity| {
            let op = BoxResize {
                width: Some(512),
                height: Some(512),
                fit: Fit::Cover,
                gravity,
                background: None,
                without_enlargement: false,
            };
            median(|| {
                op.apply(photo.clone()).expect("the resize runs");
            })
        };
        let (face_ms, center_ms) = (resize(Gravity::Face), resize(Gravity::Center));
        println!(
            "{{\"file\":{path:?},\"width\":{},\"height\":{},\"faces\":[{}],\"crop_faces\":[{}],\"detect_ms\":{detect_ms:.2},\"resize_face_ms\":{face_ms:.2},\"resize_center_ms\":{center_ms:.2}}}",
            photo.width(),
            photo.height(),
            boxes(&faces),
            boxes(&crop_faces)
        );
    }
}

/// `faces` as JSON arrays `[x, y, width, height, score]`, comma-separated.
fn boxes(faces: &[Face]) -> String {
    let boxes: Vec<String> = faces
        .iter()
        .map(|f| {
            format!(
                "[{:.1},{:.1},{:.1},{:.1},{:.3}]",
                f.x, f.y, f.width, f.height, f.score
            )
        })
        .collect();
    boxes.join(",")
}

/// The median milliseconds of `FACES_RUNS` runs of `work`.
fn median(mut work: impl FnMut()) -> f64 {
    let runs: usize = std::env::var("FACES_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5)
        .max(1);
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}
