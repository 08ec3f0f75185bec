//! mediaedit: an HTTP/JSON service that converts and modifies images and videos.
//!
//! A request flows one way, top to bottom:
//!
//! - [`api`]: the HTTP layer — router, auth extractor, JSON extractor, error envelope,
//!   handlers for edits, downloads and health.
//! - [`edits`]: the domain — the request parsed into commands and options, the
//!   type-checked pipeline, the Edit document.
//! - [`render`]: images by URL — signed render URLs answered at once, cached and
//!   coalesced, on the same fair slots as the queue's edits.
//! - [`queue`]: the durable job queue (the edit row is the job) and the engine that
//!   executes pipelines in stages (fetch, process, store) on fair slots.
//! - [`commands`]: one file per command: its name, formats, options, prediction, cost
//!   and execution.
//! - [`media`]: content sniffing, in-process image steps and the ffmpeg process wrapper.
//! - [`fetch`]: SSRF-guarded source downloads.
//! - [`storage`]: outputs in an object store and signed download URLs.
//! - [`db`]: the database pool, migrations, organizations and tokens.
//!
//! [`format`] names the media formats every layer speaks of (a leaf: it imports
//! nothing of the crate). [`config`] holds every setting; [`app`] wires the parts together and runs them;
//! [`telemetry`] writes the log (text or JSON lines); [`allocator`] keeps large
//! buffers from staying with the process once freed.

pub mod admin;
pub mod allocator;
pub mod api;
pub mod app;
pub mod client;
pub mod commands;
pub mod config;
pub mod db;
pub mod edits;
pub mod error_code;
pub mod fetch;
pub mod format;
pub mod ids;
pub mod media;
pub mod metrics;
pub mod queue;
pub mod render;
pub mod storage;
pub mod telemetry;
pub mod uploads;
pub mod webhooks;
