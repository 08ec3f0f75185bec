//! The domain of edits: commands, options, the type-checked pipeline, and the Edit
//! document the API returns.

pub mod budget;
mod command;
mod document;
mod error;
mod options;
mod request;

pub use command::Command;
pub use document::render_edit;
pub use error::ValidationError;
pub use options::Options;
pub use request::{Asset, NewEdit, ValidationRules, MAX_ASSETS, MAX_COMMANDS, MAX_URL_LEN};
