//! Rate limiting by key: a token bucket per key, in memory on each node. Keyed by
//! organization, it limits requests; keyed by client address, failed authentications.
//! A request that finds the bucket empty is refused with `429` and a `Retry-After`
//! saying when a token will be there; every authenticated response says where its
//! organization's budget stands (`RateLimit-*`, see [`quota_headers`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;

/// Buckets kept before idle ones are dropped: keys can be client addresses, which an
/// attacker has many of, so the map must not grow without bound.
const PRUNE_ABOVE: usize = 10_000;

/// Where a key's budget stands after a request: what the `RateLimit-*` headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// The bucket's size (the burst).
    pub limit: u32,
    /// Whole requests left in the bucket now.
    pub remaining: u32,
    /// Seconds until the bucket is full again.
    pub reset_secs: u64,
}

/// A request refused for want of a token.
#[derive(Debug, Clone, Copy)]
pub struct Limited {
    /// How long until a token is there.
    pub retry_after: Duration,
    pub quota: Quota,
}

impl Limited {
    /// [`Limited::retry_after`] in whole seconds, at least 1, as `Retry-After` says it.
    pub fn retry_after_secs(&self) -> u64 {
        self.retry_after.as_secs_f64().ceil().max(1.0) as u64
    }
}

/// The two budgets of every organization: reads and writes (docs/API.md).
pub struct RateLimits {
    pub read: RateLimiter,
    pub write: RateLimiter,
}

impl RateLimits {
    /// The budget a request with `method` is charged to: GET and HEAD read, all
    /// else writes.
    pub fn for_method(&self, method: &Method) -> &RateLimiter {
        if method == Method::GET || method == Method::HEAD {
            &self.read
        } else {
            &self.write
        }
    }
}

/// Where the authentication of a request leaves its quota, for [`quota_headers`] to
/// put on the response (handlers never see it).
#[derive(Clone, Default)]
pub struct QuotaSlot(Arc<Mutex<Option<Quota>>>);

impl QuotaSlot {
    pub fn set(&self, quota: Quota) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(quota);
    }
}

/// Middleware: gives every authenticated response `RateLimit-Limit`,
/// `RateLimit-Remaining` and `RateLimit-Reset` (a refused one also has `Retry-After`,
/// set where it is refused).
pub async fn quota_headers(mut request: Request, next: Next) -> Response {
    let slot = QuotaSlot::default();
    request.extensions_mut().insert(slot.clone());
    let mut response = next.run(request).await;
    let quota = slot.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(quota) = quota {
        let headers = response.headers_mut();
        for (name, value) in [
            ("ratelimit-limit", quota.limit as u64),
            ("ratelimit-remaining", quota.remaining as u64),
            ("ratelimit-reset", quota.reset_secs),
        ] {
            headers.insert(name, HeaderValue::from(value));
        }
    }
    response
}

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

    /// Takes a token for `key`, or says how long until one is available. `None`
    /// when limiting is off.
    pub fn check(&self, key: &str, now: Instant) -> Result<Option<Quota>, Limited> {
        self.take(key, now, true)
    }

    /// Says whether a token for `key` is available (or how long until one is),
    /// without taking it.
    pub fn peek(&self, key: &str, now: Instant) -> Result<Option<Quota>, Limited> {
        self.take(key, now, false)
    }

    /// Gives back a token taken by [`RateLimiter::check`] for a request that turned
    /// out not to be chargeable (a reservation made before knowing), up to the burst.
    pub fn refund(&self, key: &str, now: Instant) {
        if self.per_second <= 0.0 {
            return;
        }
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bucket) = buckets.map.get_mut(key) {
            bucket.tokens = (self.refilled(bucket, now) + 1.0).min(self.burst);
            bucket.updated = now;
        }
    }

    fn take(&self, key: &str, now: Instant, take: bool) -> Result<Option<Quota>, Limited> {
        if self.per_second <= 0.0 {
            return Ok(None);
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
        let allowed = bucket.tokens >= 1.0;
        if allowed && take {
            bucket.tokens -= 1.0;
        }
        let quota = Quota {
            limit: self.burst as u32,
            remaining: bucket.tokens.floor() as u32,
            reset_secs: ((self.burst - bucket.tokens) / self.per_second).ceil() as u64,
        };
        if allowed {
            Ok(Some(quota))
        } else {
            Err(Limited {
                retry_after: Duration::from_secs_f64((1.0 - bucket.tokens) / self.per_second),
                quota,
            })
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
        let limited = limiter.check("a", t0).unwrap_err();
        let wait = limited.retry_after;
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-6, "{wait:?}");
        assert_eq!(limited.retry_after_secs(), 1);
        assert_eq!(
            limited.quota,
            Quota {
                limit: 3,
                remaining: 0,
                reset_secs: 2
            },
            "3 tokens at 2 a second refill in 1.5 s"
        );
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
    fn each_request_reports_what_is_left_and_when_it_is_full_again() {
        let limiter = RateLimiter::new(10.0, 20);
        let t0 = Instant::now();
        let first = limiter.check("a", t0).unwrap().unwrap();
        assert_eq!(
            (first.limit, first.remaining, first.reset_secs),
            (20, 19, 1)
        );
        for _ in 0..9 {
            limiter.check("a", t0).unwrap();
        }
        let tenth = limiter.check("a", t0).unwrap().unwrap();
        assert_eq!((tenth.remaining, tenth.reset_secs), (9, 2));
        assert_eq!(RateLimiter::new(0.0, 1).check("a", t0).unwrap(), None);
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
    fn a_refund_gives_a_taken_token_back_but_never_past_the_burst() {
        let limiter = RateLimiter::new(1.0, 2);
        let t0 = Instant::now();
        assert!(limiter.check("a", t0).is_ok());
        assert!(limiter.check("a", t0).is_ok());
        assert!(limiter.check("a", t0).is_err());
        limiter.refund("a", t0);
        assert!(limiter.check("a", t0).is_ok());
        assert!(limiter.check("a", t0).is_err());
        limiter.refund("a", t0);
        limiter.refund("a", t0);
        limiter.refund("a", t0);
        assert_eq!(limiter.peek("a", t0).unwrap().unwrap().remaining, 2);
        limiter.refund("unknown", t0);
        assert!(!limiter.buckets.lock().unwrap().map.contains_key("unknown"));
    }

    #[test]
    fn zero_rate_disables_limiting() {
        let limiter = RateLimiter::new(0.0, 1);
        for _ in 0..100 {
            assert!(limiter.check("a", Instant::now()).is_ok());
        }
    }
}
