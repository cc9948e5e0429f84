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
    /// Analyses all wanted files of a change set together. The default runs
    /// [`Analyzer::analyze`] per file in parallel; an analyzer that matches
    /// code across files (a function moved to another module) overrides it.
    fn analyze_set(&self, files: &[&FileChange]) -> FileResult {
        let per_file: Vec<FileResult> = files.par_iter().map(|f| self.analyze(f)).collect();
        let mut out = FileResult::default();
        for r in per_file {
            out.findings.extend(r.findings);
            out.notes.extend(r.notes);
        }
        out
    }
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
    let work = || analyze_all(cs, analyzers);
    let mut out = match pool {
        Ok(pool) => pool.install(work),
        // Without a pool of our own the global one still works; only the
        // larger stack is lost, and the depth guard still applies.
        Err(_) => work(),
    };
    crate::finding::keep_most_severe(&mut out.findings);
    out
}

fn analyze_all(cs: &ChangeSet, analyzers: &[&dyn Analyzer]) -> ScanOutcome {
    let mut out = ScanOutcome { notes: cs.notes.clone(), ..Default::default() };
    let mut analyzed = vec![false; cs.files.len()];
    for a in analyzers {
        let mut readable = Vec::new();
        for (i, file) in cs.files.iter().enumerate() {
            if !a.wants(&file.path) {
                continue;
            }
            analyzed[i] = true;
            if matches!(file.head, Side::Skipped) || matches!(file.base, Side::Skipped) {
                // The reason (binary, too large, missing object) is already a
                // note; this one says the gate is blind here, so it must not pass.
                out.notes.push(Note::blocking(
                    Some(&file.path),
                    format!(
                        "{} could not read this file (see the note above); review it by hand and sign off",
                        a.name()
                    ),
                ));
            } else {
                readable.push(file);
            }
        }
        let r = a.analyze_set(&readable);
        out.findings.extend(r.findings);
        out.notes.extend(r.notes);
    }
    out.files_analyzed = analyzed.iter().filter(|a| **a).count();
    out
}
