//! `watermark` and `text` on a video, and the overlay picture read from its source.
//!
//! A video gets one ffmpeg run that lays a picture (a PNG made
//! here, already at its size) over every frame with the `overlay` filter, into an
//! H.264 MP4. The frames are encoded once, as in every other video command; the audio
//! of an MP4/MOV/3GP is copied as it is, other audio (Vorbis, PCM: not for MP4) is
//! encoded to AAC.
//!
//! The overlay is placed by ffmpeg expressions of the frame's size (`W`, `H`) and its
//! own (`w`, `h`) that compute what [`place`](crate::media::image::overlay::place) computes,
//! so it lands where it would on a still image of the same size. It is converted to the
//! video's YCbCr with the video's own matrix (BT.709 when the source says so, else
//! BT.601) and the output is tagged with it, so its colours come out as in the PNG.

use std::ffi::OsString;
use std::path::Path;

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ImageEncoder, RgbaImage};

use crate::media::ffmpeg::input::file_url;
use crate::media::ffmpeg::transcode::{self, Recipe, EVEN_SIZE, SQUARE_PIXELS, X264};
use crate::media::image::overlay::Overlay;
use crate::media::image::yuv::Matrix;
use crate::media::image::Gravity;
use crate::media::video::info::VideoInfo;
use crate::media::VIDEO_CONTAINERS;
use crate::media::{output_path, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

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
                crate::media::STILL_IMAGES,
            ));
        }
        let (path, format) = (file.path.clone(), file.format);
        let limit = self.config().max_image_pixels;
        crate::media::blocking(move || {
            let bytes = std::fs::read(&path)?;
            let opened = crate::media::image::decode::open(&bytes, format, limit)?;
            let header = opened.header();
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
    /// when ffmpeg refuses the input).
    #[allow(clippy::too_many_arguments)]
    pub async fn overlay_video(
        &self,
        input: &MediaFile,
        overlay_png: &Path,
        gravity: Gravity,
        margin: u32,
        opacity: f32,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<MediaFile, MediaError> {
        let info = crate::media::video::inspect::inspect(self, input, VIDEO_CONTAINERS).await?;
        let copy_audio = input.format.is_iso_bmff_video();
        let tail = overlay_args(&info, (gravity, margin, opacity), copy_audio);
        let output = output_path(out_dir, MediaFormat::Mp4);
        let max_seconds = self.config().max_video_seconds;
        let source = (
            input.path.as_path(),
            crate::media::ffmpeg::input::demuxer(input.format),
        );
        let mut head = transcode::input_args_with(source, max_seconds, &[]);
        // The picture is the second input; it goes before the output options that
        // follow the first (`-map_metadata`), which ffmpeg would read as its own.
        let at = head
            .iter()
            .position(|a| a == "-map_metadata")
            .unwrap_or(head.len());
        let picture = ["-f", "png_pipe", "-i"].map(OsString::from);
        head.splice(at..at, picture.into_iter().chain([file_url(overlay_png)]));
        let recipe: Recipe = tail.into();
        let run = transcode::run_ffmpeg(
            self,
            head,
            recipe.output_options,
            file_url(&output),
            info.duration,
            progress,
        )
        .await;
        if let Err(e) = run {
            // Best effort: a partial file must not be mistaken for an output.
            let _ = tokio::fs::remove_file(&output).await;
            return Err(e);
        }
        Ok(MediaFile {
            path: output,
            format: MediaFormat::Mp4,
        })
    }

    /// `watermark` or `text` on a video: `op`'s picture made for the video's frame
    /// size, laid over every frame (see [`Media::overlay_video`]).
    pub async fn overlay_on_video(
        &self,
        input: &MediaFile,
        op: &dyn Overlay,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<MediaFile, MediaError> {
        let size = self.video_frame_size(input).await?;
        let picture = op.picture_for(size)?;
        let png = write_png(&picture, out_dir).await?;
        let (gravity, margin, opacity) = op.placement();
        let out = self.overlay_video(input, &png, gravity, margin, opacity, out_dir, progress);
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

/// The ffmpeg arguments after the inputs (the video, then the picture).
fn overlay_args(
    info: &VideoInfo,
    (gravity, margin, opacity): (Gravity, u32, f32),
    copy_audio: bool,
) -> Vec<String> {
    let (matrix, tag) = match info.matrix {
        Matrix::Bt709 => ("bt709", "bt709"),
        Matrix::Bt601 => ("bt601", "smpte170m"),
    };
    let mut picture = String::from("[1:v]format=rgba");
    let opacity = if opacity.is_finite() {
        opacity.clamp(0.0, 1.0)
    } else {
        1.0
    };
    if opacity < 1.0 {
        picture.push_str(&format!(",colorchannelmixer=aa={opacity}"));
    }
    picture.push_str(&format!(
        ",scale=out_color_matrix={matrix}:out_range=tv,format=yuva420p[top]"
    ));
    let (x, y) = position(gravity, margin);
    let graph = format!(
        "[0:v:0]{SQUARE_PIXELS},{EVEN_SIZE},format=yuv420p[base];{picture};\
         [base][top]overlay=x='{x}':y='{y}':format=yuv420:eof_action=repeat,setsar=1,format=yuv420p[v]"
    );
    let mut args = vec!["-filter_complex".to_string(), graph];
    args.extend(["-map", "[v]"].map(String::from));
    if info.has_audio {
        args.extend(["-map", "0:a:0"].map(String::from));
    }
    args.extend(["-fps_mode", "passthrough"].map(String::from));
    args.extend(X264.map(String::from));
    args.extend(["-colorspace", tag, "-color_range", "tv"].map(String::from));
    if info.has_audio {
        let audio: &[&str] = if copy_audio {
            &["-c:a", "copy"]
        } else {
            &["-c:a", "aac", "-b:a", "128k"]
        };
        args.extend(audio.iter().map(|a| a.to_string()));
    }
    args.extend(["-movflags", "+faststart", "-f", "mp4"].map(String::from));
    args
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
