//! Every frame of a video, decoded once by ffmpeg and encoded here on every core.
//!
//! One ffmpeg process encoding each frame to WebP in turn uses one core: libwebp's
//! per-picture threading barely helps at video sizes. Here ffmpeg only decodes (and
//! squares the pixels), writing raw 4:2:0 pictures (`yuv4mpegpipe`) to a pipe; each
//! picture is encoded on a blocking thread, as many at once as the machine has
//! cores, and written under its frame number, so the order is kept whatever
//! finishes first (see `yuv` for what happens to the pixels).
//! At most that many pictures (plus the one being read) are held in memory: the
//! video is never buffered whole.
//!
//! What each picture becomes is a [`FrameOutput`]: a WebP still (`extract-frames`),
//! or, when `resize-image` follows in the pipeline, the resized picture in that
//! command's format, without a lossy intermediate in between. ffmpeg scales the
//! pictures before they reach the pipe (one pass that also squares the pixels), so a
//! video shrunk for thumbnails sends a sixteenth of its pixels through it, and a WebP
//! is encoded from the picture's own planes, never by way of RGB.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::{StreamExt, TryStreamExt};
use image::DynamicImage;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

use crate::format::ImageFormat;
use crate::media::blocking;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;
use crate::media::image::ops::{self, write_named, WEBP_QUALITY};
use crate::media::image::placeholders::kept::FromPixels;
use crate::media::image::yuv::{Matrix, Yuv420};

/// What becomes of each decoded picture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum FrameOutput {
    /// A lossy WebP still (quality 80) of the picture as it is.
    WebpStill,
    /// Scaled by `scale` (checked against `max_pixels`) and encoded in `format`.
    Resized {
        scale: f64,
        format: ImageFormat,
        max_pixels: u64,
    },
}

impl FrameOutput {
    fn format(self) -> ImageFormat {
        match self {
            FrameOutput::WebpStill => ImageFormat::Webp,
            FrameOutput::Resized { format, .. } => format,
        }
    }

    /// The size each picture is scaled to, from the size it is shown at (`None`: kept
    /// as it is); `resize-image`'s own checks, made before anything is decoded.
    pub(crate) fn size(self, shown: (u32, u32)) -> Result<Option<(u32, u32)>, MediaError> {
        match self {
            FrameOutput::WebpStill => Ok(None),
            FrameOutput::Resized {
                scale,
                format,
                max_pixels,
            } => ops::scaled_size(shown.0, shown.1, scale, format, max_pixels).map(Some),
        }
    }

    /// The file bytes of a picture already at its size; its YCbCr values were made
    /// with `matrix`.
    fn encode(self, picture: Yuv420, matrix: Matrix) -> Result<Vec<u8>, MediaError> {
        match self.format() {
            ImageFormat::Webp => picture.into_bt601(matrix).encode_webp(WEBP_QUALITY),
            format => ops::encode(DynamicImage::ImageRgb8(picture.to_rgb(matrix)), format),
        }
    }
}

/// Decoded pictures held at once, in the pipe's wake, most of them being encoded.
const PICTURE_BYTES_IN_FLIGHT: usize = 16 << 20;

/// Pictures of `width`×`height` held at once: one per core and one more, so that no
/// core waits while the next picture is read (2.86 s → 2.69 s for 125 frames at 720p
/// on 2 cores); small ones up to four per core within [`PICTURE_BYTES_IN_FLIGHT`],
/// so that ffmpeg decodes ahead while the cores encode.
fn pictures_in_flight(width: u32, height: u32) -> usize {
    let (cw, ch) = Yuv420::chroma_size(width, height);
    let bytes = width as usize * height as usize + 2 * cw * ch;
    let cores = crate::media::cores();
    (PICTURE_BYTES_IN_FLIGHT / bytes.max(1)).clamp(cores + 1, 4 * cores)
}

/// What a pipe may hold, asked for the one ffmpeg writes the pictures to: the most
/// an unprivileged process may ask for (`/proc/sys/fs/pipe-max-size`'s default).
const PIPE_BYTES: i32 = 1 << 20;

/// Widens the pipe `stdout` reads from to [`PIPE_BYTES`], so that ffmpeg writes a
/// small picture whole and goes on decoding, where at the 64 KiB a pipe holds by
/// default it waits for every read (125 thumbnails of a 720p clip: 0.53 → 0.51 s on
/// 2 cores). Best effort: a pipe left as it was is only slower.
pub(crate) fn widen_pipe(stdout: &impl std::os::fd::AsRawFd) {
    // SAFETY: F_SETPIPE_SZ takes an int and touches no memory of ours; on a descriptor
    // that is not a pipe it fails, and the failure is ignored.
    unsafe {
        libc::fcntl(stdout.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES);
    }
}

/// Reads the pictures of the `yuv4mpegpipe` stream on `pipe` (made with `matrix`)
/// and writes each, made into `output`, as `frame-NNNNNN.<ext>` in `dir`, several
/// at once; returns the files in frame order. `on_frame` is told how many are done
/// after each one.
pub(crate) async fn encode_all(
    pipe: impl AsyncRead + Unpin,
    matrix: Matrix,
    output: FrameOutput,
    dir: &Path,
    on_frame: &(dyn Fn(u64) + Sync),
) -> Result<Vec<MediaFile>, MediaError> {
    let mut reader = BufReader::with_capacity(1 << 20, pipe);
    let Some((width, height)) = read_stream_header(&mut reader).await? else {
        return Ok(Vec::new());
    };
    let in_flight = pictures_in_flight(width, height);
    let pictures = futures::stream::try_unfold(reader, move |mut reader| async move {
        let picture = read_picture(&mut reader, width, height).await?;
        Ok::<_, MediaError>(picture.map(|p| (p, reader)))
    });
    let done = AtomicU64::new(0);
    let format = output.format();
    pictures
        .enumerate()
        .map(|(n, picture)| {
            let path = dir.join(format!(
                "frame-{n:06}.{}",
                format.media_format().extension()
            ));
            let done = &done;
            async move {
                let picture = picture?;
                let file = blocking(move || {
                    let placeholders = FromPixels::of_planes(&picture, matrix);
                    let bytes = output.encode(picture, matrix)?;
                    let file = write_named(&path, format, &bytes)?;
                    placeholders.keep(&file.path);
                    Ok(file)
                })
                .await?;
                on_frame(done.fetch_add(1, Ordering::Relaxed) + 1);
                Ok::<_, MediaError>(file)
            }
        })
        .buffered(in_flight)
        .try_collect()
        .await
}

/// Longest header line accepted (ffmpeg's are well under 100 bytes).
const MAX_HEADER_LINE: usize = 256;

/// The stream header's picture size; `None` for an empty stream (ffmpeg failed before
/// writing anything: its own error is the one to report).
async fn read_stream_header(
    reader: &mut (impl AsyncBufReadExt + Unpin),
) -> Result<Option<(u32, u32)>, MediaError> {
    let Some(line) = read_line(reader).await? else {
        return Ok(None);
    };
    let mut fields = line.split(' ');
    if fields.next() != Some("YUV4MPEG2") {
        return Err(unexpected(&line));
    }
    let (mut width, mut height) = (None, None);
    for field in fields {
        let number = || field[1..].parse::<u32>().ok().filter(|n| *n > 0);
        match field.as_bytes().first() {
            Some(b'W') => width = number(),
            Some(b'H') => height = number(),
            // Only 8-bit 4:2:0 (any chroma siting) is read.
            Some(b'C') if !field.starts_with("C420") => return Err(unexpected(&line)),
            _ => {}
        }
    }
    match (width, height) {
        (Some(w), Some(h)) => Ok(Some((w, h))),
        _ => Err(unexpected(&line)),
    }
}

/// The next picture, or `None` at the end of the stream. A stream cut short inside a
/// picture also ends it: that happens when ffmpeg fails, and its own error (from its
/// exit status and stderr) is the one worth reporting.
async fn read_picture(
    reader: &mut (impl AsyncBufReadExt + Unpin),
    width: u32,
    height: u32,
) -> Result<Option<Yuv420>, MediaError> {
    let Some(line) = read_line(reader).await? else {
        return Ok(None);
    };
    if !line.starts_with("FRAME") {
        return Err(unexpected(&line));
    }
    let (cw, ch) = Yuv420::chroma_size(width, height);
    let mut planes = [
        vec![0u8; width as usize * height as usize],
        vec![0u8; cw * ch],
        vec![0u8; cw * ch],
    ];
    for plane in &mut planes {
        match reader.read_exact(plane).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    let [y, u, v] = planes;
    Ok(Some(Yuv420 {
        width,
        height,
        y,
        u,
        v,
        a: None,
    }))
}

/// One header line without its newline; `None` at the end of the stream.
async fn read_line(
    reader: &mut (impl AsyncBufReadExt + Unpin),
) -> Result<Option<String>, MediaError> {
    let mut line = Vec::new();
    let mut limited = reader.take(MAX_HEADER_LINE as u64);
    if limited.read_until(b'\n', &mut line).await? == 0 {
        return Ok(None);
    }
    if line.pop() != Some(b'\n') {
        // Cut short, or too long to be a header.
        return if line.len() < MAX_HEADER_LINE {
            Ok(None)
        } else {
            Err(unexpected(&String::from_utf8_lossy(&line)))
        };
    }
    Ok(Some(String::from_utf8_lossy(&line).into_owned()))
}

fn unexpected(header: &str) -> MediaError {
    MediaError::Io(std::io::Error::other(format!(
        "ffmpeg wrote an unexpected picture header: {header}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y4m(width: u32, height: u32, values: &[u8]) -> Vec<u8> {
        let mut bytes =
            format!("YUV4MPEG2 W{width} H{height} F25:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n")
                .into_bytes();
        let (cw, ch) = Yuv420::chroma_size(width, height);
        for value in values {
            bytes.extend(b"FRAME\n");
            bytes.extend(std::iter::repeat(*value).take((width * height) as usize));
            bytes.extend(std::iter::repeat(128).take(2 * cw * ch));
        }
        bytes
    }

    #[tokio::test]
    async fn pictures_are_read_one_after_another_until_the_stream_ends() {
        let stream = y4m(3, 3, &[20, 90]);
        let mut reader = BufReader::new(stream.as_slice());
        let size = read_stream_header(&mut reader).await.unwrap();
        assert_eq!(size, Some((3, 3)));
        let first = read_picture(&mut reader, 3, 3).await.unwrap().unwrap();
        assert_eq!((first.y.len(), first.u.len(), first.y[8]), (9, 4, 20));
        let second = read_picture(&mut reader, 3, 3).await.unwrap().unwrap();
        assert_eq!(second.y[0], 90);
        assert!(read_picture(&mut reader, 3, 3).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_picture_cut_short_ends_the_stream_and_a_strange_header_is_an_error() {
        let mut cut = y4m(4, 4, &[1]);
        cut.truncate(cut.len() - 3);
        let mut reader = BufReader::new(cut.as_slice());
        read_stream_header(&mut reader).await.unwrap();
        assert!(read_picture(&mut reader, 4, 4).await.unwrap().is_none());
        let mut reader = BufReader::new(&b"YUV4MPEG2 W4 H4 C444\n"[..]);
        assert!(read_stream_header(&mut reader).await.is_err());
        let mut reader = BufReader::new(&b"P6\n4 4\n255\n"[..]);
        assert!(read_stream_header(&mut reader).await.is_err());
        let mut reader = BufReader::new(&b""[..]);
        assert_eq!(read_stream_header(&mut reader).await.unwrap(), None);
    }

    #[tokio::test]
    async fn the_pipe_from_ffmpeg_is_widened_to_hold_a_small_picture_whole() {
        use std::os::fd::AsRawFd;
        let mut child = tokio::process::Command::new("true")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        widen_pipe(&stdout);
        // SAFETY: F_GETPIPE_SZ only reads the size of the pipe.
        let size = unsafe { libc::fcntl(stdout.as_raw_fd(), libc::F_GETPIPE_SZ) };
        assert_eq!(size, PIPE_BYTES);
        child.wait().await.unwrap();
    }

    #[test]
    fn small_pictures_are_read_further_ahead_than_large_ones() {
        let cores = crate::media::cores();
        assert_eq!(pictures_in_flight(320, 180), 4 * cores);
        assert_eq!(pictures_in_flight(3840, 2160), cores + 1);
        assert!(pictures_in_flight(1, 1) <= 4 * cores);
    }

    #[test]
    fn a_resized_picture_s_size_is_checked_as_resize_image_checks_it() {
        let resized = |scale, format| FrameOutput::Resized {
            scale,
            format,
            max_pixels: 1 << 20,
        };
        assert_eq!(FrameOutput::WebpStill.size((640, 360)).unwrap(), None);
        let quarter = resized(0.25, ImageFormat::Webp).size((640, 360));
        assert_eq!(quarter.unwrap(), Some((160, 90)));
        let tiny = resized(0.001, ImageFormat::Png).size((640, 360));
        assert!(matches!(tiny, Err(MediaError::OutputTooSmall)), "{tiny:?}");
        let huge = resized(10.0, ImageFormat::Png).size((640, 360));
        assert!(
            matches!(huge, Err(MediaError::OutputTooLarge { .. })),
            "{huge:?}"
        );
    }

    #[tokio::test]
    async fn frames_are_written_in_order_in_the_format_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let stream = y4m(40, 20, &[30, 200, 90]);
        let output = FrameOutput::Resized {
            scale: 0.5,
            format: ImageFormat::Png,
            max_pixels: 1 << 20,
        };
        let count = AtomicU64::new(0);
        let on_frame = |n: u64| {
            count.fetch_max(n, Ordering::Relaxed);
        };
        let files = encode_all(
            stream.as_slice(),
            Matrix::Bt601,
            output,
            dir.path(),
            &on_frame,
        )
        .await
        .unwrap();
        assert_eq!(count.load(Ordering::Relaxed), 3);
        let names: Vec<_> = files
            .iter()
            .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["frame-000000.png", "frame-000001.png", "frame-000002.png"]
        );
        // The pictures come scaled from ffmpeg: none is resized again here.
        let second = image::open(&files[1].path).unwrap().to_rgb8();
        assert_eq!(second.dimensions(), (40, 20));
        // Y 200 in limited range is (200 - 16) * 255 / 219 = 214.
        assert_eq!(second.get_pixel(5, 5).0, [214, 214, 214]);
    }
}
