//! Wires configuration into running parts: database, storage, fetcher, media,
//! the HTTP server and the workers, under one shutdown signal.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::sync::Notify;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::api::{self, AppState, BodyRate, InFlight, RateLimiter, RateLimits, TokenCache};
use crate::config::{Role, ServeConfig};
use crate::db::Db;
use crate::edits::ValidationRules;
use crate::fetch::{FetchConfig, Fetcher, StallLimits};
use crate::media::{Media, MediaConfig};
use crate::queue::{self, slots::FairSlots, WorkerContext};
use crate::storage::{self, Storage};

/// A running service.
pub struct App {
    /// The address actually bound (useful with port 0).
    pub addr: SocketAddr,
    /// The base of every URL handed out.
    pub public_url: Url,
    /// Where `/metrics` is served when `--metrics-listen` gives it its own address.
    pub metrics_addr: Option<SocketAddr>,
    shutdown: CancellationToken,
    task: JoinHandle<anyhow::Result<()>>,
}

impl App {
    /// Opens everything, binds the listener and starts serving and working. Returns
    /// once the service is ready to take requests.
    pub async fn start(config: ServeConfig) -> anyhow::Result<App> {
        let data_dir = &config.data_dir;
        let tmp_root = data_dir.join("tmp");
        // Temp files of jobs that were running when the process stopped are stale:
        // those jobs start again from the beginning.
        let _ = std::fs::remove_dir_all(&tmp_root);
        std::fs::create_dir_all(&tmp_root)
            .with_context(|| format!("creating {}", tmp_root.display()))?;

        std::fs::create_dir_all(data_dir)
            .with_context(|| format!("creating {}", data_dir.display()))?;
        let db = Db::open(&config.database_url(), config.database_max_connections)
            .await
            .context("opening the database")?;
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("listening on {}", config.listen))?;
        let addr = listener.local_addr()?;
        let metrics_listener = match config.front_door.metrics_listen {
            Some(at) => Some(
                tokio::net::TcpListener::bind(at)
                    .await
                    .with_context(|| format!("listening for /metrics on {at}"))?,
            ),
            None => None,
        };
        let metrics_addr = metrics_listener
            .as_ref()
            .map(|l| l.local_addr())
            .transpose()?;
        let public_url = match &config.public_url {
            Some(url) => url.clone(),
            None => Url::parse(&format!("http://{addr}"))?,
        };

        // A SQLite data dir may still hold its pre-database `signing.key`: keep using it.
        let legacy_key_dir = matches!(db, Db::Sqlite(_)).then_some(data_dir.as_path());
        let signing_key = storage::shared_signing_key(&db, legacy_key_dir)
            .await
            .context("loading the signing key")?;
        let storage = Storage::open(
            &config.storage_url(),
            signing_key,
            public_url.clone(),
            Duration::from_secs(config.download_url_ttl_secs),
        )
        .context("opening the storage")?;
        let fetcher = Fetcher::new(FetchConfig {
            allow_private: config.allow_private_sources,
            max_bytes: config.max_source_bytes,
            connect_timeout: Duration::from_secs(config.fetch_connect_timeout_secs),
            total_timeout: Duration::from_secs(config.fetch_timeout_secs),
            max_redirects: 5,
            stall: StallLimits {
                first_byte_timeout: Duration::from_secs(config.fetch_first_byte_timeout_secs),
                min_bytes_per_sec: config.fetch_min_bytes_per_sec,
                min_speed_window: Duration::from_secs(config.fetch_min_speed_window_secs),
            },
        })?;
        let media = Media::new(MediaConfig {
            max_image_pixels: config.max_image_pixels,
            process_timeout: Duration::from_secs(config.processes.process_timeout_secs),
            // Probes of sources waiting for a CPU slot run beside the slots' commands.
            max_processes: config.workers + config.fetch_concurrency,
            ffmpeg: "ffmpeg".into(),
            ffprobe: "ffprobe".into(),
            max_video_seconds: config.max_video_seconds as f64,
            max_video_pixels: config.max_video_pixels,
            max_video_frames: config.max_video_frames,
            max_extract_frames: config.max_extract_frames,
            face_sample_fps: config.faces.face_sample_fps,
            max_animation_pixels: config.max_animation_pixels,
            process_memory_limit: config.processes.process_memory_limit,
            // Each ffmpeg's HOME and TMPDIR: a directory of its run's own, made in tmp/
            // beside the jobs' and removed after the run.
            scratch_dir: Some(tmp_root.clone()),
            warm_processes: config.processes.warm_processes,
            header_readers: config.processes.header_readers,
            // Not in tmp/: a job's scratch space holds nothing else.
            shim_dir: Some(data_dir.join("lib")),
            min_chunk_work: config.chunking.min_chunk_work,
            ladder_cores_per_chunk: config.chunking.ladder_cores_per_chunk as usize,
            x264_cores_per_chunk: config.chunking.x264_cores_per_chunk as usize,
            vp9_cores_per_chunk: config.chunking.vp9_cores_per_chunk as usize,
            max_step_memory_bytes: config.memory.max_step_memory_bytes,
            memory_budget_bytes: config.memory.budget(),
        });
        let wake = Arc::new(Notify::new());
        let running = queue::RunningEdits::new();
        let finished = queue::FinishedEdits::new();
        let metrics = crate::metrics::Metrics::new();
        // No CPU slots (possible only when embedded, as in tests) runs no workers either.
        let runs_workers = config.role != Role::Api && config.workers > 0;
        if runs_workers {
            media.prewarm();
        }
        let readiness = api::Readiness {
            db: db.clone(),
            tmp_root: runs_workers.then(|| tmp_root.clone()),
        };
        let shutdown = CancellationToken::new();
        let stop_now = CancellationToken::new();
        let grace = Duration::from_secs(config.shutdown_grace_secs);
        // One network stage per node: the workers' fetches and stores and the dry
        // runs' fetches share its slots, at most half of them per organization.
        let network = FairSlots::new(
            config.fetch_concurrency,
            (config.fetch_concurrency / 2).max(1),
        );
        // One CPU stage per node: the workers' commands and the renders take turns in it.
        let cpu = FairSlots::work_conserving(config.workers, config.max_running_per_org() as usize);
        let renderer = crate::render::Renderer::new(crate::render::RendererParts {
            db: db.clone(),
            storage: storage.clone(),
            fetcher: fetcher.clone(),
            media: media.clone(),
            cpu: cpu.clone(),
            network: network.clone(),
            metrics: metrics.clone(),
            tmp_root: tmp_root.clone(),
            min_free_disk_bytes: config.min_free_disk_bytes,
            cache_bytes: config.render_cache_bytes,
            timeout: Duration::from_secs(config.memory.render_timeout_secs),
        });
        let state = AppState {
            db: db.clone(),
            storage: storage.clone(),
            wake: wake.clone(),
            rules: ValidationRules {
                allow_private_sources: config.allow_private_sources,
                max_outputs: Some(config.max_outputs_per_edit),
                uploads_prefix: Some(crate::uploads::uploads_prefix(&public_url).into()),
            },
            max_body_bytes: config.max_body_bytes,
            rate_limits: Arc::new(RateLimits {
                read: RateLimiter::new(
                    config.rate_limits.read_rate_limit_per_second,
                    config.rate_limits.read_rate_limit_burst,
                ),
                write: RateLimiter::new(
                    config.rate_limits.write_rate_limit_per_second,
                    config.rate_limits.write_rate_limit_burst,
                ),
            }),
            token_cache: Arc::new(TokenCache::new(
                Duration::from_secs(config.auth_cache_ttl_secs),
                config.auth_cache_max_entries,
            )),
            auth_failures: Arc::new(RateLimiter::new(
                f64::from(config.auth_failures_per_minute) / 60.0,
                config.auth_failures_per_minute,
            )),
            in_flight: InFlight::new(config.front_door.max_requests_per_org),
            body_rate: BodyRate {
                min_bytes_per_sec: config.front_door.min_body_bytes_per_sec,
                window: config.front_door.min_body_speed_window(),
            },
            running: running.clone(),
            finished: finished.clone(),
            metrics: metrics.clone(),
            default_retention_secs: config.retention.retention_secs,
            uploads: api::UploadLimits {
                max_bytes: config.retention.max_upload_bytes,
                retention_secs: config.retention.upload_retention_secs,
                max_bytes_per_org: config.retention.max_upload_bytes_per_org,
                max_open_per_org: config.retention.max_open_uploads_per_org,
                min_free_disk_bytes: config.min_free_disk_bytes,
            },
            uploads_in_flight: Default::default(),
            public_url: public_url.clone(),
            readiness: readiness.clone(),
            probing: queue::Probing {
                db: db.clone(),
                storage: storage.clone(),
                public_url: public_url.clone(),
                fetcher: fetcher.clone(),
                media: media.clone(),
                tmp_root: tmp_root.clone(),
                max_outputs: config.max_outputs_per_edit,
                network: network.clone(),
                min_free_disk_bytes: config.min_free_disk_bytes,
            },
            renderer,
        };
        let sweeper = queue::run_sweeper(
            db.clone(),
            storage.clone(),
            Duration::from_secs(config.retention.sweep_interval_secs),
            shutdown.clone(),
        );
        crate::webhooks::Dispatcher::new(
            db.clone(),
            storage.clone(),
            config.allow_private_sources,
            metrics.clone(),
            config.webhook_concurrency_per_org,
        )?
        .run(finished.clone(), shutdown.clone());
        let node_id = uuid::Uuid::new_v4().simple().to_string();
        let chunk_wake = Arc::new(Notify::new());
        let chunks = config.chunking.chunk_across_nodes.then(|| {
            Arc::new(queue::Chunks {
                db: db.clone(),
                storage: storage.clone(),
                media: media.clone(),
                node_id: node_id.clone(),
                lease: config.lease(),
                poll: Duration::from_millis(config.poll_ms),
                max_attempts: config.max_attempts,
                cpu: cpu.clone(),
                tmp_root: tmp_root.clone(),
                wake: chunk_wake.clone(),
                stop_now: stop_now.clone(),
                sources: Default::default(),
                slots: config.workers,
                downloaded: queue::SourceCache::new(tmp_root.join("downloaded-sources")),
            })
        });
        let workers = Arc::new(WorkerContext {
            queue: queue::for_db(&db),
            media,
            fetcher,
            storage,
            db: db.clone(),
            cache: config.result_cache.then(|| db.clone()),
            uploads_prefix: crate::uploads::uploads_prefix(&public_url),
            tmp_root,
            wake,
            running: running.clone(),
            finished: finished.clone(),
            metrics: metrics.clone(),
            poll: Duration::from_millis(config.poll_ms),
            lease: config.lease(),
            max_attempts: config.max_attempts,
            retry_base: Duration::from_millis(config.retry_base_ms),
            job_timeout: Duration::from_secs(config.job_timeout_secs),
            max_outputs: config.max_outputs_per_edit,
            max_work: config.max_work_per_edit,
            claim_capacity: config.claim_capacity(),
            claims_per_org: (config.claim_capacity() / 2).max(1) as u32,
            cpu,
            network,
            parallel_steps: config.workers,
            node_id,
            chunks,
            min_free_disk_bytes: config.min_free_disk_bytes,
            stopping: shutdown.clone(),
            stop_now: stop_now.clone(),
        });

        if let Db::Postgres(pool) = &db {
            let wake = workers.wake.clone();
            let shutdown = shutdown.clone();
            queue::listen(pool.clone(), wake, running, finished, chunk_wake, shutdown);
        }
        let mut worker_set = JoinSet::new();
        if runs_workers {
            worker_set = queue::run_workers(workers);
        }
        let not_found = || async { api::ApiError::for_status(axum::http::StatusCode::NOT_FOUND) };
        // `/metrics` goes where `--metrics-listen` says, else with the API.
        let metrics_here = metrics_listener.is_none();
        let metrics_apart = metrics_listener.map(|listener| {
            let router = api::metrics_router(metrics.clone(), db.clone()).fallback(not_found);
            (listener, router)
        });
        let router = match config.role {
            Role::Worker => {
                let router = api::health_router(readiness);
                let router = match metrics_here {
                    true => router.merge(api::metrics_router(metrics, db.clone())),
                    false => router,
                };
                router.fallback(not_found)
            }
            Role::All | Role::Api => api::router(state, metrics_here),
        };
        let limits = api::server::ServerLimits {
            header_timeout: Duration::from_secs(config.http_header_timeout_secs),
            body_timeout: Duration::from_secs(config.http_body_timeout_secs),
            max_connections: config.max_connections,
        };
        let metrics_http = metrics_apart.map(|(listener, router)| {
            tokio::spawn(api::server::serve(
                listener,
                router,
                limits,
                shutdown.clone(),
                move || tokio::time::Instant::now() + grace,
            ))
        });
        let http = tokio::spawn(api::server::serve(
            listener,
            router,
            limits,
            shutdown.clone(),
            move || tokio::time::Instant::now() + grace,
        ));
        let stopping = shutdown.clone();
        let task = tokio::spawn(async move {
            stopping.cancelled().await;
            // The grace period starts at the signal, for the workers and the HTTP
            // connections alike: running edits get it to finish, then are handed back
            // to the queue; connections still open then are dropped.
            let deadline = tokio::time::Instant::now() + grace;
            let workers = async {
                let finished = tokio::time::timeout_at(deadline, async {
                    while worker_set.join_next().await.is_some() {}
                })
                .await;
                if finished.is_err() {
                    stop_now.cancel();
                    while worker_set.join_next().await.is_some() {}
                }
            };
            let metrics_served = async {
                match metrics_http {
                    Some(task) => task.await,
                    None => Ok(()),
                }
            };
            let (_, served, _, metrics_served) =
                tokio::join!(workers, http, sweeper, metrics_served);
            served.context("serving HTTP")?;
            metrics_served.context("serving /metrics")?;
            Ok(())
        });
        tracing::info!(%addr, ?metrics_addr, %public_url, workers = runs_workers.then_some(config.workers), role = ?config.role, database = db.backend(), "mediaedit is ready");
        Ok(App {
            addr,
            public_url,
            metrics_addr,
            shutdown,
            task,
        })
    }

    /// Stops taking requests, lets running edits finish (within a grace period) and
    /// waits until everything has stopped.
    pub async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        self.task.await?
    }

    /// A handle that triggers [`App::stop`]'s shutdown from elsewhere.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Waits until the service stops (after its shutdown token is cancelled).
    pub async fn wait(self) -> anyhow::Result<()> {
        self.task.await?
    }
}
