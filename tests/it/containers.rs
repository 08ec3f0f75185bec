//! The video containers beyond MP4 and MOV (docs/API.md): Matroska, WebM, AVI,
//! MPEG-TS, 3GP and Ogg, each detected from its bytes, read through its own named
//! demuxer, and held to the same exactness as MP4 (frames, durations, sizes); and
//! formats still not read, named in the error with what the command takes.

use serde_json::json;

use crate::clips::*;
use crate::fixtures;
use crate::helpers::*;

/// A 1 s, 10 fps, 96×64 clip with a tone in `container`, with the codecs people find
/// in it.
fn clip_in(container: &str) -> Vec<u8> {
    let (video, audio): (&[&str], &[&str]) = match container {
        "matroska" | "mpegts" | "3gp" => (
            &["-c:v", "libx264", "-pix_fmt", "yuv420p"],
            &["-c:a", "aac"],
        ),
        "webm" => (
            &["-c:v", "libvpx-vp9", "-deadline", "realtime"],
            &["-c:a", "libopus"],
        ),
        "avi" => (&["-c:v", "mpeg4"], &["-c:a", "pcm_s16le"]),
        "ogg" => (&["-c:v", "libtheora"], &["-c:a", "libvorbis"]),
        other => panic!("no recipe for {other}"),
    };
    let args = [
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=96x64:rate=10:duration=1",
        ][..],
        &["-f", "lavfi", "-i", "sine=frequency=440:duration=1"],
        video,
        audio,
        &["-f", container],
    ]
    .concat();
    ffmpeg(&args, "clip")
}

const CONTAINERS: [&str; 6] = ["matroska", "webm", "avi", "mpegts", "3gp", "ogg"];

on_both_backends!(every_container_gives_every_frame_and_an_exact_speed_change);

async fn every_container_gives_every_frame_and_an_exact_speed_change(
    backend: crate::backends::Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    for container in CONTAINERS {
        let src = app
            .fixtures
            .add(&format!("clip-{container}"), clip_in(container));
        let frames_out = run_and_probe(&app, &src, &["extract-frames"], None).await;
        assert_eq!(frames_out.len(), 10, "{container}: one WebP per frame");
        assert_eq!(
            dims(video_stream(&frames_out[9].1)),
            (96, 64),
            "{container}"
        );

        let sped = run_and_probe(
            &app,
            &src,
            &["modify-video-speed"],
            Some(json!({"speed": 2})),
        )
        .await;
        let probe = &sped[0].1;
        let seconds = duration(probe);
        assert!(
            (seconds - 0.5).abs() < 0.06,
            "{container}: lasts {seconds} s"
        );
        assert_eq!(
            frames(video_stream(probe)),
            10,
            "{container}: every frame kept"
        );
        assert_eq!(audio_codec(probe).as_deref(), Some("aac"), "{container}");
    }
}

#[tokio::test]
async fn a_gif_and_a_webm_in_one_pipeline_each_end_as_their_own_kind() {
    let app = spawn_app().await;
    let webm = app.fixtures.add("clip.webm", clip_in("webm"));
    let out = run_and_probe(&app, &webm, &["video-to-gif"], None).await;
    assert_eq!(out[0].1["format"]["format_name"], "gif");
    assert_eq!(frames(video_stream(&out[0].1)), 10);
}

#[tokio::test]
async fn heic_and_avif_are_named_as_such_not_as_mp4_with_what_the_command_takes() {
    let app = spawn_app().await;
    let heic = b"\0\0\0\x18ftypheic\0\0\0\0mif1heic\0\0\0\x08free".to_vec();
    let avif = b"\0\0\0\x18ftypavif\0\0\0\0avifmif1\0\0\0\x08free".to_vec();
    for (name, bytes, found) in [("a.heic", heic, "HEIC/HEIF"), ("a.avif", avif, "AVIF")] {
        let src = app.fixtures.add(name, bytes);
        let error = app.run_failed(edit(&src, &["video-to-gif"], None)).await;
        assert_eq!(error["code"], "unsupported_input_format");
        let detail = error["detail"].as_str().unwrap();
        assert!(detail.contains(&format!("file is {found},")), "{detail}");
        assert!(detail.contains("it takes MP4, QuickTime MOV"), "{detail}");
    }
    // A JPEG given to a video command: the detail lists every container it reads.
    let jpeg = app.fixtures.add("a.jpg", fixtures::jpeg(32, 32));
    let error = app.run_failed(edit(&jpeg, &["video-to-gif"], None)).await;
    let detail = error["detail"].as_str().unwrap();
    assert!(detail.contains("file is JPEG"), "{detail}");
    for container in ["MP4", "Matroska (MKV)", "AVI", "MPEG-TS", "3GP", "Ogg"] {
        assert!(detail.contains(container), "{detail}");
    }
    // An unknown format, too.
    let text = app
        .fixtures
        .add("notes.txt", b"just some text, not media".to_vec());
    let error = app.run_failed(edit(&text, &["image-to-webp"], None)).await;
    let detail = error["detail"].as_str().unwrap();
    assert!(
        detail.contains("in no format this service reads; this command takes JPEG, PNG, WebP"),
        "{detail}"
    );
}
