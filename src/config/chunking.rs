//! How long encodes are cut into chunks encoded at once (docs/PERFORMANCE.md,
//! "Chunked encoding").

use clap::builder::BoolishValueParser;
use clap::Args;

/// Settings of chunked encoding.
#[derive(Debug, Clone, Args)]
pub struct ChunkingConfig {
    /// Least work of one chunk of a chunked encode (Theora, VP9, x264), in pixels × frames:
    /// a video is split only into chunks of at least this much (the default is 2 s of
    /// 1080p at 25 fps; see docs/PERFORMANCE.md). 0 never splits.
    #[arg(long, env = "MEDIAEDIT_MIN_CHUNK_WORK", default_value_t = 100_000_000)]
    pub min_chunk_work: u64,

    /// Run the chunks of chunked encodes as claims in the queue, so every node's CPU
    /// slots encode them (a cluster on PostgreSQL and shared storage; on one node it
    /// works the same, through the database). See docs/ARCHITECTURE.md.
    #[arg(
        long,
        env = "MEDIAEDIT_CHUNK_ACROSS_NODES",
        value_parser = BoolishValueParser::new(),
        num_args = 0..=1,
        default_value = "false",
        default_missing_value = "true"
    )]
    pub chunk_across_nodes: bool,

    /// Cores one chunk of an HLS ladder is counted to use: x264's frame threads keep
    /// about two busy, so the ladder is cut into one chunk per two cores (on two cores
    /// it stays one process, which is faster there). 1 cuts a chunk per core.
    #[arg(long, env = "MEDIAEDIT_LADDER_CORES_PER_CHUNK", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub ladder_cores_per_chunk: u32,

    /// Cores one chunk of a chunked x264 encode (`modify-video-speed`, `watermark` and
    /// `text` on videos) is counted to use: x264's frame threads keep about 1.4–1.7 of
    /// two cores busy, so a node of fewer than twice this many cores encodes in one
    /// process, and 16 cores cut four chunks. 1 cuts a chunk per core.
    #[arg(long, env = "MEDIAEDIT_X264_CORES_PER_CHUNK", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub x264_cores_per_chunk: u32,

    /// Cores one chunk of a chunked VP9 encode (`video-to-webm`) is counted to use:
    /// libvpx's row threads keep about 1.7 of two cores busy, so a node of two or three
    /// cores encodes in one process (chunks there cost 1.11× the single process's time
    /// against 1.03×, docs/PERFORMANCE.md), and 16 cores cut eight chunks. 1 cuts a
    /// chunk per core.
    #[arg(long, env = "MEDIAEDIT_VP9_CORES_PER_CHUNK", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub vp9_cores_per_chunk: u32,
}
