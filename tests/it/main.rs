//! Integration tests: the real app on loopback, real SQLite, real ffmpeg, a local
//! fixture server for source media. All compile into this one test binary.

mod api_errors;
mod auth_flood;
mod backends;
mod binary;
mod budgets;
mod cli;
mod clips;
mod cluster;
mod connections;
mod corpus;
mod crash;
mod downloads;
mod durability;
mod edits_api;
mod fairness;
mod fixtures;
mod helpers;
mod hostile;
mod images;
mod pipelines;
mod speed;
mod stages;
mod stalled_sources;
mod videos;
