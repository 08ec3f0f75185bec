//! `watermark` and `text` on a video, and the overlay picture read from its source.
//!
//! A video gets one ffmpeg recipe that lays a picture (a PNG made here, already at its
//! size) over every frame with the `overlay` filter, into an H.264 MP4: run in one
//! process, or for a long video in chunks (`chunked::x264`). The frames are encoded
//! once, as in every other video command; the audio of an MP4/MOV/3GP is copied as it
//! is, other audio (Vorbis, PCM: not for MP4) is encoded to AAC.
//!
//! The overlay is placed by ffmpeg expressions of the frame's size (`W`, `H`) and its
//! own (`w`, `h`) that compute what [`place`](crate::media::image::overlay::place) computes,
//! so it lands where it would on a still image of the same size. It is converted to the
//! video's YCbCr with the video's own matrix (BT.709 when the source says so, else
//! BT.601) and the output is tagged with it, so its colours come out as in the PNG.

use std::path::Path;

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ImageEncoder, RgbaImage};

use crate::format::MediaFormat;
use crate::format::VIDEO_CONTAINERS;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::{AAC, EVEN_SIZE, X264};
use crate::media::file::{output_path, MediaFile};
use crate::media::image::overlay::Overlay;
use crate::media::image::yuv::Matrix;
use crate::media::image::Gravity;
use crate::media::video::chunked::{self, x264::movie, SplitRecipe};
use crate::media::video::hdr::{sdr_tags, shown_pictures};
use crate::media::video::info::VideoInfo;
use crate::media::video::loudness::{add_to_audio, measure};

impl Media {
    /// The size the frames of `input` are overlaid at: shown size (square pixels, turned
    /// upright), rounded down to even sides as H.264 needs. The limits of a source are
    /// checked (`VideoTooLong`, …), and `UnsupportedInputFormat` for a non-video.
    pub async fn video_frame_size(&self, input: &MediaFile) -> Result<(u32, u32), MediaError> {
        let info = crate::media::video::inspect::inspect(self, input, VIDEO_CONTAINERS).await?;
        Ok(even(info.shown))
    }

    /// The picture of `file` (`watermark`'s overlay), upright, as RGBA (an animation's
    /// first frame). `ImageTooLarge` past `--max-image-pixels`, checked from the header
    /// before any pixel is decoded; `InvalidMedia` for damaged bytes;
    /// `UnsupportedInputFormat` for what is not an image.
    pub async fn read_overlay(&self, file: &MediaFile) -> Result<RgbaImage, MediaError> {
        if !file.format.is_image() {
            return Err(MediaError::unsupported(
                file.format,
                crate::format::STILL_IMAGES,
            ));
        }
        let (path, format) = (file.path.clone(), file.format);
        let limit = self.config().max_image_pixels;
        let memory = self.memory().clone();
        crate::media::blocking(move || {
            let bytes = std::fs::read(&path)?;
            let opened = crate::media::image::decode::open(&bytes, format, limit)?;
            let header = opened.header();
            let size = (header.width, header.height);
            let peak = crate::media::image::peak::decoding((bytes.len() as u64, format), size);
            let what = format!("Reading a {}x{} overlay", size.0, size.1);
            // Held while the overlay is read; the picture it leaves is the step's.
            let _lease = memory.reserve(peak, &what)?;
            let mut image = opened.decode(header.width, header.height)?;
            image.apply_orientation(header.orientation);
            Ok(image.into_rgba8())
        })
        .await
    }

    /// `input` with the picture `overlay_png` (a PNG at the size it should have, alpha
    /// kept) over every frame at `gravity`, `margin` pixels from the edges, its alpha
    /// multiplied by `opacity` (0–1): an H.264 MP4 in `out_dir` with every frame and
    /// the audio of `input`. Errors as for every video command (limits, `ProcessFailed`
    /// when ffmpeg refuses the input). `loudness`: the audio brought to that many LUFS
    /// (encoded, then, rather than copied).
    #[allow(clippy::too_many_arguments)]
    pub async fn overlay_video(
        &self,
        input: &MediaFile,
        overlay_png: &Path,
        (gravity, margin, opacity): (Gravity, u32, f32),
        loudness: Option<f64>,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<MediaFile, MediaError> {
        let info = crate::media::video::inspect::inspect(self, input, VIDEO_CONTAINERS).await?;
        let target = match loudness.filter(|_| info.has_audio) {
            Some(target) => Some((target, measure(self, input, (None, None), None).await?)),
            None => None,
        };
        let copy_audio = input.format.is_iso_bmff_video() && target.is_none();
        let placement = (gravity, margin, opacity);
        let mut recipe = overlay_recipe(self, &info, (overlay_png, placement), copy_audio);
        add_to_audio(&mut recipe.audio, target);
        let input = (input, &info);
        chunked::convert_inspected(self, input, &recipe, MediaFormat::Mp4, out_dir, progress).await
    }

    /// `watermark` or `text` on a video: `op`'s picture made for the video's frame
    /// size, laid over every frame (see [`Media::overlay_video`]).
    pub async fn overlay_on_video(
        &self,
        input: &MediaFile,
        op: &dyn Overlay,
        loudness: Option<f64>,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<MediaFile, MediaError> {
        let size = self.video_frame_size(input).await?;
        // The picture drawn, then copied and encoded as a PNG: at most a frame's size.
        let peak = op.working_memory(size) + 3 * 4 * u64::from(size.0) * u64::from(size.1);
        let what = format!("Drawing an overlay for a {}x{} video", size.0, size.1);
        let lease = self.memory().reserve_async(peak, &what).await?;
        let picture = op.picture_for(size)?;
        let png = write_png(&picture, out_dir).await?;
        drop((picture, lease));
        let placement = op.placement();
        let out = self.overlay_video(input, &png, placement, loudness, out_dir, progress);
        let out = out.await;
        let _ = tokio::fs::remove_file(&png).await;
        out
    }
}

/// `size` rounded down to even sides, at least 2, as [`EVEN_SIZE`] does.
fn even((w, h): (u32, u32)) -> (u32, u32) {
    ((w / 2 * 2).max(2), (h / 2 * 2).max(2))
}

/// Writes `picture` as a PNG (fast compression: ffmpeg reads it once) in `dir`.
async fn write_png(picture: &RgbaImage, dir: &Path) -> Result<std::path::PathBuf, MediaError> {
    let path = output_path(dir, MediaFormat::Png);
    let (picture, target) = (picture.clone(), path.clone());
    crate::media::blocking(move || {
        let mut bytes = Vec::new();
        let encoder =
            PngEncoder::new_with_quality(&mut bytes, CompressionType::Fast, FilterType::Adaptive);
        let (w, h) = picture.dimensions();
        encoder
            .write_image(picture.as_raw(), w, h, image::ExtendedColorType::Rgba8)
            .map_err(|e| MediaError::InvalidMedia(format!("the overlay PNG failed: {e}")))?;
        std::fs::write(&target, bytes)?;
        Ok(())
    })
    .await?;
    Ok(path)
}

/// The encode of the video with the picture at `picture` laid over every frame: one
/// filter graph that reads the picture itself (a `movie` source), so the recipe has
/// one input and may be cut in chunks as any x264 encode (`chunked::x264`); the chunks
/// then run on this node only, where the picture is.
fn overlay_recipe(
    media: &Media,
    info: &VideoInfo,
    (picture, (gravity, margin, opacity)): (&Path, (Gravity, u32, f32)),
    copy_audio: bool,
) -> SplitRecipe {
    let (matrix, tag) = match info.matrix {
        Matrix::Bt709 => ("bt709", "bt709"),
        Matrix::Bt601 => ("bt601", "smpte170m"),
    };
    let mut top = format!("{},format=rgba", movie(picture, "png_pipe"));
    let opacity = if opacity.is_finite() {
        opacity.clamp(0.0, 1.0)
    } else {
        1.0
    };
    if opacity < 1.0 {
        top.push_str(&format!(",colorchannelmixer=aa={opacity}"));
    }
    top.push_str(&format!(
        ",scale=out_color_matrix={matrix}:out_range=tv,format=yuva420p[top]"
    ));
    let (x, y) = position(gravity, margin);
    // The video's chain first and unlabelled: it is the graph's one input, which a
    // chunk's own filter is put before.
    let shown = shown_pictures(info);
    let graph = format!(
        "{shown},{EVEN_SIZE},format=yuv420p[base];{top};\
         [base][top]overlay=x='{x}':y='{y}':format=yuv420:eof_action=repeat,setsar=1,format=yuv420p"
    );
    let mut video: Vec<String> = ["-fps_mode", "passthrough"].map(String::from).into();
    video.extend(X264.map(String::from));
    match info.hdr {
        // Tone-mapped: every tag BT.709, none left as the source's.
        Some(_) => video.extend(sdr_tags(info)),
        None => video.extend(["-colorspace", tag, "-color_range", "tv"].map(String::from)),
    }
    let audio: &[&str] = match (info.has_audio, copy_audio) {
        (false, _) => &[],
        (true, true) => &["-c:a", "copy"],
        (true, false) => &AAC,
    };
    let audio = audio.iter().map(|a| a.to_string()).collect();
    SplitRecipe {
        local_only: true,
        part: None,
        ..SplitRecipe::x264(media, graph, (video, audio), 1.0)
    }
}

#[cfg(test)]
fn overlay_args(info: &VideoInfo, placement: (Gravity, u32, f32), copy_audio: bool) -> Vec<String> {
    let media = crate::media::testutil::media();
    let picture = Path::new("/tmp/picture.png");
    overlay_recipe(&media, info, (picture, placement), copy_audio).whole()
}

/// The overlay filter's `x` and `y` for `gravity` with `margin`: the expressions of
/// [`place`](crate::media::image::overlay::place) in ffmpeg's terms (`W`/`H` the frame,
/// `w`/`h` the picture).
fn position(gravity: Gravity, margin: u32) -> (String, String) {
    let m = margin;
    match gravity {
        Gravity::Focus { x, y } => {
            let axis = |at: f64, big: &str, small: &str| {
                let at = at.clamp(0.0, 1.0);
                format!(
                    "if(gte({big}-{small}-2*{m},0),clip(round({at}*{big}-{small}/2),{m},{big}-{small}-{m}),floor(({big}-{small})/2))"
                )
            };
            (axis(x, "W", "w"), axis(y, "H", "h"))
        }
        named => {
            let (ax, ay) = named.anchor().unwrap_or((0.5, 0.5));
            let axis =
                |a: f64, big: &str, small: &str| format!("{m}+floor(({big}-{small}-2*{m})*{a})");
            (axis(ax, "W", "w"), axis(ay, "H", "h"))
        }
    }
}

#[cfg(test)]
mod tests;
