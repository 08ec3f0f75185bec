//! Tests of the public operations, checked by decoding and probing their outputs.

use ::image::{DynamicImage, GenericImageView};

use crate::media::testutil::*;
use crate::media::*;

mod images;
mod transform;

fn assert_close(a: [u8; 3], b: [u8; 3], tolerance: u8) {
    let close = a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= tolerance);
    assert!(close, "{a:?} is not within {tolerance} of {b:?}");
}

#[tokio::test]
async fn detect_recognises_every_supported_format() {
    let dir = tempdir();
    let media = media();
    let still = DynamicImage::ImageRgb8(two_tone(8, 8));
    let cases = [
        (
            "a.jpeg",
            encode(still.clone(), ::image::ImageFormat::Jpeg),
            MediaFormat::Jpeg,
        ),
        (
            "a.png",
            encode(still.clone(), ::image::ImageFormat::Png),
            MediaFormat::Png,
        ),
        (
            "a.gif",
            encode(still.clone(), ::image::ImageFormat::Gif),
            MediaFormat::Gif,
        ),
        (
            "a.webp",
            encode(still.clone(), ::image::ImageFormat::WebP),
            MediaFormat::Webp,
        ),
    ];
    for (name, bytes, expected) in cases {
        // The extension is deliberately wrong: only content counts.
        let file = write_file(dir.path(), &format!("{name}.bin"), &bytes, expected);
        assert_eq!(media.detect(&file.path).await.unwrap(), expected, "{name}");
    }

    let clips = [
        (
            "a.mp4",
            vec!["-c:v", "libx264", "-f", "mp4"],
            MediaFormat::Mp4,
        ),
        (
            "a.mov",
            vec!["-c:v", "libx264", "-f", "mov"],
            MediaFormat::Mov,
        ),
        (
            "a.webm",
            vec!["-c:v", "libvpx", "-deadline", "realtime", "-f", "webm"],
            MediaFormat::Webm,
        ),
        (
            "a.ogv",
            vec!["-c:v", "libtheora", "-f", "ogg"],
            MediaFormat::Ogv,
        ),
    ];
    for (name, args, expected) in clips {
        let path = ffmpeg_clip(dir.path(), name, &args);
        assert_eq!(media.detect(&path).await.unwrap(), expected, "{name}");
    }

    let text = write_file(dir.path(), "a.txt", b"just some text", MediaFormat::Png);
    let err = media.detect(&text.path).await.unwrap_err();
    assert!(
        matches!(err, MediaError::UnsupportedInputFormat { .. }),
        "{err:?}"
    );
    assert_eq!(err.code(), "unsupported_input_format");
    let empty = write_file(dir.path(), "empty", b"", MediaFormat::Png);
    assert!(media.detect(&empty.path).await.is_err());
}

#[tokio::test]
async fn probe_reads_each_format_with_its_sniffed_demuxer() {
    let dir = tempdir();
    let media = media();
    let still = DynamicImage::ImageRgb8(two_tone(8, 6));
    for (name, encoder, codec) in [
        ("a.jpeg", ::image::ImageFormat::Jpeg, "mjpeg"),
        ("a.png", ::image::ImageFormat::Png, "png"),
        ("a.webp", ::image::ImageFormat::WebP, "webp"),
        ("a.gif", ::image::ImageFormat::Gif, "gif"),
    ] {
        let file = write_file(
            dir.path(),
            name,
            &encode(still.clone(), encoder),
            MediaFormat::Png,
        );
        let probe = media.probe(&file.path).await.unwrap();
        let video = probe.video().unwrap();
        assert_eq!(video.codec_name.as_deref(), Some(codec), "{name}");
        assert_eq!((video.width, video.height), (Some(8), Some(6)), "{name}");
    }
    for (name, args, codec) in [
        ("a.mov", vec!["-c:v", "libx264", "-f", "mov"], "h264"),
        (
            "a.webm",
            vec!["-c:v", "libvpx", "-deadline", "realtime", "-f", "webm"],
            "vp8",
        ),
        ("a.ogv", vec!["-c:v", "libtheora", "-f", "ogg"], "theora"),
    ] {
        let path = ffmpeg_clip(dir.path(), name, &args);
        let probe = media.probe(&path).await.unwrap();
        let video = probe.video().unwrap();
        assert_eq!(video.codec_name.as_deref(), Some(codec), "{name}");
        assert_eq!((video.width, video.height), (Some(32), Some(32)), "{name}");
        let duration = probe.format.duration.unwrap();
        assert!((duration - 0.4).abs() < 0.05, "{name}: {duration}");
    }
}

#[tokio::test]
async fn probe_refuses_files_it_cannot_sniff_and_reports_ffprobe_failures() {
    let dir = tempdir();
    let media = media();
    let text = write_file(
        dir.path(),
        "a.txt",
        b"#EXTM3U\nfile:///etc/passwd\n",
        MediaFormat::Mp4,
    );
    let err = media.probe(&text.path).await.unwrap_err();
    assert!(
        matches!(err, MediaError::UnsupportedInputFormat { .. }),
        "{err:?}"
    );

    // An MP4 signature followed by garbage: ffprobe itself rejects it.
    let fake = write_file(
        dir.path(),
        "fake.mp4",
        b"\0\0\0\x18ftypisom\0\0\x02\0isomiso2garbage-garbage",
        MediaFormat::Mp4,
    );
    let err = media.probe(&fake.path).await.unwrap_err();
    assert!(matches!(err, MediaError::ProcessFailed { .. }), "{err:?}");
    assert_eq!(err.code(), "processing_failed");
}
