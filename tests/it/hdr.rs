//! HDR sources (docs/API.md, "HDR sources"): 10-bit HLG and PQ clips through every
//! 8-bit output come out tone-mapped — the first frame within mean ΔE2000 5 of the same
//! frame through ffmpeg's reference chain (zscale → linear → tonemap hable → BT.709),
//! where reading the samples as BT.709 is far from it — and the video outputs are
//! tagged BT.709; `keepHdr` keeps 10-bit HDR tagged as the source.

use serde_json::{json, Value};

use crate::clips::ffmpeg;
use crate::delta_e::mean_delta_e;
use crate::helpers::*;

/// The fixtures' size: every output compared is decoded at it.
const SIZE: (u32, u32) = (192, 128);

/// The reference tone mapping, as the issue states it.
const REFERENCE: &str = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,\
    tonemap=tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p";

/// A 1 s, 10 fps, 192×128 test pattern as 10-bit BT.2020 video with the HDR transfer
/// `trc` (`arib-std-b67` or `smpte2084`): HEVC in MP4 where ffmpeg has libx265, else
/// VP9 profile 2 in WebM. Returns the bytes and the file name.
fn hdr_clip(trc: &str) -> (Vec<u8>, String) {
    let encoders = std::process::Command::new("ffmpeg")
        .args(["-hide_banner", "-encoders"])
        .output()
        .unwrap();
    let x265 = String::from_utf8_lossy(&encoders.stdout).contains("libx265");
    let (w, h) = SIZE;
    let source = format!("testsrc2=s={w}x{h}:r=10:d=1,format=yuv420p10le");
    let tags = [
        "-color_primaries",
        "bt2020",
        "-color_trc",
        trc,
        "-colorspace",
        "bt2020nc",
        "-color_range",
        "tv",
    ];
    let x265_params =
        format!("log-level=error:colorprim=bt2020:transfer={trc}:colormatrix=bt2020nc");
    let (codec, name): (Vec<&str>, String) = if x265 {
        let args = vec![
            "-c:v",
            "libx265",
            "-x265-params",
            &x265_params,
            "-tag:v",
            "hvc1",
        ];
        (args, format!("{trc}.mp4"))
    } else {
        let args = vec![
            "-c:v",
            "libvpx-vp9",
            "-profile:v",
            "2",
            "-crf",
            "20",
            "-b:v",
            "0",
        ];
        (args, format!("{trc}.webm"))
    };
    let mut args = vec!["-f", "lavfi", "-i", &source];
    args.extend(codec);
    args.extend(tags);
    (ffmpeg(&args, &name), name)
}

/// The first frame of `input` (a path or URL) as RGB24 at [`SIZE`], through `filter`
/// first when given. Run without blocking: the app serving a URL shares the runtime.
async fn first_frame(input: &str, filter: Option<&str>) -> Vec<u8> {
    let (w, h) = SIZE;
    if input.ends_with(".webp") && filter.is_none() {
        return webp_first_frame(input);
    }
    let chain = match filter {
        Some(f) => format!("{f},scale={w}:{h}:flags=bicubic,format=rgb24"),
        None => format!("scale={w}:{h}:flags=bicubic,format=rgb24"),
    };
    let out = tokio::process::Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i", input, "-frames:v", "1"])
        .args(["-vf", &chain, "-f", "rawvideo", "-"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "decoding {input}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), (w * h * 3) as usize, "{input}");
    out.stdout
}

/// The first frame of a WebP, still or animated (which ffmpeg 5.1 cannot decode), as
/// RGB24; WebP's pictures are BT.601 YCbCr, which libwebp's decoder undoes.
fn webp_first_frame(path: &str) -> Vec<u8> {
    use image::AnimationDecoder;
    let bytes = std::fs::read(path).unwrap();
    let decoder = image::codecs::webp::WebPDecoder::new(std::io::Cursor::new(&bytes)).unwrap();
    let rgb = if decoder.has_animation() {
        let frame = decoder.into_frames().next().unwrap().unwrap();
        image::DynamicImage::ImageRgba8(frame.into_buffer()).to_rgb8()
    } else {
        image::load_from_memory(&bytes).unwrap().to_rgb8()
    };
    assert_eq!(rgb.dimensions(), SIZE, "{path}");
    rgb.into_raw()
}

/// ffprobe's first video stream of `input` (a path or URL).
async fn video_of(input: &str) -> Value {
    let out = tokio::process::Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-show_streams"])
        .args(["-of", "json", input])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "probing {input}");
    let probe: Value = serde_json::from_slice(&out.stdout).unwrap();
    probe["streams"][0].clone()
}

fn assert_tagged_bt709(stream: &Value, what: &str) {
    for key in ["color_primaries", "color_transfer", "color_space"] {
        assert_eq!(stream[key], "bt709", "{what}: {key} of {stream}");
    }
}

/// The outputs judged: the command, its options, and what its tags must say: `None`
/// for a picture (no colour tags), `Some(true)` for a video that must be tagged BT.709,
/// `Some(false)` for one that cannot be (Theora in Ogg) and must only not say HDR.
fn outputs() -> Vec<(&'static str, Value, Option<bool>)> {
    vec![
        ("video-poster", json!({"time": 0, "format": "png"}), None),
        ("extract-frames", json!({}), None),
        ("video-to-gif", json!({}), None),
        ("video-preview", json!({"width": 192, "start": 0}), None),
        ("video-to-webm", json!({}), Some(true)),
        ("video-to-webm", json!({"codec": "av1"}), Some(true)),
        ("video-to-ogg", json!({}), Some(false)),
        (
            "trim-video",
            json!({"start": 0, "duration": 0.5}),
            Some(true),
        ),
        ("modify-video-speed", json!({"speed": 2}), Some(true)),
        ("video-to-hls", json!({}), Some(true)),
    ]
}

#[tokio::test]
async fn hlg_and_pq_sources_come_out_of_every_8bit_output_tone_mapped_and_tagged_bt709() {
    let app = spawn_app().await;
    for trc in ["arib-std-b67", "smpte2084"] {
        let (bytes, name) = hdr_clip(trc);
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join(&name);
        std::fs::write(&source, &bytes).unwrap();
        let source = source.to_str().unwrap();
        let reference = first_frame(source, Some(REFERENCE)).await;
        let naive = first_frame(source, None).await;
        let naive_distance = mean_delta_e(&reference, &naive);
        assert!(
            naive_distance > 7.0,
            "{trc}: the fixture must tell them apart ({naive_distance})"
        );
        let src = app.fixtures.add(&name, bytes);
        for (command, options, tagged) in outputs() {
            let doc = app
                .run_done(edit(&src, &[command], Some(options.clone())))
                .await;
            let out = &app.download_all(&doc).await[0];
            let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
            // HLS is read through its master playlist's URL, the rest from the file.
            let input = if command == "video-to-hls" {
                url.to_string()
            } else {
                out.to_str().unwrap().to_string()
            };
            let frame = first_frame(&input, None).await;
            let distance = mean_delta_e(&reference, &frame);
            // The figures of docs/PERFORMANCE.md (`--nocapture`).
            println!(
                "{trc} {command} {options}: mean ΔE2000 {distance:.2}, naive {naive_distance:.2}"
            );
            assert!(
                distance < 5.0,
                "{trc} {command}: mean ΔE {distance:.2} from the reference (naive {naive_distance:.2})"
            );
            let Some(tagged) = tagged else { continue };
            let stream = video_of(&input).await;
            let transfer = stream["color_transfer"].as_str().unwrap_or("");
            assert!(
                !["arib-std-b67", "smpte2084"].contains(&transfer),
                "{trc} {command}: {stream}"
            );
            if tagged {
                assert_tagged_bt709(&stream, &format!("{trc} {command}"));
                assert_eq!(stream["pix_fmt"], "yuv420p", "{trc} {command}");
            }
        }
    }
}

#[tokio::test]
async fn keep_hdr_makes_10bit_vp9_and_hevc_tagged_as_the_source_and_sdr_is_left_as_it_was() {
    let app = spawn_app().await;
    let (bytes, name) = hdr_clip("arib-std-b67");
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join(&name);
    std::fs::write(&source, &bytes).unwrap();
    let src = app.fixtures.add(&name, bytes);
    let doc = app
        .run_done(edit(
            &src,
            &["video-to-webm"],
            Some(json!({"keepHdr": true})),
        ))
        .await;
    let out = &app.download_all(&doc).await[0];
    let path = out.to_str().unwrap();
    let stream = video_of(path).await;
    assert_eq!(stream["codec_name"], "vp9", "{stream}");
    assert_eq!(stream["profile"], "Profile 2", "{stream}");
    assert_eq!(stream["pix_fmt"], "yuv420p10le", "{stream}");
    assert_eq!(stream["color_transfer"], "arib-std-b67", "{stream}");
    assert_eq!(stream["color_primaries"], "bt2020", "{stream}");
    assert_eq!(stream["color_space"], "bt2020nc", "{stream}");
    // Still the source's picture: tone-mapped by the reference, it is the reference.
    let reference = first_frame(source.to_str().unwrap(), Some(REFERENCE)).await;
    let kept = first_frame(path, Some(REFERENCE)).await;
    let distance = mean_delta_e(&reference, &kept);
    assert!(distance < 3.0, "kept HDR: mean ΔE {distance:.2}");

    // HLS: 10-bit HEVC renditions, tagged as the source, named `hvc1` in CODECS.
    let doc = app
        .run_done(edit(
            &src,
            &["video-to-hls"],
            Some(json!({"keepHdr": true})),
        ))
        .await;
    let master_url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let master = reqwest::get(master_url)
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(master.contains("CODECS=\"hvc1.2."), "{master}");
    let stream = video_of(master_url).await;
    assert_eq!(stream["codec_name"], "hevc", "{stream}");
    assert_eq!(stream["pix_fmt"], "yuv420p10le", "{stream}");
    assert_eq!(stream["color_transfer"], "arib-std-b67", "{stream}");
    assert_eq!(stream["color_primaries"], "bt2020", "{stream}");
    let kept = first_frame(master_url, Some(REFERENCE)).await;
    let distance = mean_delta_e(&reference, &kept);
    assert!(distance < 5.0, "kept HDR in HLS: mean ΔE {distance:.2}");

    // An SDR source: keepHdr changes nothing; 8-bit, no BT.709 tags forced on it.
    let sdr = app
        .fixtures
        .add("sdr.mp4", crate::clips::mp4("192x128", 10, 1.0, false));
    let doc = app
        .run_done(edit(
            &sdr,
            &["video-to-webm"],
            Some(json!({"keepHdr": true})),
        ))
        .await;
    let out = &app.download_all(&doc).await[0];
    let stream = video_of(out.to_str().unwrap()).await;
    assert_eq!(stream["pix_fmt"], "yuv420p", "{stream}");
}

#[tokio::test]
async fn a_dry_run_reports_an_hdr_source_s_transfer_and_nothing_for_sdr() {
    let app = spawn_app().await;
    let (hlg, hlg_name) = hdr_clip("arib-std-b67");
    let (pq, pq_name) = hdr_clip("smpte2084");
    let sdr = crate::clips::mp4("192x128", 10, 1.0, false);
    for (name, bytes, expected) in [
        (hlg_name.as_str(), hlg, json!("hlg")),
        (pq_name.as_str(), pq, json!("pq")),
        ("sdr.mp4", sdr, Value::Null),
    ] {
        let src = app.fixtures.add(name, bytes);
        let response = app
            .client
            .post(format!("{}/v1/edits?dryRun=true", app.base))
            .bearer_auth(&app.token)
            .json(&edit(&src, &["video-to-webm"], None))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{name}");
        let plan: Value = response.json().await.unwrap();
        let asset = &plan["attributes"]["assets"][0];
        assert_eq!(asset["hdr"], expected, "{name}: {plan}");
        assert_eq!(asset["width"], 192, "{name}: {plan}");
    }
}

#[tokio::test]
async fn a_done_edit_reports_hdr_on_the_hdr_asset_and_nothing_on_the_sdr_one() {
    let app = spawn_app().await;
    let (pq, pq_name) = hdr_clip("smpte2084");
    let hdr = app.fixtures.add(&pq_name, pq);
    let sdr = app
        .fixtures
        .add("plain.mp4", crate::clips::mp4("192x128", 10, 1.0, false));
    let doc = app
        .run_done(json!({
            "assets": [{"type": "video", "src": hdr}, {"type": "video", "src": sdr}],
            "commands": ["video-poster"],
        }))
        .await;
    let assets = &doc["attributes"]["assets"];
    assert_eq!(assets[0]["hdr"], "pq", "{doc}");
    assert_eq!(assets[1].get("hdr"), None, "{doc}");
    // The request as sent is otherwise echoed unchanged.
    assert_eq!(assets[1]["src"], json!(sdr), "{doc}");
}
