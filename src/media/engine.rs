//! The media layer's handle: its configuration, the one process runner, the probe
//! cache and the memory budget, shared by every clone.

use std::sync::Arc;

use crate::media::config::MediaConfig;
use crate::media::ffmpeg::process::ProcessRunner;
use crate::media::lending::{ChunkFarm, CoreLender, Lent};
use crate::media::limits;
use crate::media::memory;
use crate::media::pdf::drawer::Drawers;
use crate::media::video::inspect_cache::InfoCache;

/// Entry point for media operations; cheap to clone.
#[derive(Clone)]
pub struct Media {
    inner: Arc<Inner>,
    /// What the engine lends the step this `Media` is handed to (none by default;
    /// see `video::chunked::lend`).
    lent: Lent,
}

struct Inner {
    config: MediaConfig,
    /// Shared by every clone so that `max_processes` bounds the whole service.
    runner: ProcessRunner,
    /// The last video probes, so that one file is probed once (see `transcode`).
    info_cache: InfoCache,
    /// Shared by every clone so that the budget bounds the whole service.
    memory: Arc<memory::MemoryBudget>,
    /// The PDF drawer processes, idle between pages.
    pdf_drawers: Drawers,
}

impl Media {
    /// Builds the media layer; clones share one process semaphore.
    pub fn new(config: MediaConfig) -> Self {
        let runner = ProcessRunner::new(config.max_processes, config.process_timeout)
            .with_memory_limit(config.process_memory_limit)
            .with_scratch_dir(config.scratch_dir.as_deref())
            .with_warm_processes(config.warm_processes, config.shim_dir.as_deref());
        let memory =
            memory::MemoryBudget::new(config.max_step_memory_bytes, config.memory_budget_bytes);
        // Where the drawer program is written: beside the warm-process shim.
        let carried = (config.shim_dir.as_ref().or(config.scratch_dir.as_ref()))
            .map_or_else(|| std::env::temp_dir().join("mediaedit-lib"), Clone::clone);
        let pdf_drawers = Drawers::new(runner.resident(), carried);
        Media {
            lent: Default::default(),
            inner: Arc::new(Inner {
                memory,
                config,
                runner,
                info_cache: InfoCache::default(),
                pdf_drawers,
            }),
        }
    }

    /// The configuration this instance was built with.
    pub fn config(&self) -> &MediaConfig {
        &self.inner.config
    }

    /// The memory budget in-process steps are charged against.
    pub fn memory(&self) -> &Arc<memory::MemoryBudget> {
        &self.inner.memory
    }

    /// Starts the warm ffmpeg and ffprobe processes now, so that the first video edit
    /// does not wait for them (they start after each run otherwise).
    pub fn prewarm(&self) {
        self.runner().prewarm(&self.config().ffmpeg);
        self.runner().prewarm(&self.config().ffprobe);
    }

    pub(crate) fn runner(&self) -> &ProcessRunner {
        &self.inner.runner
    }

    pub(crate) fn pdf_drawers(&self) -> &Drawers {
        &self.inner.pdf_drawers
    }

    pub(crate) fn info_cache(&self) -> &InfoCache {
        &self.inner.info_cache
    }

    pub(crate) fn limits(&self) -> limits::VideoLimits {
        let config = self.config();
        limits::VideoLimits {
            max_seconds: config.max_video_seconds,
            max_pixels: config.max_video_pixels,
            max_frames: config.max_video_frames,
        }
    }
}

impl Media {
    /// This media layer for one step, with `lender` lending it CPU slots and, when
    /// chunks run across nodes, `farm` running its chunked encodes' chunks (see
    /// `lending`).
    pub fn lending(&self, lender: Arc<dyn CoreLender>, farm: Option<Arc<dyn ChunkFarm>>) -> Media {
        let mut media = self.clone();
        media.lent = Lent {
            lender: Some(lender),
            farm,
        };
        media
    }

    /// The lender of the step this `Media` was handed to, if any.
    pub(crate) fn lender(&self) -> Option<&dyn CoreLender> {
        self.lent.lender.as_deref()
    }

    /// The farm of the step this `Media` was handed to, if any.
    pub(crate) fn farm(&self) -> Option<&Arc<dyn ChunkFarm>> {
        self.lent.farm.as_ref()
    }
}
