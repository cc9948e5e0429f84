//! The agent's tool-call ledger: verified against the pull request it claims
//! to explain, written by `retrygate ledger append` and the agent hooks, and
//! shown as a timeline.
//!
//! A ledger is JSON Lines, one tool call per line (docs/ledger.md):
//!
//! - **v1** (what existing tool layers write): `ts`, `tool`, `payload`,
//!   `digest` = first 16 hex of SHA-256 over Python's
//!   `json.dumps(payload, sort_keys=True)` ([`pyjson`] reproduces it byte for
//!   byte);
//! - **v2** (what retrygate writes): v1 plus `v: 2`, `seq` (the line number),
//!   `prev` (SHA-256 of the previous line, a hash chain) and, for edits,
//!   `sha256` of the file after the edit ([`record`]).
//!
//! The main entry points:
//!
//! - [`verify::verify`] → [`verify::LedgerReport`], the value the gate's
//!   policy reads (present, valid, problems with line and fix, coverage);
//! - [`render::render_text`], that report for a terminal;
//! - [`append::append`], a locked whole-line append of a v2 record;
//! - [`hook::run_hook`], the Claude Code / Codex / Cursor hook and mutation gate;
//! - [`show::for_each`], the postmortem timeline, streamed.
//!
//! ```
//! use retrygate::ledger::verify::verify_reader;
//! let line = r#"{"ts": 1764410001.625, "tool": "read_file", "payload": {"path": "clients/checkout.py"}, "digest": "b408f563a785e5af"}"#;
//! let report = verify_reader("ledger.jsonl", format!("{line}\n").as_bytes(), None, Default::default()).unwrap();
//! assert!(report.valid);
//! ```

pub mod append;
pub mod artifact;
pub mod hook;
pub(crate) mod hook_input;
pub mod lines;
pub(crate) mod patch;
pub mod pyjson;
pub(crate) mod record;
pub mod render;
pub mod show;
pub mod verify;

pub(crate) use verify::Problem;
pub use verify::{verify, ChangeTarget, LedgerReport};
