//! The job timeout's clock: the time an attempt has been working, which leaves out
//! the time it only waited for slots. A node holds more claims than it has CPU slots,
//! so under load an edit may wait its turn for long; that waiting must not use up the
//! limit meant for work that runs too long.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// See the module docs. Shared by an attempt's pieces, which run at once: the clock
/// is paused while some piece waits for a slot and none holds one.
pub(super) struct WorkClock {
    started: Instant,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    waiting: usize,
    holding: usize,
    paused_since: Option<Instant>,
    paused: Duration,
}

/// One piece's place on the clock while it waits for a slot, then while it holds it.
pub(super) struct Turn {
    clock: Arc<WorkClock>,
    holding: bool,
}

impl WorkClock {
    pub fn start() -> Arc<WorkClock> {
        Arc::new(WorkClock {
            started: Instant::now(),
            state: Mutex::new(State::default()),
        })
    }

    /// The time the attempt has been working so far.
    pub fn working(&self) -> Duration {
        let state = self.lock();
        let paused_now = state.paused_since.map_or(Duration::ZERO, |t| t.elapsed());
        self.started
            .elapsed()
            .saturating_sub(state.paused + paused_now)
    }

    /// A piece starts waiting for a slot.
    pub fn wait(self: &Arc<Self>) -> Turn {
        self.update(|s| s.waiting += 1);
        Turn {
            clock: self.clone(),
            holding: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the counts, then pauses or resumes the clock to match them.
    fn update(&self, change: impl FnOnce(&mut State)) {
        let mut state = self.lock();
        change(&mut state);
        let idle = state.waiting > 0 && state.holding == 0;
        match (idle, state.paused_since) {
            (true, None) => state.paused_since = Some(Instant::now()),
            (false, Some(since)) => {
                state.paused += since.elapsed();
                state.paused_since = None;
            }
            _ => {}
        }
    }
}

impl Turn {
    /// The piece got its slot: the clock runs while it holds it.
    pub fn granted(mut self) -> Turn {
        self.clock.update(|s| {
            s.waiting -= 1;
            s.holding += 1;
        });
        self.holding = true;
        self
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let holding = self.holding;
        self.clock.update(|s| {
            if holding {
                s.holding -= 1;
            } else {
                s.waiting -= 1;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn waiting_for_a_slot_with_none_held_does_not_count_as_working() {
        let clock = WorkClock::start();
        tokio::time::advance(Duration::from_secs(2)).await;
        let first = clock.wait();
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(clock.working(), Duration::from_secs(2));
        let first = first.granted();
        // A second piece waits while the first works: the clock runs.
        let second = clock.wait();
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(clock.working(), Duration::from_secs(5));
        drop(first);
        tokio::time::advance(Duration::from_secs(4)).await;
        assert_eq!(clock.working(), Duration::from_secs(5));
        drop(second);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(clock.working(), Duration::from_secs(6));
    }
}
