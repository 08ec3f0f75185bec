//! Source media made at test time: small, deterministic images.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};

/// A `w`×`h` RGB gradient, so resizes and rotations have something to keep.
pub fn gradient(w: u32, h: u32) -> RgbImage {
    RgbImage::from_fn(w, h, |x, y| {
        Rgb([(x * 255 / w.max(1)) as u8, (y * 255 / h.max(1)) as u8, 128])
    })
}

/// A `w`×`h` RGBA image whose left half is fully transparent.
pub fn half_transparent(w: u32, h: u32) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, _| {
        if x < w / 2 {
            Rgba([0, 0, 0, 0])
        } else {
            Rgba([200, 30, 30, 255])
        }
    })
}

pub fn encode(image: DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

pub fn jpeg(w: u32, h: u32) -> Vec<u8> {
    encode(DynamicImage::ImageRgb8(gradient(w, h)), ImageFormat::Jpeg)
}

pub fn png(w: u32, h: u32) -> Vec<u8> {
    encode(DynamicImage::ImageRgb8(gradient(w, h)), ImageFormat::Png)
}

pub fn png_with_alpha(w: u32, h: u32) -> Vec<u8> {
    encode(
        DynamicImage::ImageRgba8(half_transparent(w, h)),
        ImageFormat::Png,
    )
}

pub fn webp_with_alpha(w: u32, h: u32) -> Vec<u8> {
    encode(
        DynamicImage::ImageRgba8(half_transparent(w, h)),
        ImageFormat::WebP,
    )
}

pub fn gif(w: u32, h: u32) -> Vec<u8> {
    encode(DynamicImage::ImageRgb8(gradient(w, h)), ImageFormat::Gif)
}

/// A JPEG carrying an EXIF Orientation tag (6 = rotate 90° clockwise to view).
pub fn jpeg_with_orientation(w: u32, h: u32, orientation: u16) -> Vec<u8> {
    let plain = jpeg(w, h);
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"MM\0\x2a\0\0\0\x08"); // big-endian TIFF header, IFD at 8
    tiff.extend_from_slice(&1u16.to_be_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    tiff.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_be_bytes()); // count
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]); // value padding
    tiff.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = plain[..2].to_vec(); // SOI
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&plain[2..]);
    out
}

/// Decodes a downloaded image.
pub fn decode(path: &std::path::Path) -> DynamicImage {
    image::ImageReader::open(path)
        .unwrap()
        .with_guessed_format()
        .unwrap()
        .decode()
        .unwrap()
}

/// An AVIF decoded by `heif-convert` (libheif-examples) into a PNG.
pub fn decode_avif(avif: &std::path::Path) -> image::DynamicImage {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("out.png");
    let status = std::process::Command::new("heif-convert")
        .arg(avif)
        .arg(&png)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("heif-convert runs");
    assert!(status.success(), "heif-convert reads {}", avif.display());
    decode(&png)
}

/// The format of a downloaded image, sniffed from its bytes.
pub fn format_of(path: &std::path::Path) -> ImageFormat {
    image::ImageReader::open(path)
        .unwrap()
        .with_guessed_format()
        .unwrap()
        .format()
        .unwrap()
}

/// An uncompressed, little-endian TIFF of one strip, 8 bits per sample, as many samples
/// per pixel as `pixel` gives: `photometric` 2 (RGB; a fourth sample is unassociated
/// alpha) or 5 (CMYK); and an Orientation tag.
pub fn tiff(
    w: u32,
    h: u32,
    photometric: u16,
    orientation: u16,
    pixel: impl Fn(u32, u32) -> Vec<u8>,
) -> Vec<u8> {
    let mut data = Vec::new();
    for y in 0..h {
        for x in 0..w {
            data.extend(pixel(x, y));
        }
    }
    let samples = (data.len() / (w * h) as usize) as u16;
    let with_alpha = photometric == 2 && samples == 4;
    let mut entries: Vec<(u16, u16, u32)> = vec![
        (256, 4, w),
        (257, 4, h),
        (258, 3, 0), // BitsPerSample: the offset is filled in below
        (259, 3, 1),
        (262, 3, u32::from(photometric)),
        (273, 4, 0), // StripOffsets: filled in below
        (274, 3, u32::from(orientation)),
        (277, 3, u32::from(samples)),
        (278, 4, h),
        (279, 4, data.len() as u32),
        (284, 3, 1),
    ];
    if with_alpha {
        entries.push((338, 3, 2));
    }
    let ifd_len = 2 + entries.len() * 12 + 4;
    let bits_at = 8 + ifd_len as u32;
    let data_at = bits_at + 2 * u32::from(samples);
    let mut out = b"II*\0\x08\0\0\0".to_vec();
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, kind, value) in entries {
        let value = match tag {
            258 => bits_at,
            273 => data_at,
            _ => value,
        };
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        let count_field = if tag == 258 { samples } else { 1 };
        if tag == 258 {
            let at = out.len() - 4;
            out[at..].copy_from_slice(&u32::from(count_field).to_le_bytes());
        }
        if kind == 3 && tag != 258 {
            out.extend_from_slice(&(value as u16).to_le_bytes());
            out.extend_from_slice(&[0, 0]);
        } else {
            out.extend_from_slice(&value.to_le_bytes());
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    for _ in 0..samples {
        out.extend_from_slice(&8u16.to_le_bytes());
    }
    out.extend_from_slice(&data);
    out
}

pub fn bmp(image: DynamicImage) -> Vec<u8> {
    encode(image, ImageFormat::Bmp)
}

/// How far two pictures of one size are apart: the mean absolute difference per
/// channel, 0–255.
pub fn distance(a: &DynamicImage, b: &DynamicImage) -> f64 {
    let (a, b) = (a.to_rgb8(), b.to_rgb8());
    assert_eq!(a.dimensions(), b.dimensions());
    let total: u64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(p, q)| u64::from(p.abs_diff(*q)))
        .sum();
    total as f64 / a.as_raw().len() as f64
}

/// `image` made from [`png_with_alpha`]`(40, 30)` (at its size) kept its transparent
/// left half and its opaque right half.
pub fn assert_left_half_transparent(image: &DynamicImage) {
    use image::GenericImageView;
    assert!(
        image.get_pixel(3, 15)[3] < 16,
        "the left half stays transparent"
    );
    assert!(
        image.get_pixel(36, 15)[3] > 240,
        "the right half stays opaque"
    );
}
