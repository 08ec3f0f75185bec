//! Any bytes as an APNG: detection (`acTL`) and the frame compositor (`fcTL`, `fdAT`,
//! dispose and blend operations) under the animation path's limits must return a
//! frame or an error, never panic or allocate past the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mediaedit::media::fuzzing::apng(data));
