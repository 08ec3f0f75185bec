//! Any bytes as a tus `Upload-Metadata` header: the parser must return its pairs or a
//! sentence, never panic; what it accepts must be a valid header value (it is echoed
//! by `HEAD`) and must read back the same once written again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaedit::uploads::metadata;

fuzz_target!(|data: &[u8]| {
    let Ok(pairs) = metadata::parse(data) else {
        return;
    };
    assert!(data
        .iter()
        .all(|b| *b == b'\t' || (b' '..=b'~').contains(b)));
    let written = metadata::write(&pairs);
    assert_eq!(metadata::parse(written.as_bytes()).as_ref(), Ok(&pairs));
});
