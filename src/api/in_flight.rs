//! Each organization's share of a node's front door: at most `--max-requests-per-org`
//! of its requests in flight at once (long polls and upload bodies included), so one
//! organization cannot hold every connection and request the node serves. Past it,
//! `429 too_many_requests` with `Retry-After`, answered at once and with the
//! connection closed, so a refused request holds nothing — no connection slot, no
//! keep-alive — that another organization or `/healthz` needs.
//!
//! The count is taken when the token is resolved (the [`Organization`] extractor) and
//! given back when the handler has answered; [`hold`] keeps it in between.
//!
//! [`Organization`]: super::auth::Organization

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use super::error::ApiError;

/// Requests in flight, by organization; only organizations with some are kept.
pub struct InFlight {
    max: usize,
    counts: Mutex<HashMap<String, usize>>,
}

/// One request's place among its organization's; given back on drop.
pub struct InFlightPermit {
    owner: Arc<InFlight>,
    org: String,
}

impl InFlight {
    pub fn new(max: usize) -> Arc<InFlight> {
        Arc::new(InFlight {
            max: max.max(1),
            counts: Mutex::new(HashMap::new()),
        })
    }

    /// The most requests one organization may have in flight.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A place for one more request of `org`, or `None` when it has its maximum.
    pub fn try_acquire(self: &Arc<Self>, org: &str) -> Option<InFlightPermit> {
        let mut counts = lock(&self.counts);
        let count = counts.entry(org.to_string()).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(InFlightPermit {
            owner: self.clone(),
            org: org.to_string(),
        })
    }

    /// Requests of `org` in flight now.
    pub fn held(&self, org: &str) -> usize {
        lock(&self.counts).get(org).copied().unwrap_or(0)
    }
}

impl Drop for InFlightPermit {
    fn drop(&mut self) {
        let mut counts = lock(&self.owner.counts);
        if let Some(count) = counts.get_mut(&self.org) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.org);
            }
        }
    }
}

/// A poisoned lock only means a panic mid-update of a counter; keep counting.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where the [`Organization`](super::auth::Organization) extractor leaves the
/// request's permit (or its refusal) for [`hold`].
#[derive(Clone, Default)]
pub struct InFlightSlot(Arc<Mutex<SlotState>>);

#[derive(Default)]
enum SlotState {
    #[default]
    Empty,
    Held(#[allow(dead_code)] InFlightPermit),
    Refused,
}

impl InFlightSlot {
    /// Whether the request already holds a place (an extractor run twice takes one).
    pub fn is_held(&self) -> bool {
        matches!(*lock(&self.0), SlotState::Held(_))
    }

    pub fn hold(&self, permit: InFlightPermit) {
        *lock(&self.0) = SlotState::Held(permit);
    }

    pub fn refuse(&self) {
        *lock(&self.0) = SlotState::Refused;
    }
}

/// Takes a place among `org`'s requests for the request whose `slot` this is (once: a
/// request that holds one keeps it): `429 too_many_requests` when `org` has its
/// maximum in flight, and the connection is then closed ([`hold`]). The token
/// extractor admits a request by its token, a render by the key that signed it.
pub fn admit(
    in_flight: &Arc<InFlight>,
    slot: Option<&InFlightSlot>,
    org: &str,
) -> Result<(), ApiError> {
    let Some(slot) = slot else {
        return Ok(());
    };
    if slot.is_held() {
        return Ok(());
    }
    match in_flight.try_acquire(org) {
        Some(permit) => {
            slot.hold(permit);
            Ok(())
        }
        None => {
            slot.refuse();
            Err(ApiError::too_many_requests(in_flight.max()))
        }
    }
}

/// Middleware: keeps a request's place until its handler has answered, and closes the
/// connection of a request refused for want of one.
pub async fn hold(mut request: Request, next: Next) -> Response {
    let slot = InFlightSlot::default();
    request.extensions_mut().insert(slot.clone());
    let mut response = next.run(request).await;
    // Taken out rather than left to the last clone of the slot, so the place is free
    // the moment the handler has answered.
    let state = std::mem::take(&mut *lock(&slot.0));
    let refused = matches!(state, SlotState::Refused);
    drop(state);
    if refused {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_organization_gets_its_maximum_and_places_come_back_on_drop() {
        let in_flight = InFlight::new(2);
        let a1 = in_flight.try_acquire("a").unwrap();
        let _a2 = in_flight.try_acquire("a").unwrap();
        assert!(in_flight.try_acquire("a").is_none());
        let _b = in_flight
            .try_acquire("b")
            .expect("organizations count apart");
        drop(a1);
        assert_eq!(in_flight.held("a"), 1);
        let _a3 = in_flight.try_acquire("a").unwrap();
        assert!(in_flight.try_acquire("a").is_none());
    }

    #[test]
    fn an_organization_with_nothing_in_flight_is_forgotten() {
        let in_flight = InFlight::new(3);
        for i in 0..100 {
            drop(in_flight.try_acquire(&format!("org-{i}")).unwrap());
        }
        assert!(lock(&in_flight.counts).is_empty());
    }
}
