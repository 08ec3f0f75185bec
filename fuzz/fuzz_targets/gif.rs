//! Any bytes as a GIF: the block scanner (screen, frames, delays, the animation-bomb
//! figures) and the palette insertion of `gif-to-video` must return, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mediaedit::media::fuzzing::gif(data));
