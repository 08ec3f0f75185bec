//! Any text as a render URL's `{transform}` (docs/API.md, "Render"): the parser, then
//! the edit body it makes — alone and over a preset — validated as an edit's options
//! are, must return a value or an error with the `invalid_transform` code (or an
//! edit's own), never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediaedit::error_code::Code;
use mediaedit::render::transform::Transform;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let transform = match Transform::parse(text) {
        Ok(transform) => transform,
        Err(e) => {
            assert_eq!(e.code(), Code::InvalidTransform);
            return;
        }
    };
    let preset = serde_json::json!({
        "commands": ["resize-image", "image-to-webp"],
        "options": {"width": 64, "format": "png", "quality": 70},
    });
    for preset in [None, Some(&preset)] {
        let body = transform.body(preset);
        // What the listed options say is what the body says, whatever the preset.
        for (name, value) in &transform.options {
            assert_eq!(&body["options"][name], value);
        }
        let _ = mediaedit::edits::preset::pipeline_of(&body);
    }
});
