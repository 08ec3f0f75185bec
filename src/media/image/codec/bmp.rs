//! BMP, read as Pillow (the reference decoder of the real-file checks) reads it.
//!
//! The `image` crate's reader refuses files every viewer shows (a `planes` field other
//! than 1, an RLE bitmap stored top-down, OS/2 2.x headers, a run longer than its row)
//! and draws others differently (the pixel data offset of the file header ignored,
//! RLE deltas as transparency). A BMP is small enough a format to read whole here:
//!
//! - headers of 12 (OS/2 1.x), 40, 52, 56, 64 (OS/2 2.x), 108 and 124 bytes;
//! - 1, 4 and 8 bits through a palette (3- or 4-byte entries; an index past its end is
//!   black), 16 bits as 5-5-5, 24 and 32 bits as BGR (a 32-bit pixel's fourth byte is
//!   not alpha unless a bit mask says so);
//! - `BI_BITFIELDS` with any contiguous masks of 16 and 32-bit pixels (Pillow takes a
//!   fixed list of common ones; the others are as valid, and read the same way);
//! - `BI_RLE8` and `BI_RLE4` as Pillow 13 decodes them: a delta or an end of line leaves
//!   palette index 0, a run is cut at its row's end, and the bitmap must be complete;
//! - rows bottom-up, or top-down for a negative height.
//!
//! Pixel data that ends early is refused, as Pillow refuses it; the pixel limit is
//! checked from the header before anything is allocated.

use image::{DynamicImage, RgbImage, RgbaImage};

use crate::media::error::MediaError;

/// A BMP whose header has been read.
pub(crate) struct BmpFile<'a> {
    bytes: &'a [u8],
    pub width: u32,
    pub height: u32,
    top_down: bool,
    bits: u16,
    pixels: Pixels,
    /// Where the pixel data starts.
    start: usize,
}

enum Pixels {
    /// 1, 4 or 8-bit indices into these colours.
    Palette(Vec<[u8; 3]>),
    /// RLE8 or RLE4 (`true`) indices into these colours.
    Rle(Vec<[u8; 3]>, bool),
    /// 16, 24 or 32-bit pixels, each channel (R, G, B, A) where its mask says.
    Masked([u32; 4]),
}

const RAW: u32 = 0;
const RLE8: u32 = 1;
const RLE4: u32 = 2;
const BITFIELDS: u32 = 3;

fn damaged(what: &str) -> MediaError {
    MediaError::InvalidMedia(format!("the BMP is damaged: {what}"))
}

fn unsupported(what: String) -> MediaError {
    MediaError::InvalidMedia(format!(
        "the BMP uses {what}, which no supported decoder reads"
    ))
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// Reads the headers and the palette of `bytes`, a file starting with `BM`.
pub(crate) fn open(bytes: &[u8]) -> Result<BmpFile<'_>, MediaError> {
    let short = || damaged("its header ends early");
    let offset = u32_at(bytes, 10).ok_or_else(short)? as usize;
    let header_size = u32_at(bytes, 14).ok_or_else(short)? as usize;
    let header = bytes.get(14..14 + header_size).ok_or_else(short)?;
    let (width, height, top_down, bits, compression, colours, entry) = match header_size {
        12 => {
            let field = |at| u16_at(header, at).map(u32::from);
            let (w, h, bits) = (field(4), field(6), u16_at(header, 10));
            (w, h, false, bits, RAW, 0, 3)
        }
        40 | 52 | 56 | 64 | 108 | 124 => {
            // A negative height (its top byte 0xFF, as Pillow tests it) is top-down.
            let top_down = header[11] == 0xFF;
            let stored = u32_at(header, 8).ok_or_else(short)?;
            let height = if top_down {
                stored.wrapping_neg()
            } else {
                stored
            };
            let colours = u32_at(header, 32).ok_or_else(short)?;
            let compression = u32_at(header, 16).ok_or_else(short)?;
            let (w, bits) = (u32_at(header, 4), u16_at(header, 14));
            (w, Some(height), top_down, bits, compression, colours, 4)
        }
        size => return Err(unsupported(format!("a header of {size} bytes"))),
    };
    let (width, height, bits) = (
        width.ok_or_else(short)?,
        height.ok_or_else(short)?,
        bits.ok_or_else(short)?,
    );
    if width == 0 || height == 0 {
        return Err(damaged("it declares no pixels"));
    }
    if ![1, 4, 8, 16, 24, 32].contains(&bits) {
        return Err(unsupported(format!("{bits} bits per pixel")));
    }
    // After the header: the bit masks of a 40-byte header, then the palette.
    let mut at = 14 + header_size;
    let count = match colours {
        0 if bits <= 8 => 1u32 << bits,
        declared => declared,
    };
    let palette_bytes = if bits <= 8 { entry * count as usize } else { 0 };
    let pixels = match compression {
        BITFIELDS if bits >= 16 => {
            let masks = if header_size >= 52 {
                let mask = |i: usize| u32_at(header, 40 + 4 * i).unwrap_or(0);
                [
                    mask(0),
                    mask(1),
                    mask(2),
                    if header_size >= 56 { mask(3) } else { 0 },
                ]
            } else {
                at += 12;
                let mask = |i: usize| u32_at(bytes, 54 + 4 * i).ok_or_else(short);
                [mask(0)?, mask(1)?, mask(2)?, 0]
            };
            Pixels::Masked(checked_masks(masks, bits)?)
        }
        RAW if bits >= 16 => Pixels::Masked(match bits {
            16 => [0x7C00, 0x3E0, 0x1F, 0],
            _ => BGR,
        }),
        RAW | RLE8 | RLE4 if bits <= 8 => {
            if count > 256 {
                return Err(damaged(
                    "its palette has more colours than its pixels can name",
                ));
            }
            let end = (at + entry * count as usize).min(bytes.len());
            let palette = bytes
                .get(at..end)
                .unwrap_or_default()
                .chunks_exact(entry)
                .map(|bgr| [bgr[2], bgr[1], bgr[0]])
                .collect();
            match compression {
                RAW => Pixels::Palette(palette),
                rle => Pixels::Rle(palette, rle == RLE4),
            }
        }
        other => {
            return Err(unsupported(format!(
                "compression {other} with {bits} bits per pixel"
            )))
        }
    };
    // A file whose data offset points at its palette means the data after it (Pillow).
    let start = match offset {
        0 => at + palette_bytes,
        o if o == 14 + header_size => o + palette_bytes,
        o => o,
    };
    Ok(BmpFile {
        bytes,
        width,
        height,
        top_down,
        bits,
        pixels,
        start,
    })
}

/// `masks` if each is one run of set bits within a `bits`-bit pixel. Masks all zero
/// mean BGRA, as Pillow reads them.
fn checked_masks(masks: [u32; 4], bits: u16) -> Result<[u32; 4], MediaError> {
    if masks == [0; 4] && bits == 32 {
        return Ok([0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000]);
    }
    let fits = |m: u32| bits == 32 || m >> bits == 0;
    let contiguous = |m: u32| {
        let run = m.checked_shr(m.trailing_zeros()).unwrap_or(0);
        run & run.wrapping_add(1) == 0
    };
    if !masks.iter().all(|&m| fits(m) && contiguous(m)) || masks[..3] == [0; 3] {
        return Err(unsupported(format!(
            "bit masks on {bits}-bit pixels that are not channels"
        )));
    }
    Ok(masks)
}

impl BmpFile<'_> {
    /// The pixels as `Rgb8`, or `Rgba8` when an alpha mask is set.
    pub fn decode(self) -> Result<DynamicImage, MediaError> {
        let (w, h) = (self.width as usize, self.height as usize);
        let rows: Vec<u8> = match &self.pixels {
            Pixels::Rle(palette, rle4) => {
                let indices = self.rle_indices(*rle4)?;
                expand(&indices, palette)
            }
            Pixels::Palette(palette) => {
                let mut indices = Vec::with_capacity(w * h);
                for row in self.stored_rows()? {
                    indices.extend(unpack_indices(row, self.bits, w));
                }
                expand(&indices, palette)
            }
            Pixels::Masked(BGR) if self.bits == 24 => self.bgr_rows()?,
            Pixels::Masked(masks) => return self.decode_masked(*masks),
        };
        let rows = self.upright(rows, w * 3);
        Ok(DynamicImage::ImageRgb8(
            RgbImage::from_raw(self.width, self.height, rows).expect("sized by the header"),
        ))
    }

    /// The stored rows of a raw bitmap, in file order, each its padded stride long but
    /// the last, which may lack its padding (Pillow reads only what it needs).
    fn stored_rows(&self) -> Result<std::slice::Chunks<'_, u8>, MediaError> {
        let bits = u64::from(self.width) * u64::from(self.bits);
        let stride = bits.div_ceil(32) * 4;
        let needed = stride * (u64::from(self.height) - 1) + bits.div_ceil(8);
        let data = usize::try_from(needed)
            .ok()
            .and_then(|len| self.bytes.get(self.start..self.start.checked_add(len)?))
            .ok_or_else(|| damaged("its pixel data ends early"))?;
        Ok(data.chunks(stride as usize))
    }

    fn decode_masked(&self, masks: [u32; 4]) -> Result<DynamicImage, MediaError> {
        let alpha = masks[3] != 0;
        let channels = if alpha { 4 } else { 3 };
        let bytes_per_pixel = usize::from(self.bits / 8);
        let mut out = Vec::with_capacity(self.width as usize * self.height as usize * channels);
        for row in self.stored_rows()? {
            for pixel in row.chunks_exact(bytes_per_pixel).take(self.width as usize) {
                let mut value = [0u8; 4];
                value[..bytes_per_pixel].copy_from_slice(pixel);
                let value = u32::from_le_bytes(value);
                for mask in &masks[..channels] {
                    out.push(channel(value, *mask));
                }
            }
        }
        let out = self.upright(out, self.width as usize * channels);
        let (w, h) = (self.width, self.height);
        Ok(if alpha {
            DynamicImage::ImageRgba8(RgbaImage::from_raw(w, h, out).expect("sized"))
        } else {
            DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, out).expect("sized"))
        })
    }

    /// The RGB rows of [`BGR`] pixels of 24 bits, the common bitmap (ffmpeg's stills),
    /// a row at a time: what the masks give, where the general path masks each channel
    /// of each pixel (8 % of the service's CPU over a `video-scenes` edit).
    fn bgr_rows(&self) -> Result<Vec<u8>, MediaError> {
        let row_length = self.width as usize * 3;
        let mut out = vec![0u8; row_length * self.height as usize];
        for (row, stored) in out.chunks_exact_mut(row_length).zip(self.stored_rows()?) {
            for (to, from) in row.chunks_exact_mut(3).zip(stored.chunks_exact(3)) {
                to.copy_from_slice(&[from[2], from[1], from[0]]);
            }
        }
        Ok(out)
    }

    /// Rows in file order turned top-down.
    fn upright(&self, mut rows: Vec<u8>, row_length: usize) -> Vec<u8> {
        if !self.top_down {
            let height = rows.len() / row_length;
            for y in 0..height / 2 {
                let (top, bottom) = rows.split_at_mut((height - 1 - y) * row_length);
                top[y * row_length..(y + 1) * row_length]
                    .swap_with_slice(&mut bottom[..row_length]);
            }
        }
        rows
    }

    /// The palette indices an RLE bitmap draws, in file row order (Pillow 13's
    /// `BmpRleDecoder`, to the byte).
    fn rle_indices(&self, rle4: bool) -> Result<Vec<u8>, MediaError> {
        let width = self.width as usize;
        let total = width * self.height as usize;
        let mut data: Vec<u8> = Vec::new();
        let mut at = self.start;
        let mut x = 0usize;
        let next = |at: &mut usize| {
            let byte = self.bytes.get(*at).copied();
            *at += 1;
            byte
        };
        while data.len() < total {
            let (Some(count), Some(byte)) = (next(&mut at), next(&mut at)) else {
                break;
            };
            let count = usize::from(count);
            if count > 0 {
                let count = count.min(width.saturating_sub(x));
                let (high, low) = if rle4 {
                    (byte >> 4, byte & 15)
                } else {
                    (byte, byte)
                };
                data.extend((0..count).map(|i| if i % 2 == 0 { high } else { low }));
                x += count;
                continue;
            }
            match byte {
                0 => {
                    data.resize(data.len().next_multiple_of(width), 0);
                    x = 0;
                }
                1 => break,
                2 => {
                    let (Some(right), Some(up)) = (next(&mut at), next(&mut at)) else {
                        break;
                    };
                    let skip = usize::from(right) + usize::from(up) * width;
                    data.resize(data.len() + skip.min(total - data.len()), 0);
                    x = data.len() % width;
                }
                run => {
                    let wanted = usize::from(run).min(total - data.len());
                    let stored = if rle4 { wanted.div_ceil(2) } else { wanted };
                    let end = (at + stored).min(self.bytes.len());
                    let read = &self.bytes[at.min(end)..end];
                    at = end;
                    if rle4 {
                        for (i, byte) in read.iter().enumerate() {
                            data.push(byte >> 4);
                            if i * 2 + 1 < wanted {
                                data.push(byte & 15);
                            }
                        }
                    } else {
                        data.extend_from_slice(read);
                    }
                    if read.len() < stored || data.len() == total {
                        break;
                    }
                    x += usize::from(run);
                    at += at % 2;
                }
            }
        }
        if data.len() < total {
            return Err(damaged("its compressed pixels end before the bitmap does"));
        }
        data.truncate(total);
        Ok(data)
    }
}

/// The masks of 24- and 32-bit pixels stored without masks: blue, green, red, low
/// byte first.
const BGR: [u32; 4] = [0xFF_0000, 0xFF00, 0xFF, 0];

/// The 8-bit value of the channel `mask` selects in `pixel`, scaled as Pillow's
/// unpackers scale 5- and 6-bit channels (truncating).
fn channel(pixel: u32, mask: u32) -> u8 {
    if mask == 0 {
        return 0;
    }
    let shift = mask.trailing_zeros();
    let max = u64::from(mask >> shift);
    let value = u64::from((pixel & mask) >> shift);
    (value * 255 / max) as u8
}

/// The `width` indices of one stored row of `bits`-bit indices, most significant first.
fn unpack_indices(row: &[u8], bits: u16, width: usize) -> impl Iterator<Item = u8> + '_ {
    let per_byte = 8 / usize::from(bits);
    let mask = ((1u16 << bits) - 1) as u8;
    (0..width).map(move |x| {
        let byte = row[x / per_byte];
        let shift = 8 - usize::from(bits) * (x % per_byte + 1);
        (byte >> shift) & mask
    })
}

/// RGB for each index; an index past the palette's end is black, as in Pillow.
fn expand(indices: &[u8], palette: &[[u8; 3]]) -> Vec<u8> {
    indices
        .iter()
        .flat_map(|&i| palette.get(usize::from(i)).copied().unwrap_or([0; 3]))
        .collect()
}

#[cfg(test)]
mod tests;
