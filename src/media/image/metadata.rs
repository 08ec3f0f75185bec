//! What leaves with an image output besides its pixels (`metadata`, docs/API.md):
//! `strip` (the default) nothing — each encoder writes a new file from pixels; `keep`
//! the source's EXIF, its Orientation tag set to 1 (the turn is already in the pixels),
//! and its XMP; `copyright` a fresh EXIF holding only the source's Artist and Copyright.
//!
//! Read from JPEG (APP1 `Exif`, APP1 XMP), PNG (`eXIf`, `iTXt` `XML:com.adobe.xmp`),
//! WebP (`EXIF`, `XMP `) and JPEG XL (`Exif`, `xml ` boxes) sources; written into
//! JPEG, PNG, WebP, JPEG XL and AVIF outputs by `write`. GIF has no place for EXIF.

use crate::format::MediaFormat;

mod avif;
mod tiff;
mod write;

/// What an image output carries of its source's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Strip,
    Keep,
    Copyright,
}

impl Policy {
    /// The option value's policy (`strip` for anything else).
    pub fn from_name(name: &str) -> Policy {
        match name {
            "keep" => Policy::Keep,
            "copyright" => Policy::Copyright,
            _ => Policy::Strip,
        }
    }
}

/// A source's metadata: EXIF as a TIFF structure (no `Exif\0\0` header), XMP as its
/// packet.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Metadata {
    pub exif: Option<Vec<u8>>,
    pub xmp: Option<Vec<u8>>,
}

impl Metadata {
    pub fn is_empty(&self) -> bool {
        self.exif.is_none() && self.xmp.is_none()
    }
}

/// `encoded`, a `format` output, with `metadata` written into it where the format has
/// a place for it (`write`); as it was otherwise.
pub(crate) fn insert(encoded: Vec<u8>, format: MediaFormat, metadata: &Metadata) -> Vec<u8> {
    let blocks = write::Blocks {
        exif: metadata.exif.as_deref(),
        xmp: metadata.xmp.as_deref(),
    };
    write::insert(encoded, format, blocks)
}

/// What `policy` lets through of the metadata of `bytes`, a `format` source.
pub(crate) fn carried(bytes: &[u8], format: MediaFormat, policy: Policy) -> Metadata {
    if policy == Policy::Strip {
        return Metadata::default();
    }
    let found = read(bytes, format);
    let exif = found
        .exif
        .as_deref()
        .map(|e| e.strip_prefix(b"Exif\0\0").unwrap_or(e));
    match policy {
        Policy::Strip => Metadata::default(),
        Policy::Keep => Metadata {
            exif: exif.and_then(tiff::upright),
            xmp: found.xmp,
        },
        Policy::Copyright => Metadata {
            exif: exif.and_then(tiff::copyright_only),
            xmp: None,
        },
    }
}

/// The EXIF and XMP of `bytes`, as found (malformed containers give none).
fn read(bytes: &[u8], format: MediaFormat) -> Metadata {
    let mut found = Metadata::default();
    match format {
        MediaFormat::Jpeg => {
            for (marker, body) in crate::media::image::exif::jpeg_segments(bytes) {
                if marker != 0xE1 {
                    continue;
                }
                if let Some(exif) = body.strip_prefix(b"Exif\0\0") {
                    found.exif.get_or_insert_with(|| exif.to_vec());
                } else if let Some(xmp) = body.strip_prefix(write::XMP_NAMESPACE) {
                    found.xmp.get_or_insert_with(|| xmp.to_vec());
                }
            }
        }
        MediaFormat::Png => {
            for (kind, data) in write::png_chunks(bytes) {
                match kind {
                    b"eXIf" => found.exif = Some(data.to_vec()),
                    b"iTXt" => {
                        if let Some(xmp) = png_xmp(data) {
                            found.xmp = Some(xmp.to_vec());
                        }
                    }
                    _ => {}
                }
            }
        }
        MediaFormat::Webp => {
            for (fourcc, data) in write::riff_chunks(bytes) {
                match fourcc {
                    b"EXIF" => found.exif = Some(data.to_vec()),
                    b"XMP " => found.xmp = Some(data.to_vec()),
                    _ => {}
                }
            }
        }
        MediaFormat::Jxl => {
            for (kind, data) in write::isobmff_boxes(bytes) {
                match kind {
                    // The box starts with the offset of the TIFF header within it.
                    b"Exif" if data.len() >= 4 => {
                        let offset = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
                        found.exif = data.get(4 + offset as usize..).map(<[u8]>::to_vec);
                    }
                    b"xml " => found.xmp = Some(data.to_vec()),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    found
}

/// The XMP packet of an `iTXt` chunk keyed `XML:com.adobe.xmp`, uncompressed (as XMP
/// writers store it).
fn png_xmp(data: &[u8]) -> Option<&[u8]> {
    let rest = data.strip_prefix(b"XML:com.adobe.xmp\0")?;
    // Compression flag and method, then the language tag and translated keyword.
    let (&[flag, _], rest) = rest.split_first_chunk::<2>()?;
    if flag != 0 {
        return None;
    }
    let language_end = rest.iter().position(|&b| b == 0)?;
    let rest = &rest[language_end + 1..];
    let keyword_end = rest.iter().position(|&b| b == 0)?;
    Some(&rest[keyword_end + 1..])
}

#[cfg(test)]
mod tests;
