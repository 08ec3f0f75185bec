//! The domain of edits: the request parsed into commands and options, the
//! type-checked pipeline, and the Edit document the API returns.

pub mod budget;
mod document;
mod error;
mod job;
mod options;
mod pipeline;
pub mod plan;
pub mod preset;
mod request;
mod rules;
mod webhook;

pub use crate::commands::{Command, Options};
pub use crate::db::timestamp;
pub use document::{render_edit, render_signed};
pub use error::ValidationError;
pub use job::EditJob;
pub use request::{Asset, NewEdit};
pub use rules::{ValidationRules, MAX_ASSETS, MAX_COMMANDS, MAX_URL_LEN};
