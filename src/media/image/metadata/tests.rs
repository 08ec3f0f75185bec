use super::*;

/// A big-endian TIFF of IFD0 entries (tag, type, count, value or offset) and the data
/// the offsets point into, which starts right after the IFD.
fn tiff(entries: &[(u16, u16, u32, [u8; 4])], data: &[u8]) -> Vec<u8> {
    let mut t = b"MM\0\x2a\0\0\0\x08".to_vec();
    t.extend((entries.len() as u16).to_be_bytes());
    for (tag, kind, count, value) in entries {
        t.extend(tag.to_be_bytes());
        t.extend(kind.to_be_bytes());
        t.extend(count.to_be_bytes());
        t.extend(value);
    }
    t.extend(0u32.to_be_bytes());
    t.extend(data);
    t
}

/// Orientation 6, Artist "Ansel Adams", Copyright "(c) Test Studio", a GPS IFD pointer.
fn camera_exif() -> Vec<u8> {
    let data_at = 8 + 2 + 12 * 4 + 4;
    let artist = data_at as u32;
    let copyright = artist + 12;
    let mut data = b"Ansel Adams\0".to_vec();
    data.extend(b"(c) Test Studio\0");
    tiff(
        &[
            (0x0112, 3, 1, [0, 6, 0, 0]),
            (0x013B, 2, 12, artist.to_be_bytes()),
            (0x8298, 2, 16, copyright.to_be_bytes()),
            (0x8825, 4, 1, [0, 0, 0, 0]),
        ],
        &data,
    )
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn keep_sets_the_orientation_upright_and_copyright_keeps_artist_and_copyright_only() {
    let exif = camera_exif();
    let upright = tiff::upright(&exif).unwrap();
    assert_eq!(&upright[8 + 2 + 8..8 + 2 + 10], &[0, 1]);
    assert_eq!(upright.len(), exif.len());
    let only = tiff::copyright_only(&exif).unwrap();
    assert!(contains(&only, b"Ansel Adams\0") && contains(&only, b"(c) Test Studio\0"));
    assert!(!contains(&only, &0x8825u16.to_be_bytes()));
    assert!(!contains(&only, &0x0112u16.to_be_bytes()));
    assert_eq!(
        tiff::copyright_only(&tiff(&[(0x0112, 3, 1, [0, 6, 0, 0])], &[])),
        None
    );
    assert_eq!(tiff::upright(b"not a tiff"), None);
}

#[test]
fn metadata_written_into_each_format_is_read_back_from_it() {
    let kept = Metadata {
        exif: Some(camera_exif()),
        xmp: Some(b"<x:xmpmeta>kept</x:xmpmeta>".to_vec()),
    };
    let picture = image::DynamicImage::ImageRgb8(image::RgbImage::new(8, 6));
    for format in [
        crate::format::ImageFormat::Jpeg,
        crate::format::ImageFormat::Png,
        crate::format::ImageFormat::Webp,
        crate::format::ImageFormat::Jxl,
    ] {
        let encoded = crate::media::image::ops::encode(picture.clone(), format).unwrap();
        let media = format.media_format();
        let written = insert(encoded, media, &kept);
        assert_eq!(read(&written, media), kept, "{format:?}");
        let decoded = image::load_from_memory(&written)
            .map(|i| (i.width(), i.height()))
            .ok();
        if media != MediaFormat::Jxl {
            assert_eq!(decoded, Some((8, 6)), "{format:?} still decodes");
        }
    }
}

#[test]
fn an_avif_given_both_blocks_holds_them_as_items_and_still_decodes() {
    let (exif, xmp) = (camera_exif(), b"<x:xmpmeta>kept</x:xmpmeta>".to_vec());
    let kept = Metadata {
        exif: Some(exif.clone()),
        xmp: Some(xmp.clone()),
    };
    let picture = image::DynamicImage::ImageRgb8(image::RgbImage::new(8, 6));
    let encoded =
        crate::media::image::ops::encode(picture, crate::format::ImageFormat::Avif).unwrap();
    let written = insert(encoded.clone(), MediaFormat::Avif, &kept);
    assert!(written.len() > encoded.len() + exif.len() + xmp.len());
    assert!(contains(&written, &exif) && contains(&written, &xmp));
    assert!(contains(&written, b"application/rdf+xml\0") && contains(&written, b"cdsc"));
    // libheif reads the amended file (the picture's data moved with the grown `meta`).
    let file = crate::media::image::codec::heif::open(&written, MediaFormat::Avif).unwrap();
    let decoded = file.decode().unwrap();
    assert_eq!((decoded.width(), decoded.height()), (8, 6));
    let not_avif = b"\0\0\0\x10ftypavif\0\0\0\0".to_vec();
    assert_eq!(insert(not_avif.clone(), MediaFormat::Avif, &kept), not_avif);
}
