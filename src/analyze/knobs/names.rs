//! What a setting's name says it is: a retry count, a jitter switch or a
//! timeout, decided on the name's words.
//!
//! A name is split on case changes, digits-to-letters boundaries and every
//! separator (`_`, `-`, `.`, `:`), so `MAX_RETRY_COUNT`, `max_retry_count`,
//! `maxRetryCount` and `retry.max-count` are the same words. The words
//! around the telling one are qualifiers and are kept out of the decision
//! (`WorkflowTaskMaxRetryCount` is a retry count whatever the workflow
//! task is), except the few that make it something else: a delay, a status
//! list, a switch, a counter of retries already made.

/// What a setting's name says it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Knob {
    /// How many times a call is retried or attempted.
    Count,
    /// Whether (or how much) retry delays are randomised.
    Jitter,
    /// How long one attempt (or a call) may take before it fails.
    Timeout,
}

/// A name's reading: the knob and whether the name alone settles it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading {
    pub(crate) knob: Knob,
    /// The name says retry (`max_retries`, `retry_timeout`, `jitter`);
    /// `false` for words that are also used outside retries (`max_attempts`
    /// of a login, a plain `timeout`).
    pub(crate) says_retry: bool,
}

/// `MAX_RETRIES`, `maxRetryCount`, `retry.max-attempts` -> lowercase words.
pub(crate) fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            out.extend((!cur.is_empty()).then(|| std::mem::take(&mut cur)));
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            // aB, 3B
            Some(p) if c.is_uppercase() && (p.is_lowercase() || p.is_ascii_digit()) => true,
            // HTTPRetry: the R of Retry starts a word when a lowercase follows.
            Some(p) if c.is_uppercase() && p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()) => true,
            _ => false,
        };
        if boundary && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    out.extend((!cur.is_empty()).then_some(cur));
    out
}

/// The words joined with `_`: the key two spellings of one name share.
pub(crate) fn key(name: &str) -> String {
    words(name).join("_")
}

const RETRY: &[&str] = &["retry", "retries", "retrying", "retried", "reconnect", "reconnects", "redelivery"];
const COUNT: &[&str] = &[
    "max", "maximum", "num", "number", "count", "times", "limit", "total", "attempts", "attempt", "tries",
    "n",
];

/// Words that make a retry-worded name something other than a count
/// (`RETRY_DELAY`, `retry_status_codes`, `retry_enabled`, `retries_left`).
const NOT_A_COUNT: &[&str] = &[
    "delay",
    "delays",
    "interval",
    "intervals",
    "timeout",
    "timeouts",
    "backoff",
    "wait",
    "waits",
    "sleep",
    "jitter",
    "after",
    "status",
    "statuses",
    "code",
    "codes",
    "on",
    "if",
    "enabled",
    "enable",
    "disabled",
    "disable",
    "header",
    "headers",
    "id",
    "ids",
    "cost",
    "costs",
    "budget",
    "ratio",
    "percent",
    "rate",
    "bucket",
    "token",
    "tokens",
    "window",
    "factor",
    "multiplier",
    "base",
    "ms",
    "millis",
    "milliseconds",
    "secs",
    "seconds",
    "sec",
    "duration",
    "min",
    "minimum",
    "left",
    "remaining",
    "current",
    "made",
    "used",
    "done",
    "so",
    "far",
    "elapsed",
    "counter",
    "metric",
    "metrics",
    "stats",
    "histogram",
    "gauge",
    "error",
    "errors",
    "exception",
    "exceptions",
    "policy",
    "policies",
    "strategy",
    "mode",
    "queue",
    "topic",
    "key",
    "name",
    "url",
    "path",
    "dir",
    "file",
    "log",
    "logs",
    "message",
    "msg",
    "label",
    "text",
    "reason",
    "type",
    "kind",
    "event",
    "events",
    "span",
    "callback",
    "handler",
    "fn",
    "func",
    "function",
    "predicate",
    "hook",
    "is",
    "should",
    "can",
    "has",
    "allow",
    "allowed",
    "methods",
    "method",
    "exhausted",
    "exceeded",
    "ttl",
    "deadline",
    "cap",
    "jittered",
    "random",
    "spread",
    "index",
    "idx",
    "no",
    "last",
    "next",
    "prev",
    "previous",
    "first",
    "until",
    "since",
    "at",
    "time",
    "timestamp",
    "ts",
    "unit",
    "units",
    // Attempts a person makes are no retries.
    "login",
    "logon",
    "signin",
    "password",
    "passwd",
    "auth",
    "otp",
    "pin",
    "captcha",
    "unlock",
    "mfa",
    "verification",
    "verify",
];

const JITTER: &[&str] = &["jitter", "jittered", "randomization", "randomize", "randomized", "randomise"];

const TIMEOUT: &[&str] = &["timeout", "timeouts"];

/// Words that make a timeout one whose lowering does not make retries:
/// how long something idle is kept, how long a shutdown may take.
const NOT_A_RETRIED_TIMEOUT: &[&str] = &[
    "idle",
    "keepalive",
    "keep",
    "alive",
    "ttl",
    "expiry",
    "session",
    "lock",
    "lease",
    "shutdown",
    "graceful",
    "grace",
    "drain",
    "cache",
    "poll",
    "polling",
    "heartbeat",
    "test",
    "tests",
    "ui",
    "toast",
    "animation",
    "debounce",
    "throttle",
    "linger",
    "close",
    "cleanup",
    "termination",
    "terminate",
    "startup",
    "boot",
    "liveness",
    "readiness",
    "probe",
    "healthcheck",
    "health",
    "login",
    "auth",
    "inactivity",
    "visibility",
    "lock",
    "mutex",
    "job",
    "build",
    "ci",
    "deploy",
    "install",
    "kill",
    "stop",
    "exit",
    // Temporal/Cadence `ScheduleToStart` (time queued before a worker takes
    // the task) and `ScheduleToClose` (the whole budget, retries included):
    // neither is one attempt's.
    "schedule",
    "queue",
    "queued",
];

/// Words that, in what holds a timeout (`HealthChecks.Active.Timeout`,
/// `probe: { timeout }`), make it one whose lowering makes no retries. A
/// shorter list than [`NOT_A_RETRIED_TIMEOUT`]: a holder's name is often a
/// verb (`buildClient(timeout)`, `stopAfter`) that says nothing of the timeout.
const HOLDER_OF_NO_RETRIED_TIMEOUT: &[&str] = &[
    "health",
    "healthcheck",
    "healthchecks",
    "probe",
    "liveness",
    "readiness",
    "heartbeat",
    "idle",
    "keepalive",
    "shutdown",
    "lease",
    "lock",
    "session",
];

/// Whether what holds a timeout (a qualifier, a struct, a call, as one
/// dotted or spelled name) says it is a probe's, an idle connection's or a
/// shutdown's ([`HOLDER_OF_NO_RETRIED_TIMEOUT`]).
pub(crate) fn holds_no_retried_timeout(holder: &str) -> bool {
    !holder.is_empty() && words(holder).iter().any(|w| HOLDER_OF_NO_RETRIED_TIMEOUT.contains(&w.as_str()))
}

/// Words that tie a timeout to a retry or to one attempt of a call.
const RETRIED_TIMEOUT: &[&str] = &["retry", "retries", "try", "attempt", "per"];

/// Whether `w` (one lowercase word) says retry.
pub(crate) fn is_retry_word(w: &str) -> bool {
    RETRY.contains(&w)
}

/// Reads `name` (any spelling), or `None` for names that are no retry knob.
pub(crate) fn read(name: &str) -> Option<Reading> {
    read_words(&words(name))
}

/// [`read`] on words already split.
pub(crate) fn read_words(w: &[String]) -> Option<Reading> {
    let has = |set: &[&str]| w.iter().any(|x| set.contains(&x.as_str()));
    if w.is_empty() {
        return None;
    }
    if has(JITTER) {
        // `jitter_seed`, `jitter_fn` and friends are not the switch.
        let other = w.iter().any(|x| {
            matches!(x.as_str(), "seed" | "fn" | "func" | "function" | "source" | "rng" | "type" | "kind")
        });
        return (!other).then_some(Reading { knob: Knob::Jitter, says_retry: true });
    }
    if has(TIMEOUT) {
        if has(NOT_A_RETRIED_TIMEOUT) {
            return None;
        }
        return Some(Reading { knob: Knob::Timeout, says_retry: has(RETRIED_TIMEOUT) });
    }
    if has(NOT_A_COUNT) {
        return None;
    }
    let retry = has(RETRY);
    let plural_retry = w.iter().any(|x| matches!(x.as_str(), "retries" | "reconnects" | "redeliveries"));
    let counted = has(COUNT);
    if retry && (plural_retry || counted) {
        return Some(Reading { knob: Knob::Count, says_retry: true });
    }
    // `max_attempts`, `num_tries`: also logins, locks and polls.
    let attempts = w.iter().any(|x| matches!(x.as_str(), "attempts" | "tries"));
    let attempt_limit = w.iter().any(|x| matches!(x.as_str(), "attempt" | "try"))
        && w.iter().any(|x| matches!(x.as_str(), "max" | "maximum" | "limit" | "count" | "num" | "number"));
    if attempts || attempt_limit {
        return Some(Reading { knob: Knob::Count, says_retry: false });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob(name: &str) -> Option<(Knob, bool)> {
        read(name).map(|r| (r.knob, r.says_retry))
    }

    #[test]
    fn spellings_of_one_name_share_their_words() {
        for n in ["MAX_RETRY_COUNT", "max_retry_count", "maxRetryCount", "MaxRetryCount", "max-retry-count"] {
            assert_eq!(words(n), ["max", "retry", "count"], "{n}");
        }
        assert_eq!(words("retry.max-attempts"), ["retry", "max", "attempts"]);
        assert_eq!(words("HTTPRetryLimit"), ["http", "retry", "limit"]);
        assert_eq!(words("s3MaxRetries"), ["s3", "max", "retries"]);
        assert_eq!(key("maxRetryTimesForForwarding"), "max_retry_times_for_forwarding");
    }

    #[test]
    fn qualified_retry_counts_are_counts_that_say_retry() {
        for n in [
            "maxRetryTimesForForwarding",
            "WorkflowTaskMaxRetryCount",
            "upstream_req_max_retry_number",
            "RECONNECT_MAX_RETRIES",
            "retry.max-attempts",
            "DEFAULT_MAX_NETWORK_RETRIES",
            "retries",
            "num_retries",
            "retry_limit",
        ] {
            assert_eq!(knob(n), Some((Knob::Count, true)), "{n}");
        }
    }

    #[test]
    fn attempts_without_retry_are_counts_that_do_not_say_retry() {
        for n in ["max_attempts", "MAX_TRIES", "maxAttempts", "max_attempt"] {
            assert_eq!(knob(n), Some((Knob::Count, false)), "{n}");
        }
    }

    #[test]
    fn delays_switches_statuses_and_counters_are_not_counts() {
        for n in [
            "RETRY_DELAY_MS",
            "retry_on_timeout",
            "retry_status_codes",
            "retry_enabled",
            "retries_left",
            "remaining_retries",
            "retry_after",
            "retry_backoff_max",
            "min_retries",
            "retry_counter",
            "retry",
            "attempt",
            "DEFAULT_RETRY_COST",
            "MAX_LOGIN_ATTEMPTS",
        ] {
            assert_ne!(knob(n).map(|k| k.0), Some(Knob::Count), "{n}");
        }
    }

    #[test]
    fn jitter_and_timeouts_are_read_with_what_ties_them_to_a_retry() {
        assert_eq!(knob("jitter"), Some((Knob::Jitter, true)));
        assert_eq!(knob("randomization_factor"), Some((Knob::Jitter, true)));
        assert_eq!(knob("RandomizationFactor"), Some((Knob::Jitter, true)));
        assert_eq!(knob("jitter_seed"), None);
        assert_eq!(knob("per_try_timeout"), Some((Knob::Timeout, true)));
        assert_eq!(knob("retryTimeout"), Some((Knob::Timeout, true)));
        assert_eq!(knob("read_timeout"), Some((Knob::Timeout, false)));
        assert_eq!(knob("idle_timeout"), None);
        assert_eq!(knob("shutdownTimeout"), None);
        assert_eq!(knob("ScheduleToStartTimeout"), None);
        assert_eq!(knob("queueTimeoutMs"), None);
    }
}
