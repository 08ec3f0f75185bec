//! Each organization's share of a node's deliveries: at most `limit` of one
//! organization's deliveries are in flight at once, so a receiver that never answers
//! (or a flood of events) holds that many slots and no more, and every other
//! organization's events keep going out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// Deliveries in flight on this node, per organization.
#[derive(Debug)]
pub(super) struct OrgShares {
    limit: usize,
    in_flight: Mutex<HashMap<String, usize>>,
    /// Signalled when a delivery ends, so the dispatcher claims the next one at once
    /// rather than at its next poll.
    freed: Notify,
}

/// One delivery's place in its organization's share; given back when dropped.
#[derive(Debug)]
pub(super) struct Share {
    shares: Arc<OrgShares>,
    org: String,
}

impl OrgShares {
    /// `limit` of 0 is taken as 1: no share at all would never deliver.
    pub fn new(limit: usize) -> Arc<OrgShares> {
        Arc::new(OrgShares {
            limit: limit.max(1),
            in_flight: Mutex::default(),
            freed: Notify::new(),
        })
    }

    /// The organizations whose share is taken up: their events wait on the queue
    /// while the others' are claimed. Only the dispatcher takes shares, so an
    /// organization not listed here still has room when its event is claimed.
    pub fn full(&self) -> Vec<String> {
        self.counts()
            .iter()
            .filter(|(_, n)| **n >= self.limit)
            .map(|(org, _)| org.clone())
            .collect()
    }

    /// Counts one more delivery of `org` in flight until the share is dropped.
    pub fn take(self: &Arc<Self>, org: &str) -> Share {
        *self.counts().entry(org.to_string()).or_default() += 1;
        Share {
            shares: self.clone(),
            org: org.to_string(),
        }
    }

    /// Woken when a delivery ends.
    pub fn freed_notify(&self) -> &Notify {
        &self.freed
    }

    /// The counts; a panic while they were held left nothing half done.
    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        {
            let mut counts = self.shares.counts();
            if let Some(n) = counts.get_mut(&self.org) {
                *n -= 1;
                // Organizations with nothing in flight are forgotten: the map holds
                // only what is in flight, however many organizations come and go.
                if *n == 0 {
                    counts.remove(&self.org);
                }
            }
        }
        // notify_one keeps a permit when nobody waits, so an end that falls between
        // two of the dispatcher's waits is not lost.
        self.shares.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_organization_is_full_at_its_limit_and_free_again_when_one_ends() {
        let shares = OrgShares::new(2);
        let a1 = shares.take("a");
        let _b = shares.take("b");
        assert!(shares.full().is_empty());
        let a2 = shares.take("a");
        assert_eq!(shares.full(), ["a"]);
        drop(a1);
        assert!(shares.full().is_empty());
        drop(a2);
        assert!(shares.counts().get("a").is_none(), "forgotten at zero");
    }

    #[tokio::test]
    async fn an_ended_delivery_wakes_the_dispatcher_even_when_it_was_not_waiting() {
        let shares = OrgShares::new(1);
        drop(shares.take("a"));
        tokio::time::timeout(
            std::time::Duration::from_secs(1),
            shares.freed_notify().notified(),
        )
        .await
        .expect("the end was kept for the next wait");
    }
}
