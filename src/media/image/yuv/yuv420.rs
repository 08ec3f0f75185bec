//! A 4:2:0 picture: its planes, and the conversion back to RGB.

use crate::media::error::MediaError;
use crate::media::image::yuv::matrix::clamp_u8;
use crate::media::image::yuv::matrix::fixed;
use crate::media::image::yuv::matrix::multiply;
use crate::media::image::yuv::matrix::Matrix;
use image::RgbImage;

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
        self.encode_webp_on(quality, false, None)
    }

    /// [`Yuv420::encode_webp`] at libwebp's method 2 rather than its default 4
    /// (`Quality::Quick`: previews made many at a time).
    pub fn encode_webp_quick(&mut self, quality: f32) -> Result<Vec<u8>, MediaError> {
        self.encode_webp_on(quality, false, Some(2))
    }

    /// [`Yuv420::encode_webp`] for the one picture being encoded: libwebp's second
    /// thread analyses the picture in two halves and compresses an alpha plane beside
    /// the colour, as `cwebp -mt` does (the same bytes as one thread).
    pub fn encode_webp_alone(&mut self, quality: f32) -> Result<Vec<u8>, MediaError> {
        self.encode_webp_on(quality, true, None)
    }

    pub(super) fn encode_webp_on(
        &mut self,
        quality: f32,
        two_threads: bool,
        method: Option<i32>,
    ) -> Result<Vec<u8>, MediaError> {
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
        if let Some(method) = method {
            config.method = method;
        }
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
