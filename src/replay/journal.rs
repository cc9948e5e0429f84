//! The server's journal: one [`Entry`] per request, written at arrival, which
//! is all the judge reads (docs/architecture.md, principle 2: judge behaviour, not
//! self-reports).
//!
//! Times are offsets in milliseconds from the server's start on a monotonic
//! clock, so gaps cannot be bent by a wall-clock step. The wall-clock time of
//! that start (`anchor_unix_ms`) is kept too, because a `Retry-After`
//! HTTP-date names a wall-clock moment.

use serde::{Deserialize, Serialize};

/// Everything the server saw during one replay.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    /// Unix time in ms at the monotonic zero.
    pub anchor_unix_ms: u64,
    /// Requests in order of arrival.
    pub entries: Vec<Entry>,
    /// Connections that sent bytes which were not HTTP/1.1 (answered 400).
    pub malformed: Vec<Malformed>,
    /// Requests the server itself failed to answer (a panic in its handler):
    /// any one fails the replay, because what the client would have done
    /// next was never tested.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_errors: Vec<String>,
}

/// One request and the answer the server chose for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Arrival order across all clients, from 0.
    pub seq: usize,
    /// The client index from `/c/<i>/...`; `None` for a path outside it.
    pub client: Option<usize>,
    /// Arrival, ms since the server started (monotonic).
    pub at_ms: f64,
    /// The request method as sent.
    pub method: String,
    /// Path and query as sent.
    pub path: String,
    /// The `Idempotency-Key` header, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The `User-Agent` header, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// The status code served.
    pub status: u16,
    /// The `Retry-After` value served, exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
    /// How long the server held the answer (the scenario's `delay_ms`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// When the answer was handed to the connection (ms, same clock). A
    /// client's wait starts when it gets the answer, not when it sent the
    /// request, so delta-seconds are judged from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_ms: Option<f64>,
    /// For a POST or PATCH: which operation it is (`key:<Idempotency-Key>`,
    /// else `digest:<method> <path> <SHA-256 of the body>`) and what the
    /// server's write store did with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<WriteRecord>,
    /// The answer was never delivered: the connection was closed or reset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<Loss>,
}

/// What the server's write store did with one POST/PATCH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WriteRecord {
    /// `key:<Idempotency-Key>`, else `digest:<method> <path> <body SHA-256>`.
    pub operation: String,
    /// Applied, answered from the key's stored result, or refused.
    pub effect: WriteEffect,
}

/// The store's decision for one write request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WriteEffect {
    /// The write took effect (again, if the operation was applied before).
    Applied,
    /// A repeat of an Idempotency-Key already applied: answered from the
    /// stored result, not applied again.
    Deduplicated,
    /// Refused before taking effect (a 429, a 503 ...).
    NotApplied,
}

/// How an answer was lost on the way to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Loss {
    /// The connection was closed without an answer.
    Close,
    /// The connection was reset (RST).
    Reset,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A connection whose bytes did not parse as an HTTP request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Malformed {
    pub(crate) at_ms: f64,
    /// hyper's description of the parse error.
    pub(crate) error: String,
}

impl Entry {
    /// Whether the client got a success: a 2xx that was delivered.
    pub(crate) fn succeeded(&self) -> bool {
        (200..300).contains(&self.status) && self.lost.is_none()
    }

    /// When the answer went out, on the journal's clock (planned, if the
    /// server had not answered yet when the journal was read).
    pub(crate) fn answered_at_ms(&self) -> f64 {
        self.answered_ms.unwrap_or(self.at_ms + self.delay_ms as f64)
    }
}

impl Journal {
    /// The requests of client `i`, in arrival order.
    pub(crate) fn of_client(&self, i: usize) -> Vec<&Entry> {
        self.entries.iter().filter(|e| e.client == Some(i)).collect()
    }
}
