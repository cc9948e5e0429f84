//! alloy's reconnecting transports (alloy 1.x/2.x): `WsConnect::new(url)`,
//! `IpcConnect::new(path)`, and the `ConnectionConfig` handed to
//! `ProviderBuilder::connect_with_config(url, cfg)`.
//!
//! Facts, from alloy's documentation and source (`alloy-transport-ws`
//! `WsConnect`, `alloy-pubsub` `ConnectionHandle`, `alloy-rpc-client`
//! `ConnectionConfig`):
//! - a pub-sub transport that loses its connection reconnects up to
//!   `max_retries` times, **10 by default**, waiting `retry_interval`
//!   (**3 s by default**) between tries (a capped exponential from that base
//!   in recent releases), with **no jitter**;
//! - `ConnectionConfig::new()`/`default()` leaves both unset, so the
//!   transport's defaults apply; `.with_max_retries(n)` and
//!   `.with_retry_interval(d)` set them, and `u32::MAX` means "never give up";
//! - it reconnects a socket; no Retry-After is read.
//!
//! alloy's request retry layer (`RetryBackoffLayer`) is not modelled here.

use super::{Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("alloy");

/// The crate names a file imports alloy's transports through: the umbrella
/// crate or one of the crates that define these types.
const CRATES: &[&str] = &[
    "alloy",
    "alloy_provider",
    "alloy_rpc_client",
    "alloy_transport_ws",
    "alloy_transport_ipc",
    "alloy_pubsub",
];

/// alloy's reconnect count and interval when nothing sets them.
const DEFAULT_RETRIES: f64 = 10.0;
const DEFAULT_INTERVAL_MS: f64 = 3000.0;

/// alloy's reconnecting transports.
pub(crate) struct Alloy;

impl RetryLibrary for Alloy {
    fn name(&self) -> &'static str {
        "alloy"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn crate_names(&self) -> &'static [&'static str] {
        CRATES
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["new", "default"]
    }

    fn construct(&self, root: &Root, _env: &Env, imports: &Imports) -> Option<Policy> {
        construct(root, imports)
    }

    fn apply(&self, p: &mut Policy, s: &Setter, env: &Env) -> bool {
        apply(p, s, env)
    }

    fn by_value_setters(&self) -> &'static [&'static str] {
        BY_VALUE_SETTERS
    }
}

/// The retry setters, which take `self` and return the changed value.
/// (alloy's other `with_*` setters are by value too, but `with_auth` or
/// `with_config` named like another builder's setter must not make a dropped
/// call of another library look like alloy's.)
pub(crate) const BY_VALUE_SETTERS: &[&str] = &["with_max_retries", "with_retry_interval"];

fn construct(root: &Root, imports: &Imports) -> Option<Policy> {
    let Root::Call { ty, func, .. } = root else { return None };
    let what = match (ty.as_str(), func.as_str()) {
        ("WsConnect" | "IpcConnect", "new") => format!("alloy's {ty}"),
        ("ConnectionConfig", "new" | "default") => "alloy's ConnectionConfig (max_retries unset)".to_string(),
        _ => return None,
    };
    // `ConnectionConfig` and `WsConnect` are common names: only a file that
    // names an alloy crate has alloy's.
    if !CRATES.iter().any(|c| imports.has(c)) {
        return None;
    }
    let mut p = Policy::new(
        LIB,
        Fact::new(
            Attempts::from_retries(Some(DEFAULT_RETRIES)),
            format!("{what} reconnects up to 10 times by default"),
        ),
        Fact::new(Some(false), "alloy's reconnect interval has no jitter"),
    );
    p.min_delay_ms = Some(DEFAULT_INTERVAL_MS);
    p.retry_after = Fact::new(None, "alloy reconnects a socket; Retry-After does not apply");
    Some(p)
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match s.name.as_str() {
        "with_max_retries" => {
            let n = s.arg(0).and_then(|a| env.number(a));
            p.attempts = Fact::count(Attempts::from_retries(n), ".with_max_retries(..)");
        }
        "with_retry_interval" => p.min_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        // Settings of the same value that do not change its retries.
        "with_auth" | "with_auth_opt" | "with_config" | "with_ws_config" | "with_keepalive_interval" => {}
        _ => return false,
    }
    true
}
