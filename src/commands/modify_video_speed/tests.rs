use super::*;
use crate::media::video::info::tests::info;

/// An H.264 source at `rate` that can be shown as stored.
fn h264(rate: f64) -> VideoInfo {
    VideoInfo {
        codec: Some("h264".into()),
        pix_fmt: Some("yuv420p".into()),
        shown_as_stored: true,
        ..info(Some(rate), true)
    }
}

#[test]
fn only_a_stream_the_output_can_keep_is_copied() {
    assert!(can_copy_video(2.0, &h264(25.0)));
    assert!(can_copy_video(0.1, &h264(25.0)));
    assert!(!can_copy_video(4.0, &h264(25.0)), "100 fps is past 60");
    let mut other = h264(25.0);
    other.codec = Some("hevc".into());
    assert!(!can_copy_video(2.0, &other));
    let mut ten_bit = h264(25.0);
    ten_bit.pix_fmt = Some("yuv420p10le".into());
    assert!(!can_copy_video(2.0, &ten_bit));
    let mut turned = h264(25.0);
    turned.shown_as_stored = false;
    assert!(!can_copy_video(2.0, &turned));
    let mut odd = h264(25.0);
    odd.height = 61;
    assert!(!can_copy_video(2.0, &odd));
    let mut unknown = h264(25.0);
    (unknown.frame_rate, unknown.base_rate) = (None, None);
    assert!(!can_copy_video(2.0, &unknown));
}

#[test]
fn a_copy_scales_every_time_and_the_last_duration_and_encodes_only_the_audio() {
    let recipe = copy_recipe(2.0, &h264(25.0));
    assert_eq!(recipe.input_options, ["-itsscale:v:0", "0.5"]);
    let args = recipe.output_options.join(" ");
    assert!(args.contains("-map 0:v:0 -map 0:a:0 -c:v copy"), "{args}");
    assert!(
        args.contains("setts=pts=PTS:dts=DTS:duration=DURATION*0.5"),
        "{args}"
    );
    assert!(args.contains("-af atempo=2 -c:a aac"), "{args}");
    assert!(!args.contains("libx264"), "{args}");
    assert!(args.ends_with("-movflags +faststart -f mp4"), "{args}");
}

#[test]
fn atempo_chain_keeps_each_factor_within_half_and_double() {
    assert_eq!(atempo_chain(1.0), Vec::<f64>::new());
    assert_eq!(atempo_chain(1.5), [1.5]);
    assert_eq!(atempo_chain(2.0), [2.0]);
    assert_eq!(atempo_chain(4.0), [2.0, 2.0]);
    assert_eq!(atempo_chain(16.0), [2.0, 2.0, 2.0, 2.0]);
    assert_eq!(atempo_chain(3.0), [2.0, 1.5]);
    assert_eq!(atempo_chain(0.5), [0.5]);
    assert_eq!(atempo_chain(0.25), [0.5, 0.5]);
    assert_eq!(atempo_chain(0.1), [0.5, 0.5, 0.5, 0.8]);
    for speed in [0.1, 0.13, 0.3, 0.7, 1.9, 2.5, 7.3, 15.9, 16.0] {
        let chain = atempo_chain(speed);
        assert!(chain.iter().all(|f| (0.5..=2.0).contains(f)), "{speed}");
        let product: f64 = chain.iter().product();
        assert!((product - speed).abs() < 1e-5, "{speed}: {chain:?}");
    }
}

#[test]
fn only_a_re_encode_that_keeps_every_frame_is_cut_and_its_chunks_fall_on_the_fps_grid() {
    // 25 fps at 1.5: 37.5 fps, one out for one in; a chunk of 25 source frames lasts
    // 25 / 37.5 s.
    let scale = chunk_time_scale(1.5, &info(Some(25.0), true)).unwrap();
    assert!((scale - 25.0 / 37.5).abs() < 1e-12, "{scale}");
    // 29.97 fps at 1.3: the grid is fps's rate, rounded to a thousandth (38.961).
    let ntsc = info(Some(30000.0 / 1001.0), false);
    let scale = chunk_time_scale(1.3, &ntsc).unwrap();
    let frame = scale / (30000.0 / 1001.0);
    assert!((frame - 1.0 / 38.961).abs() < 1e-12, "{frame}");
    // 25 fps at 4 is 100 fps, lowered to 60 by dropping frames: whole.
    assert_eq!(chunk_time_scale(4.0, &info(Some(25.0), true)), None);
    // A variable rate keeps its own times: whole.
    let mut vfr = info(Some(15.6), false);
    vfr.base_rate = Some(25.0);
    assert_eq!(chunk_time_scale(2.0, &vfr), None);
    assert_eq!(chunk_time_scale(2.0, &info(None, false)), None);
    // The chunked recipe is the single-process one.
    let media = crate::media::testutil::media();
    let recipe = encode_recipe(&media, 1.5, &info(Some(25.0), true), 0.6);
    assert_eq!(
        recipe.whole(),
        modify_speed_args(1.5, &info(Some(25.0), true))
    );
}

#[test]
fn modify_speed_retimes_video_and_audio_and_caps_the_frame_rate() {
    let args = modify_speed_args(4.0, &info(Some(25.0), true)).join(" ");
    assert!(args.contains("-map 0:v:0 -map 0:a:0"), "{args}");
    assert!(args.contains("setpts=PTS/4,fps=60/1,scale="), "{args}");
    assert!(args.contains("-af atempo=2,atempo=2 -c:a aac"), "{args}");
    assert!(args.ends_with("-movflags +faststart -f mp4"), "{args}");

    let args = modify_speed_args(0.5, &info(Some(25.0), false)).join(" ");
    assert!(args.contains("setpts=PTS/0.5,fps=25/2,scale="), "{args}");
    assert!(!args.contains("-enc_time_base"), "{args}");
    // A variable rate keeps its frame times.
    let mut vfr = info(Some(15.6), false);
    vfr.base_rate = Some(25.0);
    let args = modify_speed_args(2.0, &vfr).join(" ");
    assert!(args.contains("setpts=PTS/2,scale="), "{args}");
    assert!(args.contains("-fps_mode vfr -enc_time_base -1"), "{args}");
    assert!(!args.contains("0:a") && !args.contains("-af") && !args.contains("aac"));
    // Speed 1 needs no tempo change.
    let args = modify_speed_args(1.0, &info(Some(25.0), true)).join(" ");
    assert!(
        !args.contains("atempo") && args.contains("-c:a aac"),
        "{args}"
    );
}
