//! A GIF's structure, read block by block without decoding a pixel; its frames as
//! viewers show them are drawn by [`frames`], the one GIF decoder of every command.
//!
//! - limits: the screen a viewer needs is the bounding box of the logical screen and
//!   every frame, which a hostile file sets past 4 billion pixels in a frame descriptor
//!   while its screen says 32x32; it is checked here, from the headers, as are the
//!   frame count and the length, before any frame is decoded;
//! - timing: every frame's delay, the last one's included, which `gif-to-video` needs
//!   to end the video exactly where the GIF ends (see [`GifScan::total_cs`]).
//!
//! Delays follow browsers: a delay under 2 centiseconds (or no Graphic Control
//! Extension at all) counts as 10 centiseconds.

mod blocks;

mod scan;
pub(crate) use scan::scan;
pub(crate) use scan::GifScan;

pub(crate) mod frames;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::error::MediaError;

    /// A GIF of `frames` 1x1 frames, each `(delay, with_local_palette)`.
    fn gif(global: bool, frames: &[(Option<u16>, bool)]) -> Vec<u8> {
        let mut b = b"GIF89a\x01\x00\x01\x00".to_vec();
        b.extend_from_slice(&[if global { 0x80 } else { 0 }, 0, 0]);
        if global {
            b.extend_from_slice(&[255, 0, 0, 0, 255, 0]);
        }
        for (delay, local) in frames {
            if let Some(d) = delay {
                let [lo, hi] = d.to_le_bytes();
                b.extend_from_slice(&[0x21, 0xF9, 4, 0, lo, hi, 0, 0]);
            }
            b.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0]);
            if *local {
                b.push(0x80);
                b.extend_from_slice(&[0, 0, 255, 255, 255, 255]);
            } else {
                b.push(0);
            }
            b.extend_from_slice(&[2, 2, 0x4C, 0x01, 0]);
        }
        b.push(0x3B);
        b
    }

    #[test]
    fn the_last_frame_counts_and_short_delays_count_as_a_tenth_of_a_second() {
        let scan = scan(&gif(true, &[(Some(500), false), (Some(500), false)])).unwrap();
        assert_eq!(
            (scan.frames, scan.last_start_cs, scan.total_cs),
            (2, 500, 1000)
        );
        assert_eq!(scan.seconds(), 10.0);
        let scan = scan_of(&[
            (Some(0), false),
            (Some(1), false),
            (None, false),
            (Some(2), false),
        ]);
        assert_eq!(
            (scan.frames, scan.last_start_cs, scan.total_cs),
            (4, 30, 32)
        );
    }

    fn scan_of(frames: &[(Option<u16>, bool)]) -> GifScan {
        scan(&gif(true, frames)).unwrap()
    }

    #[test]
    fn the_extent_covers_frames_that_reach_past_the_screen() {
        let mut b = gif(true, &[(Some(10), false)]);
        // Move the frame to (65535, 65280): a canvas of billions of pixels.
        let d = b.iter().position(|&x| x == 0x2C).unwrap();
        b[d + 1..d + 5].copy_from_slice(&[0xFF, 0xFF, 0x00, 0xFF]);
        let scan = scan(&b).unwrap();
        assert_eq!(scan.screen, (1, 1));
        assert_eq!(scan.extent, (65536, 65281));
    }

    #[test]
    fn broken_headers_are_invalid_media_and_junk_ends_the_frames() {
        assert!(matches!(
            scan(b"GIF89a\x01"),
            Err(MediaError::InvalidMedia(_))
        ));
        assert!(matches!(
            scan(b"\x89PNG\r\n\x1a\n\0\0\0\0\0"),
            Err(MediaError::InvalidMedia(_))
        ));
        let mut zero = gif(true, &[(Some(10), false)]);
        zero[6] = 0;
        assert!(
            matches!(scan(&zero), Err(MediaError::InvalidMedia(m)) if m.contains("0 pixels wide"))
        );
        let no_frames = gif(true, &[]);
        assert!(matches!(scan(&no_frames), Err(MediaError::InvalidMedia(_))));
        let mut twice = gif(true, &[(Some(10), false)]);
        twice.pop();
        twice.extend_from_slice(&gif(false, &[(Some(20), true)]));
        let both = scan(&twice).unwrap();
        assert_eq!((both.frames, both.total_cs), (2, 30));
        let mut junk = gif(true, &[(Some(10), false), (Some(10), false)]);
        let second = junk.iter().rposition(|&x| x == 0x21).unwrap();
        junk[second] = 0x47;
        assert_eq!(scan(&junk).unwrap().frames, 1);
    }
}
