//! Fair slots: a counting semaphore that hands its permits out across organizations
//! in turn, and keeps room for light work.
//!
//! The engine has one of these per stage: the network stage (fetches and stores) and
//! the CPU stage (commands). A plain semaphore serves waiters first come, first served,
//! so one organization that queues a hundred steps makes every other wait behind them;
//! here a freed slot goes to the waiting organization that holds fewest, and no
//! organization ever holds more than its cap of one class, so an organization's own
//! heavy work (long videos, frame bombs) leaves it slots for its light steps. With
//! three slots or more, heavy work of all organizations together holds all but one,
//! so a light step — a small image, a short clip — never waits behind the heavy ones
//! already running; with two, each slot may go to a different organization's heavy
//! work instead, which matters more there.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// How heavy a piece of work is, from its estimated cost (see `pipeline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Light,
    Heavy,
}

/// The permits of one stage; see the module docs.
pub struct FairSlots {
    state: Mutex<State>,
}

struct State {
    free: usize,
    /// Most slots one organization holds of one class.
    per_org: usize,
    /// Whether `per_org` binds only while another organization waits (see
    /// [`FairSlots::work_conserving`]).
    conserving: bool,
    /// Most slots all heavy work holds together.
    heavy_max: usize,
    heavy_held: usize,
    /// Slots held, per organization and class.
    held: HashMap<(String, Class), usize>,
    waiters: Vec<Waiter>,
    /// Arrival order of waiters, the last tie-break.
    next_seq: u64,
}

struct Waiter {
    org: String,
    class: Class,
    seq: u64,
    grant: oneshot::Sender<SlotPermit>,
}

/// One slot, given back when dropped.
pub struct SlotPermit {
    slots: Arc<FairSlots>,
    org: String,
    class: Class,
}

impl FairSlots {
    /// `total` slots (at least 1); one organization holds at most `per_org` of a class.
    pub fn new(total: usize, per_org: usize) -> Arc<FairSlots> {
        Self::with(total, per_org, false)
    }

    /// As [`FairSlots::new`], but `per_org` binds only while another organization's
    /// work waits: alone, an organization uses every slot, and an organization that
    /// starts waiting gets the next slot freed (it holds fewest). The CPU stage's
    /// slots: a lone tenant, the common self-hosted case, is not held to half the
    /// machine for a tenant who is not there. Not the network stage's, whose slots a
    /// stalled source may hold for its whole timeout.
    pub fn work_conserving(total: usize, per_org: usize) -> Arc<FairSlots> {
        Self::with(total, per_org, true)
    }

    fn with(total: usize, per_org: usize, conserving: bool) -> Arc<FairSlots> {
        let total = total.max(1);
        Arc::new(FairSlots {
            state: Mutex::new(State {
                free: total,
                per_org: per_org.max(1),
                conserving,
                heavy_max: if total >= 3 { total - 1 } else { total },
                heavy_held: 0,
                held: HashMap::new(),
                waiters: Vec::new(),
                next_seq: 0,
            }),
        })
    }

    /// Waits for a slot for `org`'s work of `class`. Cancel-safe: a waiter dropped
    /// before its turn leaves the queue, and a slot granted to a dropped waiter is given
    /// back at once.
    pub async fn acquire(self: &Arc<Self>, org: &str, class: Class) -> SlotPermit {
        let (tx, rx) = oneshot::channel();
        let granted = {
            let mut state = self.lock();
            let seq = state.next_seq;
            state.next_seq += 1;
            state.waiters.push(Waiter {
                org: org.to_string(),
                class,
                seq,
                grant: tx,
            });
            state.grants(self)
        };
        deliver(granted);
        // The sender lives in the waiter list until it is granted, and `State` is never
        // dropped while `self` is borrowed, so the channel cannot close unanswered.
        rx.await
            .expect("a waiter is answered before the slots go away")
    }

    /// Slots held now by `org` of `class` (for tests and logs).
    pub fn held(&self, org: &str, class: Class) -> usize {
        let state = self.lock();
        state
            .held
            .get(&(org.to_string(), class))
            .copied()
            .unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves counters that are still consistent
        // (every update is a single step), so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn release(self: &Arc<Self>, org: &str, class: Class) {
        let granted = {
            let mut state = self.lock();
            state.free += 1;
            if class == Class::Heavy {
                state.heavy_held -= 1;
            }
            let key = (org.to_string(), class);
            if let Some(n) = state.held.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    state.held.remove(&key);
                }
            }
            state.grants(self)
        };
        deliver(granted);
    }
}

impl State {
    /// Whether an organization other than `org` has work waiting.
    fn others_wait(&self, org: &str) -> bool {
        self.waiters.iter().any(|w| w.org != org)
    }

    fn held_by(&self, org: &str, class: Class) -> usize {
        self.held
            .get(&(org.to_string(), class))
            .copied()
            .unwrap_or(0)
    }

    /// Takes slots for as many waiters as can have one now, in turn: the organization
    /// holding fewest first, light before heavy, then the longest waiting. The grants
    /// are delivered after the lock is released (see [`deliver`]).
    fn grants(&mut self, slots: &Arc<FairSlots>) -> Vec<(oneshot::Sender<SlotPermit>, SlotPermit)> {
        let mut granted = Vec::new();
        // Waiters whose task was dropped go first, so they hold no place.
        self.waiters.retain(|w| !w.grant.is_closed());
        while self.free > 0 {
            let best = self
                .waiters
                .iter()
                .enumerate()
                .filter(|(_, w)| {
                    self.held_by(&w.org, w.class) < self.per_org
                        || (self.conserving && !self.others_wait(&w.org))
                })
                .filter(|(_, w)| w.class == Class::Light || self.heavy_held < self.heavy_max)
                .min_by_key(|(_, w)| {
                    let org_held =
                        self.held_by(&w.org, Class::Light) + self.held_by(&w.org, Class::Heavy);
                    (org_held, w.class, w.seq)
                })
                .map(|(i, _)| i);
            let Some(i) = best else { break };
            let waiter = self.waiters.swap_remove(i);
            self.free -= 1;
            if waiter.class == Class::Heavy {
                self.heavy_held += 1;
            }
            *self
                .held
                .entry((waiter.org.clone(), waiter.class))
                .or_default() += 1;
            let permit = SlotPermit {
                slots: slots.clone(),
                org: waiter.org,
                class: waiter.class,
            };
            granted.push((waiter.grant, permit));
        }
        granted
    }
}

/// Hands granted permits to their waiters. Outside the lock, because a waiter that
/// went away in the meantime returns its permit, and dropping it takes the lock again.
fn deliver(granted: Vec<(oneshot::Sender<SlotPermit>, SlotPermit)>) {
    for (tx, permit) in granted {
        // A closed channel hands the permit back; its drop gives the slot back.
        let _ = tx.send(permit);
    }
}

impl Drop for SlotPermit {
    fn drop(&mut self) {
        self.slots.release(&self.org, self.class);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Whether `future` completes within a short while.
    async fn ready<F: std::future::Future>(future: F) -> Option<F::Output> {
        tokio::time::timeout(Duration::from_millis(50), future)
            .await
            .ok()
    }

    #[tokio::test]
    async fn a_freed_slot_goes_to_the_organization_holding_fewest() {
        let slots = FairSlots::new(2, 2);
        let a1 = slots.acquire("a", Class::Light).await;
        let _a2 = slots.acquire("a", Class::Light).await;
        // Both slots held by a; a queues more, then b arrives last.
        let a3 = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire("a", Class::Light).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        let b = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire("b", Class::Light).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(a1);
        let b = ready(b).await.expect("b is served first").unwrap();
        assert_eq!(slots.held("b", Class::Light), 1);
        assert!(!a3.is_finished(), "a waits for the next slot");
        drop(b);
        ready(a3).await.expect("then a").unwrap();
    }

    #[tokio::test]
    async fn one_organization_never_holds_more_than_its_cap_of_a_class() {
        let slots = FairSlots::new(4, 1);
        let _a = slots.acquire("a", Class::Light).await;
        assert!(ready(slots.acquire("a", Class::Light)).await.is_none());
        let _heavy = ready(slots.acquire("a", Class::Heavy))
            .await
            .expect("its cap is per class");
        ready(slots.acquire("b", Class::Light))
            .await
            .expect("others are served");
    }

    #[tokio::test]
    async fn heavy_work_leaves_a_slot_for_light_work() {
        let slots = FairSlots::new(3, 2);
        let _h1 = slots.acquire("a", Class::Heavy).await;
        let _h2 = slots.acquire("b", Class::Heavy).await;
        assert!(
            ready(slots.acquire("c", Class::Heavy)).await.is_none(),
            "the last slot is kept for light work"
        );
        ready(slots.acquire("a", Class::Light))
            .await
            .expect("light work gets the last slot");
    }

    #[tokio::test]
    async fn with_two_slots_two_organizations_heavy_work_runs_side_by_side() {
        let slots = FairSlots::new(2, 1);
        let _a = slots.acquire("a", Class::Heavy).await;
        assert!(ready(slots.acquire("a", Class::Heavy)).await.is_none());
        ready(slots.acquire("b", Class::Heavy))
            .await
            .expect("another organization's heavy work is not kept waiting");
    }

    #[tokio::test]
    async fn alone_an_organization_uses_every_slot_and_a_newcomer_gets_the_next_one() {
        let slots = FairSlots::work_conserving(2, 1);
        let a1 = slots.acquire("a", Class::Light).await;
        let _a2 = ready(slots.acquire("a", Class::Light))
            .await
            .expect("past its share while no one else waits");
        // a queues more; b arrives after it and still goes first.
        let a3 = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire("a", Class::Light).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        let b = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire("b", Class::Light).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(a1);
        let b = ready(b).await.expect("b gets the next free slot").unwrap();
        assert!(!a3.is_finished(), "a is over its share while b waits");
        drop(b);
        ready(a3).await.expect("then a again").unwrap();
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_holds_no_slot() {
        let slots = FairSlots::new(1, 1);
        let held = slots.acquire("a", Class::Light).await;
        assert!(ready(slots.acquire("b", Class::Light)).await.is_none());
        drop(held);
        ready(slots.acquire("c", Class::Light))
            .await
            .expect("the abandoned waiter took nothing");
        assert_eq!(slots.held("b", Class::Light), 0);
    }
}
