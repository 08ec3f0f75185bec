//! What the ladder-in-chunks tests share: a recipe, the two-chunk plan of a 200-frame
//! clip, output folders, and each segment's packets as ffprobe reads them.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::media::video::hls::MediaPlaylist;

/// A ladder of `renditions` made by `graph` and encoded by `video`, with AAC audio,
/// written by `muxer`: 6 s segments at 25 fps, led in by a 2 s key-frame interval.
pub(super) fn ladder_recipe(
    graph: &str,
    renditions: usize,
    video: &str,
    muxer: Vec<String>,
) -> LadderRecipe {
    LadderRecipe {
        graph: graph.into(),
        renditions,
        video: video.split_whitespace().map(String::from).collect(),
        audio: "-c:a aac -b:a 128k -ac 2"
            .split(' ')
            .map(String::from)
            .collect(),
        muxer,
        segment_frames: Some(150),
        lead_in: 50,
        burn: None,
    }
}

/// A 200-frame clip at 25 fps cut between its 6 s segments, at frame 150.
pub(super) fn two_chunks() -> Plan {
    let chunk = |index, start, count| Chunk {
        index,
        start,
        count,
        last: index == 1,
    };
    Plan {
        chunks: vec![chunk(0, 0, 150), chunk(1, 150, 50)],
        rate: 25.0,
        frames: 200,
        time_scale: 1.0,
    }
}

/// `source` (described by `info`) encoded twice under `root` by the ladder `recipe`
/// makes for a folder: whole, in one process without a segment grid, into `whole/`,
/// then in the chunks of [`two_chunks`] into `chunked/`, their progress told to
/// `report`. The two folders, and whether the chunks' frames added up.
pub(super) async fn whole_and_chunked(
    media: &Media,
    (source, info): (&MediaFile, &VideoInfo),
    root: &Path,
    recipe: impl Fn(&Path) -> LadderRecipe,
    report: ProgressFn<'_>,
) -> (PathBuf, PathBuf, bool) {
    let output = |dir: &Path| dir.join("v%v").join("index.m3u8");
    let whole_dir = out(root, "whole");
    let whole = LadderRecipe {
        segment_frames: None,
        ..recipe(&whole_dir)
    };
    encode(
        media,
        (source, info),
        &whole,
        root,
        &output(&whole_dir),
        &|_| {},
    )
    .await
    .unwrap();
    let plan = two_chunks();
    let chunked_dir = out(root, "chunked");
    let recipe = recipe(&chunked_dir);
    let ladder = Ladder {
        media,
        input: source,
        recipe: &recipe,
        plan: &plan,
    };
    let added_up = ladder
        .run(root, &output(&chunked_dir), report)
        .await
        .unwrap();
    (whole_dir, chunked_dir, added_up)
}

/// A directory for a ladder's output, with its rungs' folders.
pub(super) fn out(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    for i in 0..2 {
        std::fs::create_dir_all(dir.join(format!("v{i}"))).unwrap();
    }
    dir
}

/// One rendition's packets, segment by segment: (stream index, pts) in file order.
pub(super) fn segments(rung: &Path) -> Vec<Vec<(u32, f64)>> {
    let playlist = std::fs::read_to_string(rung.join("index.m3u8")).unwrap();
    let playlist = MediaPlaylist::parse(&playlist);
    let init = std::fs::read(rung.join(playlist.map.unwrap())).unwrap();
    let mut out = Vec::new();
    for segment in &playlist.segments {
        let mut bytes = init.clone();
        bytes.extend(std::fs::read(rung.join(&segment.uri)).unwrap());
        let whole = rung.join("probe.mp4");
        std::fs::write(&whole, bytes).unwrap();
        let probe = Command::new("ffprobe")
            .args([
                "-v",
                "error",
                "-show_entries",
                "packet=stream_index,pts_time",
            ])
            .args(["-of", "csv=p=0"])
            .arg(&whole)
            .output()
            .unwrap();
        assert!(probe.status.success());
        let packets = String::from_utf8(probe.stdout).unwrap();
        let packets = packets.lines().map(|l| {
            let (stream, pts) = l.trim_end_matches(',').split_once(',').unwrap();
            (stream.parse().unwrap(), pts.parse().unwrap())
        });
        out.push(packets.collect());
        std::fs::remove_file(whole).unwrap();
    }
    out
}
