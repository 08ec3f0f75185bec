//! What leaves with an image (docs/API.md, "Metadata"): by default no output carries
//! the source's EXIF (its GPS position, artist and copyright included), XMP or
//! comments, in any format, edits and renders alike; the orientation is applied.

use serde_json::json;

use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_url};

/// Words of the source's metadata that must not reach an output.
const PRIVATE: [&[u8]; 8] = [
    b"Ansel Adams",
    b"Test Studio",
    b"xmpmeta",
    b"secret comment",
    b"Exif",
    b"EXIF",
    b"eXIf",
    b"http://ns.adobe.com/xap",
];

/// An 80×40 JPEG shown as 40×80 (Orientation 6), with EXIF Artist, Copyright and a GPS
/// latitude, an XMP packet and a comment.
pub(crate) fn tagged_jpeg() -> Vec<u8> {
    let mut tiff = b"MM\0\x2a\0\0\0\x08".to_vec();
    // IFD0 at 8: 4 entries, ending at 62; its data from 62; the GPS IFD at 90.
    let entry = |tag: u16, kind: u16, count: u32, value: [u8; 4]| {
        let mut e = tag.to_be_bytes().to_vec();
        e.extend(kind.to_be_bytes());
        e.extend(count.to_be_bytes());
        e.extend(value);
        e
    };
    tiff.extend(4u16.to_be_bytes());
    tiff.extend(entry(0x0112, 3, 1, [0, 6, 0, 0]));
    tiff.extend(entry(0x013B, 2, 12, 62u32.to_be_bytes()));
    tiff.extend(entry(0x8298, 2, 16, 74u32.to_be_bytes()));
    tiff.extend(entry(0x8825, 4, 1, 90u32.to_be_bytes()));
    tiff.extend(0u32.to_be_bytes());
    tiff.extend(b"Ansel Adams\0");
    tiff.extend(b"(c) Test Studio\0");
    tiff.extend(2u16.to_be_bytes());
    tiff.extend(entry(0x0001, 2, 2, *b"N\0\0\0"));
    tiff.extend(entry(0x0002, 5, 3, 120u32.to_be_bytes()));
    tiff.extend(0u32.to_be_bytes());
    for (n, d) in [(48u32, 1u32), (51, 1), (2900, 100)] {
        tiff.extend(n.to_be_bytes());
        tiff.extend(d.to_be_bytes());
    }
    assert_eq!(tiff.len(), 144);
    let segment = |marker: u8, payload: &[u8]| {
        let mut s = vec![0xFF, marker];
        s.extend(((payload.len() + 2) as u16).to_be_bytes());
        s.extend(payload);
        s
    };
    let exif = [b"Exif\0\0".as_slice(), &tiff].concat();
    let xmp = b"http://ns.adobe.com/xap/1.0/\0<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\
                <rdf:RDF><rdf:Description exif:GPSLatitude=\"48,51.29N\"/></rdf:RDF>\
                </x:xmpmeta>";
    let plain = fixtures::jpeg(80, 40);
    [
        &plain[..2],
        &segment(0xE1, &exif),
        &segment(0xE1, xmp),
        &segment(0xFE, b"secret comment"),
        &plain[2..],
    ]
    .concat()
}

fn assert_bare(bytes: &[u8], what: &str) {
    for word in PRIVATE {
        let found = bytes.windows(word.len()).any(|w| w == word);
        assert!(!found, "{what} carries {:?}", String::from_utf8_lossy(word));
    }
}

#[tokio::test]
async fn no_output_carries_the_source_s_exif_gps_xmp_or_comment_by_default() {
    let app = spawn_app().await;
    let source = tagged_jpeg();
    assert!(source.windows(11).any(|w| w == b"Ansel Adams"));
    let src = app.fixtures.add("tagged.jpg", source);
    for format in ["jpeg", "webp", "png", "avif"] {
        let options = json!({"format": format});
        let doc = app
            .run_done(edit(&src, &["resize-image"], Some(options)))
            .await;
        let path = &app.download_all(&doc).await[0];
        assert_bare(&std::fs::read(path).unwrap(), format);
        let picture = match format {
            "avif" => fixtures::decode_avif(path),
            _ => fixtures::decode(path),
        };
        // Orientation 6 applied: upright, and nothing left to turn it twice.
        assert_eq!((picture.width(), picture.height()), (40, 80), "{format}");
    }
    let key = render_key(&app).await;
    for format in ["jpeg", "webp", "png", "avif"] {
        let url = render_url(&app, &key, &format!("w:20,f:{format}"), &b64(&src));
        let response = get(&app, &url, None).await;
        assert_eq!(response.status(), 200);
        assert_bare(
            &response.bytes().await.unwrap(),
            &format!("render {format}"),
        );
    }
}
