//! `rust/client-timeout`: a request or operation timeout went down, or was
//! newly set where the base set none, on operations a retry covers: the
//! retrying file itself, a client that retrying code of the crate builds
//! (`program.rs` says which), a timeout layer installed with a retry layer,
//! or a builder's timeout beside the builder's own retry setter.
//!
//! A connect timeout is a warning, never an error: a connect that times out
//! sent nothing, so the retry it triggers repeats no request.

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::eval::fmt_ms;
use crate::analyze::rust::sites::TimeoutSite;
use crate::finding::{Kind, KindDoc, Severity};

/// A timeout went down in a file that retries.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "timeout",
    kinds: &[Kind::TimeoutLowered],
    applies: Applies::Clients,
    doc: KindDoc {
        what: "A request or operation timeout (`.timeout(..)`, `read_timeout`, `request_timeout`, `operation_timeout`, `tokio::time::timeout`, a tower or OpenDAL `TimeoutLayer` installed with a `RetryLayer`, a config's `Default` or command-line default) went down, or was newly set where the base set none, on operations a retry covers. A lowered connect timeout is a warning: a connect that times out sent nothing.",
        why: "A shorter timeout turns slow answers into failures, and failures into retries, when the dependency slows down.",
        example: ".timeout(Duration::from_millis(2500))  ->  .timeout(Duration::from_millis(800))",
        use_instead: "Keep the timeout above the dependency's p99 latency.",
    },
};

/// A matched base and head timeout (same item and setter, or same setter
/// moved within the file) that went down.
pub(crate) fn decide(base: &TimeoutSite, head: &TimeoutSite) -> Option<Change> {
    (head.ms < base.ms).then(|| lowered(base, head))
}

/// A timeout the head sets where the base set none: lowered from "no
/// limit", so an attempt that used to wait now fails and is retried.
pub(crate) fn decide_new(head: &TimeoutSite) -> Change {
    let mut c = Change::new(
        Kind::TimeoutLowered,
        &CHECK,
        format!(
            "{} newly set to {} where the base set no timeout, in code that retries: an attempt that used to wait now fails after {} and is sent again",
            what(head),
            fmt_ms(head.ms),
            fmt_ms(head.ms)
        ),
    );
    c.base = Some(json!({"timeout_ms": null}));
    c.head = Some(json!({"timeout_ms": head.ms}));
    connect_only(head, c)
}

/// Whether the timeout bounds only the making of a connection
/// (`connect_timeout`, `timeout_connect`, `connect_timeout_secs`).
pub(crate) fn is_connect(t: &TimeoutSite) -> bool {
    t.setter.to_ascii_lowercase().split('_').any(|w| w == "connect")
}

/// A connect timeout at most warns: a connect that times out sent nothing,
/// so the retry after it repeats no request and no write.
fn connect_only(t: &TimeoutSite, mut c: Change) -> Change {
    if is_connect(t) {
        c.severity = Severity::Warning;
        c.message.push_str("; a connect timeout only cuts off a connection that was never made, so the retry after it repeats no request (a warning)");
    }
    c
}

fn what(t: &TimeoutSite) -> String {
    if t.field {
        format!("the `{}` field of `{}`", t.setter, t.op)
    } else if t.setter.contains("::") {
        format!("`{}(..)`", t.setter)
    } else {
        format!(".{}(..)", t.setter)
    }
}

fn lowered(base: &TimeoutSite, head: &TimeoutSite) -> Change {
    let mut c = Change::new(
        Kind::TimeoutLowered,
        &CHECK,
        format!(
            "{} lowered from {} to {} in code that retries",
            what(head),
            fmt_ms(base.ms),
            fmt_ms(head.ms)
        ),
    );
    c.base = Some(json!({"timeout_ms": base.ms}));
    c.head = Some(json!({"timeout_ms": head.ms}));
    connect_only(head, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_lowered_not_raised() {
        let t = |ms| TimeoutSite {
            item: "f".into(),
            setter: "timeout".into(),
            ms,
            line: 1,
            op: String::new(),
            field: false,
            tie: crate::analyze::rust::sites::TimeoutTie::Unknown,
        };
        let c = decide(&t(2500.0), &t(800.0)).unwrap();
        assert_eq!(c.kind, Kind::TimeoutLowered);
        assert_eq!(c.severity, Severity::Error);
        assert!(c.message.contains("2.5 s") && c.message.contains("800 ms"), "{}", c.message);
        assert!(decide(&t(800.0), &t(2500.0)).is_none());
        assert!(decide(&t(800.0), &t(800.0)).is_none());
    }

    #[test]
    fn a_connect_timeout_warns_and_a_new_timeout_is_lowered_from_none() {
        let t = |setter: &str, ms| TimeoutSite {
            item: "f".into(),
            setter: setter.into(),
            ms,
            line: 1,
            op: String::new(),
            field: false,
            tie: crate::analyze::rust::sites::TimeoutTie::Unknown,
        };
        let c = decide(&t("connect_timeout", 30_000.0), &t("connect_timeout", 2000.0)).unwrap();
        assert_eq!(c.severity, Severity::Warning, "{}", c.message);
        let c = decide_new(&t("timeout", 2000.0));
        assert_eq!((c.kind, c.severity), (Kind::TimeoutLowered, Severity::Error));
        assert!(c.message.contains("newly set to 2 s"), "{}", c.message);
        assert_eq!(decide_new(&t("timeout_connect", 500.0)).severity, Severity::Warning);
        assert!(!is_connect(&t("read_timeout", 1.0)) && !is_connect(&t("reconnect_timeout_disabled", 1.0)));
    }
}
