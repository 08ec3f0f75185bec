use super::*;

fn sizes(shown: (u32, u32)) -> Vec<(u32, u32)> {
    ladder(shown).iter().map(|r| r.size).collect()
}

#[test]
fn the_ladder_never_rises_above_the_source_and_always_has_a_rung() {
    assert_eq!(
        sizes((1920, 1080)),
        [(1920, 1080), (1280, 720), (854, 480), (640, 360)]
    );
    assert_eq!(sizes((1280, 720)), [(1280, 720), (854, 480), (640, 360)]);
    assert_eq!(sizes((1000, 600)), [(800, 480), (600, 360)]);
    // Portrait: rungs by the short side, so no rung is taller than the source.
    assert_eq!(sizes((720, 1280)), [(720, 1280), (480, 854), (360, 640)]);
    // Under 360p: the source's own size, made even.
    assert_eq!(sizes((321, 241)), [(322, 242)]);
    for shown in [(1920, 1080), (64, 48), (720, 1280), (4000, 3000)] {
        let rungs = ladder(shown);
        assert!(!rungs.is_empty());
        assert!(rungs.iter().all(|r| r.size.1 <= shown.1.max(2) + 1));
    }
}

fn h264(rungs: Vec<Rung>) -> Vec<(VideoCodec, Rung)> {
    rungs.into_iter().map(|r| (VideoCodec::H264, r)).collect()
}

fn source(has_audio: bool) -> VideoInfo {
    crate::media::video::info::tests::info(Some(25.0), has_audio)
}

#[test]
fn one_decode_is_split_into_every_rung_in_one_hls_muxer() {
    let rungs = h264(ladder((1920, 1080)));
    let dir = Path::new("/tmp/x");
    let recipe = recipe(&rungs, (&source(true), false), 2, dir);
    let args = recipe.whole().join(" ");
    assert!(args.contains("split=4[s0][s1][s2][s3]"), "{args}");
    assert!(args.contains("[s3]scale=640:360"), "{args}");
    assert!(
        args.contains("-maxrate:v:0 5000k -bufsize:v:0 10000k"),
        "{args}"
    );
    assert!(args.contains("-hls_segment_type fmp4"), "{args}");
    assert!(
        args.contains("-var_stream_map v:0,a:0 v:1,a:1 v:2,a:2 v:3,a:3"),
        "{args}"
    );
    assert_eq!(args.matches("-map 0:a:0").count(), 4, "{args}");
    // 6 s at 25 fps: chunks are cut between segments, every 150 frames.
    assert_eq!(recipe.segment_frames, Some(150));
    assert_eq!(recipe.lead_in, 50);
    let silent = super::recipe(&rungs[3..], (&source(false), false), 2, dir)
        .whole()
        .join(" ");
    assert!(silent.contains("-var_stream_map v:0"), "{silent}");
    assert!(!silent.contains("-c:a"), "{silent}");
}

#[test]
fn only_rates_with_whole_frames_between_keyframes_are_split() {
    assert_eq!(segment_frames(Some(30.0), 2), Some(180));
    assert_eq!(segment_frames(Some(12.5), 2), Some(75));
    assert_eq!(segment_frames(Some(30000.0 / 1001.0), 2), None);
    assert_eq!(segment_frames(None, 2), None);
}

#[test]
fn the_cost_counts_every_rung_s_encoding_besides_the_decode() {
    let work = Work {
        pixels: 1920 * 1080,
        frames: 10,
    };
    let cost = VideoToHls::cost(work, &Options::default());
    assert!(cost > work.total() * 2, "{cost}");
}

#[test]
fn codecs_are_h264_by_default_av1_by_codec_alone_and_both_in_order() {
    let of = |pairs: &[(&'static str, serde_json::Value)]| codecs(&Options::of(pairs));
    assert_eq!(of(&[]), [VideoCodec::H264]);
    assert_eq!(of(&[("codec", "av1".into())]), [VideoCodec::Av1]);
    let both = serde_json::json!(["h264", "av1"]);
    assert_eq!(of(&[("codecs", both)]), [VideoCodec::H264, VideoCodec::Av1]);
    assert_eq!(
        of(&[("codecs", serde_json::json!(["av1"]))]),
        [VideoCodec::Av1]
    );
    let vp9 = Options::of(&[("codec", "vp9".into())]);
    assert!(VideoToHls::check(&vp9).is_err());
    assert!(VideoToHls::check(&Options::default()).is_ok());
}

#[test]
fn both_ladders_come_from_one_decode_each_rendition_with_its_own_encoder() {
    let rungs: Vec<(VideoCodec, Rung)> = [VideoCodec::H264, VideoCodec::Av1]
        .into_iter()
        .flat_map(|c| ladder((1280, 720)).into_iter().map(move |r| (c, r)))
        .collect();
    let h264_alone = recipe(
        &h264(ladder((1280, 720))),
        (&source(true), false),
        2,
        Path::new("/tmp/x"),
    );
    let recipe = recipe(&rungs, (&source(true), false), 2, Path::new("/tmp/x"));
    let args = recipe.whole().join(" ");
    assert!(args.contains("split=6[s0][s1][s2][s3][s4][s5]"), "{args}");
    assert!(
        args.contains("-c:v:0 libx264 -preset:v:0 veryfast -crf:v:0 23 -maxrate:v:0 2800k"),
        "{args}"
    );
    // 2 s at 25 fps between keyframes; no rate cap (SVT-AV1 here has none).
    assert!(
        args.contains("-c:v:3 libsvtav1 -preset:v:3 10 -crf:v:3 35 -g:v:3 50 -c:v:4"),
        "{args}"
    );
    assert!(!args.contains("-maxrate:v:3"), "{args}");
    assert!(args.contains("v:5,a:5"), "{args}");
    // AV1 is cut into chunks as H.264 is: at the segments of an H.264 ladder alone.
    assert!(recipe.segment_frames.is_some());
    assert_eq!(recipe.segment_frames, h264_alone.segment_frames);
}

#[test]
fn a_still_video_s_keyframes_fall_at_segments_and_its_chunks_lead_in_by_one() {
    let rungs = h264(ladder((640, 360)));
    let recipe = recipe(&rungs, (&source(true), false), 6, Path::new("/tmp/x"));
    let args = recipe.whole().join(" ");
    assert!(args.contains("expr:gte(t,n_forced*6)"), "{args}");
    assert_eq!((recipe.segment_frames, recipe.lead_in), (Some(150), 150));
}
