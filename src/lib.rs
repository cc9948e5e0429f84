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
//! `testing` (hidden from the docs) re-exports the internals that integration
//! tests and benches assert on; it promises nothing and the binary never uses it
//! (docs/architecture.md, "The public surface").
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

/// Internals that the integration tests and benches exercise directly:
/// limits they assert against, the replay's parts run one at a time, the
/// Markdown and SARIF escapers. Not part of the API: nothing here is
/// promised to stay, and the binary never uses it.
#[doc(hidden)]
pub mod testing {
    /// The analyzers' limits and inner steps.
    pub mod analyze {
        pub use crate::analyze::rules::lang::Language;
        pub use crate::analyze::rules::mask::{mask, View};
        pub use crate::analyze::rust::bounds::ANALYSIS_STACK_BYTES;
        pub use crate::analyze::rust::crate_index::MAX_INDEX_FILE_BYTES;

        /// The names of the retry libraries the Rust analyzer models.
        pub fn retry_library_names() -> Vec<&'static str> {
            crate::analyze::rust::libs::LIBRARIES.iter().map(|l| l.name()).collect()
        }
        pub use crate::analyze::rust::sites::model as site_model;
    }
    /// The sticky comment's renderer and its escapers.
    pub mod markdown {
        pub use crate::printer::markdown::{
            code_span, escape_text, inline, render_comment, MAX_LINES_BEFORE_DETAILS, MAX_TABLE_ROWS,
        };
    }
    /// SARIF's fingerprints, URIs and size limit.
    pub mod sarif {
        pub use crate::printer::sarif::{fingerprint, path_to_uri, to_sarif_with_limit};
    }
    /// Workflow-command escaping.
    pub mod workflow_commands {
        pub use crate::printer::github::{escape_data, escape_property};
    }
    /// The GitHub layer's constants and inner parts.
    pub mod github {
        pub use crate::github::action::replay_report_beside;
        pub use crate::github::artifact::GithubArtifacts;
        pub use crate::github::check_run::EXTERNAL_ID;
        pub use crate::github::client::{MAX_WRITE_ATTEMPTS, MIN_WRITE_INTERVAL};
        pub use crate::github::comment::MARKER;
        pub use crate::github::publication::BaseBinding;
        pub use crate::github::review::{MARKER_PREFIX, MAX_SUGGESTIONS};
        pub use crate::github::signoff::SignOff;
        /// The heads file of the merge queue.
        pub mod heads {
            pub use crate::github::heads::{encode, EntryVerdict, HeadEntry};
        }
    }
    /// The replay's server, client runner, journal, checks and report, one at a time.
    pub mod replay {
        pub use crate::replay::checks::{run, ChecksInput, Reading};
        pub use crate::replay::journal::{Entry, Journal, WriteEffect, WriteRecord};
        pub use crate::replay::report::ReportContext;
        pub use crate::replay::runner::{ClientExit, ClientRun};
        pub use crate::replay::server::ServerHandle;
    }
}
