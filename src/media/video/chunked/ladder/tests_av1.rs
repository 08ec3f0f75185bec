//! An AV1 ladder (SVT-AV1 as `video-to-hls` runs it, a key frame every GOP) in
//! chunks against the same recipe in one process: the chunks' frames add up, and
//! the stream has the same playlists and every frame once at the same times.

use std::path::Path;
use std::process::Command;

use super::test_support::{ladder_recipe, segments, whole_and_chunked};
use super::*;
use crate::format::MediaFormat;
use crate::media::testutil::clip_with_cuts;
use crate::media::testutil::{media, tempdir};
use crate::media::video::chunked::tests::audio_delayed;

/// One 320x180 AV1 rung with AAC, its key frames every 2 s by GOP length (50 frames
/// at 25 fps), 6 s fMP4 segments, as `video-to-hls` `codecs: ["av1"]` writes it.
fn recipe(dir: &Path) -> LadderRecipe {
    let video = "-c:v:0 libsvtav1 -preset:v:0 10 -crf:v:0 35 -g:v:0 50 -pix_fmt yuv420p \
                 -force_key_frames expr:gte(t,n_forced*2)";
    let segments = dir.join("v%v").join("seg%d.mp4");
    let mut muxer: Vec<String> = "-f hls -hls_time 6 -hls_playlist_type vod \
        -hls_segment_type fmp4 -hls_flags independent_segments \
        -hls_fmp4_init_filename init.mp4 -master_pl_name master.m3u8 \
        -var_stream_map v:0,a:0 -hls_segment_filename"
        .split_whitespace()
        .map(String::from)
        .collect();
    muxer.push(file_url(&segments).to_string_lossy().into_owned());
    let graph = "format=yuv420p,split=1[s0];[s0]scale=320:180,setsar=1[v0]";
    ladder_recipe(graph, 1, video, muxer)
}

/// The codec of the first video stream of `file`.
fn codec(file: &Path) -> String {
    let probe = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=codec_name", "-of", "csv=p=0"])
        .arg(file)
        .output()
        .unwrap();
    String::from_utf8(probe.stdout).unwrap().trim().to_string()
}

#[tokio::test]
async fn an_av1_ladder_in_chunks_has_the_single_process_segments_and_frames() {
    let root = tempdir();
    let source = clip_with_cuts(root.path(), (320, 180), [3.0, 2.6, 2.4], "ultrafast");
    let source = audio_delayed(&source, 0.3);
    let media = media();
    let info = crate::media::video::inspect::inspect(&media, &source, &[MediaFormat::Mp4])
        .await
        .unwrap();
    assert_eq!(info.frames, Some(200));
    // Two chunks cut between the segments, at 6 s (frame 150), the second with a
    // lead-in of one GOP.
    let (whole_dir, chunked_dir, ran) =
        whole_and_chunked(&media, (&source, &info), root.path(), recipe, &|_| {}).await;
    assert!(ran, "the chunks' frames add up");

    let playlist = |dir: &Path| std::fs::read_to_string(dir.join("v0/index.m3u8")).unwrap();
    assert_eq!(playlist(&chunked_dir), playlist(&whole_dir));
    let video = |dir: &Path| -> Vec<Vec<f64>> {
        let times = segments(&dir.join("v0")).into_iter().map(|s| {
            let mut t: Vec<f64> = s.iter().filter(|p| p.0 == 0).map(|p| p.1).collect();
            t.sort_by(f64::total_cmp);
            t
        });
        times.collect()
    };
    let times = video(&chunked_dir);
    assert_eq!(times.len(), 2, "two segments: {times:?}");
    assert_eq!(times, video(&whole_dir), "at the single-process times");
    let all = times.concat();
    assert_eq!(all.len(), 200);
    assert!(
        all.windows(2).all(|w| (w[1] - w[0] - 0.04).abs() < 1e-3),
        "every frame once, 40 ms apart: {all:?}"
    );
    let init = chunked_dir.join("v0/init.mp4");
    let first = chunked_dir.join("v0/seg0.mp4");
    let joined = root.path().join("joined.mp4");
    let bytes = [std::fs::read(init).unwrap(), std::fs::read(first).unwrap()].concat();
    std::fs::write(&joined, bytes).unwrap();
    assert_eq!(codec(&joined), "av1");
}
