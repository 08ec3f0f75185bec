//! Reading what a video source is: from an MP4's headers in this process where it is
//! a plain one, else from `ffprobe`; cached per file (`InfoCache`, so the cost
//! estimate and the run probe once), and checked against the limits.

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;
use crate::media::video::ffprobe;
use crate::media::video::info::VideoInfo;
use crate::media::video::inspect_cache::InfoCache;

/// Probes `input` (which must be one of `accepted`) and checks it against the limits.
///
/// `UnsupportedInputFormat` for another format; `InvalidMedia` when ffprobe cannot read
/// it or it has no video stream; the limit errors of [`VideoInfo::check`].
pub(crate) async fn inspect(
    media: &Media,
    input: &MediaFile,
    accepted: &[MediaFormat],
) -> Result<VideoInfo, MediaError> {
    if !accepted.contains(&input.format) {
        return Err(MediaError::unsupported(input.format, accepted));
    }
    let info = read_info(media, input).await?;
    info.check(&media.limits())?;
    Ok(info)
}

/// What `input`'s headers say, limits unchecked (our own outputs may exceed the limits
/// of a source: a slowed-down video lasts longer than its source).
pub(crate) async fn read_info(media: &Media, input: &MediaFile) -> Result<VideoInfo, MediaError> {
    let unreadable = |e: MediaError| match e {
        MediaError::ProcessFailed { stderr_tail, .. } => MediaError::InvalidMedia(format!(
            "ffprobe could not read it ({})",
            crate::media::ffmpeg::process::last_line(&stderr_tail)
        )),
        other => other,
    };
    let key = InfoCache::key(&input.path).await;
    let cached = key.as_ref().and_then(|key| media.info_cache().get(key));
    let info = match cached {
        Some(info) => info,
        None => {
            let info = if input.format.is_iso_bmff_video() && media.config().header_readers {
                let path = input.path.clone();
                crate::media::blocking(move || Ok(crate::media::video::mp4::read_info(&path)))
                    .await?
            } else {
                None
            };
            let info = match info {
                Some(info) => info,
                None => ffprobe_info(media, input, unreadable).await?,
            };
            if let Some(key) = key {
                media.info_cache().put(key, info.clone());
            }
            info
        }
    };
    Ok(info)
}

/// What ffprobe says of `input`: the authority on every file the in-process MP4
/// reader leaves alone.
async fn ffprobe_info(
    media: &Media,
    input: &MediaFile,
    unreadable: impl Fn(MediaError) -> MediaError,
) -> Result<VideoInfo, MediaError> {
    let probe = ffprobe::run(media, &input.path, input.format, false)
        .await
        .map_err(&unreadable)?;
    let mut info = VideoInfo::from_probe(&probe)?;
    if info.frames.is_none() {
        // GIF (and some MOV) headers carry no frame count: count packets, which
        // only demuxes, decoding nothing.
        let counted = ffprobe::run(media, &input.path, input.format, true)
            .await
            .map_err(unreadable)?;
        info.frames = counted.video().and_then(|v| v.nb_read_packets);
    }
    if info.frame_rate.is_none() {
        // Ogg states no average rate: the frames over the video stream's own length.
        let seconds = probe.video().and_then(|v| v.duration).filter(|s| *s > 0.0);
        info.frame_rate = info.frames.zip(seconds).map(|(n, s)| n as f64 / s);
    }
    Ok(info)
}
