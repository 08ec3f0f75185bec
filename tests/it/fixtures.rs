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

/// The format of a downloaded image, sniffed from its bytes.
pub fn format_of(path: &std::path::Path) -> ImageFormat {
    image::ImageReader::open(path)
        .unwrap()
        .with_guessed_format()
        .unwrap()
        .format()
        .unwrap()
}
