//! x264 re-encodes in chunks: the commands whose output is a whole source video encoded
//! again as H.264 MP4 (`modify-video-speed` when it cannot copy, `watermark` and `text`
//! on videos) hand their recipe to [`super::convert_inspected`] as Theora and VP9 do.
//!
//! What differs from those: the chunks are MP4 files, which keep x264's timestamps
//! and its B-frame delay exactly through the concat demuxer (as the HLS ladder's do),
//! and the finished file alone is written with its index first (`+faststart`). x264
//! has no fixed keyframe grid (a keyframe every 250 frames, more at scene cuts), so a
//! cut may fall on any frame; each cut adds one keyframe. And x264's frame threads
//! already keep more than one core busy, so a chunk counts for
//! `--x264-cores-per-chunk` cores (docs/PERFORMANCE.md, "x264 in chunks").

use std::path::Path;

use crate::media::engine::Media;
use crate::media::video::chunked::recipe::SplitRecipe;

/// The output container, of the pieces as of the finished file.
const MP4: &str = "mp4";

/// What decoding a source frame costs against encoding it with x264 `veryfast` (about
/// 6 ms against 25 ms for 1080p H.264 on one core).
const DECODE_WEIGHT: f64 = 0.25;

impl SplitRecipe {
    /// An H.264 MP4 of `filter`'s frames encoded with the options `video` (x264's,
    /// after any frame-timing options), and `audio` (empty without audio), a second of
    /// source lasting `time_scale` seconds of output; chunks counted for
    /// `--x264-cores-per-chunk` cores of `media`'s.
    pub fn x264(
        media: &Media,
        filter: String,
        (video, audio): (Vec<String>, Vec<String>),
        time_scale: f64,
    ) -> SplitRecipe {
        SplitRecipe {
            filter,
            video,
            audio,
            muxer: MP4,
            muxer_options: ["-movflags", "+faststart"].map(String::from).into(),
            keyframe_interval: 1,
            decode_weight: DECODE_WEIGHT,
            time_scale,
            cores_per_chunk: media.config().x264_cores_per_chunk,
            local_only: false,
            part: None,
            burn: None,
        }
    }
}

/// A `movie` source filter reading the picture at `path` through the `demuxer`
/// named, for a filter graph: the path escaped for the filter's options and then for
/// the graph (ffmpeg's two levels of filter escaping), so any file name reads as
/// itself. A graph with its picture inside reads one input, so it can be cut in chunks
/// as any other (see `media::video::overlay`).
pub(crate) fn movie(path: &Path, demuxer: &str) -> String {
    format!("movie=filename={}:f={demuxer}", graph_path(path))
}

/// `path` as a filter option's value inside a filter graph: escaped for the filter's
/// options and then for the graph.
pub(crate) fn graph_path(path: &Path) -> String {
    let path = path.to_string_lossy();
    let options = escape(&path, &['\\', '\'', ':']);
    escape(&options, &['\\', '\'', '[', ']', ',', ';'])
}

/// `text` with a backslash before each of `special`.
fn escape(text: &str, special: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if special.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::{MediaFile, MediaFormat};

    #[test]
    fn a_picture_s_path_is_escaped_for_the_filter_and_then_for_the_graph() {
        assert_eq!(
            movie(Path::new("/tmp/job/a1.png"), "png_pipe"),
            "movie=filename=/tmp/job/a1.png:f=png_pipe"
        );
        // ffmpeg reads this one back as the file name (checked by hand; the overlay
        // tests run the graph).
        assert_eq!(
            movie(Path::new("odd dir,x:y'z/lo[g]o;.png"), "png_pipe"),
            r"movie=filename=odd dir\,x\\:y\\\'z/lo\[g\]o\;.png:f=png_pipe"
        );
    }

    /// Runs `convert` of `input` with an x264 recipe on `media`, its ffmpeg behind a
    /// script logging each run's arguments into `log`: the output's video frames, and
    /// the runs' command lines.
    async fn logged_convert(media: &Media, input: &MediaFile, log: &Path) -> (u64, String) {
        let _ = std::fs::remove_file(log);
        let recipe = |_: &_| {
            let video = ["-c:v", "libx264", "-preset", "ultrafast"].map(String::from);
            let audio = ["-c:a", "aac"].map(String::from);
            SplitRecipe::x264(
                media,
                "format=yuv420p".into(),
                (video.into(), audio.into()),
                1.0,
            )
        };
        let dir = log.parent().unwrap();
        let formats = [MediaFormat::Mp4, MediaFormat::Mkv];
        let out = super::super::convert(
            media,
            input,
            &formats,
            recipe,
            MediaFormat::Mp4,
            dir,
            &|_| {},
        );
        let out = out.await.unwrap();
        let probe = std::process::Command::new("ffprobe")
            .args(["-v", "error", "-count_packets", "-select_streams", "v:0"])
            .args(["-show_entries", "stream=nb_read_packets", "-of", "csv=p=0"])
            .arg(&out.path)
            .output()
            .unwrap();
        let frames = String::from_utf8_lossy(&probe.stdout)
            .trim()
            .parse()
            .unwrap();
        (frames, std::fs::read_to_string(log).unwrap())
    }

    #[tokio::test]
    async fn x264_splits_by_its_cores_per_chunk_and_only_a_video_that_starts_with_its_file() {
        let dir = crate::media::testutil::tempdir();
        // 2 s with a tone, as MP4 (the video starts at 0) and as Matroska (AAC's
        // priming at 0, the video 23 ms later).
        let mp4 = dir.path().join("clip.mp4");
        let made = std::process::Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg("testsrc2=size=160x120:rate=25:duration=2")
            .args(["-f", "lavfi", "-i", "sine=duration=2", "-c:v", "libx264"])
            .args(["-preset", "ultrafast", "-c:a", "aac", "-shortest"])
            .arg(&mp4)
            .status()
            .unwrap();
        assert!(made.success());
        let mkv = dir.path().join("clip.mkv");
        let remuxed = std::process::Command::new("ffmpeg")
            .args(["-nostdin", "-v", "error", "-y", "-i"])
            .arg(&mp4)
            .args(["-c", "copy"])
            .arg(&mkv)
            .status()
            .unwrap();
        assert!(remuxed.success());
        let (wrapper, log) = crate::media::testutil::logging_ffmpeg(dir.path());
        let with_cores = |per_chunk: usize| {
            Media::new(crate::media::MediaConfig {
                ffmpeg: wrapper.clone(),
                min_chunk_work: 1,
                x264_cores_per_chunk: per_chunk,
                ..crate::media::testutil::media().config().clone()
            })
        };
        let mp4 = MediaFile {
            path: mp4,
            format: MediaFormat::Mp4,
        };
        // A chunk a core: split on any machine of two cores or more.
        let (frames, runs) = logged_convert(&with_cores(1), &mp4, &log).await;
        assert_eq!(frames, 50, "{runs}");
        assert!(
            runs.contains("-ss ") && runs.contains("-f concat"),
            "{runs}"
        );
        assert!(runs.lines().count() >= 4, "chunks, audio, join: {runs}");
        // A chunk per more cores than this machine has: one process.
        let cores = crate::media::cores();
        let (frames, runs) = logged_convert(&with_cores(cores), &mp4, &log).await;
        assert_eq!((frames, runs.lines().count()), (50, 1), "{runs}");
        // A video that starts after its file does: one process (which fills the 23 ms
        // before the first frame with a copy of it, as it always has).
        let mkv = MediaFile {
            path: mkv,
            format: MediaFormat::Mkv,
        };
        let (frames, runs) = logged_convert(&with_cores(1), &mkv, &log).await;
        assert!(frames >= 50, "{frames}");
        assert_eq!(runs.lines().count(), 1, "{runs}");
        assert!(!runs.contains("-ss "), "{runs}");
    }

    #[test]
    fn an_x264_recipe_writes_mp4_with_its_index_first_and_cuts_on_any_frame() {
        let media = crate::media::testutil::media();
        let video = ["-c:v", "libx264"].map(String::from).into();
        let recipe = SplitRecipe::x264(&media, "format=yuv420p".into(), (video, Vec::new()), 0.5);
        let whole = recipe.whole().join(" ");
        assert!(
            whole.ends_with("-c:v libx264 -movflags +faststart -f mp4"),
            "{whole}"
        );
        assert_eq!(recipe.keyframe_interval, 1);
        assert_eq!(recipe.cores_per_chunk, media.config().x264_cores_per_chunk);
        assert_eq!(recipe.time_scale, 0.5);
    }
}
