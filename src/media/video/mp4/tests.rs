use crate::media::image::yuv::Matrix;
use crate::media::testutil;
use crate::media::video::ffprobe;
use crate::media::video::mp4::*;
use crate::media::MediaFormat;

/// H.264 in 8-bit 4:2:0, fast.
const X264_420: [&str; 6] = [
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
];

/// A clip made by ffmpeg with `args` (after a 0.4 s 160x120 test pattern input).
fn clip(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut command = std::process::Command::new("ffmpeg");
    command.args([
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=160x120:rate=25:duration=0.4",
    ]);
    command.args(args).arg(&path);
    assert!(command.status().unwrap().success(), "ffmpeg {args:?}");
    path
}

/// What ffprobe says of `path`, as the service reads it.
async fn ffprobe_info(path: &Path, format: MediaFormat) -> VideoInfo {
    let media = testutil::media();
    let probe = ffprobe::run(&media, path, format, false).await.unwrap();
    VideoInfo::from_probe(&probe).unwrap()
}

fn assert_agree(ours: &VideoInfo, theirs: &VideoInfo) {
    assert_eq!((ours.width, ours.height), (theirs.width, theirs.height));
    assert_eq!(ours.frames, theirs.frames);
    assert_eq!(ours.has_audio, theirs.has_audio);
    assert_eq!(ours.codec, theirs.codec);
    assert_eq!(ours.pix_fmt, theirs.pix_fmt);
    assert_eq!(ours.shown_as_stored, theirs.shown_as_stored);
    assert_eq!(ours.matrix, theirs.matrix);
    let close = |a: Option<f64>, b: Option<f64>, by: f64| (a.unwrap() - b.unwrap()).abs() <= by;
    assert!(
        close(ours.frame_rate, theirs.frame_rate, 0.01),
        "{ours:?} {theirs:?}"
    );
    assert!(
        close(ours.base_rate, theirs.base_rate, 0.01),
        "{ours:?} {theirs:?}"
    );
    assert!(
        close(ours.duration, theirs.duration, 0.05),
        "{ours:?} {theirs:?}"
    );
}

#[tokio::test]
async fn plain_h264_files_read_as_ffprobe_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let x264 = ["-c:v", "libx264", "-preset", "ultrafast"];
    let cases: Vec<(&str, MediaFormat, Vec<&str>)> = vec![
        ("plain.mp4", MediaFormat::Mp4, vec!["-pix_fmt", "yuv420p"]),
        (
            "audio.mp4",
            MediaFormat::Mp4,
            vec![
                "-f",
                "lavfi",
                "-i",
                "sine=duration=0.4",
                "-pix_fmt",
                "yuv420p",
                "-c:a",
                "aac",
                "-shortest",
            ],
        ),
        (
            "ntsc.mov",
            MediaFormat::Mov,
            vec!["-r", "30000/1001", "-pix_fmt", "yuv420p"],
        ),
        (
            "cropped.mp4",
            MediaFormat::Mp4,
            vec!["-vf", "crop=150:94", "-pix_fmt", "yuv420p"],
        ),
        ("full.mp4", MediaFormat::Mp4, vec!["-pix_fmt", "yuvj420p"]),
        (
            "hd.mp4",
            MediaFormat::Mp4,
            vec!["-pix_fmt", "yuv420p", "-x264-params", "colormatrix=bt709"],
        ),
        ("high444.mp4", MediaFormat::Mp4, vec!["-pix_fmt", "yuv444p"]),
        (
            "tagged.mp4",
            MediaFormat::Mp4,
            vec![
                "-pix_fmt",
                "yuv420p",
                "-colorspace",
                "bt709",
                "-color_primaries",
                "bt709",
            ],
        ),
    ];
    for (name, format, args) in cases {
        let mut all: Vec<&str> = args.clone();
        all.extend(x264);
        let path = clip(dir.path(), name, &all);
        let ours = read_info(&path).unwrap_or_else(|| panic!("{name} was not read"));
        assert_agree(&ours, &ffprobe_info(&path, format).await);
    }
    let hd = read_info(&dir.path().join("hd.mp4")).unwrap();
    assert_eq!(hd.matrix, Matrix::Bt709);
}

#[test]
fn anything_unusual_is_left_to_ffprobe() {
    let dir = tempfile::tempdir().unwrap();
    let x264 = X264_420;
    let plain = clip(dir.path(), "plain.mov", &x264);
    let rotated = dir.path().join("rotated.mov");
    let remux = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(&plain)
        .args(["-c", "copy", "-metadata:s:v:0", "rotate=90", "-f", "mov"])
        .arg(&rotated)
        .status()
        .unwrap();
    assert!(remux.success());
    let mut unusual = vec![
        rotated,
        clip(
            dir.path(),
            "sar.mp4",
            &[&x264[..], &["-vf", "setsar=2"]].concat(),
        ),
        clip(
            dir.path(),
            "colr.mp4",
            &[
                &x264[..],
                &["-colorspace", "bt709", "-movflags", "+write_colr"],
            ]
            .concat(),
        ),
        clip(
            dir.path(),
            "vfr.mp4",
            &[
                &x264[..],
                &["-vf", "setpts='N*N/25/TB'", "-fps_mode", "vfr"],
            ]
            .concat(),
        ),
        clip(dir.path(), "mpeg4.mp4", &["-c:v", "mpeg4"]),
        clip(
            dir.path(),
            "frag.mp4",
            &[&x264[..], &["-movflags", "frag_keyframe+empty_moov"]].concat(),
        ),
    ];
    let text = dir.path().join("text.mp4");
    std::fs::write(
        &text,
        b"\0\0\0\x18ftypisom\0\0\x02\0isomiso2 and nothing else",
    )
    .unwrap();
    unusual.push(text);
    for path in unusual {
        assert!(read_info(&path).is_none(), "{}", path.display());
    }
}

#[test]
fn cut_or_damaged_headers_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = clip(
        dir.path(),
        "whole.mp4",
        &[&X264_420[..], &["-movflags", "+faststart"]].concat(),
    );
    let whole = std::fs::read(&path).unwrap();
    let damaged = dir.path().join("damaged.mp4");
    let head = whole.len().min(4096);
    for cut in (0..head).step_by(7) {
        std::fs::write(&damaged, &whole[..cut]).unwrap();
        let _ = read_info(&damaged);
        let mut flipped = whole.clone();
        flipped[cut] ^= 0xA5;
        std::fs::write(&damaged, &flipped).unwrap();
        let _ = read_info(&damaged);
    }
}

#[tokio::test]
async fn a_variable_rate_file_is_described_as_ffprobe_describes_it() {
    let dir = tempfile::tempdir().unwrap();
    // Frames 0, 1, 3, 6 and 9 of a 25 fps pattern: they last 40, 80, 120, 120 ms and
    // the last as long as its predecessor. Tagged with a colour box, as gif-to-video's
    // outputs are.
    let mut args = vec![
        "-vf",
        "select='eq(n,1)+not(mod(n,3))'",
        "-fps_mode",
        "vfr",
        "-colorspace",
        "bt709",
        "-movflags",
        "+write_colr",
    ];
    args.extend(X264_420);
    let path = clip(dir.path(), "vfr.mp4", &args);
    // The rate is not constant, so the facts a command acts on are left to ffprobe.
    assert!(read_info(&path).is_none());

    let ours = read_extent(&path).expect("a plain H.264 file at a variable rate");
    let media = testutil::media();
    let probe = ffprobe::run(&media, &path, MediaFormat::Mp4, true)
        .await
        .unwrap();
    let video = probe.video().unwrap();
    assert_eq!(
        (Some(ours.width), Some(ours.height)),
        (video.width, video.height)
    );
    assert_eq!(Some(ours.frames), video.nb_read_packets);
    assert_eq!(ours.frames, 5);
    let theirs = probe.format.duration.unwrap();
    assert!(
        (ours.duration.unwrap() - theirs).abs() < 0.001,
        "{ours:?} {theirs}"
    );
}

#[test]
fn the_keyframes_are_the_sync_samples_counted_from_zero() {
    let dir = tempfile::tempdir().unwrap();
    // 10 frames (0.4 s at 25 fps), a keyframe every 4.
    let gop = [
        &X264_420[..],
        &["-g", "4", "-keyint_min", "4", "-sc_threshold", "0"],
    ]
    .concat();
    let path = clip(dir.path(), "gop.mp4", &gop);
    assert_eq!(keyframes(&path), Some(vec![0, 4, 8]));
    // All intra: no `stss` (every frame is one).
    let intra = [&X264_420[..], &["-g", "1"]].concat();
    assert_eq!(keyframes(&clip(dir.path(), "intra.mp4", &intra)), None);
    // Fragmented: the samples are in the fragments.
    let fragmented = [&X264_420[..], &["-movflags", "frag_keyframe+empty_moov"]].concat();
    assert_eq!(keyframes(&clip(dir.path(), "frag.mp4", &fragmented)), None);
}
