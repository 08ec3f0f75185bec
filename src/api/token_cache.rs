//! A short-lived, bounded memory of token lookups, so that a flood of requests costs
//! one database query per distinct token and TTL rather than one per request.
//!
//! Hits (known tokens) and misses (unknown tokens) are kept apart, each with its own
//! bound: a flood of random tokens fills and churns the misses only, and never pushes
//! a valid token out. The TTL is what bounds how long a revoked token keeps working
//! on a node; nodes do not tell each other, so it is short.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Cached lookups keyed by token hash (never the token itself).
pub struct TokenCache {
    ttl: Duration,
    hits: Mutex<TtlMap<String>>,
    misses: Mutex<TtlMap<()>>,
}

impl TokenCache {
    /// A cache keeping each lookup for `ttl` (zero turns caching off) and at most
    /// `max_entries` hits and as many misses.
    pub fn new(ttl: Duration, max_entries: usize) -> Self {
        TokenCache {
            ttl,
            hits: Mutex::new(TtlMap::new(max_entries)),
            misses: Mutex::new(TtlMap::new(max_entries)),
        }
    }

    /// `None`: not cached (or expired), look it up. `Some(Some(org))`: a known token
    /// of `org`. `Some(None)`: a token known to be unknown.
    pub fn get(&self, hash: &str, now: Instant) -> Option<Option<String>> {
        if let Some(org) = lock(&self.hits).get(hash, now, self.ttl) {
            return Some(Some(org.clone()));
        }
        lock(&self.misses).get(hash, now, self.ttl).map(|()| None)
    }

    /// Remembers the outcome of a lookup made at `now`.
    pub fn insert(&self, hash: &str, org: Option<String>, now: Instant) {
        if self.ttl.is_zero() {
            return;
        }
        match org {
            Some(org) => lock(&self.hits).insert(hash, org, now, self.ttl),
            None => lock(&self.misses).insert(hash, (), now, self.ttl),
        }
    }
}

/// A poisoned lock only means another request panicked mid-update; the map is still
/// consistent enough to use (at worst an entry is missing), so keep serving.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A map whose entries expire after a common TTL, evicted oldest first. With one TTL
/// for all, insertion order is expiry order, so a queue of insertions finds both the
/// expired entries and, when full, the ones closest to expiring.
struct TtlMap<V> {
    max: usize,
    entries: HashMap<String, (V, Instant)>,
    /// Keys in insertion order, with their insertion time; a key re-inserted later
    /// leaves a stale pair behind, recognised by its time.
    order: VecDeque<(String, Instant)>,
}

impl<V> TtlMap<V> {
    fn new(max: usize) -> Self {
        TtlMap {
            max: max.max(1),
            entries: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    fn get(&self, key: &str, now: Instant, ttl: Duration) -> Option<&V> {
        let (value, at) = self.entries.get(key)?;
        (now.saturating_duration_since(*at) < ttl).then_some(value)
    }

    fn insert(&mut self, key: &str, value: V, now: Instant, ttl: Duration) {
        while let Some((oldest, at)) = self.order.front() {
            let expired = now.saturating_duration_since(*at) >= ttl;
            if !expired && self.entries.len() < self.max && self.order.len() < 2 * self.max {
                break;
            }
            if self.entries.get(oldest).is_some_and(|(_, t)| t == at) {
                self.entries.remove(oldest);
            }
            self.order.pop_front();
        }
        self.entries.insert(key.to_string(), (value, now));
        self.order.push_back((key.to_string(), now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(5);

    #[test]
    fn hits_and_misses_are_remembered_until_the_ttl() {
        let cache = TokenCache::new(TTL, 10);
        let t0 = Instant::now();
        assert_eq!(cache.get("a", t0), None);
        cache.insert("a", Some("acme".into()), t0);
        cache.insert("b", None, t0);
        assert_eq!(
            cache.get("a", t0 + Duration::from_secs(4)),
            Some(Some("acme".into()))
        );
        assert_eq!(cache.get("b", t0 + Duration::from_secs(4)), Some(None));
        assert_eq!(cache.get("a", t0 + TTL), None);
        assert_eq!(cache.get("b", t0 + TTL), None);
    }

    #[test]
    fn a_flood_of_misses_never_evicts_a_hit_and_stays_bounded() {
        let cache = TokenCache::new(TTL, 100);
        let t0 = Instant::now();
        cache.insert("valid", Some("acme".into()), t0);
        for i in 0..10_000 {
            cache.insert(&format!("random-{i}"), None, t0);
        }
        assert_eq!(cache.get("valid", t0), Some(Some("acme".into())));
        let misses = lock(&cache.misses);
        assert_eq!(misses.entries.len(), 100);
        assert!(misses.order.len() <= 200);
        drop(misses);
        // The newest misses are the ones kept.
        assert_eq!(cache.get("random-9999", t0), Some(None));
        assert_eq!(cache.get("random-0", t0), None);
    }

    #[test]
    fn a_reinserted_key_is_not_evicted_by_its_stale_queue_entry() {
        let mut map = TtlMap::new(2);
        let t0 = Instant::now();
        map.insert("a", 1, t0, TTL);
        map.insert("a", 2, t0 + Duration::from_secs(4), TTL);
        // At t0 + 6 the first insertion has expired but the second has not.
        map.insert("b", 3, t0 + Duration::from_secs(6), TTL);
        assert_eq!(map.get("a", t0 + Duration::from_secs(6), TTL), Some(&2));
    }

    #[test]
    fn a_zero_ttl_caches_nothing() {
        let cache = TokenCache::new(Duration::ZERO, 10);
        let t0 = Instant::now();
        cache.insert("a", Some("acme".into()), t0);
        assert_eq!(cache.get("a", t0), None);
    }
}
