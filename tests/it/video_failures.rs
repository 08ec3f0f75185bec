//! Videos that cannot be edited: over a limit, of the wrong kind, or corrupt. Each
//! fails its edit with its own code, before any processing where a limit shows it,
//! and never hangs.

use crate::clips::*;
use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn video_limits_fail_with_their_own_code_before_processing() {
    let app = spawn_app_with(|c| {
        c.max_video_seconds = 1;
        c.max_video_pixels = 100 * 100;
        c.max_video_frames = 30;
        c.max_extract_frames = 5;
    })
    .await;
    let cases = [
        (
            "long.mp4",
            mp4("96x64", 5, 2.0, false),
            "video-to-webm",
            "video_too_long",
            "2.0 seconds",
        ),
        (
            "large.mp4",
            mp4("128x96", 5, 0.4, false),
            "video-to-gif",
            "video_too_large",
            "128x96",
        ),
        (
            "many.mp4",
            mp4("96x64", 50, 0.8, false),
            "video-to-ogg",
            "too_many_frames",
            "40 frames",
        ),
        (
            "ten.mp4",
            mp4("96x64", 10, 1.0, false),
            "extract-frames",
            "too_many_frames",
            "10 frames, more than the 5",
        ),
    ];
    for (name, bytes, command, code, detail) in cases {
        let src = app.fixtures.add(name, bytes);
        let error = app.run_failed(edit(&src, &[command], None)).await;
        assert_eq!(error["code"], code, "{name}: {error}");
        let text = error["detail"].as_str().unwrap();
        assert!(text.contains(detail), "{name}: {text}");
        assert!(text.starts_with("Asset 0, command 0"), "{text}");
    }
    // A GIF is held to the same limits.
    let gif = lavfi_gif("testsrc2=size=128x96:rate=10:duration=0.2", "big.gif");
    let src = app.fixtures.add("big.gif", gif);
    let error = app.run_failed(edit(&src, &["gif-to-video"], None)).await;
    assert_eq!(error["code"], "video_too_large", "{error}");
    let gif = lavfi_gif("testsrc2=size=32x32:rate=50:duration=0.8", "many.gif");
    let src = app.fixtures.add("many.gif", gif);
    let error = app.run_failed(edit(&src, &["gif-to-video"], None)).await;
    assert_eq!(error["code"], "too_many_frames", "{error}");
}

#[tokio::test]
async fn wrong_and_corrupt_inputs_fail_with_a_code_never_hang() {
    let app = spawn_app().await;
    let png = app.fixtures.add("a.png", fixtures::png(8, 8));
    let error = app.run_failed(edit(&png, &["video-to-webm"], None)).await;
    assert_eq!(error["code"], "unsupported_input_format", "{error}");
    let text = app
        .fixtures
        .add("a.txt", b"just some text, not a video".to_vec());
    let error = app.run_failed(edit(&text, &["extract-frames"], None)).await;
    assert_eq!(error["code"], "unsupported_input_format", "{error}");
    let gif = app.fixtures.add("a.gif", fixtures::gif(8, 8));
    let error = app
        .run_failed(edit(&gif, &["modify-video-speed"], None))
        .await;
    assert_eq!(error["code"], "unsupported_input_format", "{error}");

    // A valid `ftyp` followed by garbage.
    let mut garbage = b"\0\0\0\x18ftypisom\0\0\x02\0isomiso2".to_vec();
    garbage.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let src = app.fixtures.add("garbage.mp4", garbage);
    let error = app.run_failed(edit(&src, &["video-to-gif"], None)).await;
    assert_eq!(error["code"], "invalid_media", "{error}");

    // Cut in half: the index (at the end without +faststart) is gone.
    let whole = mp4("96x64", 10, 1.0, true);
    let src = app
        .fixtures
        .add("cut.mp4", whole[..whole.len() / 2].to_vec());
    let error = app.run_failed(edit(&src, &["video-to-webm"], None)).await;
    assert_eq!(error["code"], "invalid_media", "{error}");
}
