//! `rust/client-timeout`: a request or operation timeout went down in code
//! that retries (the retrying file itself, or a client that retrying code
//! of the crate builds: `program.rs` says which).

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::eval::fmt_ms;
use crate::analyze::rust::sites::TimeoutSite;
use crate::finding::{Kind, KindDoc};

/// A timeout went down in a file that retries.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "timeout",
    kinds: &[Kind::TimeoutLowered],
    applies: Applies::Clients,
    doc: KindDoc {
        what: "A request or operation timeout (`.timeout(..)`, `connect_timeout`, `read_timeout`, `operation_timeout`, `tokio::time::timeout`, ...) went down in a file with retry code.",
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

fn lowered(base: &TimeoutSite, head: &TimeoutSite) -> Change {
    let what = if head.field {
        format!("the `{}` field of `{}`", head.setter, head.op)
    } else {
        format!(".{}(..)", head.setter)
    };
    let mut c = Change::new(
        Kind::TimeoutLowered,
        &CHECK,
        format!("{what} lowered from {} to {} in code that retries", fmt_ms(base.ms), fmt_ms(head.ms)),
    );
    c.base = Some(json!({"timeout_ms": base.ms}));
    c.head = Some(json!({"timeout_ms": head.ms}));
    c
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
        };
        let c = decide(&t(2500.0), &t(800.0)).unwrap();
        assert_eq!(c.kind, Kind::TimeoutLowered);
        assert!(c.message.contains("2.5 s") && c.message.contains("800 ms"), "{}", c.message);
        assert!(decide(&t(800.0), &t(2500.0)).is_none());
        assert!(decide(&t(800.0), &t(800.0)).is_none());
    }
}
