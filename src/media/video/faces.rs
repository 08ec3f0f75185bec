//! `blur-faces` on a video: faces found on frames sampled at `--face-sample-fps`, then
//! hidden in one ffmpeg encode.
//!
//! Detection runs here, on frames ffmpeg decodes at the sample rate and the detector's
//! size (`rawvideo` on a pipe). The boxes become a mask, one small grey PNG per
//! sample: the mask of sample `i`, shown from its time until the next sample's, covers
//! every face of both samples and, for a face found in both (the nearest box within
//! two face widths), the hull of its two boxes — every box a face moving in a straight
//! line between the samples passes through, so no face shows between two samples
//! (interpolating the boxes would hide less, but a face between two boxes is inside
//! their hull by construction). ffmpeg then blurs (or pixelates) a copy of each frame,
//! takes the mask as that copy's alpha and lays it over the frame: the frames are
//! decoded and encoded once, by ffmpeg, as in every other video command, and memory
//! is a frame or two whatever the length. Why not in process: the frames would cross
//! two pipes at full size (a 1080p frame is 3 MB, 90 MB a second) for a blur ffmpeg
//! does on its own frames.

use std::path::Path;

use image::{DynamicImage, GrayImage, Luma, RgbImage};
use tokio::io::AsyncReadExt;

use crate::format::{MediaFormat, VIDEO_CONTAINERS};
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::{quiet_input_args, run_to_file, AAC, SQUARE_PIXELS, X264};
use crate::media::file::MediaFile;
use crate::media::image::faces::hide::{padded, Style};
use crate::media::image::faces::{self, Face};
use crate::media::video::chunked::x264::movie;
use crate::media::video::inspect::inspect;

/// A face found in two samples is one face when their centres are nearer than this
/// many of its widths.
const SAME_FACE_WIDTHS: f64 = 2.0;

impl Media {
    /// `input` with every face hidden in `style`, each box grown by `padding` (a
    /// fraction of its side): an H.264 MP4 in `out_dir`, audio kept. Errors as for
    /// every video command.
    pub async fn blur_faces_video(
        &self,
        input: &MediaFile,
        (style, padding): (Style, f64),
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<MediaFile, MediaError> {
        let info = inspect(self, input, VIDEO_CONTAINERS).await?;
        let shown = ((info.shown.0 / 2 * 2).max(2), (info.shown.1 / 2 * 2).max(2));
        let rate = self.config().face_sample_fps;
        let samples = self.sample_faces(input, shown, rate).await?;
        let masks = tempfile::Builder::new()
            .prefix("masks")
            .tempdir_in(out_dir)?;
        let largest = write_masks(&samples, shown, padding, masks.path()).await?;
        let pattern = masks.path().join("mask-%06d.png");
        let graph = graph(shown, style, largest, (&pattern, rate));
        let mut recipe = vec!["-filter_complex".into(), graph, "-map".into(), "[v]".into()];
        recipe.extend(["-fps_mode", "passthrough"].map(String::from));
        recipe.extend(X264.map(String::from));
        if info.has_audio {
            recipe.extend(["-map", "0:a:0"].map(String::from));
            match input.format.is_iso_bmff_video() {
                true => recipe.extend(["-c:a", "copy"].map(String::from)),
                false => recipe.extend(AAC.map(String::from)),
            }
        }
        recipe.extend(["-movflags", "+faststart", "-f", "mp4"].map(String::from));
        let expected = info.duration;
        run_to_file(
            self,
            input,
            recipe,
            MediaFormat::Mp4,
            expected,
            out_dir,
            progress,
        )
        .await
    }

    /// The faces of frames of `input` taken `rate` times a second (the first at 0 s),
    /// in pixels of its frames at `shown` size.
    async fn sample_faces(
        &self,
        input: &MediaFile,
        shown: (u32, u32),
        rate: f64,
    ) -> Result<Vec<Vec<Face>>, MediaError> {
        let small = faces::scaled_size(shown);
        let (sw, sh) = small;
        let working = faces::working_memory(small) + 3 * u64::from(sw) * u64::from(sh);
        let what = format!("Finding faces in a {}x{} video", shown.0, shown.1);
        let _lease = self.memory().reserve_async(working, &what).await?;
        let mut args = quiet_input_args(input, self.config().max_video_seconds);
        let filter = format!(
            "{SQUARE_PIXELS},fps={rate:.6}:round=down,scale={sw}:{sh}:flags=area,format=rgb24"
        );
        let tail = ["-map", "0:v:0", "-vf", &filter, "-f", "rawvideo", "pipe:1"];
        args.extend(tail.map(Into::into));
        let mut samples = Vec::new();
        let into = &mut samples;
        let (fx, fy) = (
            f64::from(shown.0) / f64::from(sw),
            f64::from(shown.1) / f64::from(sh),
        );
        self.runner()
            .run_reading(&self.config().ffmpeg, args, |mut pipe| async move {
                let mut frame = vec![0u8; 3 * (sw * sh) as usize];
                loop {
                    match pipe.read_exact(&mut frame).await {
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                        Err(e) => return Err(e.into()),
                    }
                    let picture = RgbImage::from_raw(sw, sh, frame.clone())
                        .ok_or_else(|| MediaError::Io(std::io::Error::other("a short frame")))?;
                    let found = crate::media::blocking(move || {
                        faces::detect(&DynamicImage::ImageRgb8(picture))
                    })
                    .await?;
                    into.push(found.into_iter().map(|f| f.scaled(fx, fy)).collect());
                }
                Ok(())
            })
            .await?;
        Ok(samples)
    }
}

/// The boxes shown from sample `i` to the next: the faces of both samples and, for a
/// face in both, the hull of its two boxes.
pub(crate) fn interval_boxes(now: &[Face], next: &[Face]) -> Vec<Face> {
    let mut boxes: Vec<Face> = now.iter().chain(next).copied().collect();
    for a in now {
        let centre = |f: &Face| (f.x + f.width / 2.0, f.y + f.height / 2.0);
        let (ax, ay) = centre(a);
        let nearest = next.iter().min_by(|p, q| {
            let d = |f: &Face| (centre(f).0 - ax).hypot(centre(f).1 - ay);
            d(p).total_cmp(&d(q))
        });
        if let Some(b) = nearest {
            let (bx, by) = centre(b);
            if (bx - ax).hypot(by - ay) <= SAME_FACE_WIDTHS * a.width.max(b.width) {
                let (x0, y0) = (a.x.min(b.x), a.y.min(b.y));
                let (x1, y1) = (a.right().max(b.right()), a.bottom().max(b.bottom()));
                boxes.push(Face {
                    x: x0,
                    y: y0,
                    width: x1 - x0,
                    height: y1 - y0,
                    score: a.score.min(b.score),
                });
            }
        }
    }
    boxes
}

/// Writes one mask per sample (`mask-000001.png` on), at most the detector's size,
/// white where a face is hidden; returns the shorter side of the largest face (in
/// frame pixels), which sets the blur's strength.
async fn write_masks(
    samples: &[Vec<Face>],
    shown: (u32, u32),
    padding: f64,
    dir: &Path,
) -> Result<f64, MediaError> {
    let (mw, mh) = faces::scaled_size(shown);
    let (kx, ky) = (
        f64::from(mw) / f64::from(shown.0),
        f64::from(mh) / f64::from(shown.1),
    );
    let mut largest: f64 = 0.0;
    let empty = Vec::new();
    let count = samples.len().max(1);
    for i in 0..count {
        let now = samples.get(i).unwrap_or(&empty);
        let next = samples.get(i + 1).unwrap_or(now);
        let boxes = interval_boxes(now, next);
        let mut mask = GrayImage::new(mw, mh);
        for face in &boxes {
            largest = largest.max(face.width.min(face.height));
            if let Some((x, y, w, h)) = padded(&face.scaled(kx, ky), padding, (mw, mh)) {
                // One pixel more each way: the mask is scaled up to the frame.
                let (x0, y0) = (x.saturating_sub(1), y.saturating_sub(1));
                let (x1, y1) = ((x + w + 1).min(mw), (y + h + 1).min(mh));
                for yy in y0..y1 {
                    for xx in x0..x1 {
                        mask.put_pixel(xx, yy, Luma([255]));
                    }
                }
            }
        }
        let path = dir.join(format!("mask-{:06}.png", i + 1));
        crate::media::blocking(move || {
            mask.save_with_format(&path, image::ImageFormat::Png)
                .map_err(|e| MediaError::Io(std::io::Error::other(e.to_string())))
        })
        .await?;
    }
    Ok(largest)
}

/// The filter graph: the frame (square pixels, even sides), and over it a hidden
/// copy whose alpha is the mask of the time.
fn graph((w, h): (u32, u32), style: Style, largest: f64, (masks, rate): (&Path, f64)) -> String {
    let hidden = match style {
        Style::Blur => {
            // A quarter of the largest face, within what boxblur takes for the chroma
            // planes of a 4:2:0 frame.
            let most = (w.min(h) / 4).saturating_sub(1).max(1);
            let r = ((largest / 4.0).round() as u32)
                .clamp(2, most.max(2))
                .min(most);
            let cr = (r / 2).max(1);
            format!("boxblur=luma_radius={r}:luma_power=3:chroma_radius={cr}:chroma_power=3")
        }
        Style::Pixelate => {
            let block = ((largest / faces::hide::PIXELATE_BLOCKS).ceil() as u32).clamp(2, 64);
            let (bw, bh) = (w.div_ceil(block).max(1), h.div_ceil(block).max(1));
            format!("scale={bw}:{bh}:flags=area,scale={w}:{h}:flags=neighbor")
        }
    };
    // The masks are read by a `movie` source (the command line's one input is the
    // video), numbered in order, each shown from its sample's time.
    let masks = movie(masks, "image2");
    format!(
        "[0:v]{SQUARE_PIXELS},scale={w}:{h},setsar=1,format=yuv420p,setpts=PTS-STARTPTS,split[base][fx];\
         [fx]{hidden},format=yuva420p[blurred];\
         {masks},setpts=N/({rate}*TB),scale={w}:{h}:flags=neighbor,format=gray[mask];\
         [blurred][mask]alphamerge[top];\
         [base][top]overlay=format=yuv420:eof_action=repeat,format=yuv420p[v]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn face(x: f64, y: f64) -> Face {
        Face {
            x,
            y,
            width: 40.0,
            height: 40.0,
            score: 0.9,
        }
    }

    #[test]
    fn a_face_moving_between_two_samples_is_covered_all_the_way() {
        let boxes = interval_boxes(&[face(0.0, 0.0)], &[face(60.0, 30.0)]);
        // Every place of the face on the straight line between the samples.
        for step in 0..=10 {
            let t = f64::from(step) / 10.0;
            let at = face(60.0 * t, 30.0 * t);
            let covered = boxes.iter().any(|b| {
                b.x <= at.x && b.y <= at.y && b.right() >= at.right() && b.bottom() >= at.bottom()
            });
            assert!(covered, "at {t}: {boxes:?}");
        }
    }

    #[test]
    fn faces_far_apart_are_two_faces_not_one_sweep() {
        let boxes = interval_boxes(&[face(0.0, 0.0)], &[face(500.0, 0.0)]);
        assert_eq!(boxes.len(), 2, "{boxes:?}");
    }
}
