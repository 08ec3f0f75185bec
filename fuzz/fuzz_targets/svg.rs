//! Any bytes as an SVG: the sniffer, the XML parser under its node and entity limits,
//! usvg's tree (styles, paths, text shaped in the bundled font) and resvg's painter
//! must return a picture of the promised size or a `MediaError`, never panic, loop
//! or allocate past the pixel limit.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mediaedit::media::fuzzing::svg(data));
