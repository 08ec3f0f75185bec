//! Output storage through `object_store`, and signed, expiring download URLs.
//!
//! A download URL is `<public_url>/v1/files/<key>?expires=<unix secs>&signature=<hex>`,
//! where the signature is HMAC-SHA256 under a per-installation key over the object key
//! and the expiry. Anyone holding the URL may download until it expires; nobody can
//! make one for another key or a later expiry without the signing key.
//!
//! The store is local files (`file://DIR`) or an S3 bucket (`s3://BUCKET[/PREFIX]`);
//! the signing key lives in the database's `settings` table, so every node that
//! shares a database signs and verifies alike.

#[cfg(test)]
mod tests;

mod keys;
mod listing;
mod local;
mod signing_key;
mod stream;
pub use keys::{companions_of, OutputKey, ScratchKey};
pub use local::{free_disk_bytes, local};
pub use signing_key::shared_signing_key;
pub use stream::{PutStreamError, Streamed};

mod error;
pub use error::SignatureError;
pub use error::StorageError;

mod paths;

mod store;
pub use store::from_url;
pub use store::Storage;
