use super::*;
use crate::media::video::info::tests::info;
use serde_json::json;

#[test]
fn end_and_duration_are_not_given_together_and_end_comes_after_start() {
    let both = Options::of(&[("end", json!(4)), ("duration", json!(2))]);
    assert_eq!(TrimVideo::check(&both).unwrap_err().option, "duration");
    let backwards = Options::of(&[("start", json!(3)), ("end", json!(2))]);
    let problem = TrimVideo::check(&backwards).unwrap_err();
    assert_eq!(
        (problem.code, problem.option),
        (Code::InvalidOptionCombination, "end")
    );
    assert!(TrimVideo::check(&Options::of(&[("start", json!(1)), ("duration", json!(2))])).is_ok());
}

#[test]
fn the_part_s_length_is_predicted_up_to_the_input_s_end() {
    let clip = Shape {
        size: Some((64, 48)),
        frames: Some(100),
        seconds: Some(4.0),
    };
    let by_duration = Options::of(&[("start", json!(1)), ("duration", json!(2))]);
    assert_eq!(
        TrimVideo::predict(clip, &by_duration).shape.seconds,
        Some(2.0)
    );
    let past = Options::of(&[("start", json!(3)), ("end", json!(10))]);
    assert_eq!(TrimVideo::predict(clip, &past).shape.seconds, Some(1.0));
    let to_end = Options::of(&[("start", json!(1.5))]);
    assert_eq!(TrimVideo::predict(clip, &to_end).shape.seconds, Some(2.5));
    let late = Options::of(&[("start", json!(4))]);
    assert_eq!(
        TrimVideo::refuse(clip, &late).unwrap().code(),
        Code::InvalidParameter
    );
}

#[test]
fn a_keyframe_start_copies_the_video_and_any_other_is_encoded_from_its_frame() {
    let with_audio = info(Some(25.0), true);
    let key = ShownFrame {
        start: 2.0,
        key: true,
    };
    let copy = copy_recipe(key, Some(1.5), &with_audio);
    assert_eq!(copy.input_options, ["-ss", "2.000000"]);
    let args = copy.output_options.join(" ");
    assert!(
        args.contains("-c:v copy -c:a aac -b:a 128k -t 1.500000"),
        "{args}"
    );
    let other = ShownFrame {
        start: 2.04,
        key: false,
    };
    let encode = encode_recipe(other, None, &info(Some(25.0), false), None);
    assert_eq!(encode.input_options, ["-ss", "2.039500"]);
    let args = encode.output_options.join(" ");
    assert!(
        args.contains("setpts=PTS-STARTPTS") && args.contains("libx264"),
        "{args}"
    );
    assert!(!args.contains("-t ") && !args.contains("-c:a"), "{args}");
}

#[test]
fn a_constant_rate_re_encode_is_planned_over_the_part_s_frames() {
    let clip = VideoInfo {
        frames: Some(100),
        base_rate: Some(25.0),
        ..info(Some(25.0), true)
    };
    let shown = ShownFrame {
        start: 2.04,
        key: false,
    };
    let part = chunk_part(shown, Some(1.5), &clip).unwrap();
    assert_eq!((part.first, part.frames, part.length), (51, 38, Some(1.5)));
    assert!((part.audio_seek - 2.0395).abs() < 1e-9);
    // To the end, and past it: the frames left.
    assert_eq!(chunk_part(shown, None, &clip).unwrap().frames, 49);
    assert_eq!(chunk_part(shown, Some(9.0), &clip).unwrap().frames, 49);
    // A variable rate, or no frame count: not cut.
    let vfr = VideoInfo {
        base_rate: Some(30.0),
        ..clip.clone()
    };
    assert_eq!(chunk_part(shown, None, &vfr), None);
    let uncounted = VideoInfo {
        frames: None,
        ..clip.clone()
    };
    assert_eq!(chunk_part(shown, None, &uncounted), None);
    // The chunks' recipe is the single-process one's filter, encoder and audio.
    let media = crate::media::testutil::media();
    let recipe = split_recipe(&media, part.clone(), &clip);
    let whole = encode_recipe(shown, Some(1.5), &clip, None)
        .output_options
        .join(" ");
    assert!(whole.contains(&recipe.filter), "{whole}");
    assert!(whole.contains(&recipe.video.join(" ")), "{whole}");
    assert!(whole.contains(&recipe.audio.join(" ")), "{whole}");
    assert_eq!(recipe.part, Some(part));
}
