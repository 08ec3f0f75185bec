//! Any bytes as ffprobe's JSON output: the typed probe, what a video or audio source
//! is taken to be from it, and the limits check must return, never panic (ffprobe
//! prints what a hostile file's headers say).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mediaedit::media::fuzzing::ffprobe_output(data);
});
