//! Per-organization rate limiting: a token bucket per organization, in memory on each
//! node. A request that finds the bucket empty is refused with `429` and a
//! `Retry-After` saying when a token will be there.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Token buckets keyed by organization id.
pub struct RateLimiter {
    /// Tokens added per second; 0 disables limiting.
    per_second: f64,
    /// Bucket size: how many requests may come at once after a quiet period.
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
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
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token for `org`, or says how long until one is available.
    pub fn check(&self, org: &str, now: Instant) -> Result<(), Duration> {
        if self.per_second <= 0.0 {
            return Ok(());
        }
        // A poisoned lock only means another request panicked mid-update; the map
        // itself is still usable, so keep limiting rather than failing requests.
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(org.to_string()).or_insert(Bucket {
            tokens: self.burst,
            updated: now,
        });
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.burst);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - bucket.tokens) / self.per_second,
            ))
        }
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
    fn zero_rate_disables_limiting() {
        let limiter = RateLimiter::new(0.0, 1);
        for _ in 0..100 {
            assert!(limiter.check("a", Instant::now()).is_ok());
        }
    }
}
