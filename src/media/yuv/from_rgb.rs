//! RGB to WebP's 4:2:0 YCbCr by libwebp's own converter, a band of rows per core.
//!
//! `cwebp` hands libwebp RGB and libwebp converts it on one core before encoding
//! (`WebPPictureImportRGB`); the `webp` crate even packs it into ARGB first and
//! converts that. For a 12 MP photo that is some 50 ms with the other cores idle.
//! Each 2×2 block's chroma depends on its own pixels only, so bands of an even number
//! of rows, converted apart by the same function and copied into one picture, give
//! the planes one conversion of the whole picture gives.

use libwebp_sys as sys;

use super::Yuv420;
use crate::media::MediaError;

/// Below this many rows a thread converts for less time than it takes to start.
const MIN_BAND_ROWS: usize = 256;

impl Yuv420 {
    /// `rgb` (`width` × `height` interleaved 8-bit RGB) as libwebp converts it.
    pub fn from_rgb(rgb: &[u8], width: u32, height: u32) -> Result<Yuv420, MediaError> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let bands = cores.min(height as usize / MIN_BAND_ROWS).max(1);
        Yuv420::from_rgb_in_bands(rgb, width, height, bands)
    }

    pub(super) fn from_rgb_in_bands(
        rgb: &[u8],
        width: u32,
        height: u32,
        bands: usize,
    ) -> Result<Yuv420, MediaError> {
        let (w, h) = (width as usize, height as usize);
        let (cw, ch) = Yuv420::chroma_size(width, height);
        if rgb.len() < w * h * 3 || width == 0 || height == 0 {
            return Err(refused("pixels smaller than the picture"));
        }
        let mut out = Yuv420 {
            width,
            height,
            y: vec![0; w * h],
            u: vec![0; cw * ch],
            v: vec![0; cw * ch],
        };
        let band_rows = h.div_ceil(bands).next_multiple_of(2);
        std::thread::scope(|scope| {
            let workers: Vec<_> = rgb[..w * h * 3]
                .chunks(band_rows * w * 3)
                .zip(out.y.chunks_mut(band_rows * w))
                .zip(out.u.chunks_mut(band_rows / 2 * cw))
                .zip(out.v.chunks_mut(band_rows / 2 * cw))
                .map(|(((rgb, y), u), v)| scope.spawn(move || convert_band(rgb, width, y, u, v)))
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })?;
        Ok(out)
    }
}

fn refused(what: &str) -> MediaError {
    tracing::warn!(error = %what, "a picture could not be converted for WebP");
    MediaError::InvalidMedia("the picture could not be encoded as WebP".into())
}

/// Converts the rows of `rgb` into `y`, `u` and `v` (their rows of the picture).
fn convert_band(
    rgb: &[u8],
    width: u32,
    y: &mut [u8],
    u: &mut [u8],
    v: &mut [u8],
) -> Result<(), MediaError> {
    let w = width as usize;
    let rows = rgb.len() / (w * 3);
    let mut picture = sys::WebPPicture::new().map_err(|()| refused("picture"))?;
    picture.use_argb = 0;
    picture.width = width as i32;
    picture.height = rows as i32;
    // SAFETY: `rgb` holds `rows` rows of `w * 3` bytes; libwebp allocates the band's
    // planes itself (freed below) and they hold what its strides say.
    unsafe {
        if sys::WebPPictureImportRGB(&mut picture, rgb.as_ptr(), (w * 3) as i32) == 0 {
            sys::WebPPictureFree(&mut picture);
            return Err(refused("import"));
        }
        let cw = w.div_ceil(2);
        copy_plane(picture.y, picture.y_stride, w, y);
        copy_plane(picture.u, picture.uv_stride, cw, u);
        copy_plane(picture.v, picture.uv_stride, cw, v);
        sys::WebPPictureFree(&mut picture);
    }
    Ok(())
}

/// Copies rows of `width` bytes, `stride` apart from `from`, into `to` (whole rows).
///
/// SAFETY: `from` holds `to.len() / width` rows `stride` apart.
unsafe fn copy_plane(from: *const u8, stride: i32, width: usize, to: &mut [u8]) {
    for (row, line) in to.chunks_exact_mut(width).enumerate() {
        let start = from.add(row * stride as usize);
        line.copy_from_slice(std::slice::from_raw_parts(start, width));
    }
}

#[cfg(test)]
mod tests {
    use super::Yuv420;

    #[test]
    fn bands_convert_as_one_conversion_of_the_whole_picture() {
        // Odd sizes: the last chroma column and row cover a single pixel.
        let (width, height) = (97u32, 203u32);
        let rgb: Vec<u8> = (0..width * height * 3)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let whole = Yuv420::from_rgb_in_bands(&rgb, width, height, 1).unwrap();
        let bands = Yuv420::from_rgb_in_bands(&rgb, width, height, 3).unwrap();
        assert_eq!((whole.y.len(), whole.u.len()), (97 * 203, 49 * 102));
        assert!(whole.y == bands.y && whole.u == bands.u && whole.v == bands.v);
        // And the same picture libwebp's one-call import encodes.
        let ours = Yuv420::from_rgb_in_bands(&rgb, width, height, 3)
            .unwrap()
            .encode_webp(80.0)
            .unwrap();
        let theirs = webp::Encoder::from_rgb(&rgb, width, height).encode_simple(false, 80.0);
        assert_eq!(ours, theirs.unwrap().to_vec());
    }
}
