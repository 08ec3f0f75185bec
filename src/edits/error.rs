//! Why a create-edit request was refused: the domain's validation error.

/// A request that parses as JSON but is not a valid edit. Rendered as `422` with
/// `source.pointer` naming the field at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{detail}")]
pub struct ValidationError {
    /// Stable snake_case code (listed in docs/API.md).
    pub code: &'static str,
    /// Short, fixed title for the code.
    pub title: &'static str,
    /// A sentence a person can act on.
    pub detail: String,
    /// JSON pointer (RFC 6901) to the offending field; empty for the whole body.
    pub pointer: String,
}

impl ValidationError {
    pub fn new(code: &'static str, pointer: impl Into<String>, detail: impl Into<String>) -> Self {
        ValidationError {
            code,
            title: title_of(code),
            detail: detail.into(),
            pointer: pointer.into(),
        }
    }
}

/// The fixed title of each validation code.
fn title_of(code: &str) -> &'static str {
    match code {
        "missing_field" => "Missing field",
        "invalid_type" => "Invalid type",
        "unknown_field" => "Unknown field",
        "empty_array" => "Empty array",
        "too_many_items" => "Too many items",
        "invalid_asset_type" => "Invalid asset type",
        "invalid_url" => "Invalid URL",
        "source_address_forbidden" => "Source address forbidden",
        "unknown_command" => "Unknown command",
        "incompatible_commands" => "Incompatible commands",
        "unknown_option" => "Unknown option",
        "unused_option" => "Unused option",
        "option_out_of_range" => "Option out of range",
        "invalid_option_value" => "Invalid option value",
        _ => "Invalid request",
    }
}
