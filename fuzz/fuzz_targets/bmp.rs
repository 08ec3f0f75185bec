//! Any bytes as a BMP: the header reader (every header size, palettes, bit masks) and
//! the decoder (RLE4/RLE8 runs and deltas, 1- to 32-bit rows) must return a picture
//! or a `MediaError`, never panic or read past the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mediaedit::media::fuzzing::bmp(data));
