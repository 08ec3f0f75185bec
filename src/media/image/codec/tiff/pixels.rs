//! The sample layouts this reader takes, and their rows turned into pixels.

/// How the samples of one pixel become an sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Samples {
    /// Three 8-bit samples, red, green, blue: the common TIFF, copied as it is.
    Rgb8,
    /// One 8-bit grey sample, 0 black.
    Grey8,
    /// One 12-bit unsigned grey sample, packed most significant bit first.
    Grey12,
    /// One 32-bit grey sample, signed or not (Pillow reads both as signed).
    GreyInt32,
    /// One 32-bit IEEE floating-point grey sample.
    GreyFloat32,
    /// Four 16-bit inks: cyan, magenta, yellow, black.
    Cmyk16,
}

impl Samples {
    pub(super) fn bits_per_pixel(self) -> u64 {
        match self {
            Samples::Grey8 => 8,
            Samples::Rgb8 => 24,
            Samples::Grey12 => 12,
            Samples::GreyInt32 | Samples::GreyFloat32 => 32,
            Samples::Cmyk16 => 64,
        }
    }

    /// Bytes of a row of `width` pixels (a 12-bit row ends on a whole byte).
    pub(super) fn row_bytes(self, width: u32) -> usize {
        (u64::from(width) * self.bits_per_pixel()).div_ceil(8) as usize
    }

    /// The colours of the first `out.len() / 3` pixels of a decoded `row` into `out`;
    /// 8-bit RGB is copied as it is.
    pub(super) fn write_row(self, row: &[u8], out: &mut [u8]) {
        if self == Samples::Rgb8 {
            out.copy_from_slice(&row[..out.len()]);
            return;
        }
        for (x, pixel) in out.chunks_exact_mut(3).enumerate() {
            pixel.copy_from_slice(&self.rgb(row, x));
        }
    }

    /// The colour of pixel `x` of a decoded `row`, which holds at least `x + 1` pixels.
    pub(super) fn rgb(self, row: &[u8], x: usize) -> [u8; 3] {
        let grey = |v: u8| [v, v, v];
        match self {
            Samples::Rgb8 => [row[x * 3], row[x * 3 + 1], row[x * 3 + 2]],
            Samples::Grey8 => grey(row[x]),
            Samples::Grey12 => {
                let at = x * 3 / 2;
                let v = if x % 2 == 0 {
                    u16::from(row[at]) << 4 | u16::from(row[at + 1]) >> 4
                } else {
                    u16::from(row[at] & 0x0F) << 8 | u16::from(row[at + 1])
                };
                grey((v >> 8) as u8)
            }
            Samples::GreyInt32 => {
                let v = i32::from_ne_bytes(word(row, x));
                grey((v >> 8).clamp(0, 255) as u8)
            }
            // `as` truncates towards zero, saturates, and makes NaN 0: Pillow's F to L.
            Samples::GreyFloat32 => grey(f32::from_ne_bytes(word(row, x)) as u8),
            Samples::Cmyk16 => {
                let ink = |i: usize| {
                    let at = (x * 4 + i) * 2;
                    (u16::from_ne_bytes([row[at], row[at + 1]]) >> 8) as u8
                };
                let k = 255 - u32::from(ink(3));
                // Pillow's cmyk2rgb: (255 - ink) scaled by (255 - black), rounded.
                let channel = |i: usize| {
                    let t = u32::from(ink(i)) * k + 128;
                    (k - ((t >> 8) + t) / 256) as u8
                };
                [channel(0), channel(1), channel(2)]
            }
        }
    }
}

pub(super) fn word(row: &[u8], x: usize) -> [u8; 4] {
    row[x * 4..x * 4 + 4].try_into().unwrap()
}
