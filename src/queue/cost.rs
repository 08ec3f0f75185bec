//! What a step costs, and the per-edit work budget.
//!
//! The cost of a step is the work it decodes or encodes, in pixels × frames, measured
//! from the headers of its input once that is on disk (`Media::measure_work`) and
//! priced by the command (`Command::cost`). It
//! decides the step's class in the CPU stage — light work never waits behind heavy
//! work (see `slots`) — and it is charged against the edit's budget
//! (`--max-work-per-edit`) before the step runs, so a frame bomb or a fan-out of
//! fan-outs stops with `too_much_work` instead of holding a CPU for an hour.

use std::sync::atomic::{AtomicU64, Ordering};

use super::slots::Class;
use crate::error_code::Code;
use crate::media::MediaFormat;
use crate::queue::error::JobError;

/// Steps up to this many pixels × frames are light: any still image up to 64 MP, a
/// GIF or clip of a few seconds at a small size. A 10 s 1080p clip is 0.5 G.
pub const LIGHT_WORK: u64 = 64_000_000;

/// The class of a step of `work` (`None`: its headers could not be read) on a file of
/// `format`. A file of unknown work is light when it is an image (the step will fail
/// on it quickly) and heavy otherwise.
pub fn class_of(work: Option<u64>, format: MediaFormat) -> Class {
    match work {
        Some(work) if work <= LIGHT_WORK => Class::Light,
        Some(_) => Class::Heavy,
        None if format.is_image() => Class::Light,
        None => Class::Heavy,
    }
}

/// The work an edit has done or started, against its limit. Shared by the edit's
/// assets, which run at once.
pub struct WorkBudget {
    spent: AtomicU64,
    limit: u64,
}

impl WorkBudget {
    pub fn new(limit: u64) -> Self {
        WorkBudget {
            spent: AtomicU64::new(0),
            limit,
        }
    }

    /// Charges `work` for a step about to run; `too_much_work` when the edit would
    /// pass its limit with it (and then nothing is charged).
    pub fn charge(&self, work: u64) -> Result<(), JobError> {
        let charged = self
            .spent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |spent| {
                spent.checked_add(work).filter(|total| *total <= self.limit)
            });
        match charged {
            Ok(_) => Ok(()),
            Err(spent) => Err(JobError::new(
                Code::TooMuchWork,
                format!(
                    "This edit would decode and encode about {} million pixel-frames, more \
                     than the limit of {} million per edit (it had reached {} million when \
                     this step was due); use smaller or shorter sources, or fewer steps.",
                    spent.saturating_add(work) / 1_000_000,
                    self.limit / 1_000_000,
                    spent / 1_000_000,
                ),
                false,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_steps_are_light_and_unknown_videos_heavy() {
        assert_eq!(class_of(Some(12_000_000), MediaFormat::Mp4), Class::Light);
        assert_eq!(class_of(Some(500_000_000), MediaFormat::Mp4), Class::Heavy);
        assert_eq!(class_of(None, MediaFormat::Png), Class::Light);
        assert_eq!(class_of(None, MediaFormat::Mp4), Class::Heavy);
    }

    #[test]
    fn the_budget_refuses_the_step_that_would_pass_it_and_charges_nothing_for_it() {
        let budget = WorkBudget::new(100);
        budget.charge(60).unwrap();
        let refused = budget.charge(50).unwrap_err();
        assert_eq!(refused.code, "too_much_work");
        budget.charge(40).expect("the refused step was not charged");
        assert!(budget.charge(1).is_err());
    }
}
