//! The ids that cross the service's boundaries — an organization's, an edit's, an
//! upload's — as types of their own, so a function that takes an organization and an
//! edit cannot be handed them the other way round. Each reads as its text (`Deref` to
//! `str`) wherever text is wanted: SQL binds, keys, log fields.

use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_string())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

id_type!(
    /// An organization's id: whose tokens, edits, uploads and renders they are.
    OrgId
);
id_type!(
    /// An edit's id (a UUID, or the one an `Idempotency-Key` first made).
    EditId
);
id_type!(
    /// An upload's id.
    UploadId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_reads_and_writes_as_its_text() {
        let id = EditId::from("e-1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"e-1\"");
        assert_eq!(serde_json::from_str::<EditId>("\"e-1\"").unwrap(), id);
        assert_eq!(format!("{id}"), "e-1");
        assert_eq!(id.len(), 3, "reads as a str");
        assert!(id == "e-1");
    }
}
