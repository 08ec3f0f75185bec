//! RGB to 4:2:0 YCbCr on every core: by libwebp's own converter for WebP
//! ([`Yuv420::from_rgb_as_libwebp`]), and with a given matrix for ffmpeg
//! ([`Yuv420::from_rgb`]).
//!
//! `cwebp` hands libwebp RGB and libwebp converts it on one core before encoding
//! (`WebPPictureImportRGB`); the `webp` crate even packs it into ARGB first and
//! converts that. For a 12 MP photo that is some 50 ms with the other cores idle.
//! Each 2×2 block's chroma depends on its own pixels only, so bands of an even number
//! of rows, converted apart by the same function and copied into one picture, give
//! the planes one conversion of the whole picture gives.

use std::convert::Infallible;

use image::RgbImage;
use libwebp_sys as sys;

use crate::media::error::MediaError;
use crate::media::image::yuv::matrix::{fixed, Matrix};
use crate::media::image::yuv::yuv420::Yuv420;

/// Below this many rows a thread converts for less time than it takes to start.
const MIN_BAND_ROWS: u32 = 256;

impl Yuv420 {
    /// `rgb` (`width` × `height` interleaved 8-bit RGB) as libwebp converts it.
    pub fn from_rgb_as_libwebp(rgb: &[u8], width: u32, height: u32) -> Result<Yuv420, MediaError> {
        let bands = crate::media::cores::band_count(height, MIN_BAND_ROWS);
        Yuv420::from_rgb_in_bands(rgb, width, height, bands)
    }

    /// `rgba` (interleaved 8-bit RGBA) as libwebp converts it: chroma weighted by
    /// alpha where a block is partly transparent, and the alpha plane kept when some
    /// pixel is not opaque.
    pub fn from_rgba_as_libwebp(
        rgba: &[u8],
        width: u32,
        height: u32,
    ) -> Result<Yuv420, MediaError> {
        let bands = crate::media::cores::band_count(height, MIN_BAND_ROWS);
        Yuv420::from_pixels_in_bands(rgba, Layout::Rgba, width, height, bands)
    }

    pub(super) fn from_rgb_in_bands(
        rgb: &[u8],
        width: u32,
        height: u32,
        bands: usize,
    ) -> Result<Yuv420, MediaError> {
        Yuv420::from_pixels_in_bands(rgb, Layout::Rgb, width, height, bands)
    }

    fn from_pixels_in_bands(
        pixels: &[u8],
        layout: Layout,
        width: u32,
        height: u32,
        bands: usize,
    ) -> Result<Yuv420, MediaError> {
        let size = width as usize * height as usize * layout.channels();
        if pixels.len() < size || width == 0 || height == 0 {
            return Err(refused("pixels smaller than the picture"));
        }
        let mut picture = in_bands(pixels, layout, width, height, bands, |pixels, planes| {
            convert_band(pixels, layout, width, planes)
        })?;
        // libwebp keeps no alpha for a picture without a transparent pixel.
        if picture
            .a
            .as_ref()
            .is_some_and(|a| a.iter().all(|&x| x == 255))
        {
            picture.a = None;
        }
        Ok(picture)
    }

    /// `rgb` in limited-range YCbCr with `matrix`, each chroma sample the mean of its
    /// 2×2 block: what ffmpeg's `scale` filter makes of RGB for x264, made here on
    /// every core instead of on ffmpeg's one filter thread.
    pub fn from_rgb(rgb: &RgbImage, matrix: Matrix) -> Yuv420 {
        let (width, height) = rgb.dimensions();
        let m = fixed(matrix.rgb_to_ycbcr());
        let bands = crate::media::cores::band_count(height, MIN_BAND_ROWS);
        let converted = in_bands(
            rgb.as_raw(),
            Layout::Rgb,
            width,
            height,
            bands,
            |rgb, planes| {
                convert_rows(rgb, width as usize, &m, planes.y, planes.u, planes.v);
                Ok::<_, Infallible>(())
            },
        );
        converted.unwrap_or_else(|never| match never {})
    }
}

/// How the pixels handed to a conversion are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Rgb,
    Rgba,
}

impl Layout {
    fn channels(self) -> usize {
        match self {
            Layout::Rgb => 3,
            Layout::Rgba => 4,
        }
    }
}

/// One band's rows of each plane; no `a` for pixels without alpha.
struct BandPlanes<'a> {
    y: &'a mut [u8],
    u: &'a mut [u8],
    v: &'a mut [u8],
    a: Option<&'a mut [u8]>,
}

/// A `width` × `height` picture whose planes `convert` fills in `bands` bands of rows
/// (an even number each, so every 2×2 chroma block lies in one band), each on a
/// scoped thread: `convert` gets a band's pixel rows and its rows of every plane. RGBA
/// pixels get an alpha plane, opaque until a band fills it.
fn in_bands<E: Send>(
    pixels: &[u8],
    layout: Layout,
    width: u32,
    height: u32,
    bands: usize,
    convert: impl Fn(&[u8], BandPlanes<'_>) -> Result<(), E> + Sync,
) -> Result<Yuv420, E> {
    let (w, h) = (width as usize, height as usize);
    let (cw, ch) = Yuv420::chroma_size(width, height);
    let mut out = Yuv420 {
        width,
        height,
        y: vec![0; w * h],
        u: vec![0; cw * ch],
        v: vec![0; cw * ch],
        a: (layout == Layout::Rgba).then(|| vec![255; w * h]),
    };
    let band_rows = h.div_ceil(bands).next_multiple_of(2);
    let row_bytes = w * layout.channels();
    let mut alpha_bands = out.a.as_mut().map(|a| a.chunks_mut(band_rows * w));
    let convert = &convert;
    std::thread::scope(|scope| {
        let workers: Vec<_> = pixels[..h * row_bytes]
            .chunks(band_rows * row_bytes)
            .zip(out.y.chunks_mut(band_rows * w))
            .zip(out.u.chunks_mut(band_rows / 2 * cw))
            .zip(out.v.chunks_mut(band_rows / 2 * cw))
            .map(|(((pixels, y), u), v)| {
                let a = alpha_bands.as_mut().and_then(Iterator::next);
                scope.spawn(move || convert(pixels, BandPlanes { y, u, v, a }))
            })
            .collect();
        crate::media::cores::join_bands(workers)
    })?;
    Ok(out)
}

/// Converts rows of `rgb` (`w` pixels each) into their `y` rows and `u`, `v` rows.
fn convert_rows(rgb: &[u8], w: usize, m: &[[i32; 3]; 3], y: &mut [u8], u: &mut [u8], v: &mut [u8]) {
    let cw = w.div_ceil(2);
    let rows = rgb.len() / (w * 3);
    let px = |row: usize, x: usize| {
        let at = (row.min(rows - 1) * w + x.min(w - 1)) * 3;
        [0, 1, 2].map(|c| i32::from(rgb[at + c]))
    };
    for row in 0..rows {
        for x in 0..w {
            let [r, g, b] = px(row, x);
            let luma = m[0][0] * r + m[0][1] * g + m[0][2] * b;
            y[row * w + x] = ((luma + 8192) >> 14).clamp(0, 219) as u8 + 16;
        }
    }
    for crow in 0..rows.div_ceil(2) {
        for cx in 0..cw {
            // The mean of the 2×2 block (the last row or column repeated at an odd edge).
            let mut sum = [0i32; 3];
            for (dy, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                let p = px(2 * crow + dy, 2 * cx + dx);
                (0..3).for_each(|c| sum[c] += p[c]);
            }
            let at = crow * cw + cx;
            let chroma = |k: [i32; 3]| {
                let value = k[0] * sum[0] + k[1] * sum[1] + k[2] * sum[2];
                (((value + 4 * 8192) >> 16) + 128).clamp(16, 240) as u8
            };
            u[at] = chroma(m[1]);
            v[at] = chroma(m[2]);
        }
    }
}

fn refused(what: &str) -> MediaError {
    tracing::warn!(error = %what, "a picture could not be converted for WebP");
    MediaError::InvalidMedia("the picture could not be encoded as WebP".into())
}

/// Converts the rows of `pixels` into their rows of the picture's planes, by libwebp.
fn convert_band(
    pixels: &[u8],
    layout: Layout,
    width: u32,
    planes: BandPlanes<'_>,
) -> Result<(), MediaError> {
    let w = width as usize;
    let row_bytes = w * layout.channels();
    let rows = pixels.len() / row_bytes;
    let mut picture = sys::WebPPicture::new().map_err(|()| refused("picture"))?;
    picture.use_argb = 0;
    picture.width = width as i32;
    picture.height = rows as i32;
    // SAFETY: `pixels` holds `rows` rows of `row_bytes` bytes; libwebp allocates the
    // band's planes itself (freed below) and they hold what its strides say; it makes
    // an alpha plane only for RGBA with a pixel that is not opaque.
    unsafe {
        let imported = match layout {
            Layout::Rgb => {
                sys::WebPPictureImportRGB(&mut picture, pixels.as_ptr(), row_bytes as i32)
            }
            Layout::Rgba => {
                sys::WebPPictureImportRGBA(&mut picture, pixels.as_ptr(), row_bytes as i32)
            }
        };
        if imported == 0 {
            sys::WebPPictureFree(&mut picture);
            return Err(refused("import"));
        }
        let cw = w.div_ceil(2);
        copy_plane(picture.y, picture.y_stride, w, planes.y);
        copy_plane(picture.u, picture.uv_stride, cw, planes.u);
        copy_plane(picture.v, picture.uv_stride, cw, planes.v);
        if let (false, Some(a)) = (picture.a.is_null(), planes.a) {
            copy_plane(picture.a, picture.a_stride, w, a);
        }
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
    use image::{Rgb, RgbImage};

    use super::{Layout, Matrix, Yuv420};

    #[test]
    fn bt709_limited_range_values_are_the_standard_ones_and_chroma_is_the_block_mean() {
        // Left half white, right half a BT.709 reference red; one row of blue below.
        let rgb = RgbImage::from_fn(4, 3, |x, y| match (x, y) {
            (_, 2) => Rgb([0, 0, 255]),
            (0 | 1, _) => Rgb([255, 255, 255]),
            _ => Rgb([255, 0, 0]),
        });
        let yuv = Yuv420::from_rgb(&rgb, Matrix::Bt709);
        // White: Y 235, neutral chroma. Red (BT.709): Y 63, Cb 102, Cr 240.
        assert_eq!(&yuv.y[..4], &[235, 235, 63, 63]);
        assert_eq!((yuv.u[0], yuv.v[0]), (128, 128));
        assert_eq!((yuv.u[1], yuv.v[1]), (102, 240));
        // Blue: Y 32, Cb 240, Cr 118; its chroma row is a single pixel row.
        assert_eq!(&yuv.y[8..], &[32; 4]);
        assert_eq!((yuv.u[2], yuv.v[2]), (240, 118));
        // An odd edge repeats its last row and column rather than reading past them.
        let odd = Yuv420::from_rgb(&RgbImage::from_pixel(3, 3, Rgb([255, 0, 0])), Matrix::Bt709);
        assert_eq!((odd.u, odd.v), (vec![102; 4], vec![240; 4]));
    }

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

    #[test]
    fn rgba_in_bands_encodes_as_libwebp_s_one_import_alpha_included() {
        // Noise, with a band of rows fully opaque, one fully transparent and the rest
        // of varying alpha: bands that see no transparency still match the whole.
        let (width, height) = (97u32, 203u32);
        let rgba: Vec<u8> = (0..width * height * 4)
            .map(|i| {
                let row = i / (width * 4);
                let noise = (i.wrapping_mul(2_654_435_761) >> 13) as u8;
                match (i % 4, row) {
                    (3, 0..=79) => 255,
                    (3, 80..=99) => 0,
                    _ => noise,
                }
            })
            .collect();
        let whole = Yuv420::from_pixels_in_bands(&rgba, Layout::Rgba, width, height, 1).unwrap();
        let mut bands =
            Yuv420::from_pixels_in_bands(&rgba, Layout::Rgba, width, height, 3).unwrap();
        assert!(whole.y == bands.y && whole.u == bands.u && whole.v == bands.v);
        assert_eq!(whole.a, bands.a);
        assert_eq!(
            bands.a.as_ref().unwrap()[..5],
            rgba[3..20].iter().step_by(4).copied().collect::<Vec<_>>()[..]
        );
        let ours = bands.encode_webp_alone(80.0).unwrap();
        let theirs = webp::Encoder::from_rgba(&rgba, width, height).encode_simple(false, 80.0);
        assert_eq!(ours, theirs.unwrap().to_vec());
        // An opaque RGBA picture keeps no alpha, as libwebp's import does not.
        let opaque: Vec<u8> = rgba
            .iter()
            .enumerate()
            .map(|(i, &b)| if i % 4 == 3 { 255 } else { b })
            .collect();
        let mut picture = Yuv420::from_rgba_as_libwebp(&opaque, width, height).unwrap();
        assert!(picture.a.is_none());
        let theirs = webp::Encoder::from_rgba(&opaque, width, height).encode_simple(false, 80.0);
        assert_eq!(picture.encode_webp(80.0).unwrap(), theirs.unwrap().to_vec());
    }
}
