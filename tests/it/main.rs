//! Integration tests: the real app on loopback, real SQLite, real ffmpeg, a local
//! fixture server for source media. All compile into this one test binary.

/// Runs each named behaviour test (an `async fn(Backend)`) once on the embedded
/// backend (SQLite, local files) and once on the cluster backend (PostgreSQL, S3).
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $(#[tokio::test]
            async fn $name() {
                super::$name(crate::backends::Backend::Embedded).await
            })*
        }
        mod cluster {
            $(#[tokio::test]
            async fn $name() {
                super::$name(crate::backends::Backend::Cluster).await
            })*
        }
    };
}

mod animation;
mod animation_bomb;
mod api_errors;
mod apng;
mod archives;
mod audio_tracks;
mod auth_flood;
mod av1;
mod av1_hls;
mod avif_output;
mod backends;
mod binary;
mod budgets;
mod cache;
mod cache_keys;
mod catalog_docs;
mod child_env;
mod chunk_claims;
mod chunk_nodes;
mod chunked;
mod chunked_x264;
mod cli;
mod cli_bars;
mod cli_client;
mod cli_confined;
mod clips;
mod cluster;
mod colour;
mod connections;
mod containers;
mod corpus;
mod crash;
mod dash;
mod delta_e;
mod downloads;
mod dry_run;
mod durability;
mod edits_api;
mod faces;
mod fairness;
mod fixture_server;
mod fixtures;
mod front_door;
mod hdr;
mod helpers;
mod hls;
mod hls_chunked;
mod hls_subtitles;
mod hostile;
mod idempotency;
mod image_commands;
mod images;
mod json_logs;
mod jxl;
mod ladder_auto;
mod libraries;
mod lifecycle;
mod log_secrets;
mod long_poll;
mod loudness;
mod memory_bound;
mod metadata;
mod metadata_policy;
mod metrics;
mod non_dumpable;
mod open_routes;
mod openapi;
mod overlays;
mod pdf;
mod pipelines;
mod placeholders;
mod playground;
mod playground_tasks;
mod presets;
mod quality_auto;
mod rate_limits;
mod render;
mod render_cache;
mod render_expiry;
mod render_shares;
mod scenes;
mod speed;
mod stages;
mod stalled_sources;
mod still_formats;
mod stored_plans;
mod storyboard;
mod subtitles;
mod svg;
mod tus_metadata;
mod upload_quotas;
mod upload_storage;
mod uploads;
mod video_failures;
mod video_publishing;
mod videos;
mod webhook_shares;
mod webhooks;
