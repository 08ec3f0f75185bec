//! `video-to-hls` in chunks through the whole service, held to the ladder of an app that
//! never splits (`--min-chunk-work 0`): the same playlists, every frame of every
//! rendition once at the same times, each segment starting where the one before ended,
//! the same audio, and a size within 5 % (docs/API.md, "HLS and storyboards").

use crate::clips;
use crate::helpers::*;
use crate::hls::app_chunking_ladders;

/// One rendition as a player fetches it: its `EXTINF` lines, and each segment's
/// packets (stream 0 the video, 1 the audio) as (stream, pts) after its init section.
struct Rendition {
    resolution: String,
    lengths: Vec<String>,
    segments: Vec<Vec<(u32, f64)>>,
    bytes: usize,
}

async fn text(url: &str) -> String {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    response.text().await.unwrap()
}

async fn bytes(url: &str) -> Vec<u8> {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    response.bytes().await.unwrap().to_vec()
}

fn packets(file: &std::path::Path) -> Vec<(u32, f64)> {
    let entries = ["-show_entries", "packet=stream_index,pts_time"];
    clips::ffprobe_csv(file, &entries)
        .iter()
        .map(|l| {
            let (stream, pts) = l.split_once(',').unwrap();
            (stream.parse().unwrap(), pts.parse().unwrap())
        })
        .collect()
}

/// Every rendition of the stream at `master_url`, fetched as a player would.
async fn renditions(master_url: &str) -> Vec<Rendition> {
    let master = text(master_url).await;
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    let mut lines = master.lines();
    while let Some(line) = lines.next() {
        let Some(attributes) = line.strip_prefix("#EXT-X-STREAM-INF:") else {
            continue;
        };
        let resolution = attributes
            .split(',')
            .find_map(|a| a.strip_prefix("RESOLUTION="));
        let playlist = text(lines.next().unwrap()).await;
        let map = playlist
            .lines()
            .find_map(|l| l.strip_prefix("#EXT-X-MAP:URI=\""))
            .map(|l| l.trim_end_matches('"'))
            .expect("an init section");
        let init = bytes(map).await;
        let mut rendition = Rendition {
            resolution: resolution.unwrap().to_string(),
            lengths: Vec::new(),
            segments: Vec::new(),
            bytes: init.len(),
        };
        for line in playlist.lines() {
            if line.starts_with("#EXTINF:") {
                rendition.lengths.push(line.to_string());
            } else if line.starts_with("http") {
                let segment = bytes(line).await;
                rendition.bytes += segment.len();
                let file = dir.path().join("segment.mp4");
                std::fs::write(&file, [init.clone(), segment].concat()).unwrap();
                rendition.segments.push(packets(&file));
            }
        }
        out.push(rendition);
    }
    out
}

/// The video's presentation times of each segment, in order.
fn video_times(rendition: &Rendition) -> Vec<Vec<f64>> {
    let times = rendition.segments.iter().map(|segment| {
        let mut times: Vec<f64> = segment.iter().filter(|p| p.0 == 0).map(|p| p.1).collect();
        times.sort_by(f64::total_cmp);
        times
    });
    times.collect()
}

fn audio_times(rendition: &Rendition) -> Vec<f64> {
    let all = rendition.segments.concat();
    all.iter().filter(|p| p.0 == 1).map(|p| p.1).collect()
}

#[tokio::test]
async fn a_ladder_in_chunks_plays_like_the_single_process_ladder() {
    // 854x480 at 25 fps, 7 s: the 480p and 360p rungs, two segments each; chunks of one
    // pixel-frame or more cut it between the segments on any machine of two cores.
    let clip = clips::clip("854x480", 25, 7.0, true, "mp4");
    let mut streams = Vec::new();
    for min_chunk_work in [1, 0] {
        let app = app_chunking_ladders(min_chunk_work).await;
        let src = app.fixtures.add("a.mp4", clip.clone());
        let doc = app.run_done(edit(&src, &["video-to-hls"], None)).await;
        let master_url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
        streams.push(renditions(master_url).await);
    }
    let (chunked, whole) = (&streams[0], &streams[1]);
    assert_eq!(chunked.len(), 2);
    for (ours, theirs) in chunked.iter().zip(whole) {
        assert_eq!(ours.resolution, theirs.resolution);
        assert_eq!(ours.lengths, theirs.lengths, "the same segments");
        assert_eq!(ours.lengths.len(), 2, "{:?}", ours.lengths);
        let times = video_times(ours);
        assert_eq!(
            times,
            video_times(theirs),
            "{}: the same frame times",
            ours.resolution
        );
        assert_eq!(times.concat().len(), 175, "every frame once");
        for pair in times.windows(2) {
            let end = pair[0].last().unwrap() + 0.04;
            assert!((pair[1][0] - end).abs() < 1e-3, "continuous: {pair:?}");
        }
        let audio = audio_times(ours);
        assert_eq!(audio, audio_times(theirs), "the same audio");
        assert!(*audio.last().unwrap() > 6.9, "{audio:?}");
        let ratio = ours.bytes as f64 / theirs.bytes as f64;
        assert!(
            (ratio - 1.0).abs() <= 0.05,
            "{} vs {}",
            ours.bytes,
            theirs.bytes
        );
    }
}
