//! The ladder in chunks against the single-process ladder of the same recipe, on a
//! clip with scene cuts and audio, by what ffprobe and ffmpeg's SSIM filter say.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use super::test_support::{ladder_recipe, out, segments, two_chunks, whole_and_chunked};
use super::*;
use crate::media::testutil::clip_with_cuts;
use crate::media::testutil::{media, tempdir};
use crate::media::video::chunked::join::audio_input_at;
use crate::media::video::chunked::tests::{audio_delayed, ssim};
use crate::media::video::hls::{variants, MediaPlaylist};
use crate::media::MediaFormat;

/// An 854x480 clip at 25 fps with two hard scene cuts and a tone from 0.3 s: 8 s, 200
/// frames. The noise at its end, which the rate cap holds back, runs across the cut
/// between the chunks at 6 s: the chunk after it must not spend a fresh rate buffer
/// there.
fn clip(dir: &Path) -> MediaFile {
    let clip = clip_with_cuts(dir, (854, 480), [3.0, 2.6, 2.4], "ultrafast");
    // Its sound begins 0.3 s after its picture, and must keep that gap.
    audio_delayed(&clip, 0.3)
}

/// Two rungs (480p, 360p) as `video-to-hls` makes them, written into `dir`; x264 on
/// one thread, because its frame threads make the rate cap's decisions vary from run
/// to run (by 2-3 % in size on this clip under load), and the sizes must compare the
/// chunking alone.
fn recipe(dir: &Path) -> LadderRecipe {
    let graph = "format=yuv420p,split=2[s0][s1];[s0]scale=854:480,setsar=1[v0];\
                 [s1]scale=640:360,setsar=1[v1]";
    let video = "-c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p -maxrate:v:0 1400k \
                 -bufsize:v:0 2800k -maxrate:v:1 800k -bufsize:v:1 1600k \
                 -force_key_frames expr:gte(t,n_forced*2) -threads 1";
    let segments = dir.join("v%v").join("seg%d.mp4");
    let mut muxer: Vec<String> = "-f hls -hls_time 6 -hls_playlist_type vod \
        -hls_segment_type fmp4 -hls_flags independent_segments \
        -hls_fmp4_init_filename init.mp4 -master_pl_name master.m3u8 \
        -var_stream_map v:0,a:0+v:1,a:1 -hls_segment_filename"
        .split_whitespace()
        .map(|a| a.replace("+", " "))
        .collect();
    muxer.push(file_url(&segments).to_string_lossy().into_owned());
    ladder_recipe(graph, 2, video, muxer)
}

/// Bytes of every file of a rendition but its playlist.
fn bytes(rung: &Path) -> u64 {
    let files = std::fs::read_dir(rung).unwrap().map(|e| e.unwrap().path());
    let media = files.filter(|p| p.extension().is_some_and(|e| e == "mp4"));
    media.map(|p| std::fs::metadata(p).unwrap().len()).sum()
}

/// A rendition's segments after its init section, as one file.
fn joined(rung: &Path, into: &Path) -> PathBuf {
    let playlist = std::fs::read_to_string(rung.join("index.m3u8")).unwrap();
    let playlist = MediaPlaylist::parse(&playlist);
    let mut bytes = std::fs::read(rung.join(playlist.map.unwrap())).unwrap();
    for segment in &playlist.segments {
        bytes.extend(std::fs::read(rung.join(&segment.uri)).unwrap());
    }
    std::fs::write(into, bytes).unwrap();
    into.to_path_buf()
}

#[tokio::test]
async fn a_ladder_in_chunks_matches_the_single_process_ladder() {
    let root = tempdir();
    let source = clip(root.path());
    let media = media();
    let info = crate::media::video::inspect::inspect(&media, &source, &[MediaFormat::Mp4])
        .await
        .unwrap();
    assert_eq!(info.frames, Some(200));

    // Two chunks, cut between the segments (at 6 s, frame 150).
    let reported = Mutex::new(Vec::new());
    let report = |f: f64| reported.lock().unwrap().push(f);
    let (whole_dir, chunked_dir, ran) =
        whole_and_chunked(&media, (&source, &info), root.path(), recipe, &report).await;
    assert!(ran, "the frames add up");

    // The same playlists, word for word but the variants' stated rates.
    let master = |dir: &Path| std::fs::read_to_string(dir.join("master.m3u8")).unwrap();
    let strip = |text: String| {
        let found = variants(&text);
        let found = found.iter().map(|v| (v.resolution(), v.uri.clone()));
        found.collect::<Vec<_>>()
    };
    assert_eq!(strip(master(&chunked_dir)), strip(master(&whole_dir)));
    for rung in ["v0", "v1"] {
        let (ours, theirs) = (chunked_dir.join(rung), whole_dir.join(rung));
        let playlist = |dir: &Path| std::fs::read_to_string(dir.join("index.m3u8")).unwrap();
        assert_eq!(playlist(&ours), playlist(&theirs), "{rung}");

        // Every frame once, each segment starting where the one before ended, and the
        // audio as long as the single-process one's.
        let (segments, whole_segments) = (segments(&ours), segments(&theirs));
        let video = |segments: &[Vec<(u32, f64)>]| -> Vec<Vec<f64>> {
            let times = segments.iter().map(|s| {
                let mut t: Vec<f64> = s.iter().filter(|p| p.0 == 0).map(|p| p.1).collect();
                t.sort_by(f64::total_cmp);
                t
            });
            times.collect()
        };
        let (times, whole_times) = (video(&segments), video(&whole_segments));
        assert_eq!(times, whole_times, "{rung}: at the single-process times");
        let all: Vec<f64> = times.concat();
        assert_eq!(all.len(), 200, "{rung}");
        assert!(
            all.windows(2).all(|w| (w[1] - w[0] - 0.04).abs() < 1e-3),
            "{all:?}"
        );
        for pair in times.windows(2) {
            let end = pair[0].last().unwrap() + 0.04;
            assert!((pair[1][0] - end).abs() < 1e-3, "{rung}: {pair:?}");
        }
        let audio = |segments: &[Vec<(u32, f64)>]| -> Vec<f64> {
            segments
                .concat()
                .iter()
                .filter(|p| p.0 == 1)
                .map(|p| p.1)
                .collect()
        };
        // The same packets at the same times; where the sound begins late, the audio
        // encoded alone starts up to 1 ms (44 samples) off the single-process one.
        let (sound, whole_sound) = (audio(&segments), audio(&whole_segments));
        assert_eq!(sound.len(), whole_sound.len(), "{rung}");
        let off = sound.iter().zip(&whole_sound).map(|(a, b)| (a - b).abs());
        assert!(off.fold(0.0, f64::max) < 0.002, "{rung}: {sound:?}");
        assert!(*audio(&segments).last().unwrap() > 7.9, "{rung}");

        let (size, whole_size) = (bytes(&ours) as f64, bytes(&theirs) as f64);
        assert!(
            (size / whole_size - 1.0).abs() <= 0.05,
            "{size} vs {whole_size}"
        );
    }
    // The top rung is the source's size: its SSIM against the source.
    let q = ssim(
        &joined(&chunked_dir.join("v0"), &root.path().join("a.mp4")),
        &source.path,
    );
    let whole_q = ssim(
        &joined(&whole_dir.join("v0"), &root.path().join("b.mp4")),
        &source.path,
    );
    assert!(
        (q - whole_q).abs() <= 0.003,
        "SSIM {q} chunked, {whole_q} whole"
    );

    let reported = reported.into_inner().unwrap();
    assert_eq!(reported.last(), Some(&1.0));
    assert!(reported.windows(2).all(|w| w[0] <= w[1]), "{reported:?}");
    // Only the outputs are left: the chunks went with their directory.
    let mut left: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["a.mp4", "b.mp4", "chunked", "cuts.mp4", "late.mp4", "whole"]
    );
}

#[test]
fn a_chunk_encodes_every_rung_of_its_frames_and_the_join_copies_them_to_the_muxer() {
    let recipe = recipe(Path::new("/o"));
    let chunk = Chunk {
        index: 1,
        start: 50,
        count: 100,
        last: false,
    };
    let (before, after) = recipe.chunk(&chunk, 25.0);
    // A lead-in of 50 frames: frames 0..150 encoded, 50..150 kept.
    assert_eq!(before, Vec::<String>::new());
    let after = after.join(" ");
    assert!(
        after.starts_with("-filter_complex [0:v:0]setpts=PTS-STARTPTS,format=yuv420p,split=2"),
        "{after}"
    );
    assert!(
        after.contains("-map [v0] -map [v1] -frames:v 150 -c:v libx264"),
        "{after}"
    );
    assert!(after.ends_with("-f mp4"), "{after}");
    assert!(
        !after.contains("0:a") && !after.contains("-f hls"),
        "{after}"
    );
    let drop = LadderRecipe::drop_lead(50, 25.0, Path::new("/s/lead.mp4"), Path::new("/s/c.mp4"));
    let drop: Vec<String> = drop
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert!(
        drop.join(" ").ends_with(
            "-ss 2.000000 -f mp4 -i file:/s/lead.mp4 -map 0 -c copy -f mp4 file:/s/c.mp4"
        ),
        "{drop:?}"
    );
    let last = Chunk {
        start: 150,
        count: 50,
        last: true,
        ..chunk
    };
    let (before, after) = recipe.chunk(&last, 25.0);
    assert_eq!(before, ["-ss", "3.980000"]);
    assert!(!after.contains(&"-frames:v".to_string()));
    assert_eq!(
        recipe.audio_only().join(" "),
        "-map 0:a:0 -vn -c:a aac -b:a 128k -ac 2 -f mp4"
    );

    let join = recipe.join(
        Path::new("/s/l.txt"),
        Some(audio_input_at(Path::new("/s/a.mp4"), Some(0.452), PIECES)),
        Path::new("/o/x"),
    );
    let join: Vec<String> = join
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let join = join.join(" ");
    assert!(
        join.contains("-f concat -i file:/s/l.txt -itsoffset 0.452000 -f mp4 -i file:/s/a.mp4"),
        "{join}"
    );
    assert!(
        join.contains("-map 0:v:0 -map 0:v:1 -map 1:a:0 -map 1:a:0 -c copy"),
        "{join}"
    );
    assert!(join.contains("-var_stream_map v:0,a:0 v:1,a:1"), "{join}");
    assert!(join.ends_with("file:/o/x"), "{join}");
    // The single-process recipe: the same graph, encoders and muxer, the audio in it.
    let whole = recipe.whole().join(" ");
    assert!(
        whole.starts_with("-filter_complex [0:v:0]format=yuv420p,split=2"),
        "{whole}"
    );
    assert!(
        whole.contains("-map [v0] -map [v1] -map 0:a:0 -map 0:a:0 -c:v libx264"),
        "{whole}"
    );
    assert!(whole.contains("-c:a aac -b:a 128k -ac 2 -f hls"), "{whole}");
}

/// An MPEG-TS with one keyframe (no index to seek back by): a chunk's seek finds nothing
/// to decode, and the count sends the ladder to one process with nothing written.
#[tokio::test]
async fn chunks_that_do_not_add_up_leave_nothing_and_say_so() {
    let root = tempdir();
    let mp4 = clip(root.path());
    let ts = root.path().join("cuts.ts");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-i"])
        .arg(&mp4.path)
        .args(["-c", "copy", "-f", "mpegts"])
        .arg(&ts)
        .status()
        .unwrap();
    assert!(status.success());
    let source = MediaFile {
        path: ts,
        format: MediaFormat::MpegTs,
    };
    let dir = out(root.path(), "chunked");
    let recipe = recipe(&dir);
    let plan = two_chunks();
    let media = media();
    let ladder = Ladder {
        media: &media,
        input: &source,
        recipe: &recipe,
        plan: &plan,
    };
    let output = dir.join("v%v").join("index.m3u8");
    assert!(!ladder.run(root.path(), &output, &|_| {}).await.unwrap());
    for rung in ["v0", "v1"] {
        assert_eq!(std::fs::read_dir(dir.join(rung)).unwrap().count(), 0);
    }
    assert!(!dir.join("master.m3u8").exists());
    let mut left: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    let expected = ["chunked", "cuts.mp4", "cuts.ts", "late.mp4"];
    assert_eq!(left, expected, "the chunks went");
}
