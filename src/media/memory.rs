//! The memory of in-process steps (docs/API.md, "Limits"): every step that decodes,
//! composites or draws inside the service is charged its peak memory before it
//! allocates, as the pixel counts its headers and options give it.
//!
//! A step whose estimate is past `--max-step-memory-bytes` fails at once with
//! `too_much_work`: no option value lets one edit or render take the node's memory,
//! with every other tenant's work on it. The steps running at once share the node's
//! `--memory-budget-bytes`: a step waits for room rather than pass it, so many large
//! steps together are run a few at a time instead of being killed together.
//!
//! The work runs on blocking threads, so the wait is a condition variable's, woken
//! whenever a lease is given back and checked against the step's cancel flag, so a
//! step given up while it waits stops waiting.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::media::cancel;
use crate::media::error::MediaError;

/// How often a step waiting for room looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// The node's memory for in-process steps; one per [`crate::media::Media`].
#[derive(Debug)]
pub struct MemoryBudget {
    /// The most one step may be charged (`--max-step-memory-bytes`).
    max_step: u64,
    /// What every step running at once may be charged together (`--memory-budget-bytes`).
    node: u64,
    in_use: Mutex<u64>,
    freed: Condvar,
}

/// A step's charge, given back when dropped.
#[derive(Debug)]
pub struct MemoryLease {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl MemoryBudget {
    pub fn new(max_step: u64, node: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            max_step: max_step.max(1),
            node: node.max(1),
            in_use: Mutex::new(0),
            freed: Condvar::new(),
        })
    }

    /// The most one step may be charged: the step limit, or the node's whole budget
    /// when that is smaller (a step larger than it could never start).
    pub fn step_limit(&self) -> u64 {
        self.max_step.min(self.node)
    }

    /// Charges `bytes` for `what` (a few words: "decoding and resizing a 6000×4000
    /// picture") before it is allocated, waiting on this blocking thread for room in
    /// the node's budget. `MemoryTooLarge` (`too_much_work`) when it is past one step's
    /// limit; `Canceled` when the step is given up while it waits.
    pub fn reserve(self: &Arc<Self>, bytes: u64, what: &str) -> Result<MemoryLease, MediaError> {
        self.check(bytes, what)?;
        let mut in_use = self.lock();
        while *in_use + bytes > self.node {
            cancel::checkpoint()?;
            in_use = self
                .freed
                .wait_timeout(in_use, CANCEL_POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *in_use += bytes;
        Ok(MemoryLease {
            budget: self.clone(),
            bytes,
        })
    }

    /// [`MemoryBudget::reserve`] for work done on an async thread: the wait for room
    /// sleeps instead of blocking the thread, and ends when the task is dropped.
    pub async fn reserve_async(
        self: &Arc<Self>,
        bytes: u64,
        what: &str,
    ) -> Result<MemoryLease, MediaError> {
        loop {
            match self.try_reserve(bytes, what)? {
                Some(lease) => return Ok(lease),
                None => tokio::time::sleep(CANCEL_POLL).await,
            }
        }
    }

    /// A lease when there is room now, `None` when there is not.
    fn try_reserve(
        self: &Arc<Self>,
        bytes: u64,
        what: &str,
    ) -> Result<Option<MemoryLease>, MediaError> {
        self.check(bytes, what)?;
        let mut in_use = self.lock();
        if *in_use + bytes > self.node {
            return Ok(None);
        }
        *in_use += bytes;
        Ok(Some(MemoryLease {
            budget: self.clone(),
            bytes,
        }))
    }

    fn check(&self, bytes: u64, what: &str) -> Result<(), MediaError> {
        if bytes > self.step_limit() {
            return Err(MediaError::MemoryTooLarge {
                what: what.to_string(),
                bytes,
                limit: self.step_limit(),
            });
        }
        Ok(())
    }

    /// Bytes charged to the steps running now.
    pub fn in_use(&self) -> u64 {
        *self.lock()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        // One addition or subtraction per update: a poisoned count is still right.
        self.in_use.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for MemoryLease {
    fn drop(&mut self) {
        let mut in_use = self.budget.lock();
        *in_use = in_use.saturating_sub(self.bytes);
        drop(in_use);
        self.budget.freed.notify_all();
    }
}

/// Half the memory of this machine (or of the control group it runs in, when that is
/// smaller): `--memory-budget-bytes`' default. 4 GiB when neither can be read.
pub fn half_the_machine() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        });
    let group = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok());
    let machine = match (total, group) {
        (Some(total), Some(group)) => total.min(group),
        (Some(bytes), None) | (None, Some(bytes)) => bytes,
        (None, None) => 8 << 30,
    };
    machine / 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn a_step_past_its_limit_is_refused_as_too_much_work_and_charges_nothing() {
        let budget = MemoryBudget::new(100, 1000);
        let refused = budget.reserve(101, "drawing text").unwrap_err();
        assert_eq!(refused.code(), crate::error_code::Code::TooMuchWork);
        assert!(refused.to_string().contains("drawing text"), "{refused}");
        assert_eq!(budget.in_use(), 0);
        let small = MemoryBudget::new(1000, 50);
        assert_eq!(
            small.step_limit(),
            50,
            "no step larger than the node's budget"
        );
        assert!(small.reserve(60, "decoding").is_err());
    }

    #[test]
    fn steps_together_wait_for_room_and_never_pass_the_node_budget() {
        let budget = MemoryBudget::new(60, 100);
        let peak = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (budget, peak) = (budget.clone(), peak.clone());
                std::thread::spawn(move || {
                    let _lease = budget.reserve(60, "decoding").unwrap();
                    peak.fetch_max(budget.in_use(), Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(
            peak.load(Ordering::SeqCst),
            60,
            "one 60-byte step at a time"
        );
        assert_eq!(budget.in_use(), 0, "every lease given back");
    }

    #[test]
    fn the_default_budget_is_half_the_machine() {
        let half = half_the_machine();
        assert!(half >= 64 << 20, "{half}");
    }
}
