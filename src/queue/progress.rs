//! An edit's progress: the fraction done over all its assets (which run at once) and
//! the step it is on, written to the database by a reporter beside the work.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use super::context::WorkerContext;
use crate::db::edit_queue::JobRef;

/// How often progress is written to the database at most: ffmpeg reports twice a
/// second per process, and a fan-out can start hundreds of steps.
pub(super) const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Where an edit is: the overall fraction done and the step it is on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Report {
    pub progress: f64,
    pub step: Value,
}

/// Counts work in units, each asset being fetch + one unit per command + store, and
/// sends reports to the reporter.
pub(super) struct Tracker {
    tx: watch::Sender<Option<Report>>,
    total: f64,
    /// Units done, and the fraction of the current one, per asset.
    assets: Mutex<Vec<(f64, f64)>>,
}

impl Tracker {
    pub fn new(tx: watch::Sender<Option<Report>>, assets: usize, commands: usize) -> Self {
        Tracker {
            tx,
            total: (assets * (commands + 2)).max(1) as f64,
            assets: Mutex::new(vec![(0.0, 0.0); assets]),
        }
    }

    /// Reports `fraction` (0.0–1.0) of `asset`'s current unit done, on `step`.
    pub fn report(&self, asset: usize, fraction: f64, step: &Value) {
        let done: f64 = {
            let mut assets = self.assets.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(unit) = assets.get_mut(asset) {
                unit.1 = fraction.clamp(0.0, 1.0);
            }
            assets.iter().map(|(done, current)| done + current).sum()
        };
        let progress = (done / self.total).clamp(0.0, 1.0);
        self.tx.send_modify(|report| {
            // Never backwards, even if a unit reports out of order.
            let progress = report
                .as_ref()
                .map_or(progress, |r| r.progress.max(progress));
            *report = Some(Report {
                progress,
                step: step.clone(),
            });
        });
    }

    /// Marks `asset`'s current unit done.
    pub fn finish_unit(&self, asset: usize, step: &Value) {
        {
            let mut assets = self.assets.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(unit) = assets.get_mut(asset) {
                *unit = (unit.0 + 1.0, 0.0);
            }
        }
        self.report(asset, 0.0, step);
    }
}

/// Writes the latest report whenever there is a new one, then waits [`PROGRESS_EVERY`].
pub(super) async fn report_loop(
    ctx: &WorkerContext,
    job: &JobRef,
    mut rx: watch::Receiver<Option<Report>>,
) -> std::convert::Infallible {
    loop {
        if rx.changed().await.is_err() {
            // The work has finished and dropped its sender; wait to be dropped too.
            std::future::pending::<()>().await;
        }
        let report = rx.borrow_and_update().clone();
        if let Some(report) = report {
            ctx.report_progress(job, report.progress, Some(&report.step))
                .await;
        }
        tokio::time::sleep(PROGRESS_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn progress_sums_the_assets_running_at_once_and_never_goes_back() {
        let (tx, rx) = watch::channel(None);
        let tracker = Tracker::new(tx, 2, 2);
        let step = json!({ "asset": 0 });
        tracker.report(0, 0.5, &step);
        tracker.finish_unit(1, &step);
        // 0.5 + 1 units of 8.
        let now = rx.borrow().clone().unwrap().progress;
        assert!((now - 1.5 / 8.0).abs() < 1e-9, "{now}");
        tracker.report(0, 0.0, &step);
        assert_eq!(rx.borrow().clone().unwrap().progress, now);
    }
}
