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

mod matrix;
pub(crate) use matrix::Matrix;

mod yuv420;
pub(crate) use yuv420::Yuv420;

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
