//! `gif-to-video` for a GIF: its frames go to ffmpeg through a pipe as they are
//! decoded, while ffmpeg encodes the ones before.
//!
//! A GIF's timing is in its headers ([`GifScan`]), so ffmpeg's arguments — the last
//! frame's duration (see the parent) — are known before any frame is decoded, and
//! ffmpeg starts at once. Written to a file first, the frames (decoded, flattened and
//! deflated here, then inflated by ffmpeg) held ffmpeg back by all of that: 0.12 s for
//! a 3 s 480×270 GIF became 0.2 s. On the pipe the APNG is neither filtered nor
//! compressed, as nothing keeps it. What was written is checked against the headers'
//! timing at the end (both read the same blocks, so they agree; an edit fails rather
//! than keep a video timed otherwise).
//!
//! An animated WebP or APNG states its delays only frame by frame, so it still goes
//! through a file (`animated.rs`).

use std::io::{BufWriter, Write};
use std::path::Path;

use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::{mpsc, oneshot};

use super::animated::{declared_frames, ffmpeg_args, handover_failed, write_animation, Timing};
use crate::commands::gif_to_video::h264::OUTPUT;
use crate::media::animation;
use crate::media::ffmpeg::input::file_url;
use crate::media::ffmpeg::progress::ProgressParser;
use crate::media::ffmpeg::transcode::fed_input_args;
use crate::media::image::codec::apng::ApngWriter;
use crate::media::image::codec::gif::GifScan;
use crate::media::image::peak;
use crate::media::video::frames::widen_pipe;
use crate::media::{blocking, output_path, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

/// Bytes handed from the decoding thread to the pipe at a time.
const CHUNK_BYTES: usize = 1 << 20;
/// Chunks waiting for the pipe at most: the decoder runs this far ahead of ffmpeg.
const CHUNKS_AHEAD: usize = 4;

/// The GIF `input`, whose headers gave `scan` (its limits already checked), as an MP4.
pub(super) async fn run(
    media: &Media,
    input: &MediaFile,
    scan: &GifScan,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let (path, limits) = (input.path.clone(), media.limits());
    let memory = media.memory().clone();
    let (chunks, mut to_pipe) = mpsc::channel::<Vec<u8>>(CHUNKS_AHEAD);
    let (canvas, screen) = oneshot::channel();
    let decode = blocking(move || {
        let bytes = std::fs::read(&path)?;
        let animation = animation::open(&bytes, MediaFormat::Gif, &limits)?;
        // A frame at a time, each handed on as it comes: the pipe holds a few chunks.
        let (w, h) = animation.size;
        let peak = peak::animation(bytes.len() as u64, (w, h), Some(1), &[]);
        let _lease = memory.reserve(peak, &format!("Reading a {w}x{h} GIF"))?;
        let _ = canvas.send(animation.size);
        let out = BufWriter::with_capacity(CHUNK_BYTES, Chunks(chunks));
        let (size, frames) = (animation.size, declared_frames(&animation));
        let writer = ApngWriter::unpacked(out, size, frames)
            .map_err(|e| handover_failed(MediaFormat::Gif, e))?;
        write_animation(animation, MediaFormat::Gif, writer)
    });
    tokio::pin!(decode);
    // Polling `decode` starts it; the canvas comes before its frames. A GIF decoded
    // before the canvas is read is kept, not polled again.
    let mut decoded = None;
    let screen = tokio::select! {
        biased;
        screen = screen => screen.ok(),
        done = &mut decode => {
            let written = done?;
            decoded = Some(written);
            Some(written.screen)
        }
    };
    let Some(screen) = screen else {
        // Refused before any frame: the decoding says why.
        return Err(decode.await.err().unwrap_or_else(no_cause));
    };
    let timing = Timing {
        screen,
        frames: scan.frames,
        last_start_ms: scan.last_start_cs * 10,
        total_ms: scan.total_cs * 10,
    };
    let output = output_path(out_dir, OUTPUT);
    let mut args = fed_input_args("apng", media.config().max_video_seconds);
    args.extend(ffmpeg_args(&timing).into_iter().map(Into::into));
    args.push(file_url(&output));
    let feed = |mut stdin: ChildStdin| async move {
        widen_pipe(&stdin);
        while let Some(chunk) = to_pipe.recv().await {
            stdin.write_all(&chunk).await?;
        }
        // Every chunk is out: the decoding has ended.
        let written = match decoded {
            Some(written) => written,
            None => decode.await?,
        };
        if written != timing {
            return Err(MediaError::InvalidMedia(format!(
                "the GIF's frames ({written:?}) disagree with its headers ({timing:?})"
            )));
        }
        Ok(())
    };
    let mut parser = ProgressParser::new(Some(timing.total_ms as f64 / 1000.0));
    let mut on_line = |line: &str| {
        if let Some(fraction) = parser.line(line) {
            progress(fraction);
        }
    };
    let ffmpeg = &media.config().ffmpeg;
    let result = media
        .runner()
        .run_fed_streaming(ffmpeg, args, feed, &mut on_line)
        .await;
    if let Err(e) = result {
        // Best effort: a partial MP4 must not be mistaken for an output.
        let _ = tokio::fs::remove_file(&output).await;
        return Err(e);
    }
    Ok(MediaFile {
        path: output,
        format: OUTPUT,
    })
}

/// The decoding ended without a canvas, yet without an error: a fault of ours.
fn no_cause() -> MediaError {
    MediaError::InvalidMedia("the GIF's frames could not be read".into())
}

/// What is written here goes to the feeder of ffmpeg's stdin, a buffer at a time; a
/// closed pipe (ffmpeg ended) is a broken pipe.
struct Chunks(mpsc::Sender<Vec<u8>>);

impl Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .blocking_send(buf.to_vec())
            .map_err(|_| std::io::ErrorKind::BrokenPipe)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
