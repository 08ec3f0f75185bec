//! `video-to-audio` and `audio-waveform` through the real service: the audio outputs
//! by their codec, length and content type (stored on both backends), the waveform by
//! the height of its bars, and `no_audio_track` for a silent video.

use serde_json::json;

use crate::backends::Backend;
use crate::clips::*;
use crate::helpers::*;

on_both_backends!(video_to_audio_writes_each_format_with_the_track_s_length);

/// A 96×64 clip of `secs` with the audio of the lavfi source `audio`.
fn clip_with_audio(secs: f64, audio: &str) -> Vec<u8> {
    let video = format!("testsrc2=size=96x64:rate=10:duration={secs}");
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            &video,
            "-f",
            "lavfi",
            "-i",
            audio,
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-shortest",
            "-f",
            "mp4",
        ],
        "with-audio.mp4",
    )
}

async fn video_to_audio_writes_each_format_with_the_track_s_length(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let src = app.fixtures.add(
        "tone.mp4",
        clip_with_audio(2.0, "sine=frequency=440:duration=2"),
    );
    for (format, codec, content_type) in [
        (None, "aac", "audio/mp4"),
        (Some("mp3"), "mp3", "audio/mpeg"),
        (Some("opus"), "opus", "audio/ogg"),
    ] {
        let options = format.map(|f| json!({ "format": f }));
        let doc = app.run_done(edit(&src, &["video-to-audio"], options)).await;
        let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
        let extension = format.unwrap_or("m4a");
        assert!(url.split('?').next().unwrap().ends_with(extension), "{url}");
        let response = reqwest::get(url).await.unwrap();
        let served = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(served.starts_with(content_type), "{format:?}: {served}");
        let path = &app.download_all(&doc).await[0];
        let probe = probe(path);
        assert_eq!(audio_codec(&probe).as_deref(), Some(codec), "{probe}");
        assert!(
            streams_of(&probe, "video").is_empty(),
            "sound only: {probe}"
        );
        let seconds = duration(&probe);
        assert!((seconds - 2.0).abs() < 0.1, "{format:?}: {seconds} s");
        let output = &doc["attributes"]["outputs"][0];
        let described = output["duration"].as_f64().unwrap();
        assert!((described - 2.0).abs() < 0.1, "{output}");
    }

    // A video without sound: a sentence, not a failed ffmpeg.
    let silent = app.fixtures.add("silent.mp4", mp4("96x64", 10, 1.0, false));
    let error = app
        .run_failed(edit(&silent, &["video-to-audio"], None))
        .await;
    assert_eq!(error["code"], "no_audio_track", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("no audio track"),
        "{error}"
    );
}

/// How many rows of column `x` are drawn (not transparent).
fn bar_height(picture: &image::RgbaImage, x: u32) -> u32 {
    (0..picture.height())
        .filter(|y| picture.get_pixel(x, *y)[3] > 0)
        .count() as u32
}

/// The tallest bar among the columns of `range`.
fn tallest(picture: &image::RgbaImage, range: std::ops::Range<u32>) -> u32 {
    range.map(|x| bar_height(picture, x)).max().unwrap()
}

#[tokio::test]
async fn audio_waveform_bars_are_taller_where_the_sound_is_louder() {
    let app = spawn_app().await;
    // Silent for a second, quiet for a second, loud for a second.
    let tone = "aevalsrc='if(lt(t,1),0,if(lt(t,2),0.2,0.8))*sin(2*PI*440*t)':s=44100:d=3";
    let src = app.fixtures.add("steps.mp4", clip_with_audio(3.0, tone));
    let options = json!({"width": 300, "height": 100, "color": "#FF0000"});
    let doc = app
        .run_done(edit(&src, &["audio-waveform"], Some(options.clone())))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(crate::fixtures::format_of(out), image::ImageFormat::Png);
    let picture = crate::fixtures::decode(out).to_rgba8();
    assert_eq!(picture.dimensions(), (300, 100));
    // Each third, leaving a bar's width either side of the changes.
    let (silent, quiet, loud) = (
        tallest(&picture, 4..96),
        tallest(&picture, 104..196),
        tallest(&picture, 204..296),
    );
    assert!(silent <= 2, "silence is a line: {silent}");
    assert!(
        quiet > silent + 10 && loud > quiet * 3,
        "{silent} < {quiet} < {loud}"
    );
    assert!(loud >= 95, "the loudest fills the height: {loud}");
    let drawn = picture.pixels().find(|p| p[3] > 0).unwrap();
    assert_eq!(drawn.0, [255, 0, 0, 255], "in `color`");

    // From the audio file `video-to-audio` made: the same picture of the same sound.
    let doc = app
        .run_done(edit(
            &src,
            &["video-to-audio", "audio-waveform"],
            Some(json!({"format": "mp3", "width": 300, "height": 100})),
        ))
        .await;
    let from_mp3 = crate::fixtures::decode(&app.download_all(&doc).await[0]).to_rgba8();
    let loud_mp3 = tallest(&from_mp3, 204..296);
    assert!(
        tallest(&from_mp3, 4..96) <= 2 && loud_mp3 >= 95,
        "{loud_mp3}"
    );
    // Defaults: 1800 × 280.
    let doc = app.run_done(edit(&src, &["audio-waveform"], None)).await;
    let default = crate::fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!((default.width(), default.height()), (1800, 280));

    let silent = app.fixtures.add("silent.mp4", mp4("96x64", 10, 1.0, false));
    let error = app
        .run_failed(edit(&silent, &["audio-waveform"], None))
        .await;
    assert_eq!(error["code"], "no_audio_track", "{error}");
}

#[tokio::test]
async fn audio_files_are_sources_of_the_audio_commands() {
    let app = spawn_app().await;
    let tone = "aevalsrc='if(lt(t,1),0,0.8)*sin(2*PI*440*t)':s=44100:d=2";
    for (name, muxer, codec) in [
        ("steps.mp3", "mp3", "libmp3lame"),
        ("steps.m4a", "ipod", "aac"),
        ("steps.opus", "opus", "libopus"),
        ("steps.wav", "wav", "pcm_s16le"),
    ] {
        let bytes = ffmpeg(
            &["-f", "lavfi", "-i", tone, "-c:a", codec, "-f", muxer],
            name,
        );
        let src = app.fixtures.add(name, bytes);
        let options = json!({"width": 200, "height": 50});
        let doc = app
            .run_done(edit(&src, &["audio-waveform"], Some(options)))
            .await;
        let picture = crate::fixtures::decode(&app.download_all(&doc).await[0]).to_rgba8();
        let (silent, loud) = (tallest(&picture, 4..96), tallest(&picture, 104..196));
        assert!(silent <= 2 && loud >= 45, "{name}: {silent} then {loud}");
        let doc = app
            .run_done(edit(
                &src,
                &["video-to-audio"],
                Some(json!({"format": "opus"})),
            ))
            .await;
        let probe = probe(&app.download_all(&doc).await[0]);
        assert_eq!(audio_codec(&probe).as_deref(), Some("opus"), "{name}");
        assert!((duration(&probe) - 2.0).abs() < 0.1, "{name}: {probe}");
        // A video command refuses sound alone, naming what it was given.
        let error = app.run_failed(edit(&src, &["video-to-gif"], None)).await;
        assert_eq!(error["code"], "unsupported_input_format", "{name}: {error}");
    }
}

#[tokio::test]
async fn one_click_neither_shrinks_a_steady_tone_nor_towers_over_it() {
    let app = spawn_app().await;
    // 3 s of a 440 Hz tone at 0.52 whose last sample is a full-scale click, at the
    // 8 kHz the loudness is read at (so the click stays one sample).
    let tone = "aevalsrc='if(gte(n,23999),1,0.52*sin(2*PI*440*t))':s=8000:d=3";
    let bytes = ffmpeg(
        &["-f", "lavfi", "-i", tone, "-c:a", "pcm_s16le", "-f", "wav"],
        "click.wav",
    );
    let src = app.fixtures.add("click.wav", bytes);
    let options = json!({"width": 300, "height": 100});
    let doc = app
        .run_done(edit(&src, &["audio-waveform"], Some(options)))
        .await;
    let picture = crate::fixtures::decode(&app.download_all(&doc).await[0]).to_rgba8();
    // 75 bars of 320 samples: the click is in the last.
    let tone_bars: Vec<u32> = (0..74).map(|k| bar_height(&picture, k * 4)).collect();
    let shortest = *tone_bars.iter().min().unwrap();
    let click = bar_height(&picture, 296);
    assert!(shortest >= 90, "the tone fills the height: {tone_bars:?}");
    assert!(
        click <= *tone_bars.iter().max().unwrap(),
        "the click's bar ({click}) stands above the tone's: {tone_bars:?}"
    );
}
