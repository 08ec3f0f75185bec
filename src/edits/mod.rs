//! The domain of edits: the request parsed into commands and options, the
//! type-checked pipeline, and the Edit document the API returns.

pub mod budget;
mod document;
mod error;
mod options;
pub mod plan;
pub mod preset;
mod request;
mod webhook;

pub use crate::commands::{Command, Options};
pub use crate::db::timestamp;
pub use document::{render_edit, render_signed};
pub use error::ValidationError;
pub use request::{Asset, NewEdit, ValidationRules, MAX_ASSETS, MAX_COMMANDS, MAX_URL_LEN};
