//! Commands run on real files through the real ffmpeg: what a command's unit tests
//! beside it cannot show.

use std::path::Path;

use image::DynamicImage;

use crate::commands::options::Options;
use crate::commands::registry::Command;
use crate::media::testutil::*;
use crate::media::{Media, MediaConfig, MediaError, MediaFile, MediaFormat, Probe};

/// `image-to-video` of `input` at `fps` for `duration`.
async fn image_to_video(
    media: &Media,
    input: &MediaFile,
    fps: f64,
    duration: f64,
    dir: &Path,
) -> Result<MediaFile, MediaError> {
    let options = Options::of(&[("fps", fps.into()), ("duration", duration.into())]);
    let mut outputs = Command::ImageToVideo
        .run(media, input, &options, dir, &|_| {})
        .await?;
    assert_eq!(outputs.len(), 1);
    Ok(outputs.remove(0))
}

#[tokio::test]
async fn image_to_video_checks_the_pixel_limit_and_takes_only_still_images() {
    let dir = tempdir();
    let jpeg = write_file(
        dir.path(),
        "a.jpeg",
        &solid_jpeg(20, 20, RED),
        MediaFormat::Jpeg,
    );
    let err = image_to_video(&media_with_limit(100), &jpeg, 25.0, 1.0, dir.path())
        .await
        .unwrap_err();
    assert!(matches!(err, MediaError::ImageTooLarge { .. }), "{err:?}");
    // A video is not a picture, whatever the step is handed.
    let ogg = write_file(dir.path(), "a.ogv", b"OggS\0\x02", MediaFormat::Ogv);
    match image_to_video(&media(), &ogg, 25.0, 1.0, dir.path()).await {
        Err(MediaError::UnsupportedInputFormat { found, .. }) => {
            assert_eq!(found.as_deref(), Some("Ogg"))
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// Probes a video output and checks what every `image-to-video` output must be.
async fn probe_video(media: &Media, out: &MediaFile) -> Probe {
    assert_eq!(out.format, MediaFormat::Mp4);
    assert_eq!(out.path.extension().unwrap(), "mp4");
    let probe = media.probe(&out.path).await.unwrap();
    let video = probe.video().expect("a video stream");
    assert_eq!(video.codec_name.as_deref(), Some("h264"));
    assert_eq!(video.pix_fmt.as_deref(), Some("yuv420p"));
    assert_eq!(video.width.unwrap() % 2, 0);
    assert_eq!(video.height.unwrap() % 2, 0);
    let boxes = top_level_boxes(&std::fs::read(&out.path).unwrap());
    let at = |name: &str| boxes.iter().position(|b| b == name).unwrap();
    assert!(at("moov") < at("mdat"), "not faststart: {boxes:?}");
    probe
}

#[tokio::test]
async fn image_to_video_lasts_exactly_duration_at_exactly_fps() {
    let dir = tempdir();
    let media = media();
    let input = png(
        dir.path(),
        "odd.png",
        DynamicImage::ImageRgba8(half_transparent(33, 21)),
    );

    for (fps, duration, frames, rate) in [
        (25.0, 2.0, 50, "25/1"),
        (0.5, 4.0, 2, "1/2"),
        (29.97, 1.0, 30, "2997/100"),
    ] {
        let out = image_to_video(&media, &input, fps, duration, dir.path())
            .await
            .unwrap();
        let probe = probe_video(&media, &out).await;
        let video = probe.video().unwrap();
        // Odd sides are rounded down to even.
        assert_eq!((video.width, video.height), (Some(32), Some(20)));
        assert_eq!(video.nb_frames, Some(frames), "fps {fps}");
        assert_eq!(video.r_frame_rate.as_deref(), Some(rate), "fps {fps}");
        assert_eq!(video.avg_frame_rate.as_deref(), Some(rate), "fps {fps}");
        let expected = frames as f64 / fps;
        let actual = video.duration.unwrap();
        assert!(
            (actual - expected).abs() < 0.002,
            "fps {fps}: {actual} != {expected}"
        );
        let container = probe.format.duration.unwrap();
        assert!(
            (container - expected).abs() < 0.002,
            "fps {fps}: {container}"
        );
    }
    // Only the three videos beside the input: the raw frame was cleaned up.
    assert_eq!(files_in(dir.path()).len(), 4);
}

#[tokio::test]
async fn image_to_video_fits_large_pictures_into_4k() {
    let dir = tempdir();
    let media = media();
    let jpeg = solid_jpeg(5000, 3000, BLUE);
    let input = write_file(dir.path(), "big.jpeg", &jpeg, MediaFormat::Jpeg);
    let out = image_to_video(&media, &input, 25.0, 0.2, dir.path())
        .await
        .unwrap();
    let probe = probe_video(&media, &out).await;
    let video = probe.video().unwrap();
    assert_eq!((video.width, video.height), (Some(3600), Some(2160)));
    assert_eq!(video.nb_frames, Some(5));

    // Portrait by orientation: the upright size decides the box.
    let rotated = write_file(
        dir.path(),
        "rotated.jpeg",
        &jpeg_with_orientation(40, 20, 6),
        MediaFormat::Jpeg,
    );
    let out = image_to_video(&media, &rotated, 25.0, 0.2, dir.path())
        .await
        .unwrap();
    let probe = probe_video(&media, &out).await;
    let video = probe.video().unwrap();
    assert_eq!((video.width, video.height), (Some(20), Some(40)));
}

#[tokio::test]
async fn missing_ffmpeg_is_reported_as_such() {
    let dir = tempdir();
    let media = Media::new(MediaConfig {
        ffmpeg: "/nonexistent/ffmpeg".into(),
        ..media().config().clone()
    });
    let input = png(
        dir.path(),
        "in.png",
        DynamicImage::ImageRgb8(two_tone(8, 8)),
    );
    let err = image_to_video(&media, &input, 25.0, 1.0, dir.path())
        .await
        .unwrap_err();
    assert!(matches!(err, MediaError::ToolMissing { .. }), "{err:?}");
    assert_eq!(files_in(dir.path()).len(), 1);
}
