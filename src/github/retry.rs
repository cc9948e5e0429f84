//! When retrygate's own reads of the GitHub API are retried, and how long it
//! waits: the rule the gate demands of the code it judges, applied to itself.
//!
//! Only reads (GET) come through here. Writes are never re-sent blindly
//! (docs/architecture.md, principle 1): the publisher lists again after a failed write
//! and writes only what is missing.
//!
//! A read is retried on 429, on 5xx, on a secondary rate limit (a 403 that
//! carries `retry-after` or `x-ratelimit-remaining: 0`) and on a transport
//! error. The wait is the server's word when it gave one (`retry-after` in
//! seconds or as an HTTP date, read by [`crate::http::parse_retry_after`] as
//! the replay reads it, else `x-ratelimit-reset` when the remaining
//! count is 0) with jitter on top, so that many jobs limited together do not
//! come back together; otherwise exponential backoff with jitter. The number
//! of attempts and the total time spent waiting are both bounded: a reset an
//! hour away is reported, not slept through.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Attempts of one read, the first included.
pub(crate) const MAX_READ_ATTEMPTS: u32 = 4;

/// Time one read may spend waiting between its attempts, all waits together.
pub(crate) const MAX_TOTAL_WAIT: Duration = Duration::from_secs(90);

/// First backoff step when the server gave no hint; doubled per attempt.
pub(crate) const BACKOFF_BASE: Duration = Duration::from_secs(1);

/// Longest backoff step without a hint.
pub(crate) const BACKOFF_CAP: Duration = Duration::from_secs(30);

/// Upper bound of the jitter added on top of a server-given wait.
pub(crate) const HINT_JITTER: Duration = Duration::from_millis(1000);

/// How a failed attempt looked, as far as the retry decision cares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Failure {
    /// HTTP status; `None` for a transport error (no response at all).
    pub(crate) status: Option<u16>,
    /// The `retry-after` header, raw.
    pub(crate) retry_after: Option<String>,
    /// `x-ratelimit-remaining`, parsed.
    pub(crate) ratelimit_remaining: Option<u64>,
    /// `x-ratelimit-reset` (epoch seconds), parsed.
    pub(crate) ratelimit_reset: Option<u64>,
}

impl Failure {
    /// A rate limit, primary or secondary: GitHub answers those with 429 or
    /// with a 403 that carries the limit headers.
    pub(crate) fn is_rate_limit(&self) -> bool {
        match self.status {
            Some(429) => true,
            Some(403) => self.retry_after.is_some() || self.ratelimit_remaining == Some(0),
            _ => false,
        }
    }

    /// Whether a read that failed like this may be tried again at all.
    pub(crate) fn is_retryable(&self) -> bool {
        match self.status {
            None => true,
            Some(s) if s >= 500 => true,
            Some(_) => self.is_rate_limit(),
        }
    }

    /// The wait the server asked for, if it said anything usable.
    pub(crate) fn server_wait(&self, now: SystemTime) -> Option<Duration> {
        if let Some(asked) = self.retry_after.as_deref().and_then(crate::http::parse_retry_after) {
            return Some(asked.wait_from(now));
        }
        if self.ratelimit_remaining == Some(0) {
            if let Some(reset) = self.ratelimit_reset {
                let at = UNIX_EPOCH + Duration::from_secs(reset);
                return Some(at.duration_since(now).unwrap_or(Duration::ZERO));
            }
        }
        None
    }
}

/// Why a read stopped being retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GiveUp {
    /// The failure is not one a retry can fix (404, 401, a plain 403...).
    NotRetryable,
    /// [`MAX_READ_ATTEMPTS`] used up.
    Attempts,
    /// The next wait would take the read past [`MAX_TOTAL_WAIT`].
    Budget { wanted: Duration },
}

/// The retry state of one read.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    attempts: u32,
    waited: Duration,
    max_attempts: u32,
    max_total_wait: Duration,
    seed: RandomState,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff::new(MAX_READ_ATTEMPTS, MAX_TOTAL_WAIT)
    }
}

impl Backoff {
    pub(crate) fn new(max_attempts: u32, max_total_wait: Duration) -> Backoff {
        Backoff {
            attempts: 0,
            waited: Duration::ZERO,
            max_attempts,
            max_total_wait,
            seed: RandomState::new(),
        }
    }

    /// Records a failed attempt and returns how long to wait before the next
    /// one, or why there is no next one.
    pub(crate) fn next_wait(&mut self, failure: &Failure, now: SystemTime) -> Result<Duration, GiveUp> {
        self.attempts += 1;
        if !failure.is_retryable() {
            return Err(GiveUp::NotRetryable);
        }
        if self.attempts >= self.max_attempts {
            return Err(GiveUp::Attempts);
        }
        let wait = match failure.server_wait(now) {
            // Saturating: a huge Retry-After must end in `Budget`, not overflow.
            Some(hint) => hint.saturating_add(self.jitter(HINT_JITTER)),
            None => {
                let step = BACKOFF_BASE.saturating_mul(1 << (self.attempts - 1).min(16)).min(BACKOFF_CAP);
                // Equal jitter: at least half the step, so waits still grow.
                step / 2 + self.jitter(step / 2)
            }
        };
        if self.waited.saturating_add(wait) > self.max_total_wait {
            return Err(GiveUp::Budget { wanted: wait });
        }
        self.waited += wait;
        Ok(wait)
    }

    /// Failed attempts recorded so far.
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// A uniformly spread duration in `[0, max]`. Randomness from the std
    /// hasher's per-process keys is plenty for spreading retries.
    fn jitter(&self, max: Duration) -> Duration {
        let mut h = self.seed.build_hasher();
        h.write_u32(self.attempts);
        h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos());
        let millis = max.as_millis() as u64;
        Duration::from_millis(if millis == 0 { 0 } else { h.finish() % (millis + 1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(status: u16) -> Failure {
        Failure { status: Some(status), ..Failure::default() }
    }

    #[test]
    fn retry_after_seconds_is_a_floor_with_bounded_jitter_on_top() {
        let mut b = Backoff::default();
        let f = Failure { retry_after: Some("2".into()), ..failure(429) };
        let w = b.next_wait(&f, SystemTime::now()).unwrap();
        assert!(w >= Duration::from_secs(2) && w <= Duration::from_secs(2) + HINT_JITTER, "{w:?}");
    }

    #[test]
    fn retry_after_http_date_and_ratelimit_reset_are_honoured() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let date = httpdate::fmt_http_date(now + Duration::from_secs(5));
        let f = Failure { retry_after: Some(date), ..failure(503) };
        assert_eq!(f.server_wait(now), Some(Duration::from_secs(5)));
        let f =
            Failure { ratelimit_remaining: Some(0), ratelimit_reset: Some(1_800_000_007), ..failure(403) };
        assert!(f.is_rate_limit());
        assert_eq!(f.server_wait(now), Some(Duration::from_secs(7)));
        // A reset without remaining == 0 is not a wait instruction.
        let f =
            Failure { ratelimit_remaining: Some(10), ratelimit_reset: Some(1_800_000_007), ..failure(502) };
        assert_eq!(f.server_wait(now), None);
    }

    #[test]
    fn a_huge_or_garbage_retry_after_never_overflows_or_retries_sooner() {
        let now = SystemTime::now();
        for huge in ["18446744073709551615", "99999999999999999999999", "+18446744073709551615"] {
            let mut b = Backoff::default();
            let f = Failure { retry_after: Some(huge.into()), ..failure(429) };
            match b.next_wait(&f, now) {
                Err(GiveUp::Budget { wanted }) => {
                    assert!(wanted >= Duration::from_secs(u64::MAX / 2), "{huge}")
                }
                other => panic!("{huge}: a wait past the budget must give up, got {other:?}"),
            }
        }
        // Garbage is no hint: the reset (when the limit is used up) or backoff.
        let f = Failure { retry_after: Some("soon".into()), ..failure(429) };
        assert_eq!(f.server_wait(now), None);
        let at = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let f = Failure {
            retry_after: Some("1.5".into()),
            ratelimit_remaining: Some(0),
            ratelimit_reset: Some(1_800_000_009),
            ..failure(403)
        };
        assert_eq!(f.server_wait(at), Some(Duration::from_secs(9)));
        let f = Failure { retry_after: Some(" +4 ".into()), ..failure(429) };
        assert_eq!(f.server_wait(at), Some(Duration::from_secs(4)));
    }

    #[test]
    fn plain_client_errors_are_not_retried() {
        for s in [400, 401, 403, 404, 422] {
            let mut b = Backoff::default();
            assert_eq!(b.next_wait(&failure(s), SystemTime::now()), Err(GiveUp::NotRetryable), "{s}");
        }
        assert!(failure(502).is_retryable());
        assert!(Failure::default().is_retryable(), "transport errors are retryable for reads");
    }

    #[test]
    fn attempts_and_total_wait_are_bounded() {
        let mut b = Backoff::default();
        let f = failure(502);
        let mut waits = Vec::new();
        while let Ok(w) = b.next_wait(&f, SystemTime::now()) {
            waits.push(w);
        }
        assert_eq!(waits.len() as u32, MAX_READ_ATTEMPTS - 1);
        assert!(waits[1] >= BACKOFF_BASE, "the second wait is at least half of 2 s: {waits:?}");

        let mut b = Backoff::default();
        let f = Failure { retry_after: Some("3600".into()), ..failure(429) };
        match b.next_wait(&f, SystemTime::now()) {
            Err(GiveUp::Budget { wanted }) => assert!(wanted >= Duration::from_secs(3600)),
            other => panic!("an hour-long wait must exceed the budget, got {other:?}"),
        }
    }
}
