use crate::media::testutil;
use crate::media::video::ffprobe;
use crate::media::video::mkv::*;
use crate::media::MediaFormat;

/// A clip made by ffmpeg from a 0.44 s 160x120 pattern at 25 fps and a tone.
fn clip(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let path = dir.join(name);
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=160x120:rate=25:duration=0.44")
        .args(["-f", "lavfi", "-i", "sine=duration=0.5"])
        .args(args)
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success(), "ffmpeg {args:?}");
    path
}

#[tokio::test]
async fn webm_and_matroska_files_are_described_as_ffprobe_describes_them() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, MediaFormat, &[&str]); 4] = [
        (
            "vp9.webm",
            MediaFormat::Webm,
            &[
                "-c:v",
                "libvpx-vp9",
                "-deadline",
                "realtime",
                "-cpu-used",
                "8",
                "-c:a",
                "libopus",
            ],
        ),
        ("vp8.webm", MediaFormat::Webm, &["-an", "-c:v", "libvpx"]),
        (
            "h264.mkv",
            MediaFormat::Mkv,
            &["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"],
        ),
        // Frames 0, 1, 3, 6 and 9 only: a variable rate.
        (
            "vfr.webm",
            MediaFormat::Webm,
            &[
                "-an",
                "-vf",
                "select='eq(n,1)+not(mod(n,3))'",
                "-fps_mode",
                "vfr",
                "-c:v",
                "libvpx",
            ],
        ),
    ];
    let media = testutil::media();
    for (name, format, args) in cases {
        let path = clip(dir.path(), name, args);
        let ours = read_extent(&path).unwrap_or_else(|| panic!("{name} was not read"));
        let probe = ffprobe::run(&media, &path, format, true).await.unwrap();
        let video = probe.video().unwrap();
        assert_eq!(
            (Some(ours.width), Some(ours.height)),
            (video.width, video.height),
            "{name}"
        );
        assert_eq!(Some(ours.frames), video.nb_read_packets, "{name}");
        let theirs = probe.format.duration.unwrap();
        assert!(
            (ours.duration.unwrap() - theirs).abs() < 0.0005,
            "{name}: {ours:?} {theirs}"
        );
    }
    let vfr = read_extent(&dir.path().join("vfr.webm")).unwrap();
    assert_eq!(vfr.frames, 5);
}

#[test]
fn cut_or_damaged_files_never_panic_and_are_left_to_ffprobe() {
    let dir = tempfile::tempdir().unwrap();
    let path = clip(dir.path(), "whole.webm", &["-an", "-c:v", "libvpx"]);
    let whole = std::fs::read(&path).unwrap();
    assert!(read_extent(&path).is_some());
    let cut = dir.path().join("cut.webm");
    // Every length of the headers, then a few cuts through the clusters.
    let lengths = (0..whole.len().min(600)).chain((600..whole.len()).step_by(97));
    for len in lengths {
        std::fs::write(&cut, &whole[..len]).unwrap();
        assert!(read_extent(&cut).is_none(), "cut at {len} was read");
    }
    for at in (0..whole.len()).step_by(7) {
        let mut damaged = whole.clone();
        damaged[at] ^= 0xFF;
        std::fs::write(&cut, &damaged).unwrap();
        let _ = read_extent(&cut);
    }
}
