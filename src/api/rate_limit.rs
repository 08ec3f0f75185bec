//! Rate limiting by key: a token bucket per key, in memory on each node. Keyed by
//! organization, it limits requests; keyed by client address, failed authentications.
//! A request that finds the bucket empty is refused with `429` and a `Retry-After`
//! saying when a token will be there.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Buckets kept before idle ones are dropped: keys can be client addresses, which an
/// attacker has many of, so the map must not grow without bound.
const PRUNE_ABOVE: usize = 10_000;

/// Token buckets keyed by organization id or client address.
pub struct RateLimiter {
    /// Tokens added per second; 0 disables limiting.
    per_second: f64,
    /// Bucket size: how many requests may come at once after a quiet period.
    burst: f64,
    buckets: Mutex<Buckets>,
}

struct Buckets {
    map: HashMap<String, Bucket>,
    /// Size at which the map is next pruned; doubled past what a prune leaves, so a
    /// map of many busy keys is not pruned on every request.
    prune_at: usize,
}

struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl RateLimiter {
    pub fn new(per_second: f64, burst: u32) -> Self {
        RateLimiter {
            per_second,
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(Buckets {
                map: HashMap::new(),
                prune_at: PRUNE_ABOVE,
            }),
        }
    }

    /// Takes a token for `key`, or says how long until one is available.
    pub fn check(&self, key: &str, now: Instant) -> Result<(), Duration> {
        self.take(key, now, true)
    }

    /// Says whether a token for `key` is available (or how long until one is),
    /// without taking it.
    pub fn peek(&self, key: &str, now: Instant) -> Result<(), Duration> {
        self.take(key, now, false)
    }

    fn take(&self, key: &str, now: Instant, take: bool) -> Result<(), Duration> {
        if self.per_second <= 0.0 {
            return Ok(());
        }
        // A poisoned lock only means another request panicked mid-update; the map
        // itself is still usable, so keep limiting rather than failing requests.
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.map.len() >= buckets.prune_at {
            self.prune(&mut buckets, now);
        }
        let bucket = buckets.map.entry(key.to_string()).or_insert(Bucket {
            tokens: self.burst,
            updated: now,
        });
        bucket.tokens = self.refilled(bucket, now);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            if take {
                bucket.tokens -= 1.0;
            }
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - bucket.tokens) / self.per_second,
            ))
        }
    }

    fn refilled(&self, bucket: &Bucket, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        (bucket.tokens + elapsed * self.per_second).min(self.burst)
    }

    /// Drops the buckets that have refilled: forgetting them changes nothing, since a
    /// new bucket starts full.
    fn prune(&self, buckets: &mut Buckets, now: Instant) {
        buckets
            .map
            .retain(|_, bucket| self.refilled(bucket, now) < self.burst);
        buckets.prune_at = (buckets.map.len() * 2).max(PRUNE_ABOVE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_allowed_then_refilled_at_the_rate() {
        let limiter = RateLimiter::new(2.0, 3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(limiter.check("a", t0).is_ok());
        }
        let wait = limiter.check("a", t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-6, "{wait:?}");
        assert!(
            limiter.check("b", t0).is_ok(),
            "organizations have their own buckets"
        );
        assert!(limiter.check("a", t0 + Duration::from_millis(500)).is_ok());
        assert!(limiter.check("a", t0 + Duration::from_millis(500)).is_err());
        // Long idle time refills only up to the burst.
        let later = t0 + Duration::from_secs(3600);
        for _ in 0..3 {
            assert!(limiter.check("a", later).is_ok());
        }
        assert!(limiter.check("a", later).is_err());
    }

    #[test]
    fn peeking_takes_no_token() {
        let limiter = RateLimiter::new(1.0, 2);
        let t0 = Instant::now();
        for _ in 0..5 {
            assert!(limiter.peek("a", t0).is_ok());
        }
        assert!(limiter.check("a", t0).is_ok());
        assert!(limiter.check("a", t0).is_ok());
        assert!(limiter.peek("a", t0).is_err());
    }

    #[test]
    fn refilled_buckets_are_forgotten_so_many_keys_stay_bounded() {
        let limiter = RateLimiter::new(1.0, 2);
        let t0 = Instant::now();
        for i in 0..PRUNE_ABOVE {
            assert!(limiter.check(&format!("ip-{i}"), t0).is_ok());
        }
        let later = t0 + Duration::from_secs(10);
        assert!(limiter.check("one-more", later).is_ok());
        let buckets = limiter.buckets.lock().unwrap();
        assert_eq!(buckets.map.len(), 1, "only the new key's bucket is left");
    }

    #[test]
    fn zero_rate_disables_limiting() {
        let limiter = RateLimiter::new(0.0, 1);
        for _ in 0..100 {
            assert!(limiter.check("a", Instant::now()).is_ok());
        }
    }
}
