//! Placeholders taken from the pixels an output is encoded from, for the store to use
//! instead of decoding the file it reads back.
//!
//! Decoding a stored output to hash it cost more than the hashing: a 12 MP WebP read
//! back by the `image` crate's WebP decoder took longer than a third of `cwebp`'s
//! whole encode, and 125 extracted frames each decoded again added 0.6 s of CPU to the
//! edit. The encoders already hold the pixels, so they make the 32-pixel copy the
//! placeholders come from before encoding — but only for outputs that will be stored:
//! the store stage runs the edit's last step inside [`Kept::around`], and an encoder
//! asks [`wanted`] first. A render, or a step whose files go on to another command,
//! computes nothing. Outputs made elsewhere (by ffmpeg, or the animation encoders) are
//! still read back from the file.
//!
//! The work runs on blocking threads, out of the task's reach: [`carried`] hands the
//! task's collector to the closure [`crate::media::blocking`] runs.
//!
//! The quality `quality: auto` chose for an output travels the same way
//! ([`keep_quality`]), for the store to put in `attributes.outputs`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use image::{DynamicImage, RgbaImage};

use crate::media::image::placeholders::hashes::{
    on_white_in_place, placeholders_of_small, small_copy, small_size, Placeholders,
    SAMPLES_PER_SIDE,
};
use crate::media::image::quality::Chosen;
use crate::media::image::yuv::{Matrix, Yuv420};

/// The placeholders of the outputs written inside [`Kept::around`], and the qualities
/// chosen for them, by file path.
#[derive(Clone, Default)]
pub struct Kept(Arc<Mutex<Files>>);

#[derive(Default)]
struct Files {
    placeholders: HashMap<PathBuf, Placeholders>,
    qualities: HashMap<PathBuf, Chosen>,
}

tokio::task_local! {
    static IN_TASK: Kept;
}

thread_local! {
    /// The collector of the task that started the closure running on this thread.
    static ON_THREAD: RefCell<Option<Kept>> = const { RefCell::new(None) };
}

impl Kept {
    /// Runs `work` with the placeholders of the image outputs it encodes kept here.
    pub async fn around<F: Future>(&self, work: F) -> F::Output {
        IN_TASK.scope(self.clone(), work).await
    }

    /// [`Kept::around`] when `stored` (the outputs of `work` will be), else `work` as
    /// it is.
    pub async fn around_if<F: Future>(&self, stored: bool, work: F) -> F::Output {
        if stored {
            self.around(work).await
        } else {
            work.await
        }
    }

    /// The placeholders kept for the file at `path`, taken out.
    pub fn take(&self, path: &Path) -> Option<Placeholders> {
        self.files().placeholders.remove(path)
    }

    /// The quality `quality: auto` chose for the file at `path`, taken out.
    pub fn take_quality(&self, path: &Path) -> Option<Chosen> {
        self.files().qualities.remove(path)
    }

    fn put(&self, path: &Path, found: Placeholders) {
        self.files().placeholders.insert(path.to_path_buf(), found);
    }

    fn files(&self) -> std::sync::MutexGuard<'_, Files> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The collector of the work running here: the blocking thread's, else the task's.
fn current() -> Option<Kept> {
    ON_THREAD
        .with(|on| on.borrow().clone())
        .or_else(|| IN_TASK.try_with(Kept::clone).ok())
}

/// Keeps `chosen`, the quality an output written at `path` was chosen at, when the
/// output will be stored.
pub(crate) fn keep_quality(path: &Path, chosen: Chosen) {
    if let Some(kept) = current() {
        kept.files().qualities.insert(path.to_path_buf(), chosen);
    }
}

/// Whether the outputs encoded here keep their placeholders (they will be stored).
pub(crate) fn wanted() -> bool {
    current().is_some()
}

/// `f`, to run on a blocking thread with the calling task's collector (if any) as
/// that thread's while it runs.
pub(crate) fn carried<T>(
    f: impl FnOnce() -> T + Send + 'static,
) -> impl FnOnce() -> T + Send + 'static {
    let kept = IN_TASK.try_with(Kept::clone).ok();
    move || {
        /// Clears the thread's collector however `f` ends: the thread serves others next.
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                ON_THREAD.with(|on| on.borrow_mut().take());
            }
        }
        let _reset = kept.is_some().then_some(Reset);
        if let Some(kept) = kept {
            ON_THREAD.with(|on| *on.borrow_mut() = Some(kept));
        }
        f()
    }
}

/// The small copy of a picture about to be encoded, taken only when its output's
/// placeholders are [`wanted`]; kept under the output's path once it is written.
pub(crate) struct FromPixels(Option<RgbaImage>);

impl FromPixels {
    /// From `image`, the picture as the encoder gets it; `opaque` for an output that
    /// drops transparency (JPEG flattens it onto white, and so does the copy).
    pub fn of(image: &DynamicImage, opaque: bool) -> FromPixels {
        FromPixels::made(|| small_copy(image).ok(), opaque)
    }

    /// From a decoded video picture whose YCbCr values were made with `matrix`:
    /// sampled at [`SAMPLES_PER_SIDE`] times the copy's size, only that converted.
    pub fn of_planes(picture: &Yuv420, matrix: Matrix) -> FromPixels {
        let small = || {
            let (w, h) = small_size(picture.width, picture.height);
            let n = u32::from(SAMPLES_PER_SIDE);
            let grid = picture.sampled(w * n, h * n).to_rgb(matrix);
            small_copy(&DynamicImage::ImageRgb8(grid)).ok()
        };
        FromPixels::made(small, false)
    }

    /// From a small copy made by `small` (at most 32 pixels on a side), when wanted.
    pub fn made(small: impl FnOnce() -> Option<RgbaImage>, opaque: bool) -> FromPixels {
        if !wanted() {
            return FromPixels(None);
        }
        let mut small = small();
        if let (Some(small), true) = (&mut small, opaque) {
            on_white_in_place(small);
        }
        FromPixels(small)
    }

    /// Hashes the copy and keeps the placeholders for the file written at `path`.
    pub fn keep(self, path: &Path) {
        let (Some(small), Some(kept)) = (self.0, current()) else {
            return;
        };
        match placeholders_of_small(&small) {
            Ok(found) => kept.put(path, found),
            // The store reads the file back instead.
            Err(e) => tracing::debug!(error = %e, "no placeholders from the pixels"),
        }
    }
}
