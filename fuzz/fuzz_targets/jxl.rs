//! Any bytes as a JPEG XL: the sniffer, jxl-oxide's container and codestream readers
//! under the pixel limit and the allocation meter, and every displayed frame rendered
//! must give pictures of the promised size or a `MediaError`, never panic, loop or
//! allocate past the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mediaedit::media::fuzzing::jxl(data));
