//! Any bytes as a HEIF file: our own reader of its boxes (`meta`, `pitm`, `iprp`,
//! `ipco`, `ipma`, `irot`) must return, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mediaedit::media::fuzzing::heif_boxes(data));
