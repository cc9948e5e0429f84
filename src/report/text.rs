//! The plain-text rendering for terminals: one line per finding, in the
//! `path:line: severity[kind]: message (rule)` shape compilers use, then one
//! line per note and a closing verdict line.
//!
//! Paths and messages can come from the pull request itself (a file name is
//! whatever the author chose), so every line break and control character is
//! written as a visible escape: a finding can never spill onto a second line
//! or send escape sequences to the reader's terminal.

use std::io::{self, Write};

use super::{plural, reason, sorted_findings, Report, Tally, Verdict};

/// Writes one line per finding, one per note, then the verdict line.
pub fn render(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    for f in sorted_findings(report) {
        writeln!(
            w,
            "{}:{}: {}[{}]: {} ({})",
            one_line(&f.path),
            f.line,
            f.severity,
            f.kind,
            one_line(&f.message),
            one_line(&f.rule)
        )?;
    }
    for n in &report.notes {
        let tag = if n.blocking { "blocking note" } else { "note" };
        match &n.path {
            Some(p) => writeln!(w, "{}: {tag}: {}", one_line(p), one_line(&n.message))?,
            None => writeln!(w, "{tag}: {}", one_line(&n.message))?,
        }
    }
    let t = Tally::of(report);
    let verdict = match report.verdict {
        Verdict::Block => "BLOCK",
        Verdict::Pass => "PASS",
    };
    writeln!(
        w,
        "retrygate: {verdict}: {} ({}, {})",
        reason(report),
        plural(t.findings(), "finding", "findings"),
        plural(t.blocking_notes + t.info_notes, "note", "notes")
    )
}

pub use crate::text::one_line;
