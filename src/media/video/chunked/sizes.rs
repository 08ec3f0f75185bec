//! What a source's packets say before a video is split: the size of each video frame,
//! for weighing chunks (`plan::FrameCosts`; a frame's bytes say how busy it is, so how
//! long it takes to encode, before anything is decoded), and where the video starts.

use std::ffi::OsString;

use crate::media::engine::Media;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::file::MediaFile;

/// Bytes of each video frame of `input`, in presentation order, read by ffprobe from
/// the packets (demuxing only); `None` when they cannot be read or their count is not
/// `frames`, and the chunks are then weighed alike.
pub(crate) async fn frame_bytes(media: &Media, input: &MediaFile, frames: u64) -> Option<Vec<u64>> {
    let out = video_entries(media, input, "packet=pts,size").await?;
    let sizes = by_presentation(&out)?;
    (sizes.len() as u64 == frames).then_some(sizes)
}

/// ffprobe's `entries` of `input`'s first video stream, as CSV; `None` when it fails.
async fn video_entries(media: &Media, input: &MediaFile, entries: &str) -> Option<String> {
    let mut args: Vec<OsString> = ["-v", "error", "-select_streams", "v:0"]
        .map(OsString::from)
        .into();
    args.extend(["-show_entries", entries, "-of", "csv=p=0"].map(OsString::from));
    args.extend(["-f".into(), demuxer(input.format).into()]);
    args.push(file_url(&input.path));
    let out = media
        .runner()
        .run(&media.config().ffprobe, args)
        .await
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Seconds from the start of `input` (its earliest stream) to its first video frame,
/// read by ffprobe from the headers; `None` when unknown. A single-process encode
/// keeps that lead (Matroska puts AAC's priming at zero and the video 23 ms later),
/// while a chunk's seek and its restarted times assume none, so only a video that
/// leads (0) is split.
pub(crate) async fn video_lead(media: &Media, input: &MediaFile) -> Option<f64> {
    let out = video_entries(media, input, "stream=start_time:format=start_time").await?;
    lead_of(&out)
}

/// The video's start less the file's, from ffprobe's two lines (stream, then format).
fn lead_of(csv: &str) -> Option<f64> {
    let mut times = csv
        .lines()
        .map(|l| l.trim().trim_end_matches(','))
        .filter(|l| !l.is_empty())
        .map(|l| l.parse::<f64>().ok());
    let (video, file) = (times.next()??, times.next()??);
    Some(video - file)
}

/// `pts,size` lines (decode order) as sizes in presentation order.
fn by_presentation(csv: &str) -> Option<Vec<u64>> {
    let mut packets = Vec::new();
    for line in csv.lines().filter(|l| !l.trim().is_empty()) {
        let mut fields = line.trim().trim_end_matches(',').split(',');
        let pts: i64 = fields.next()?.parse().ok()?;
        let size: u64 = fields.next()?.parse().ok()?;
        packets.push((pts, size));
    }
    packets.sort_by_key(|(pts, _)| *pts);
    Some(packets.into_iter().map(|(_, size)| size).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_in_decode_order_are_put_in_presentation_order() {
        // I P B B: shown as I B B P.
        let csv = "0,900\n3072,300\n1024,20\n2048,25\n";
        assert_eq!(by_presentation(csv), Some(vec![900, 20, 25, 300]));
        assert_eq!(by_presentation("N/A,12\n"), None);
    }

    #[test]
    fn the_lead_is_the_video_s_start_after_the_file_s() {
        assert_eq!(lead_of("0.000000\n0.000000\n"), Some(0.0));
        let lead = lead_of("0.023000\n0.000000\n").unwrap();
        assert!((lead - 0.023).abs() < 1e-9, "{lead}");
        assert_eq!(lead_of("N/A\n0.000000\n"), None);
        assert_eq!(lead_of("0.1\n"), None);
    }

    #[tokio::test]
    async fn every_frame_of_a_clip_is_sized_in_the_order_it_is_shown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quiet-then-noisy.mp4");
        // 12 frames of a still pattern, then 13 of noise; x264 with B-frames reorders.
        let status = std::process::Command::new("ffmpeg")
            .args(["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i"])
            .arg("testsrc=size=64x64:rate=25:duration=1")
            .args(["-vf", "noise=alls=80:allf=t:enable='gte(n,12)'"])
            .args(["-c:v", "libx264", "-bf", "3", "-pix_fmt", "yuv420p"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        let media = crate::media::testutil::media();
        let input = MediaFile {
            path,
            format: crate::media::MediaFormat::Mp4,
        };
        let sizes = frame_bytes(&media, &input, 25).await.unwrap();
        assert_eq!(sizes.len(), 25);
        let mean = |s: &[u64]| s.iter().sum::<u64>() as f64 / s.len() as f64;
        // Past the keyframe, the still frames are nearly free and the noisy ones not.
        assert!(mean(&sizes[13..]) > 5.0 * mean(&sizes[1..12]), "{sizes:?}");
        assert!(frame_bytes(&media, &input, 26).await.is_none());
    }
}
