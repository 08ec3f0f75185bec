//! Any bytes as a create-edit body: JSON parsing and the whole domain validation
//! (assets, URLs and their address checks, commands, options, webhook, pipeline
//! type-check) must return a value or a `ValidationError`, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaedit::edits::{EditJob, NewEdit, ValidationRules};

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
            // What was accepted is stored as a job a worker reads back as it was, and
            // a row from before stored jobs reloads its request to the same job.
            let job = edit.job();
            let stored = EditJob::from_stored(Some(&job.to_stored()), &edit.echo);
            assert_eq!(stored.expect("a stored job reloads"), job);
            let legacy = EditJob::from_stored(None, &edit.echo);
            assert_eq!(legacy.expect("a stored request reloads"), job);
        }
    }
});
