//! Writes an animation as GIF, animated WebP and animated AVIF through
//! `Media::transform_image` at scale 1, the service's own encoders at their settings,
//! for `bench/animated_avif.sh`.
//!
//! `cargo run --release --example animated_formats -- ANIMATION OUT_DIR`, or
//! `… -- --frames ANIMATION DIR` to write each frame of a GIF or animated WebP as
//! `DIR/NNN.png`, composited as viewers show it (ffmpeg 5.1 reads no animated WebP).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mediaedit::media::image::{FrameOp, Scale};
use mediaedit::media::{ImageFormat, Media, MediaConfig};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--frames") {
        let (Some(input), Some(dir)) = (args.nth(1), args.next()) else {
            eprintln!("usage: animated_formats --frames ANIMATION DIR");
            std::process::exit(2);
        };
        return dump_frames(&input, &dir);
    }
    let (Some(input), Some(out_dir)) = (args.next(), args.next()) else {
        eprintln!("usage: animated_formats ANIMATION OUT_DIR");
        std::process::exit(2);
    };
    let media = Media::new(MediaConfig {
        max_image_pixels: 100_000_000,
        process_timeout: Duration::from_secs(600),
        max_processes: 2,
        ffmpeg: "ffmpeg".into(),
        ffprobe: "ffprobe".into(),
        max_video_seconds: 600.0,
        max_video_pixels: 7680 * 4320,
        max_video_frames: 100_000,
        max_extract_frames: 1000,
        face_sample_fps: 5.0,
        max_animation_pixels: 4_000_000_000,
        process_memory_limit: 0,
        scratch_dir: None,
        warm_processes: 0,
        header_readers: true,
        shim_dir: None,
        min_chunk_work: 100_000_000,
        ladder_cores_per_chunk: 2,
        x264_cores_per_chunk: 4,
        vp9_cores_per_chunk: 2,
        max_step_memory_bytes: 4 << 30,
        memory_budget_bytes: 8 << 30,
    });
    let path = PathBuf::from(&input);
    let format = media.detect(&path).await.expect("a format we read");
    let file = mediaedit::media::MediaFile { path, format };
    for (name, output) in [
        ("gif", ImageFormat::Gif),
        ("webp", ImageFormat::Webp),
        ("avif", ImageFormat::Avif),
    ] {
        let ops: Vec<Box<dyn FrameOp>> = vec![Box::new(Scale(1.0))];
        let started = Instant::now();
        let out = media
            .transform_image(&file, ops, Some(output), out_dir.as_ref())
            .await
            .expect("written");
        let target = PathBuf::from(&out_dir).join(format!("ours.{name}"));
        std::fs::rename(&out.path, &target).unwrap();
        let bytes = std::fs::metadata(&target).unwrap().len();
        let seconds = started.elapsed().as_secs_f64();
        println!("{name} {bytes} {seconds:.2}");
    }
}

/// Each frame of the GIF or WebP `input` as `dir/NNN.png` (from 001).
fn dump_frames(input: &str, dir: &str) {
    use image::AnimationDecoder;
    let bytes = std::io::Cursor::new(std::fs::read(input).expect("readable"));
    let frames = if input.ends_with(".webp") {
        image::codecs::webp::WebPDecoder::new(bytes)
            .unwrap()
            .into_frames()
            .collect_frames()
    } else {
        image::codecs::gif::GifDecoder::new(bytes)
            .unwrap()
            .into_frames()
            .collect_frames()
    }
    .expect("decoded");
    for (i, frame) in frames.into_iter().enumerate() {
        let path = PathBuf::from(dir).join(format!("{:03}.png", i + 1));
        frame.into_buffer().save(path).expect("written");
    }
}
