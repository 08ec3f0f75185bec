//! Decoded video pictures in 8-bit 4:2:0 YCbCr (limited range), as ffmpeg's decoders
//! give them, read from a `yuv4mpegpipe` stream and turned into files without a
//! detour through RGB where none is needed.
//!
//! A WebP still is VP8 in 4:2:0 YCbCr itself: the planes go to libwebp as they are
//! (as ffmpeg's own libwebp encoder does), which spares ffmpeg's single-threaded
//! conversion to RGB and libwebp's conversion back. WebP decoders read the planes
//! with the BT.601 matrix, so a BT.709 source is first re-expressed in BT.601 (a
//! linear map of Y, Cb and Cr, cheap) and its colours stay what they were. Other
//! outputs get RGB, converted here with the source's matrix.

use image::RgbImage;

use crate::media::MediaError;

/// Which matrix a picture's YCbCr values were made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Matrix {
    /// BT.601 (SD, and what files that say nothing are taken to use).
    #[default]
    Bt601,
    /// BT.709 (HD).
    Bt709,
}

impl Matrix {
    /// The matrix ffprobe's `color_space` names: BT.709 for `bt709`, BT.601 for
    /// everything else (stated or not).
    pub fn from_probe(color_space: Option<&str>) -> Matrix {
        match color_space {
            Some("bt709") => Matrix::Bt709,
            _ => Matrix::Bt601,
        }
    }

    /// Kr and Kb, the luma weights of red and blue.
    fn weights(self) -> (f32, f32) {
        match self {
            Matrix::Bt601 => (0.299, 0.114),
            Matrix::Bt709 => (0.2126, 0.0722),
        }
    }

    /// R, G, B from (Y − 16, Cb − 128, Cr − 128), limited range, as rows of factors.
    fn ycbcr_to_rgb(self) -> [[f32; 3]; 3] {
        let (kr, kb) = self.weights();
        let kg = 1.0 - kr - kb;
        let (ys, cs) = (255.0 / 219.0, 255.0 / 224.0);
        let r_cr = 2.0 * (1.0 - kr) * cs;
        let b_cb = 2.0 * (1.0 - kb) * cs;
        let g_cb = -b_cb * kb / kg;
        let g_cr = -r_cr * kr / kg;
        [[ys, 0.0, r_cr], [ys, g_cb, g_cr], [ys, b_cb, 0.0]]
    }

    /// (Y − 16, Cb − 128, Cr − 128) from R, G, B.
    fn rgb_to_ycbcr(self) -> [[f32; 3]; 3] {
        let (kr, kb) = self.weights();
        let kg = 1.0 - kr - kb;
        let (ys, cs) = (219.0 / 255.0, 224.0 / 255.0);
        [
            [kr * ys, kg * ys, kb * ys],
            [
                -kr / (2.0 * (1.0 - kb)) * cs,
                -kg / (2.0 * (1.0 - kb)) * cs,
                0.5 * cs,
            ],
            [
                0.5 * cs,
                -kg / (2.0 * (1.0 - kr)) * cs,
                -kb / (2.0 * (1.0 - kr)) * cs,
            ],
        ]
    }
}

fn multiply(a: [[f32; 3]; 3], b: [[f32; 3]; 3]) -> [[f32; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

/// Fixed-point factors (×2¹⁴) of a 3×3 map on centred (Y, Cb, Cr) values.
fn fixed(m: [[f32; 3]; 3]) -> [[i32; 3]; 3] {
    m.map(|row| row.map(|v| (v * 16384.0).round() as i32))
}

fn clamp_u8(v: i32) -> u8 {
    v.clamp(0, 255) as u8
}

/// One 4:2:0 picture: full-size luma, chroma at half size (rounded up), and full-size
/// alpha when some pixel is not opaque (only WebP keeps it).
pub(crate) struct Yuv420 {
    pub width: u32,
    pub height: u32,
    pub y: Vec<u8>,
    pub u: Vec<u8>,
    pub v: Vec<u8>,
    pub a: Option<Vec<u8>>,
}

impl Yuv420 {
    /// Chroma plane width and height.
    pub fn chroma_size(width: u32, height: u32) -> (usize, usize) {
        (width.div_ceil(2) as usize, height.div_ceil(2) as usize)
    }

    /// Re-expresses a picture made with `from` in BT.601, the matrix WebP decoders
    /// assume.
    pub fn into_bt601(mut self, from: Matrix) -> Yuv420 {
        if from == Matrix::Bt601 {
            return self;
        }
        let m = fixed(multiply(Matrix::Bt601.rgb_to_ycbcr(), from.ycbcr_to_rgb()));
        let (cw, _) = Yuv420::chroma_size(self.width, self.height);
        let width = self.width as usize;
        for (row, line) in self.y.chunks_exact_mut(width).enumerate() {
            let chroma_row = (row / 2) * cw;
            for (x, luma) in line.iter_mut().enumerate() {
                let c = chroma_row + x / 2;
                let (cb, cr) = (i32::from(self.u[c]) - 128, i32::from(self.v[c]) - 128);
                let y = i32::from(*luma) - 16;
                *luma = clamp_u8(((m[0][0] * y + m[0][1] * cb + m[0][2] * cr + 8192) >> 14) + 16);
            }
        }
        // Chroma does not depend on luma in either direction (a pure grey stays grey).
        for (u, v) in self.u.iter_mut().zip(self.v.iter_mut()) {
            let (cb, cr) = (i32::from(*u) - 128, i32::from(*v) - 128);
            *u = clamp_u8(((m[1][1] * cb + m[1][2] * cr + 8192) >> 14) + 128);
            *v = clamp_u8(((m[2][1] * cb + m[2][2] * cr + 8192) >> 14) + 128);
        }
        self
    }

    /// The picture in RGB, each chroma sample shared by its 2×2 block of pixels.
    pub fn to_rgb(&self, matrix: Matrix) -> RgbImage {
        let m = fixed(matrix.ycbcr_to_rgb());
        let (width, height) = (self.width as usize, self.height as usize);
        let (cw, _) = Yuv420::chroma_size(self.width, self.height);
        let mut out = vec![0u8; width * height * 3];
        for (row, line) in out.chunks_exact_mut(width * 3).enumerate() {
            let luma = &self.y[row * width..(row + 1) * width];
            let chroma_row = (row / 2) * cw;
            for (x, px) in line.chunks_exact_mut(3).enumerate() {
                let c = chroma_row + x / 2;
                let (cb, cr) = (i32::from(self.u[c]) - 128, i32::from(self.v[c]) - 128);
                let y = m[0][0] * (i32::from(luma[x]) - 16) + 8192;
                px[0] = clamp_u8((y + m[0][2] * cr) >> 14);
                px[1] = clamp_u8((y + m[1][1] * cb + m[1][2] * cr) >> 14);
                px[2] = clamp_u8((y + m[2][1] * cb) >> 14);
            }
        }
        RgbImage::from_raw(self.width, self.height, out).expect("buffer sized for the picture")
    }

    /// The picture sampled at `width`×`height` (at most its own size), each pixel the
    /// nearest one to its centre, chroma likewise: what a small copy starts from
    /// without converting every pixel.
    pub fn sampled(&self, width: u32, height: u32) -> Yuv420 {
        let (width, height) = (width.clamp(1, self.width), height.clamp(1, self.height));
        let centres = |n: u32, of: u32| -> Vec<usize> {
            let at = |i: u32| (2 * u64::from(i) + 1) * u64::from(of) / (2 * u64::from(n));
            (0..n).map(|i| at(i) as usize).collect()
        };
        let (xs, ys) = (centres(width, self.width), centres(height, self.height));
        // Chroma: the sample of each 2×2 block's top left pixel, in the chroma plane.
        let halved = |v: &[usize]| -> Vec<usize> { v.iter().step_by(2).map(|c| c / 2).collect() };
        let (cxs, cys) = (halved(&xs), halved(&ys));
        let (cw, _) = Yuv420::chroma_size(self.width, self.height);
        let pick = |src: &[u8], stride: usize, xs: &[usize], ys: &[usize]| {
            let mut out = Vec::with_capacity(xs.len() * ys.len());
            for &y in ys {
                let row = &src[y * stride..];
                out.extend(xs.iter().map(|&x| row[x]));
            }
            out
        };
        let luma = self.width as usize;
        Yuv420 {
            width,
            height,
            y: pick(&self.y, luma, &xs, &ys),
            u: pick(&self.u, cw, &cxs, &cys),
            v: pick(&self.v, cw, &cxs, &cys),
            a: self.a.as_ref().map(|a| pick(a, luma, &xs, &ys)),
        }
    }

    /// Lossy WebP at `quality` straight from the planes (libwebp's defaults otherwise,
    /// as ffmpeg's libwebp encoder and `cwebp` use them), on this thread: for pictures
    /// encoded many at once, one per core (video frames).
    pub fn encode_webp(&mut self, quality: f32) -> Result<Vec<u8>, MediaError> {
        self.encode_webp_on(quality, false)
    }

    /// [`Yuv420::encode_webp`] for the one picture being encoded: libwebp's second
    /// thread analyses the picture in two halves and compresses an alpha plane beside
    /// the colour, as `cwebp -mt` does (the same bytes as one thread).
    pub fn encode_webp_alone(&mut self, quality: f32) -> Result<Vec<u8>, MediaError> {
        self.encode_webp_on(quality, true)
    }

    fn encode_webp_on(&mut self, quality: f32, two_threads: bool) -> Result<Vec<u8>, MediaError> {
        use libwebp_sys as sys;
        let refused = |what: String| {
            tracing::warn!(error = %what, "a frame could not be encoded as WebP");
            MediaError::InvalidMedia("a decoded frame could not be encoded as WebP".into())
        };
        let (cw, ch) = Yuv420::chroma_size(self.width, self.height);
        let luma = self.width as usize * self.height as usize;
        let short_alpha = self.a.as_ref().is_some_and(|a| a.len() < luma);
        if self.y.len() < luma || self.u.len() < cw * ch || self.v.len() < cw * ch || short_alpha {
            return Err(refused("planes smaller than the picture".into()));
        }
        let mut config = sys::WebPConfig::new().map_err(|()| refused("config".into()))?;
        config.quality = quality;
        config.thread_level = i32::from(two_threads);
        let mut picture = sys::WebPPicture::new().map_err(|()| refused("picture".into()))?;
        picture.use_argb = 0;
        picture.colorspace = sys::WebPEncCSP::WEBP_YUV420;
        picture.width = self.width as i32;
        picture.height = self.height as i32;
        picture.y = self.y.as_mut_ptr();
        picture.u = self.u.as_mut_ptr();
        picture.v = self.v.as_mut_ptr();
        picture.y_stride = self.width as i32;
        picture.uv_stride = cw as i32;
        if let Some(alpha) = &mut self.a {
            picture.colorspace = sys::WebPEncCSP::WEBP_YUV420A;
            picture.a = alpha.as_mut_ptr();
            picture.a_stride = self.width as i32;
        }
        let mut writer = std::mem::MaybeUninit::<sys::WebPMemoryWriter>::uninit();
        // SAFETY: the planes are checked above to hold the picture that `picture`
        // describes, and outlive the call; libwebp only reads them. The writer is
        // initialised before use, and its buffer (libwebp's) is copied out and freed
        // once. `picture` owns no memory of its own (its planes are ours), so nothing
        // else needs freeing.
        unsafe {
            sys::WebPMemoryWriterInit(writer.as_mut_ptr());
            picture.writer = Some(sys::WebPMemoryWrite);
            picture.custom_ptr = writer.as_mut_ptr().cast();
            let ok = sys::WebPEncode(&config, &mut picture);
            let mut writer = writer.assume_init();
            let bytes = if ok != 0 && !writer.mem.is_null() {
                Ok(std::slice::from_raw_parts(writer.mem, writer.size).to_vec())
            } else {
                Err(refused(format!("{:?}", picture.error_code)))
            };
            sys::WebPMemoryWriterClear(&mut writer);
            bytes
        }
    }
}

mod from_rgb;

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(width: u32, height: u32, (y, u, v): (u8, u8, u8)) -> Yuv420 {
        let (cw, ch) = Yuv420::chroma_size(width, height);
        Yuv420 {
            width,
            height,
            y: vec![y; (width * height) as usize],
            u: vec![u; cw * ch],
            v: vec![v; cw * ch],
            a: None,
        }
    }

    #[test]
    fn limited_range_black_white_and_a_red_come_out_as_rgb() {
        let rgb = |yuv, matrix| flat(3, 3, yuv).to_rgb(matrix).get_pixel(2, 2).0;
        assert_eq!(rgb((16, 128, 128), Matrix::Bt601), [0, 0, 0]);
        assert_eq!(rgb((235, 128, 128), Matrix::Bt709), [255, 255, 255]);
        // BT.601 red (255, 0, 0) is Y 81, Cb 90, Cr 240.
        let red = flat(2, 2, (81, 90, 240))
            .to_rgb(Matrix::Bt601)
            .get_pixel(1, 1)
            .0;
        assert!(red[0] >= 253 && red[1] <= 2 && red[2] <= 2, "{red:?}");
    }

    #[test]
    fn a_bt709_picture_keeps_its_colours_in_bt601() {
        // BT.709 red is Y 63, Cb 102, Cr 240.
        let picture = flat(4, 2, (63, 102, 240)).into_bt601(Matrix::Bt709);
        let red = picture.to_rgb(Matrix::Bt601).get_pixel(3, 1).0;
        assert!(red[0] >= 252 && red[1] <= 3 && red[2] <= 3, "{red:?}");
        let grey = flat(2, 2, (120, 128, 128)).into_bt601(Matrix::Bt709);
        assert_eq!((grey.y[0], grey.u[0], grey.v[0]), (120, 128, 128));
    }

    #[test]
    fn a_sampled_picture_takes_the_pixels_nearest_each_centre_chroma_included() {
        let mut picture = flat(9, 5, (16, 128, 128));
        picture.y[2 * 9 + 7] = 200;
        picture.u[5 + 3] = 30;
        let small = picture.sampled(3, 1);
        assert_eq!((small.width, small.height), (3, 1));
        // Centres at x 1, 4 and 7 of row 2; chroma of the first and third (row 1).
        assert_eq!(small.y, [16, 16, 200]);
        assert_eq!((small.u.len(), small.u[1]), (2, 30));
        assert_eq!(picture.sampled(100, 100).y.len(), 45);
    }

    #[test]
    fn planes_go_to_webp_as_they_are_odd_sides_included() {
        let mut picture = flat(33, 17, (81, 90, 240));
        let bytes = picture.encode_webp(80.0).unwrap();
        let decoded = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!(decoded.dimensions(), (33, 17));
        let px = decoded.get_pixel(16, 8).0;
        assert!(px[0] > 240 && px[1] < 20 && px[2] < 20, "{px:?}");
        let mut short = flat(4, 4, (0, 0, 0));
        short.y.truncate(3);
        assert!(short.encode_webp(80.0).is_err());
    }
}
