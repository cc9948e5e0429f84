//! Analyzers: turn a [`ChangeSet`] into [`Finding`]s.
//!
//! Two analyzers exist: [`rust::RustAnalyzer`] (syn-based, knows the Rust
//! retry crates and their defaults) and [`rules::RulePackAnalyzer`] (YAML rule
//! packs for other languages and config files). Both implement [`Analyzer`];
//! [`scan`] runs them over every changed file, one file per task on a rayon
//! pool, and collects what they say.

pub mod rules;
pub mod rust;

use rayon::prelude::*;

use crate::changeset::{ChangeSet, FileChange, Side};
use crate::finding::{Finding, Note};

/// Stack size for analysis threads. syn parses recursively; together with the
/// nesting-depth guard in [`rust::parse`] this keeps hostile input (100,000
/// nested parentheses) from overflowing the stack.
const ANALYSIS_STACK_BYTES: usize = 64 * 1024 * 1024;

/// What an analyzer says about one file.
#[derive(Debug, Default, Clone)]
pub struct FileResult {
    pub findings: Vec<Finding>,
    pub notes: Vec<Note>,
}

/// One way of finding retry regressions in changed files.
pub trait Analyzer: Send + Sync {
    /// A short name for logs and notes.
    fn name(&self) -> &str;
    /// Whether this analyzer reads files at `path`.
    fn wants(&self, path: &str) -> bool;
    /// Compares the base and head versions of one file.
    fn analyze(&self, file: &FileChange) -> FileResult;
}

/// Everything the analyzers found in a change set.
#[derive(Debug, Default, Clone)]
pub struct ScanOutcome {
    pub findings: Vec<Finding>,
    pub notes: Vec<Note>,
    /// Files at least one analyzer read.
    pub files_analyzed: usize,
}

/// Runs every analyzer over every changed file of `cs`.
pub fn scan(cs: &ChangeSet, analyzers: &[&dyn Analyzer]) -> ScanOutcome {
    let pool = rayon::ThreadPoolBuilder::new().stack_size(ANALYSIS_STACK_BYTES).build();
    let work =
        || cs.files.par_iter().map(|file| analyze_file(file, analyzers)).collect::<Vec<(FileResult, bool)>>();
    let per_file = match pool {
        Ok(pool) => pool.install(work),
        // Without a pool of our own the global one still works; only the
        // larger stack is lost, and the depth guard still applies.
        Err(_) => work(),
    };
    let mut out = ScanOutcome { notes: cs.notes.clone(), ..Default::default() };
    for (res, analyzed) in per_file {
        out.findings.extend(res.findings);
        out.notes.extend(res.notes);
        out.files_analyzed += usize::from(analyzed);
    }
    out.findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out.findings.dedup();
    out
}

fn analyze_file(file: &FileChange, analyzers: &[&dyn Analyzer]) -> (FileResult, bool) {
    let mut res = FileResult::default();
    let mut analyzed = false;
    for a in analyzers {
        if !a.wants(&file.path) {
            continue;
        }
        analyzed = true;
        if matches!(file.head, Side::Skipped) || matches!(file.base, Side::Skipped) {
            // The reason (binary, too large, missing object) is already a note;
            // this one says the gate is blind here, so it must not pass.
            res.notes.push(Note::blocking(
                Some(&file.path),
                format!(
                    "{} could not analyse this file (see the note above); review it by hand and sign off",
                    a.name()
                ),
            ));
            continue;
        }
        let r = a.analyze(file);
        res.findings.extend(r.findings);
        res.notes.extend(r.notes);
    }
    (res, analyzed)
}
