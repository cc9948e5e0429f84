//! retrygate: a merge gate for pull requests that make retry behaviour more
//! dangerous.
//!
//! The crate is laid out as the pipeline it runs (docs/architecture.md, "The pipeline"):
//!
//! - [`changeset`]: the pull request as base/head file pairs from local git;
//! - [`analyze`]: the Rust analyzer (syn) and the YAML rule packs, which turn
//!   a change set into [`finding::Finding`]s;
//! - [`ledger`]: the agent's tool-call ledger, written and verified;
//! - [`config`]: `.github/retrygate.yml`, parsed and validated;
//! - [`replay`]: the loopback 429 server and the judge that reads its journal;
//! - [`decision`]: the gate's pure decisions (agent? evidence? sign-off?);
//! - [`gate`]: `retrygate check`, which gathers the inputs and renders the verdict;
//! - [`printer`]: text, JSON, Markdown, SARIF and GitHub renderings of the one verdict;
//! - [`github`]: the Action's flow, publishing on GitHub (octocrab);
//! - [`scan`]: `retrygate scan` as a call, the findings with no decision;
//! - [`bounded`]: reading untrusted files (FIFOs, devices, huge files refused);
//! - [`duration`]: the one parser of seconds given by people;
//! - [`text`]: the short SHA, truncation and one-line escaping every renderer shares;
//! - [`http`]: `Retry-After` parsing and percent-encoding, shared by the GitHub client and the replay.
//!
//! Every stage is a plain function of its inputs, so a laptop and the GitHub
//! Action compute the same verdict.
//!
//! The library has no command line: it returns verdicts, outcomes and
//! errors, never exit codes. The binary (`src/main.rs` and its `src/cli/`)
//! owns every flag and its parser, the demo, the built-in replay clients,
//! and the mapping from results to exit codes 0, 1 and 2;
//! `tests/it/binary_boundary.rs` keeps the argument parser and the exit-code
//! type out of the library.

pub mod analyze;
pub mod bounded;
pub mod changeset;
pub mod config;
pub mod decision;
pub mod duration;
pub mod finding;
pub mod gate;
pub mod github;
pub mod http;
pub mod ledger;
pub mod printer;
pub mod replay;
pub mod scan;
pub mod text;
pub mod yaml;
