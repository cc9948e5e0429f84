//! The plain-text rendering for terminals: one line per finding, in the
//! `path:line: severity[kind]: message (rule)` shape compilers use, then one
//! line per note and a closing verdict line.
//!
//! Paths and messages can come from the pull request itself (a file name is
//! whatever the author chose), so every line break and control character is
//! written as a visible escape: a finding can never spill onto a second line
//! or send escape sequences to the reader's terminal.

use std::fmt::Write as _;
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

/// `s` on one line: `\n`, `\r`, `\t`, `\\`, every other control character
/// and the bidirectional-override characters ("Trojan Source", which make a
/// line read differently from what it says) are written as escapes, the way
/// Rust's `{:?}` would, without the quotes.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || is_bidi_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Unicode's explicit direction marks, embeddings, overrides and isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}
