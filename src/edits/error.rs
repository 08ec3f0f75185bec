//! Why a create-edit request was refused: the domain's validation error.

use crate::error_code::Code;

/// A request that parses as JSON but is not a valid edit. Rendered as `422` with
/// `source.pointer` naming the field at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{detail}")]
pub struct ValidationError {
    /// Stable code (see `crate::error_code`).
    pub code: Code,
    /// Short, fixed title for the code.
    pub title: &'static str,
    /// A sentence a person can act on.
    pub detail: String,
    /// JSON pointer (RFC 6901) to the offending field; empty for the whole body.
    pub pointer: String,
}

impl ValidationError {
    pub fn new(code: Code, pointer: impl Into<String>, detail: impl Into<String>) -> Self {
        ValidationError {
            code,
            title: code.title(),
            detail: detail.into(),
            pointer: pointer.into(),
        }
    }
}
