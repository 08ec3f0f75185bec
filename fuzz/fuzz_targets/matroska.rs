//! Any bytes as a Matroska/WebM file: the EBML header, Segment, Info, Tracks and
//! cluster block counting must return, never panic. The reader takes a path, as the
//! service calls it, so each input is written to one scratch file.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn scratch() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("mediaedit-fuzz-mkv-{}", std::process::id()))
    })
}

fuzz_target!(|data: &[u8]| {
    std::fs::write(scratch(), data).expect("writing the scratch file");
    mediaedit::media::fuzzing::matroska(scratch());
});
