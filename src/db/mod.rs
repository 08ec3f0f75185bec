//! The database: connection pool, migrations, and the rows every layer above shares.
//!
//! SQLite is the embedded default; PostgreSQL lets several nodes share one queue. Both
//! hold the same schema (`migrations/sqlite/`, `migrations/postgres/`), with times in
//! unix ms, so everything above renders rows the same way. The edit row doubles as the
//! job row, so creating an edit and enqueueing its job is one insert.

mod busy;
mod cache;
mod census;
mod channels;
mod chunk_nodes;
mod chunks;
pub mod edit_queue;
mod edits;
mod idempotency;
pub mod lease;
mod lifecycle;
mod orgs;
mod outputs;
mod presets;
mod render;
mod settings;
mod upload_quotas;
mod uploads;
mod webhooks;

pub use cache::SourceValidators;
pub use census::Census;
pub use channels::{CANCELS_CHANNEL, CHUNKS_CHANNEL, FINISHED_CHANNEL, NEW_EDITS_CHANNEL};
pub use chunks::{ChunkClaim, ChunkSet, ChunkState};
pub use edits::{EditRow, EditStatus, Lane, StoredRequest};
pub use idempotency::KeyClaim;
pub use lifecycle::{Cancel, EditPage, PageCursor, Retry};
pub use orgs::{hash_token, token_prefix, valid_org_id, Revoked, TokenListing};
pub use outputs::StoredOutput;
pub use presets::PresetRow;
pub use render::{RenderCacheRow, RenderKeyRow, RENDER_KEY_PREFIX_LEN};
pub use upload_quotas::{QuotaRefusal, UploadQuota, UploadUsage};
pub use uploads::{UploadPart, UploadRow};
pub use webhooks::{AfterAttempt, DeliveryRow, WebhookEvent, WebhookSecrets};

mod pool;
pub use pool::Db;

mod error;
pub use error::DbError;

mod clock;
pub use clock::timestamp;
pub use clock::unix_ms;
pub use clock::PG_NOW_MS;
pub use clock::SQLITE_NOW_MS;
