//! Renderings of a verdict: one [`Reporter`]-style function per format,
//! chosen in one place ([`render`]).
//!
//! All formats render the same [`Report`]; none of them decides anything.

pub mod github;
pub mod json;
pub mod markdown;
pub mod sarif;
pub mod text;

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Note, Severity};

/// The outcome the exit code and the check conclusion follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Block,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Block => "block",
        }
    }
}

/// What a scan (and later the full gate) concluded, ready to render.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    pub notes: Vec<Note>,
}

impl Report {
    /// The scan verdict: blocked by any `error` finding or any blocking note
    /// (something could not be analysed, so findings may be missing).
    pub fn from_scan(findings: Vec<Finding>, notes: Vec<Note>) -> Report {
        let blocked = findings.iter().any(Finding::is_blocking) || notes.iter().any(|n| n.blocking);
        Report { verdict: if blocked { Verdict::Block } else { Verdict::Pass }, findings, notes }
    }
}

/// Counts every rendering states the same way, so the text line, the
/// Markdown header and the GitHub summary never disagree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Findings of severity `error` (they block).
    pub errors: usize,
    pub warnings: usize,
    /// Findings of severity `note`.
    pub notes: usize,
    /// Notes that block: something could not be analysed.
    pub blocking_notes: usize,
    /// Notes that are information only.
    pub info_notes: usize,
}

impl Tally {
    pub fn of(report: &Report) -> Tally {
        let mut t = Tally::default();
        for f in &report.findings {
            match f.severity {
                Severity::Error => t.errors += 1,
                Severity::Warning => t.warnings += 1,
                Severity::Note => t.notes += 1,
            }
        }
        for n in &report.notes {
            if n.blocking {
                t.blocking_notes += 1;
            } else {
                t.info_notes += 1;
            }
        }
        t
    }

    pub fn findings(&self) -> usize {
        self.errors + self.warnings + self.notes
    }
}

/// `1 finding`, `2 findings`: counts read as English in every format.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The findings in the order every reporter uses ([`Finding::sort_key`]),
/// whatever order the producer left them in.
pub fn sorted_findings(report: &Report) -> Vec<&Finding> {
    let mut v: Vec<&Finding> = report.findings.iter().collect();
    v.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    v
}

/// Why the verdict is what it is, in one sentence without a trailing period:
/// the reasons a person acts on first.
///
/// A `Block` with no blocking finding and no blocking note can only come from
/// a later gate stage (ledger, replay, policy) whose own section says why.
pub fn reason(report: &Report) -> String {
    let t = Tally::of(report);
    match report.verdict {
        Verdict::Block => {
            let mut parts = Vec::new();
            if t.errors > 0 {
                let mut kinds: Vec<&str> =
                    report.findings.iter().filter(|f| f.is_blocking()).map(|f| f.kind.id()).collect();
                kinds.sort_unstable();
                kinds.dedup();
                parts.push(format!(
                    "{} ({})",
                    plural(t.errors, "blocking finding", "blocking findings"),
                    kinds.join(", ")
                ));
            }
            if t.blocking_notes > 0 {
                parts.push(format!(
                    "{} (something could not be analysed, so findings may be missing)",
                    plural(t.blocking_notes, "blocking note", "blocking notes")
                ));
            }
            if parts.is_empty() {
                "blocked by the gate (see the sections below)".to_string()
            } else {
                parts.join(" and ")
            }
        }
        Verdict::Pass => {
            let mut s = "no blocking findings".to_string();
            let mut minor = Vec::new();
            if t.warnings > 0 {
                minor.push(plural(t.warnings, "warning", "warnings"));
            }
            if t.notes > 0 {
                minor.push(plural(t.notes, "note-level finding", "note-level findings"));
            }
            if !minor.is_empty() {
                s.push_str(&format!(" ({})", minor.join(", ")));
            }
            s
        }
    }
}

/// Output formats of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Sarif,
    Github,
}

/// Writes `report` to `w` in `format`.
pub fn render(report: &Report, format: Format, w: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => text::render(report, w),
        Format::Json => json::render(report, w),
        Format::Markdown => markdown::render(report, w),
        Format::Sarif => sarif::render(report, w),
        Format::Github => github::render(report, w),
    }
}
