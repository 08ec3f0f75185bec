//! An animation's pixels summed over its frames, read from its headers: the limit
//! that stops an animation bomb before any frame is decoded.
//!
//! A GIF of 20,000 tiny LZW frames on a 2000×2000 screen is 460 KB, yet every
//! command that takes it composites 20,000 whole canvases (80·10⁹ pixels): minutes
//! of both cores. The canvas × frames is known from the blocks alone (a GIF's image
//! descriptors, an APNG's `fcTL` chunks, an animated WebP's `ANMF` chunks), so the
//! file is refused with `too_much_work` before its first frame, whichever command
//! it was given to (`Media::check_animation`, called for every command's input).

use std::io::Read;

use crate::format::MediaFormat;
use crate::media::blocking;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;

/// Bytes read to tell a still PNG or WebP from an animation: the `acTL` chunk comes
/// before the image data, and a WebP's `VP8X` flags are its first chunk.
const HEAD_BYTES: u64 = 1 << 20;

/// An animation's canvas and its frames (a separate APNG default image counted: it
/// is decoded too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Extent {
    pub canvas: (u32, u32),
    pub frames: u64,
}

impl Extent {
    /// Canvas pixels × frames.
    pub fn pixels(self) -> u64 {
        (u64::from(self.canvas.0) * u64::from(self.canvas.1)).saturating_mul(self.frames)
    }
}

/// The extent of `bytes` of `format`; `None` for a still picture, another format,
/// or headers that cannot be read (the decoder then reports what is wrong).
pub(crate) fn extent(bytes: &[u8], format: MediaFormat) -> Option<Extent> {
    match format {
        MediaFormat::Gif => {
            let scan = crate::media::image::codec::gif::scan(bytes).ok()?;
            (scan.frames > 1).then_some(Extent {
                canvas: scan.extent,
                frames: scan.frames,
            })
        }
        MediaFormat::Png => apng_extent(bytes),
        MediaFormat::Webp => webp_extent(bytes),
        _ => None,
    }
}

/// An APNG's `IHDR` size and its `fcTL` chunks, with the default image when it comes
/// before the first `fcTL` (outside the animation, but decoded all the same).
fn apng_extent(bytes: &[u8]) -> Option<Extent> {
    if !crate::media::image::codec::apng::is_animated(bytes) {
        return None;
    }
    let be = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let canvas = (be(16)?, be(20)?);
    let (mut at, mut frames, mut seen_fctl, mut separate) = (8usize, 0u64, false, false);
    while let (Some(length), Some(kind)) = (be(at), bytes.get(at + 4..at + 8)) {
        match kind {
            b"fcTL" => (frames, seen_fctl) = (frames + 1, true),
            b"IDAT" if !seen_fctl => separate = true,
            b"IEND" => break,
            _ => {}
        }
        at = at.checked_add(length as usize)?.checked_add(12)?;
    }
    Some(Extent {
        canvas,
        frames: frames + u64::from(separate),
    })
}

/// An animated WebP's canvas (its `VP8X` chunk) and its `ANMF` chunks.
fn webp_extent(bytes: &[u8]) -> Option<Extent> {
    let vp8x = bytes.get(12..30)?;
    if &vp8x[..4] != b"VP8X" || vp8x[8] & 0x02 == 0 {
        return None;
    }
    let le24 = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], 0]) + 1;
    Some(Extent {
        canvas: (le24(&vp8x[12..15]), le24(&vp8x[15..18])),
        frames: webp_frame_count(bytes),
    })
}

/// The `ANMF` chunks of an animated WebP: its frames, counted without decoding.
pub(crate) fn webp_frame_count(bytes: &[u8]) -> u64 {
    let (mut at, mut count) = (12usize, 0);
    while let Some(header) = bytes.get(at..at + 8) {
        count += u64::from(&header[..4] == b"ANMF");
        let size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        at = at
            .saturating_add(8)
            .saturating_add(size)
            .saturating_add(size & 1);
    }
    count
}

/// `AnimationTooLarge` when `bytes` animate past `limit` pixels summed over frames. A
/// canvas past `max_canvas` on its own is left to the command, which refuses it with
/// the frame size limit's code before decoding anything (`video_too_large`), the more
/// precise reason.
pub(crate) fn check(
    bytes: &[u8],
    format: MediaFormat,
    limit: u64,
    max_canvas: u64,
) -> Result<(), MediaError> {
    match extent(bytes, format) {
        Some(extent)
            if Extent {
                frames: 1,
                ..extent
            }
            .pixels()
                > max_canvas =>
        {
            Ok(())
        }
        Some(extent) if extent.pixels() > limit => Err(MediaError::AnimationTooLarge {
            width: extent.canvas.0,
            height: extent.canvas.1,
            frames: extent.frames,
            limit,
        }),
        _ => Ok(()),
    }
}

impl Media {
    /// `AnimationTooLarge` (`too_much_work`) when `input` is an animated image whose
    /// canvas × frames passes `--max-animation-pixels`; read from its headers only, so
    /// a bomb is refused in milliseconds. Anything else passes: a still, a video, or a
    /// file whose headers do not read (its command reports what is wrong with it).
    pub async fn check_animation(&self, input: &MediaFile) -> Result<(), MediaError> {
        let format = input.format;
        if !matches!(
            format,
            MediaFormat::Gif | MediaFormat::Png | MediaFormat::Webp
        ) {
            return Ok(());
        }
        let limit = self.config().max_animation_pixels;
        let (path, max_canvas) = (input.path.clone(), self.config().max_video_pixels);
        blocking(move || {
            let mut file = std::fs::File::open(&path)?;
            let mut bytes = Vec::new();
            // A still PNG or WebP says so in its first chunks: a large photo is not
            // read whole for this.
            if format != MediaFormat::Gif {
                (&mut file).take(HEAD_BYTES).read_to_end(&mut bytes)?;
                let still = match format {
                    MediaFormat::Png => !crate::media::image::codec::apng::is_animated(&bytes),
                    _ => webp_extent(&bytes).is_none(),
                };
                if still {
                    return Ok(());
                }
            }
            file.read_to_end(&mut bytes)?;
            check(&bytes, format, limit, max_canvas)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GIF of `frames` 1×1 frames on a `width`×`height` screen.
    fn gif_bomb((width, height): (u16, u16), frames: usize) -> Vec<u8> {
        let mut b = b"GIF89a".to_vec();
        b.extend_from_slice(&width.to_le_bytes());
        b.extend_from_slice(&height.to_le_bytes());
        b.extend_from_slice(&[0x80, 0, 0, 255, 0, 0, 0, 0, 255]);
        for _ in 0..frames {
            b.extend_from_slice(&[0x21, 0xF9, 4, 0, 2, 0, 0, 0]);
            b.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0]);
        }
        b.push(0x3B);
        b
    }

    #[test]
    fn a_gif_bomb_is_its_screen_times_its_frames() {
        let bomb = gif_bomb((2000, 2000), 20_000);
        assert!(bomb.len() < 500_000);
        let bombed = extent(&bomb, MediaFormat::Gif).unwrap();
        assert_eq!(bombed.canvas, (2000, 2000));
        assert_eq!(bombed.frames, 20_000);
        assert_eq!(bombed.pixels(), 80_000_000_000);
        let refused = check(&bomb, MediaFormat::Gif, 4_000_000_000, 33_177_600).unwrap_err();
        assert_eq!(refused.code(), crate::error_code::Code::TooMuchWork);
        assert!(refused.to_string().contains("20000 frames of 2000x2000"));
        // A 30 s 1080p GIF at 50 fps (2 cs delays, the shortest browsers play) stays
        // under the default: 1920×1080×1500 = 3.1·10⁹.
        let normal = gif_bomb((1920, 1080), 1500);
        assert_eq!(
            extent(&normal, MediaFormat::Gif).unwrap().pixels(),
            3_110_400_000
        );
        check(&normal, MediaFormat::Gif, 4_000_000_000, 33_177_600).unwrap();
        // A canvas past the frame size limit is that limit's to refuse.
        check(&bomb, MediaFormat::Gif, 4_000_000_000, 1000).unwrap();
        // One frame is a still: no animation to limit.
        assert_eq!(extent(&gif_bomb((2000, 2000), 1), MediaFormat::Gif), None);
    }

    #[test]
    fn an_apng_counts_its_fctl_chunks_and_a_separate_default_image() {
        let chunk = |kind: &[u8], data: &[u8]| {
            let mut c = (data.len() as u32).to_be_bytes().to_vec();
            c.extend_from_slice(kind);
            c.extend_from_slice(data);
            c.extend_from_slice(&[0; 4]);
            c
        };
        let mut ihdr = [0u8; 13];
        ihdr[..4].copy_from_slice(&300u32.to_be_bytes());
        ihdr[4..8].copy_from_slice(&200u32.to_be_bytes());
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend(chunk(b"IHDR", &ihdr));
        png.extend(chunk(b"acTL", &[0, 0, 0, 3, 0, 0, 0, 0]));
        png.extend(chunk(b"IDAT", &[]));
        for _ in 0..3 {
            png.extend(chunk(b"fcTL", &[0; 26]));
            png.extend(chunk(b"fdAT", &[0; 4]));
        }
        png.extend(chunk(b"IEND", &[]));
        let found = extent(&png, MediaFormat::Png).unwrap();
        assert_eq!((found.canvas, found.frames), ((300, 200), 4));
    }

    #[test]
    fn an_animated_webp_is_its_canvas_times_its_anmf_chunks() {
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\x02\0\0\0".to_vec();
        webp.extend_from_slice(&[0xCF, 0x07, 0, 0xCF, 0x07, 0]);
        for _ in 0..5 {
            webp.extend_from_slice(b"ANMF\x02\0\0\0\0\0");
        }
        let extent = extent(&webp, MediaFormat::Webp).unwrap();
        assert_eq!((extent.canvas, extent.frames), ((2000, 2000), 5));
        webp[20] = 0;
        assert_eq!(
            super::extent(&webp, MediaFormat::Webp),
            None,
            "not animated"
        );
    }
}
