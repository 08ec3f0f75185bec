use super::*;
use crate::media::testutil::clip_with_cuts;
use crate::media::testutil::media;
use crate::media::video::chunked::sizes::video_lead;
use crate::media::video::scenes::change::cuts;

#[test]
fn a_part_starts_just_after_the_keyframe_nearest_its_share() {
    let keys: Vec<u64> = (0..30).map(|k| k * 60).collect();
    // Its share starts at 900, a keyframe: it starts at 901, sought from 900.
    let parts = plan(Some((60.0, 0.0)), 30.0, (2, 600.0, &keys));
    assert_eq!(parts[1].start, 901);
    assert_eq!(parts[1].seek, Some(900.75 / 30.0));
    assert_eq!(parts[0].seconds, 900.75 / 30.0);
    // Keyframes at 0 and 880 only: 881. Three parts of 600 frames: 600 has none
    // within 150 frames and stays; 1200 starts after 1300.
    let parts = plan(Some((60.0, 0.0)), 30.0, (2, 600.0, &[0, 880]));
    assert_eq!(parts[1].start, 881);
    let three = plan(Some((60.0, 0.0)), 30.0, (3, 600.0, &[0, 880, 1300]));
    let starts: Vec<u64> = three.iter().map(|p| p.start).collect();
    assert_eq!(starts, [0, 600, 1301]);
}

#[test]
fn a_long_video_is_cut_into_a_part_a_core() {
    let parts = plan(Some((60.0, 0.0)), 30.0, (2, 600.0, &[]));
    let boundary = 899.75 / 30.0;
    assert_eq!(
        parts,
        vec![
            Part {
                start: 0,
                seek: None,
                seconds: boundary,
                threads: Some(1),
            },
            Part {
                start: 900,
                seek: Some(boundary),
                seconds: 600.0 - boundary,
                threads: Some(1),
            },
        ]
    );
    assert_eq!(parts[1].options(), ["-threads", "1", "-ss", "29.991667"]);
    // Ten seconds a part at least; the cores left over go to each part's decoder.
    let many = plan(Some((60.0, 0.0)), 30.0, (16, 600.0, &[]));
    let starts: Vec<u64> = many.iter().map(|p| p.start).collect();
    assert_eq!(starts, [0, 300, 600, 900, 1200, 1500]);
    assert!(many.iter().all(|p| p.threads == Some(2)));
    // A video that starts after its file (Matroska's AAC priming): seeks move with it.
    let led = plan(Some((60.0, 0.023)), 30.0, (2, 600.0, &[]));
    assert!((led[1].seek.unwrap() - (0.023 + boundary)).abs() < 1e-9);
    assert!((led[0].seconds - (0.023 + boundary)).abs() < 1e-9);
}

#[test]
fn a_short_or_unseekable_video_is_one_ffmpeg_run() {
    let whole = vec![Part {
        start: 0,
        seek: None,
        seconds: 600.0,
        threads: None,
    }];
    assert_eq!(plan(Some((19.0, 0.0)), 30.0, (16, 600.0, &[])), whole);
    assert_eq!(plan(None, 30.0, (16, 600.0, &[])), whole);
    assert_eq!(plan(Some((60.0, 0.0)), 30.0, (1, 600.0, &[])), whole);
    assert!(whole[0].options().is_empty());
}

#[test]
fn joined_parts_measure_the_change_across_each_seam() {
    let part = |start, pictures: &[u8]| {
        let mut a = Analysis::starting_at(start);
        for &p in pictures {
            a.frame(&vec![p; SIDE * SIDE * 3], 1);
        }
        a
    };
    // The second part read one frame short: its last picture is held to the third's
    // start. The third's first change is to that picture.
    let joined = join(vec![
        part(0, &[10, 10, 10]),
        part(3, &[200, 200]),
        part(6, &[0, 0]),
    ]);
    assert_eq!(joined.changes.len(), 8);
    assert_eq!(&joined.changes[..3], [0.0; 3]);
    assert!(joined.changes[3] > 60.0, "{:?}", joined.changes);
    assert_eq!(joined.changes[5], 0.0);
    assert!(joined.changes[6] > 60.0, "{:?}", joined.changes);
    let scored: Vec<u64> = joined.scored.iter().map(|(i, _)| *i).collect();
    assert_eq!(scored, [0, 1, 2, 3, 4, 6, 7]);
    // One that read a frame too many is cut at the next part's start.
    let overlapping = join(vec![part(0, &[10, 10, 10, 10]), part(3, &[200])]);
    assert_eq!(overlapping.changes.len(), 4);
    assert!(overlapping.changes[3] > 60.0);
}

#[tokio::test]
async fn the_parts_see_the_whole_run_s_pictures_frame_for_frame() {
    let dir = tempfile::tempdir().unwrap();
    // 25 fps, one keyframe at the start (x264's `-g 250`) and at each cut: the parts
    // seek back to a keyframe and decode forward to their first frame.
    let clip = clip_with_cuts(dir.path(), (160, 120), [2.4, 2.4, 2.4], "ultrafast");
    let media = media();
    let whole = plan(None, 25.0, (1, 600.0, &[]));
    let thirds = starting_at(&[0, 37, 131], (25.0, 0.0), 1, 600.0);
    let read = |parts: Vec<Part>| {
        let media = &media;
        let clip = &clip;
        async move {
            analyse_parts(media, clip, 25_000, &parts, &|| {})
                .await
                .unwrap()
        }
    };
    let (one, three) = (read(whole).await, read(thirds).await);
    assert_eq!(one.changes.len(), 180);
    assert_eq!(three.changes, one.changes);
    assert_eq!(three.scored, one.scored);
    assert_eq!(cuts(&three.changes, 27.0), [60, 120]);
}

#[tokio::test]
async fn a_long_clip_is_read_in_parts_with_the_whole_run_s_changes() {
    let dir = tempfile::tempdir().unwrap();
    let clip = clip_with_cuts(dir.path(), (160, 120), [8.0, 8.0, 8.0], "ultrafast");
    let media = media();
    let info = crate::media::video::inspect::read_info(&media, &clip)
        .await
        .unwrap();
    let lead = video_lead(&media, &clip).await;
    assert_eq!(lead, Some(0.0));
    let planned = plan(info.duration.zip(lead), 25.0, (cores(), 600.0, &[]));
    assert_eq!(planned.len(), cores().min(2), "{planned:?}");
    let frames = AtomicU64::new(0);
    let count = || {
        frames.fetch_add(1, Ordering::Relaxed);
    };
    let one_run = plan(None, 25.0, (1, 600.0, &[]));
    let whole = analyse_parts(&media, &clip, 25_000, &one_run, &count);
    let whole = whole.await.unwrap();
    let progress = |_: f64| {};
    let parts = analyse(&media, &clip, &info, (25_000, lead, &[]), &progress);
    let parts = parts.await.unwrap();
    assert_eq!(frames.load(Ordering::Relaxed), 600);
    assert_eq!(parts.changes, whole.changes);
    assert_eq!(cuts(&parts.changes, 27.0), [200, 400]);
}
