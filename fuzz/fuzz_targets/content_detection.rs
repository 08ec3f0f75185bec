//! Any bytes as a source file: content sniffing, then for images the header parsers
//! (PNG IHDR, WebP VP8/VP8L/VP8X, JPEG SOF and EXIF, TIFF IFDs, BMP headers) and decoding under a small pixel
//! limit must return a result or a `MediaError`, never panic or allocate past the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaedit::media::{inspect_image, sniff};

fuzz_target!(|data: &[u8]| {
    let format = match sniff(data) {
        Some(format) if format.is_image() => format,
        _ => return,
    };
    if let Ok((width, height)) = inspect_image(data, format, 1 << 16) {
        assert!(u64::from(width) * u64::from(height) <= 1 << 16);
    }
});
