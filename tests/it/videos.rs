//! The video commands through the real service. Fixture videos are made with ffmpeg
//! at test time, tiny (96x64 to 160x120, at most a few seconds), and every output is
//! checked by probing it.

use std::path::Path;
use std::process::Command as Process;
use std::time::{Duration, Instant};

use image::{GenericImageView, ImageFormat};
use serde_json::{json, Value};

use crate::clips::*;
use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn video_to_webm_gives_vp9_and_opus_and_keeps_silent_videos_silent() {
    let app = spawn_app().await;
    let with_audio = app.fixtures.add("a.mp4", mp4("160x120", 25, 1.0, true));
    let silent = app.fixtures.add("s.mp4", mp4("160x120", 25, 1.0, false));

    let out = run_and_probe(&app, &with_audio, &["video-to-webm"], None).await;
    let (path, probe) = &out[0];
    assert_eq!(path.extension().unwrap(), "webm");
    assert_eq!(probe["format"]["format_name"], "matroska,webm");
    let video = video_stream(probe);
    assert_eq!(video["codec_name"], "vp9");
    assert_eq!(video["pix_fmt"], "yuv420p");
    assert_eq!(dims(video), (160, 120));
    assert_eq!(frames(video), 25);
    assert_eq!(audio_codec(probe).as_deref(), Some("opus"));

    let out = run_and_probe(&app, &silent, &["video-to-webm"], None).await;
    assert_eq!(video_stream(&out[0].1)["codec_name"], "vp9");
    assert_eq!(audio_codec(&out[0].1), None);
}

#[tokio::test]
async fn video_to_ogg_gives_theora_and_vorbis_from_mov_and_odd_sizes() {
    let app = spawn_app().await;
    let mov = app
        .fixtures
        .add("a.mov", clip("160x120", 25, 1.0, true, "mov"));
    let out = run_and_probe(&app, &mov, &["video-to-ogg"], None).await;
    let (path, probe) = &out[0];
    assert_eq!(path.extension().unwrap(), "ogv");
    assert_eq!(probe["format"]["format_name"], "ogg");
    assert_eq!(video_stream(probe)["codec_name"], "theora");
    assert_eq!(dims(video_stream(probe)), (160, 120));
    assert_eq!(audio_codec(probe).as_deref(), Some("vorbis"));

    // 4:4:4 is the only way x264 writes odd sizes.
    let odd = app.fixtures.add("odd.mp4", odd_size_mp4(1.0));
    let out = run_and_probe(&app, &odd, &["video-to-ogg"], None).await;
    let video = video_stream(&out[0].1);
    assert_eq!(video["codec_name"], "theora");
    assert_eq!(frames(video), 10);
    assert_eq!(audio_codec(&out[0].1), None);
}

#[tokio::test]
async fn video_to_gif_loops_forever_at_most_15_fps_and_never_enlarges() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.mp4", mp4("160x120", 25, 1.0, true));
    let out = run_and_probe(&app, &src, &["video-to-gif"], None).await;
    let (path, probe) = &out[0];
    assert_eq!(path.extension().unwrap(), "gif");
    let video = video_stream(probe);
    assert_eq!(video["codec_name"], "gif");
    assert_eq!(dims(video), (160, 120), "a small video is not enlarged");
    assert_eq!(frames(video), 15, "25 fps becomes 15 fps");
    let bytes = std::fs::read(path).unwrap();
    let netscape = bytes
        .windows(11)
        .position(|w| w == b"NETSCAPE2.0")
        .expect("a looping GIF");
    // Sub-block: size 3, id 1, loop count 0 (little-endian) = forever.
    assert_eq!(&bytes[netscape + 11..netscape + 15], [3, 1, 0, 0]);
}

#[tokio::test]
async fn video_to_gif_scales_the_longest_side_down_to_480() {
    let app = spawn_app().await;
    let src = app.fixtures.add("tall.mp4", mp4("240x960", 10, 0.3, false));
    let out = run_and_probe(&app, &src, &["video-to-gif"], None).await;
    let video = video_stream(&out[0].1);
    assert_eq!(dims(video), (120, 480));
    assert_eq!(frames(video), 3, "10 fps is kept");
}

#[tokio::test]
async fn extract_frames_writes_every_frame_as_webp_in_order() {
    let app = spawn_app().await;
    // Frame n is uniformly grey at level 20n, so order is visible in the pixels.
    let src = app.fixtures.add(
        "grey.mp4",
        ffmpeg(
            &[
                "-f",
                "lavfi",
                "-i",
                "color=c=black:size=96x64:rate=25:duration=0.4",
                "-vf",
                "geq=lum='20*N+16':cb=128:cr=128",
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-pix_fmt",
                "yuv420p",
                "-f",
                "mp4",
            ],
            "grey.mp4",
        ),
    );
    let doc = app.run_done(edit(&src, &["extract-frames"], None)).await;
    let urls = doc["attributes"]["downloadUrls"].as_array().unwrap();
    assert_eq!(urls.len(), 10);
    let outs = app.download_all(&doc).await;
    let mut last = 0u8;
    for (n, out) in outs.iter().enumerate() {
        assert_eq!(fixtures::format_of(out), ImageFormat::WebP, "frame {n}");
        let image = fixtures::decode(out);
        assert_eq!(image.dimensions(), (96, 64));
        let level = image.to_luma8().get_pixel(48, 32).0[0];
        assert!(n == 0 || level > last, "frame {n} is out of order");
        last = level;
    }
}

#[tokio::test]
async fn rotation_odd_sizes_and_variable_frame_rates_are_handled() {
    let app = spawn_app().await;
    // A 96x64 picture stored with a 90° display rotation: shown as 64x96.
    let rotated = with_file(&clip("96x64", 25, 0.4, false, "mov"), |plain| {
        ffmpeg(
            &[
                "-f",
                "mov",
                "-i",
                plain.to_str().unwrap(),
                "-c",
                "copy",
                "-metadata:s:v:0",
                "rotate=90",
                "-f",
                "mov",
            ],
            "rotated.mov",
        )
    });
    let src = app.fixtures.add("rotated.mov", rotated);
    for commands in [["video-to-webm"], ["modify-video-speed"]] {
        let out = run_and_probe(&app, &src, &commands, None).await;
        let video = video_stream(&out[0].1);
        assert_eq!(dims(video), (64, 96), "{commands:?}");
        assert!(video.get("side_data_list").is_none(), "{video}");
    }

    // Odd sizes become even for H.264.
    let odd = app.fixtures.add("odd.mp4", odd_size_mp4(0.5));
    let out = run_and_probe(&app, &odd, &["modify-video-speed"], None).await;
    let video = video_stream(&out[0].1);
    assert_eq!(dims(video), (98, 60));
    assert_eq!(video["pix_fmt"], "yuv420p");

    let vfr = vfr_mp4();
    let source_frames = with_file(&vfr, |p| frames(video_stream(&probe(p))));
    assert_eq!(source_frames, 10);
    let src = app.fixtures.add("vfr.mp4", vfr);
    let doc = app.run_done(edit(&src, &["extract-frames"], None)).await;
    assert_eq!(
        doc["attributes"]["downloadUrls"].as_array().unwrap().len(),
        10
    );
    let out = run_and_probe(
        &app,
        &src,
        &["modify-video-speed"],
        Some(json!({ "speed": 2 })),
    )
    .await;
    let probe = &out[0].1;
    assert_eq!(
        frames(video_stream(probe)),
        10,
        "no frame dropped or repeated"
    );
    assert!(
        (duration(probe) - 0.35).abs() <= 0.05,
        "{}",
        duration(probe)
    );
}

/// A GIF of 96x64 whose frames last 0.1, 0.4 and 0.2 s, left third transparent.
fn gif_with_uneven_delays() -> Vec<u8> {
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=96x64:rate=10:duration=0.3",
            "-filter_complex",
            "[0:v]setpts='if(eq(N,0),0,if(eq(N,1),0.1,0.6))/TB',format=rgba,\
             geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='if(lt(X,32),0,255)',split[a][b];\
             [a]palettegen=reserve_transparent=1[p];[b][p]paletteuse=alpha_threshold=128",
            "-fps_mode",
            "vfr",
            "-final_delay",
            "20",
            "-loop",
            "0",
            "-f",
            "gif",
        ],
        "uneven.gif",
    )
}

#[tokio::test]
async fn gif_to_video_keeps_each_frames_delay_and_flattens_onto_white() {
    let app = spawn_app().await;
    let gif = gif_with_uneven_delays();
    let src = app.fixtures.add("uneven.gif", gif.clone());
    let out = run_and_probe(&app, &src, &["gif-to-video"], None).await;
    let (path, probe) = &out[0];
    assert_eq!(path.extension().unwrap(), "mp4");
    let video = video_stream(probe);
    assert_eq!(video["codec_name"], "h264");
    assert_eq!(video["pix_fmt"], "yuv420p");
    assert_eq!(dims(video), (96, 64));
    assert_eq!(frames(video), 3, "one video frame per GIF frame");
    // Frame start times are the GIF's own (uneven: 0, 0.1, 0.5).
    let expected = with_file(&gif, frame_times);
    assert!(
        expected[1] - expected[0] < expected[2] - expected[1],
        "{expected:?}"
    );
    let times = frame_times(path);
    assert_eq!(times.len(), 3);
    for (found, expected) in times.iter().zip(&expected) {
        assert!((found - expected).abs() < 0.011, "{times:?}");
    }
    // The last frame keeps its own 0.2 s: the video lasts the sum of the delays.
    let seconds: f64 = probe["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (seconds - 0.7).abs() < 0.011,
        "lasts {seconds} s, not 0.7 s"
    );
    // The transparent left third is white; the right is the picture.
    let pixel = first_frame_pixel(path, 4, 32);
    assert!(pixel.iter().all(|c| *c > 235), "{pixel:?}");
    assert!(
        with_file(&std::fs::read(path).unwrap(), |p| {
            let bytes = std::fs::read(p).unwrap();
            let moov = bytes.windows(4).position(|w| w == b"moov").unwrap();
            let mdat = bytes.windows(4).position(|w| w == b"mdat").unwrap();
            moov < mdat
        }),
        "+faststart puts the index first"
    );
}

/// Presentation times of the video frames of `path`, in seconds.
fn frame_times(path: &Path) -> Vec<f64> {
    let out = Process::new("ffprobe")
        .args([
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "frame=pts_time",
            "-of",
            "csv=p=0",
        ])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(',').parse().ok())
        .collect()
}

/// The RGB colour of one pixel of the first frame.
fn first_frame_pixel(path: &Path, x: u32, y: u32) -> [u8; 3] {
    let out = Process::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args([
            "-frames:v",
            "1",
            "-vf",
            &format!("crop=2:2:{x}:{y}"),
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ])
        .output()
        .unwrap();
    out.stdout[..3].try_into().unwrap()
}

#[tokio::test]
async fn progress_and_step_are_reported_while_processing() {
    let app = spawn_app().await;
    let src = app.fixtures.add("long.mp4", mp4("480x360", 25, 10.0, true));
    let id = app.create_edit(edit(&src, &["video-to-webm"], None)).await;
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut seen = Vec::new();
    let doc = loop {
        let doc: Value = app.get_edit(&id).await.json().await.unwrap();
        let attributes = &doc["attributes"];
        match attributes["status"].as_str().unwrap() {
            "processing" => {
                let progress = attributes["progress"].as_f64().unwrap();
                if let Some(&last) = seen.last() {
                    assert!(
                        progress >= last,
                        "progress went back: {seen:?} then {progress}"
                    );
                }
                if progress > 0.0 && progress < 1.0 && attributes["step"]["name"] == "video-to-webm"
                {
                    assert_eq!(
                        attributes["step"],
                        json!({ "asset": 0, "command": 0, "name": "video-to-webm" })
                    );
                }
                seen.push(progress);
            }
            "done" | "failed" => break doc,
            _ => {}
        }
        assert!(Instant::now() < deadline, "edit still running");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(doc["attributes"]["status"], "done", "{doc}");
    assert!(doc["attributes"].get("progress").is_none());
    assert!(doc["attributes"].get("step").is_none());
    // Fetch is the first third, the command the second, store the last: a value
    // strictly inside the command's third came from ffmpeg's own reports.
    assert!(
        seen.iter()
            .any(|p| *p > 1.0 / 3.0 + 0.01 && *p < 2.0 / 3.0 - 0.01),
        "no progress from within the command: {seen:?}"
    );
}
