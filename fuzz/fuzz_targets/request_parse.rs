//! Any bytes as a create-edit body: JSON parsing and the whole domain validation
//! (assets, URLs and their address checks, commands, options, webhook, pipeline
//! type-check) must return a value or a `ValidationError`, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaedit::edits::{NewEdit, ValidationRules};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for allow_private_sources in [false, true] {
        let rules = ValidationRules {
            allow_private_sources,
            max_outputs: Some(64),
            uploads_prefix: Some("http://127.0.0.1:8080/v1/uploads/".into()),
        };
        if let Ok(edit) = NewEdit::parse(value.clone(), &rules) {
            // What was accepted must be accepted again when a worker reloads it.
            NewEdit::from_stored(edit.echo.clone()).expect("a stored edit reloads");
        }
    }
});
