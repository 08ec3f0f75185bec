//! The most memory an image step holds at once, from the headers and the operations
//! alone, before a pixel is decoded: what the step is charged against the node's
//! memory budget (`media::memory`).
//!
//! The count follows the pipeline: the file's bytes stay in memory while it is
//! decoded and transformed; each operation holds its input and its output picture;
//! what an operation keeps for itself (a drawn text, a scaled overlay) is held to the
//! end; the encoder holds the picture, the copy it converts and its output. The
//! largest stage is the step's peak.

use crate::format::MediaFormat;
use crate::media::image::frame_op::FrameOp;

/// Bytes per pixel of a picture in memory (RGBA, 8 bits).
const RGBA: u64 = 4;
/// Bytes per pixel while a non-JPEG file is decoded: a 16-bit picture, then its 8-bit
/// copy. A JPEG is decoded straight to 8 bits.
const DECODING: u64 = 8;
/// Bytes per output pixel while encoding: the picture, the encoder's converted copy,
/// and the encoded file at worst (an incompressible PNG).
const ENCODING: u64 = 3 * RGBA;
/// Bytes per output pixel per frame of an animation's encoded file at worst (a GIF
/// of noise), which the encoder holds until the last frame.
const ENCODED_FRAME: f64 = 1.25;

fn pixels((w, h): (u32, u32)) -> u64 {
    u64::from(w) * u64::from(h)
}

/// A still of `file_bytes` decoded at `decoded` pixels, `per_pixel` bytes each while
/// decoding (`None`: as its `format` may need at most), through `ops` on its `upright`
/// size; `turned` when turning it upright makes a copy.
pub(crate) fn still(
    (file_bytes, format, per_pixel): (u64, MediaFormat, Option<u64>),
    decoded: (u32, u32),
    (upright, turned): ((u32, u32), bool),
    ops: &[Box<dyn FrameOp>],
) -> u64 {
    let per_pixel = per_pixel.unwrap_or(if format == MediaFormat::Jpeg {
        RGBA
    } else {
        DECODING
    });
    let decoding = file_bytes + pixels(decoded) * per_pixel;
    let copy = if turned { pixels(upright) } else { 0 };
    let (transforming, last, kept) = through(ops, upright, pixels(decoded) + copy);
    let encoding = pixels(last) * ENCODING;
    decoding.max(file_bytes + transforming).max(encoding) + kept
}

/// Decoding alone: `file_bytes` of `format` decoded at `decoded`, turned upright.
pub(crate) fn decoding((file_bytes, format): (u64, MediaFormat), decoded: (u32, u32)) -> u64 {
    still((file_bytes, format, None), decoded, (decoded, true), &[])
}

/// An animation: `file_bytes`, frames of `canvas` pixels (`frames` of them, when the
/// headers say), through `ops`. The decoder keeps the canvas, the canvas it restores
/// and the frame it composes; the encoder its own canvases and the file it makes.
pub(crate) fn animation(
    file_bytes: u64,
    canvas: (u32, u32),
    frames: Option<u64>,
    ops: &[Box<dyn FrameOp>],
) -> u64 {
    let decoding = 3 * pixels(canvas) * RGBA;
    let (transforming, last, kept) = through(ops, canvas, pixels(canvas));
    let encoded = (frames.unwrap_or(1) as f64 * pixels(last) as f64 * ENCODED_FRAME) as u64;
    file_bytes + decoding + transforming + pixels(last) * ENCODING + encoded + kept
}

/// The largest stage of `ops` applied to a picture of `size` (`first_input` pixels
/// held going into the first), the size they make, and what the operations keep.
fn through(ops: &[Box<dyn FrameOp>], size: (u32, u32), first_input: u64) -> (u64, (u32, u32), u64) {
    let (mut peak, mut kept, mut size, mut held) = (first_input * RGBA, 0, size, first_input);
    for op in ops {
        kept += op.working_memory(size);
        // A refused size fails the step before it is charged (`output_size`).
        let out = op.output_size(size).unwrap_or(size);
        peak = peak.max((held + pixels(out)) * RGBA);
        (size, held) = (out, pixels(out));
    }
    (peak, size, kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::image::{overlay::Text, Scale};

    #[test]
    fn a_still_is_charged_its_largest_stage_and_what_its_operations_keep() {
        let halve: Vec<Box<dyn FrameOp>> = vec![Box::new(Scale(0.5))];
        let size = (4000, 3000);
        let jpeg = still(
            (1 << 20, MediaFormat::Jpeg, None),
            size,
            (size, true),
            &halve,
        );
        // Decoded and turned upright (both 12 MP) going into the resize: 96 MB.
        assert_eq!(jpeg, (1 << 20) + 2 * 12_000_000 * 4 + 3_000_000 * 4);
        let upright = still(
            (1 << 20, MediaFormat::Jpeg, None),
            size,
            (size, false),
            &halve,
        );
        assert_eq!(upright, (1 << 20) + 12_000_000 * 4 + 3_000_000 * 4);
        let png = still(
            (1 << 20, MediaFormat::Png, None),
            size,
            (size, true),
            &halve,
        );
        assert!(png >= jpeg, "a PNG may decode at 16 bits");
        // A 16-bit PNG decoded whole: 8 bytes a pixel, and the file beside it.
        let alone = decoding((5 << 20, MediaFormat::Png), size);
        assert!(alone >= (5 << 20) + 12_000_000 * 8, "{alone}");
        let text: Vec<Box<dyn FrameOp>> = vec![Box::new(Text::new("MM"))];
        let small = (400, 300);
        let with_text = still(
            (1 << 20, MediaFormat::Png, None),
            small,
            (small, false),
            &text,
        );
        let plain = still(
            (1 << 20, MediaFormat::Png, None),
            small,
            (small, false),
            &[],
        );
        assert!(with_text > plain, "the drawn text is counted");
    }

    #[test]
    fn an_animation_is_charged_its_frames_encoded_output() {
        let few = animation(1000, (500, 500), Some(10), &[]);
        let many = animation(1000, (500, 500), Some(1000), &[]);
        assert!(many - few >= 990 * 250_000, "{few} {many}");
    }
}
