//! Any bytes as a create-edit body: JSON parsing and the whole domain validation
//! (assets, URLs and their address checks, commands, options, pipeline type-check)
//! must return a value or a `ValidationError`, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaedit::edits::{NewEdit, ValidationRules};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        for allow_private_sources in [false, true] {
            if let Ok(edit) = NewEdit::parse(value.clone(), ValidationRules { allow_private_sources }) {
                // What was accepted must be accepted again when a worker reloads it.
                NewEdit::from_stored(edit.echo.clone()).expect("a stored edit reloads");
            }
        }
    }
});
