//! The APNG writer: the APNG outputs, and the frames `gif-to-video` hands to ffmpeg.

/// An APNG written a frame at a time: every frame the whole canvas (8-bit RGBA, or RGB
/// for opaque frames; fast deflate), the default image kept apart when the source kept
/// it apart.
pub(crate) struct ApngWriter<W: std::io::Write> {
    writer: png::Writer<W>,
}

impl<W: std::io::Write> ApngWriter<W> {
    /// `frames` is the animation's frame count (the default image not counted), which
    /// the `acTL` chunk states before any frame.
    pub fn new(
        out: W,
        (width, height): (u32, u32),
        color: png::ColorType,
        frames: u32,
        plays: u32,
        separate_default: bool,
    ) -> Result<ApngWriter<W>, png::EncodingError> {
        let header = ((width, height), color, frames, plays);
        ApngWriter::with(out, header, png::Compression::Fast, separate_default)
    }

    /// An APNG of opaque RGB frames that go straight to a reader (ffmpeg through a
    /// pipe) and are never stored: neither filtered nor compressed, which would cost
    /// both ends more than moving the bytes does. It plays once: ffmpeg 5.1's `apng`
    /// demuxer asks a looping file for its size (to loop by seeking back), which a
    /// pipe cannot tell ("Function not implemented"), and keeps what it reads ahead
    /// only for a file played once.
    pub fn unpacked(
        out: W,
        size: (u32, u32),
        frames: u32,
    ) -> Result<ApngWriter<W>, png::EncodingError> {
        let header = (size, png::ColorType::Rgb, frames, 1);
        ApngWriter::with(out, header, png::Compression::NoCompression, false)
    }

    fn with(
        out: W,
        ((width, height), color, frames, plays): ((u32, u32), png::ColorType, u32, u32),
        compression: png::Compression,
        separate_default: bool,
    ) -> Result<ApngWriter<W>, png::EncodingError> {
        let mut encoder = png::Encoder::new(out, width, height);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(compression);
        encoder.set_animated(frames, plays)?;
        encoder.set_sep_def_img(separate_default)?;
        Ok(ApngWriter {
            writer: encoder.write_header()?,
        })
    }

    /// Writes the default image (first, and only when it was declared separate) or the
    /// next frame, shown for `delay_ms`.
    pub fn add(&mut self, pixels: &[u8], delay_ms: f64) -> Result<(), png::EncodingError> {
        let (num, den) = delay_fraction(delay_ms);
        self.writer.set_frame_delay(num, den)?;
        self.writer.write_image_data(pixels)
    }

    pub fn finish(self) -> Result<(), png::EncodingError> {
        self.writer.finish()
    }
}

/// A delay in milliseconds as `fcTL`'s 16-bit fraction of a second: exact for whole
/// milliseconds up to 65.535 s and for thirds, hundredths and tenths of a second.
fn delay_fraction(delay_ms: f64) -> (u16, u16) {
    for den in [1000u16, 100, 10, 1, 300] {
        let num = delay_ms * f64::from(den) / 1000.0;
        if (num - num.round()).abs() < 1e-6 && num.round() <= f64::from(u16::MAX) {
            return (num.round() as u16, den);
        }
    }
    // Past what 16 bits of milliseconds hold: whole seconds.
    let seconds = (delay_ms / 1000.0).round().min(f64::from(u16::MAX));
    (seconds as u16, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_keep_their_fraction_of_a_second() {
        assert_eq!(delay_fraction(100.0), (100, 1000));
        assert_eq!(delay_fraction(1000.0 / 3.0), (100, 300));
        assert_eq!(delay_fraction(70_000.0), (7000, 100));
        assert_eq!(delay_fraction(0.0), (0, 1000));
    }
}
