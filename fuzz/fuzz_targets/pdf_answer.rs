//! Any bytes as a line the PDF drawer printed: its child writes the line after poppler
//! parsed the user's PDF, so an exploited child could print anything; reading it must
//! return, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mediaedit::media::fuzzing::pdf_answer(data);
});
