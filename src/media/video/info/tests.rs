use crate::media::ffmpeg::input::demuxer;
use crate::media::ffmpeg::transcode::*;
use crate::media::limits::VideoLimits;
use crate::media::video::info::*;
use crate::media::video::inspect::*;
use crate::media::video::probe;
use crate::media::{Media, MediaFile, MediaFormat};

/// Checks that a recipe maps and encodes audio (with `codec`) only for a source
/// that has some, and starts with square pixels.
pub(crate) fn assert_audio_only_when_present(args: fn(&VideoInfo) -> Vec<String>, codec: &str) {
    let with = args(&info(Some(25.0), true)).join(" ");
    assert!(
        with.contains("-map 0:a:0") && with.contains(codec),
        "{with}"
    );
    assert!(with.contains(SQUARE_PIXELS), "{with}");
    let without = args(&info(Some(25.0), false)).join(" ");
    assert!(
        !without.contains("0:a") && !without.contains(codec),
        "{without}"
    );
}

/// A 160x120, 2 s, 50-frame source at `frame_rate`.
pub(crate) fn info(frame_rate: Option<f64>, has_audio: bool) -> VideoInfo {
    VideoInfo {
        width: 160,
        height: 120,
        duration: Some(2.0),
        frames: Some(50),
        frame_rate,
        base_rate: frame_rate,
        has_audio,
        ..VideoInfo::default()
    }
}

/// An MP4 that ffmpeg makes in `dir` from a 32x32 test pattern, with `args`.
fn made_mp4(dir: &std::path::Path, name: &str, args: &[&str]) -> MediaFile {
    MediaFile {
        path: crate::media::testutil::ffmpeg_clip(dir, name, args),
        format: MediaFormat::Mp4,
    }
}

#[tokio::test]
async fn a_plain_mp4_is_read_in_process_and_any_other_file_probed_once() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("runs.log");
    let wrapper = dir.path().join("ffprobe");
    let script = format!(
        "#!/bin/sh\necho run >> '{}'\nexec ffprobe \"$@\"\n",
        log.display()
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let media = Media::new(crate::media::MediaConfig {
        ffprobe: wrapper,
        ..crate::media::testutil::media().config().clone()
    });
    let runs = || std::fs::read_to_string(&log).map_or(0, |l| l.lines().count());
    let inspect_twice = |name: &str, args: &[&str]| {
        let clip = made_mp4(dir.path(), name, args);
        let media = &media;
        async move {
            let first = inspect(media, &clip, &[MediaFormat::Mp4]).await.unwrap();
            let again = inspect(media, &clip, &[MediaFormat::Mp4]).await.unwrap();
            assert_eq!(first, again);
            first
        }
    };
    let plain = inspect_twice("plain.mp4", &["-pix_fmt", "yuv420p"]).await;
    assert_eq!((plain.width, plain.frames), (32, Some(2)));
    assert_eq!(runs(), 0, "read in process");
    // Non-square pixels are left to ffprobe, once for both looks.
    let wide = inspect_twice("wide.mp4", &["-pix_fmt", "yuv420p", "-vf", "setsar=2"]).await;
    assert!(!wide.shown_as_stored);
    assert_eq!(runs(), 1, "probed once");
    // With the header readers off, ffprobe reads the plain MP4 too, and says the same.
    let media = Media::new(crate::media::MediaConfig {
        header_readers: false,
        ..media.config().clone()
    });
    let clip = made_mp4(dir.path(), "plain-again.mp4", &["-pix_fmt", "yuv420p"]);
    let probed = inspect(&media, &clip, &[MediaFormat::Mp4]).await.unwrap();
    assert_eq!(runs(), 2, "probed with the readers off");
    assert_eq!(
        (probed.width, probed.height, probed.frames),
        (plain.width, plain.height, plain.frames)
    );
    assert_eq!(
        (probed.frame_rate, probed.shown),
        (plain.frame_rate, plain.shown)
    );
}

#[tokio::test]
async fn the_shown_size_squares_the_pixels_and_turns_a_quarter_as_ffmpeg_does() {
    let dir = tempfile::tempdir().unwrap();
    let media = crate::media::testutil::media();
    let shown = |name: &'static str, args: &'static [&'static str]| {
        let clip = made_mp4(dir.path(), name, args);
        let media = &media;
        async move {
            inspect(media, &clip, &[MediaFormat::Mp4])
                .await
                .unwrap()
                .shown
        }
    };
    let flat: &[&str] = &["-vf", "scale=32:16,setsar=1", "-pix_fmt", "yuv420p"];
    assert_eq!(shown("flat.mp4", flat).await, (32, 16));
    let wide = shown("wide.mp4", &["-vf", "setsar=2", "-pix_fmt", "yuv420p"]);
    assert_eq!(wide.await, (64, 32));
    let tall = shown("tall.mp4", &["-vf", "setsar=1/2", "-pix_fmt", "yuv420p"]);
    assert_eq!(tall.await, (32, 64));
    // A display rotation is written on a stream copy.
    let turned = dir.path().join("turned.mp4");
    let status = std::process::Command::new("ffmpeg")
        .args(["-nostdin", "-loglevel", "error", "-y", "-i"])
        .arg(dir.path().join("flat.mp4"))
        .args(["-c", "copy", "-metadata:s:v:0", "rotate=90"])
        .arg(&turned)
        .status()
        .unwrap();
    assert!(status.success());
    let turned = MediaFile {
        path: turned,
        format: MediaFormat::Mp4,
    };
    let info = inspect(&media, &turned, &[MediaFormat::Mp4]).await.unwrap();
    assert_eq!(info.shown, (16, 32));
}

#[test]
fn input_args_force_the_demuxer_and_the_file_protocol() {
    let input = MediaFile {
        path: "/tmp/-x|concat:y".into(),
        format: MediaFormat::Mov,
    };
    let args: Vec<String> = input_args_with((&input.path, demuxer(input.format)), 600.0, &[])
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args = args.join(" ");
    assert!(args.starts_with("-nostdin "), "{args}");
    assert!(
        args.contains("-protocol_whitelist file -t 600 -f mov -i file:/tmp/-x|concat:y"),
        "{args}"
    );
    assert!(args.contains("-progress pipe:1"), "{args}");
    let quiet: Vec<String> = quiet_input_args(&input, 600.0)
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let quiet = quiet.join(" ");
    assert!(
        !quiet.contains("-progress"),
        "stdout carries frames: {quiet}"
    );
    assert!(quiet.ends_with("-f mov -i file:/tmp/-x|concat:y -map_metadata -1"));
}

#[test]
fn the_duration_is_the_longest_the_container_streams_or_frames_admit_to() {
    let json = br#"{"format": {"format_name": "mov", "duration": "1.0"},
        "streams": [
          {"index": 0, "codec_type": "video", "width": 16, "height": 16,
           "avg_frame_rate": "25/1", "r_frame_rate": "25/1", "nb_frames": "5000",
           "duration": "3.0"},
          {"index": 1, "codec_type": "audio", "duration": "150.0"}]}"#;
    let info = VideoInfo::from_probe(&probe::parse(json).unwrap()).unwrap();
    // 5000 frames at 25 fps: 200 s, though the container says 1 s.
    assert_eq!(info.duration, Some(200.0));
    let limits = VideoLimits {
        max_seconds: 60.0,
        max_pixels: 1 << 20,
        max_frames: 100_000,
    };
    assert!(matches!(
        info.check(&limits),
        Err(MediaError::VideoTooLong { seconds, .. }) if seconds == 200.0
    ));
}

#[test]
fn limits_are_checked_in_turn_with_the_value_found() {
    let limits = VideoLimits {
        max_seconds: 1.0,
        max_pixels: 160 * 120,
        max_frames: 10,
    };
    let mut v = info(Some(25.0), false);
    assert!(matches!(
        v.check(&limits),
        Err(MediaError::VideoTooLong { seconds, .. }) if seconds == 2.0
    ));
    v.duration = None;
    assert!(matches!(
        v.check(&limits),
        Err(MediaError::TooManyFrames {
            frames: 50,
            limit: 10,
            ..
        })
    ));
    v.width = 161;
    assert!(matches!(
        v.check(&limits),
        Err(MediaError::VideoTooLarge { width: 161, .. })
    ));
    v.width = 160;
    v.frames = Some(10);
    assert!(v.check(&limits).is_ok());
}
