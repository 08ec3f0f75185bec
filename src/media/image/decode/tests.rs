use crate::media::image::decode::*;
use crate::media::testutil::{jpeg_with_orientation, png_claiming_size, solid_jpeg};
use turbojpeg::ScalingFactor;

#[test]
fn header_reports_upright_size_for_rotated_jpeg() {
    let jpeg = jpeg_with_orientation(40, 20, 6);
    let opened = open(&jpeg, MediaFormat::Jpeg, 1_000_000).unwrap();
    assert_eq!(opened.header().orientation, Orientation::Rotate90);
    assert_eq!(opened.header().upright_size(), (20, 40));
}

#[test]
fn open_refuses_a_huge_png_header_before_decoding() {
    let png = png_claiming_size(60_000, 60_000);
    let err = open(&png, MediaFormat::Png, 100_000_000).err().unwrap();
    assert!(
        matches!(
            err,
            MediaError::ImageTooLarge {
                width: 60_000,
                height: 60_000,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_png_with_an_unknown_compression_method_is_refused_before_decoding() {
    let mut png = crate::media::testutil::encode(
        image::DynamicImage::ImageRgb8(crate::media::testutil::two_tone(4, 4)),
        image::ImageFormat::Png,
    );
    assert!(open(&png, MediaFormat::Png, 100).is_ok());
    png[26] = 1;
    let err = open(&png, MediaFormat::Png, 100).err().unwrap();
    assert!(
        matches!(err, MediaError::InvalidMedia(ref m) if m.contains("compression")),
        "{err:?}"
    );
}

#[test]
fn webp_size_reads_each_kind_of_first_chunk() {
    for (w, h) in [(1, 1), (33, 21), (640, 480)] {
        let lossless = crate::media::testutil::encode(
            image::DynamicImage::ImageRgb8(crate::media::testutil::two_tone(w, h)),
            image::ImageFormat::WebP,
        );
        assert_eq!(webp_size(&lossless), Some((w, h)));
        let lossy = webp::Encoder::from_rgb(&vec![90u8; (w * h * 3) as usize], w, h)
            .encode(80.0)
            .to_vec();
        assert_eq!(webp_size(&lossy), Some((w, h)));
    }
    let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
    vp8x.extend_from_slice(&[0x5F, 0xEA, 0x00, 0x5F, 0xEA, 0x00]);
    assert_eq!(webp_size(&vp8x), Some((60000, 60000)));
    assert_eq!(webp_size(b"RIFF"), None);
}

#[test]
fn shrink_factor_keeps_at_least_the_target_size() {
    assert_eq!(
        shrink_factor(6000, 4000, 3000, 2000),
        ScalingFactor::new(4, 8)
    );
    assert_eq!(
        shrink_factor(6000, 4000, 3001, 2000),
        ScalingFactor::new(5, 8)
    );
    assert_eq!(shrink_factor(6000, 4000, 10, 10), ScalingFactor::new(1, 8));
    assert_eq!(shrink_factor(100, 100, 200, 200), ScalingFactor::ONE);
    // Rounds up like libjpeg-turbo does: 5 * 1/8 is 1 pixel.
    assert_eq!(shrink_factor(5, 5, 1, 1), ScalingFactor::new(1, 8));
}

#[test]
fn decode_jpeg_shrinks_in_the_dct_domain() {
    let jpeg = solid_jpeg(64, 48, [200, 10, 10]);
    let opened = open(&jpeg, MediaFormat::Jpeg, 1_000_000).unwrap();
    let image = opened.decode(30, 20).unwrap();
    assert_eq!((image.width(), image.height()), (32, 24));
}

#[test]
fn decode_tolerates_extraneous_bytes_but_not_truncation() {
    let jpeg = solid_jpeg(64, 48, [10, 200, 10]);
    // Garbage between the entropy-coded data and EOI: a libjpeg warning only.
    let mut padded = jpeg[..jpeg.len() - 2].to_vec();
    padded.extend_from_slice(&[0x12, 0x34, 0x56, 0xFF, 0xD9]);
    let image = open(&padded, MediaFormat::Jpeg, 1_000_000)
        .unwrap()
        .decode(64, 48)
        .unwrap();
    assert_eq!(image.width(), 64);

    let truncated = &jpeg[..jpeg.len() * 2 / 3];
    let result = open(truncated, MediaFormat::Jpeg, 1_000_000).and_then(|o| o.decode(64, 48));
    assert!(
        matches!(result, Err(MediaError::InvalidMedia(_))),
        "{result:?}"
    );
}

/// Every single-byte corruption of a small TIFF and BMP (each byte set to 0x00, 0xFF and
/// a bit flipped): a result or a `MediaError`, never a panic, never past the limit.
#[test]
fn corrupt_tiffs_and_bmps_never_panic_or_pass_the_limit() {
    let picture = image::DynamicImage::ImageRgba8(image::RgbaImage::from_fn(8, 6, |x, y| {
        image::Rgba([x as u8 * 30, y as u8 * 40, 90, 200])
    }));
    for (format, encoding) in [
        (MediaFormat::Tiff, image::ImageFormat::Tiff),
        (MediaFormat::Bmp, image::ImageFormat::Bmp),
    ] {
        let mut bytes = std::io::Cursor::new(Vec::new());
        picture.write_to(&mut bytes, encoding).unwrap();
        let bytes = bytes.into_inner();
        assert_eq!(inspect_image(&bytes, format, 1 << 12).unwrap(), (8, 6));
        for at in 0..bytes.len() {
            for value in [0x00, 0xFF, bytes[at] ^ 0x10] {
                let mut broken = bytes.clone();
                broken[at] = value;
                if let Ok((w, h)) = inspect_image(&broken, format, 1 << 12) {
                    assert!(u64::from(w) * u64::from(h) <= 1 << 12, "{format:?} at {at}");
                }
            }
        }
        assert!(inspect_image(&bytes[..bytes.len() / 2], format, 1 << 12).is_err());
    }
}
