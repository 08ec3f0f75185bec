//! Any bytes as a JPEG, WebP or PNG carrying EXIF: the segment and chunk walkers and
//! the orientation reader must return, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mediaedit::media::fuzzing::exif(data));
