//! The sample layouts Pillow reads that libtiff's RGBA interface refuses: grey of 12 or
//! 32 bits (integer or floating point) and 16-bit CMYK. libtiff still decodes them
//! (`TIFFReadEncodedStrip`/`TIFFReadEncodedTile` undo the compression, the predictor and
//! the byte order); this turns the decoded samples into 8-bit RGB the way Pillow's
//! `convert` does, so the picture matches the reference:
//!
//! - 12-bit grey is Pillow's `I;16` with the 12-bit values unscaled, shown as the high
//!   byte of 16 bits (so a 12-bit white is a dark grey 15, as in Pillow);
//! - 32-bit integer grey is Pillow's `I`: the value shifted right by 8, clipped to 0–255;
//! - 32-bit float grey is Pillow's `F`: the value truncated and clipped to 0–255;
//! - 16-bit CMYK keeps the high byte of each ink, then Pillow's CMYK to RGB.
//!
//! Every buffer is sized from the header, bounded by the picture (already checked
//! against the pixel limit): a strip never holds more rows than the picture, and a tile
//! larger than the picture by more than the 16-pixel tile granularity is refused.

use std::ffi::c_void;

use image::{DynamicImage, RgbImage};

use crate::media::error::MediaError;
use crate::media::image::codec::sys::tiff::{
    tmsize_t, TIFFComputeStrip, TIFFComputeTile, TIFFIsTiled, TIFFReadEncodedStrip,
    TIFFReadEncodedTile, TIFFTAG_ROWSPERSTRIP, TIFFTAG_TILELENGTH, TIFFTAG_TILEWIDTH,
};
use crate::media::image::codec::tiff::file::{damaged, TiffFile};

use crate::media::image::codec::tiff::pixels::Samples;

impl TiffFile<'_> {
    /// The first page as stored, through the strips or tiles libtiff decodes.
    pub(super) fn decode_samples(&self, samples: Samples) -> Result<DynamicImage, MediaError> {
        let (width, height) = (self.width, self.height);
        let mut rgb = vec![0u8; width as usize * height as usize * 3];
        // SAFETY: `tiff` is open for the life of `self`.
        if unsafe { TIFFIsTiled(self.tiff) } != 0 {
            self.read_tiles(samples, &mut rgb)?;
        } else {
            self.read_strips(samples, &mut rgb)?;
        }
        Ok(DynamicImage::ImageRgb8(
            RgbImage::from_raw(width, height, rgb).unwrap(),
        ))
    }

    /// The strips, decoded on every core: each thread opens the TIFF again over the same
    /// bytes (a libtiff handle is not to be shared) and decodes a band of whole strips.
    /// LZW and Deflate are decoded one strip at a time, so one thread would leave the
    /// other cores idle while the page is read (12 MP of LZW: 0.21 s on one core).
    fn read_strips(&self, samples: Samples, rgb: &mut [u8]) -> Result<(), MediaError> {
        let height = self.height;
        // RowsPerStrip past the height (2^32 - 1 is the default) means a single strip.
        let rows_per_strip = self
            .defaulted::<u32>(TIFFTAG_ROWSPERSTRIP)
            .unwrap_or(height);
        let rows_per_strip = rows_per_strip.clamp(1, height) as usize;
        let strips = (height as usize).div_ceil(rows_per_strip);
        let threads = crate::media::cores().min(strips).clamp(1, 8);
        let band_rows = strips.div_ceil(threads) * rows_per_strip;
        let band_bytes = band_rows * self.width as usize * 3;
        if threads == 1 {
            return self.read_band(samples, rows_per_strip, 0, rgb);
        }
        let bytes = self._cursor.bytes;
        std::thread::scope(|scope| {
            let workers: Vec<_> = rgb
                .chunks_mut(band_bytes)
                .enumerate()
                .map(|(i, band)| {
                    scope.spawn(move || {
                        let file = crate::media::image::codec::tiff::file::open(bytes)?;
                        file.read_band(samples, rows_per_strip, i * band_rows, band)
                    })
                })
                .collect();
            crate::media::cores::join_bands(workers)
        })
    }

    /// The rows of `band` (whole strips, the first at row `first`) from their strips.
    fn read_band(
        &self,
        samples: Samples,
        rows_per_strip: usize,
        first: usize,
        band: &mut [u8],
    ) -> Result<(), MediaError> {
        let width = self.width as usize;
        let row_bytes = samples.row_bytes(self.width);
        let band_rows = band.len() / (width * 3);
        let mut strip = vec![0u8; row_bytes * rows_per_strip];
        for top in (0..band_rows).step_by(rows_per_strip) {
            let rows = rows_per_strip.min(band_rows - top);
            let want = &mut strip[..row_bytes * rows];
            // SAFETY: `want` holds `want.len()` bytes, the most libtiff writes.
            let read = unsafe {
                let index = TIFFComputeStrip(self.tiff, (first + top) as u32, 0);
                let at = want.as_mut_ptr() as *mut c_void;
                TIFFReadEncodedStrip(self.tiff, index, at, want.len() as tmsize_t)
            };
            // A strip shorter than its rows is damaged: Pillow refuses it too.
            if read != want.len() as tmsize_t {
                return Err(damaged("is damaged and no decoder can read it"));
            }
            for (y, row) in want.chunks_exact(row_bytes).enumerate() {
                samples.write_row(row, &mut band[(top + y) * width * 3..][..width * 3]);
            }
        }
        Ok(())
    }

    fn read_tiles(&self, samples: Samples, rgb: &mut [u8]) -> Result<(), MediaError> {
        let (width, height) = (self.width, self.height);
        let tile_width = self.defaulted::<u32>(TIFFTAG_TILEWIDTH).unwrap_or(0);
        let tile_height = self.defaulted::<u32>(TIFFTAG_TILELENGTH).unwrap_or(0);
        // Tiles are multiples of 16 pixels; one larger than that past the picture would
        // make a buffer the header's size check never saw.
        let fits = |tile: u32, side: u32| tile > 0 && tile <= side.next_multiple_of(16);
        if !fits(tile_width, width) || !fits(tile_height, height) {
            return Err(damaged("declares tiles larger than its picture"));
        }
        let row_bytes = samples.row_bytes(tile_width);
        let mut tile = vec![0u8; row_bytes * tile_height as usize];
        for top in (0..height).step_by(tile_height as usize) {
            for left in (0..width).step_by(tile_width as usize) {
                // SAFETY: `tile` holds `tile.len()` bytes, the most libtiff writes.
                let read = unsafe {
                    let index = TIFFComputeTile(self.tiff, left, top, 0, 0);
                    let at = tile.as_mut_ptr() as *mut c_void;
                    TIFFReadEncodedTile(self.tiff, index, at, tile.len() as tmsize_t)
                };
                if read != tile.len() as tmsize_t {
                    return Err(damaged("is damaged and no decoder can read it"));
                }
                let rows = tile_height.min(height - top) as usize;
                let columns = tile_width.min(width - left) as usize;
                for (y, row) in tile.chunks_exact(row_bytes).take(rows).enumerate() {
                    let out = ((top as usize + y) * width as usize + left as usize) * 3;
                    samples.write_row(row, &mut rgb[out..out + columns * 3]);
                }
            }
        }
        Ok(())
    }
}
