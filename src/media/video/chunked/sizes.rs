//! The size of each of a source's video frames, for weighing chunks (`plan::FrameCosts`):
//! a frame's bytes say how busy it is, so how long it takes to encode, before anything
//! is decoded.

use std::ffi::OsString;

use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::{Media, MediaFile};

/// Bytes of each video frame of `input`, in presentation order, read by ffprobe from
/// the packets (demuxing only); `None` when they cannot be read or their count is not
/// `frames`, and the chunks are then weighed alike.
pub(crate) async fn frame_bytes(media: &Media, input: &MediaFile, frames: u64) -> Option<Vec<u64>> {
    let mut args: Vec<OsString> = ["-v", "error", "-select_streams", "v:0"]
        .map(OsString::from)
        .into();
    args.extend(["-show_entries", "packet=pts,size", "-of", "csv=p=0"].map(OsString::from));
    args.extend(["-f".into(), demuxer(input.format).into()]);
    args.push(file_url(&input.path));
    let out = media
        .runner()
        .run(&media.config().ffprobe, args)
        .await
        .ok()?;
    let sizes = by_presentation(&String::from_utf8_lossy(&out.stdout))?;
    (sizes.len() as u64 == frames).then_some(sizes)
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
