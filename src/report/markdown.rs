//! The Markdown rendering: a summary a reviewer can take in at a glance in a
//! pull-request comment or a job summary.
//!
//! The layout is: a header (blocked or passing, and why), a findings table
//! (severity, kind, `path:line`, message, rule), a collapsed explanation of
//! each kind that occurs, the notes (blocking ones marked), then any extra
//! [`Section`]s. The gate adds its ledger and replay sections through
//! [`render_with`]; `--format markdown` uses [`render`], which adds none.
//!
//! Everything that comes from the pull request (paths, messages, rule ids
//! from rule packs) is escaped: a pipe cannot split a table cell, a backtick
//! cannot close a code span early, a line break cannot end a row, and
//! Markdown or HTML in a message is shown as text, never interpreted, so a
//! file name cannot forge a "passing" header.

use std::io::{self, Write};

use super::{plural, reason, sorted_findings, Report, Tally, Verdict};
use crate::finding::{Finding, Kind, Note, Severity};

/// Rows shown in the findings table. GitHub caps a comment at 65,536
/// characters; 100 rows of at most [`MAX_CELL_CHARS`] stay well inside it,
/// and nobody reads a longer table (the JSON and SARIF reports carry all).
pub const MAX_TABLE_ROWS: usize = 100;

/// Characters of a message or note shown before it is cut with `…`.
pub const MAX_CELL_CHARS: usize = 300;

/// Notes listed before the rest are summarised in one line.
pub const MAX_NOTES: usize = 50;

/// An extra part of the report, rendered after the findings and notes as
/// `#### {title}` followed by `body`. `body` is Markdown the caller built
/// (and escaped, with [`escape_text`] and [`code_span`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub body: String,
}

/// Writes the scan report as Markdown.
pub fn render(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    render_with(report, &[], w)
}

/// Writes the report with `sections` appended (the gate's ledger and replay
/// evidence).
pub fn render_with(report: &Report, sections: &[Section], w: &mut dyn Write) -> io::Result<()> {
    let mut out = String::new();
    out.push_str(&header(report));
    out.push_str(&findings(report));
    out.push_str(&notes(&report.notes));
    for s in sections {
        out.push_str(&format!("\n#### {}\n\n{}\n", escape_text(&s.title), s.body.trim_end()));
    }
    w.write_all(out.as_bytes())
}

/// `### ❌ retrygate: blocked` or `### ✅ retrygate: passing`, and the reason.
pub fn header(report: &Report) -> String {
    let title = match report.verdict {
        Verdict::Block => "❌ retrygate: blocked",
        Verdict::Pass => "✅ retrygate: passing",
    };
    let why = capitalise(&reason(report));
    format!("### {title}\n\n{}.\n", escape_text(&why))
}

/// The findings table, or a line saying there are none.
fn findings(report: &Report) -> String {
    let all = sorted_findings(report);
    if all.is_empty() {
        return "\nNo retry regressions found in the changed files.\n".to_string();
    }
    let t = Tally::of(report);
    let mut out = format!("\n#### Findings ({})\n\n", t.findings());
    out.push_str("| Severity | Kind | Location | Message | Rule |\n|---|---|---|---|---|\n");
    for f in all.iter().take(MAX_TABLE_ROWS) {
        out.push_str(&row(f));
    }
    if all.len() > MAX_TABLE_ROWS {
        out.push_str(&format!(
            "\n…and {} not shown here; `retrygate scan --format json` lists them all.\n",
            plural(all.len() - MAX_TABLE_ROWS, "more finding", "more findings")
        ));
    }
    out.push_str(&kind_docs(&all));
    out
}

fn row(f: &Finding) -> String {
    let location = f.location();
    format!(
        "| {} | {} | {} | {} | {} |\n",
        severity_badge(f.severity),
        code_span(f.kind.id()),
        code_span(&location),
        escape_text(&crate::text::truncate(&f.message, MAX_CELL_CHARS)),
        code_span(&f.rule)
    )
}

fn severity_badge(s: Severity) -> &'static str {
    match s {
        Severity::Error => "🔴 error",
        Severity::Warning => "🟡 warning",
        Severity::Note => "🔵 note",
    }
}

/// A collapsed "what these kinds mean" block for the kinds in the table, so a
/// reviewer need not leave the comment to learn why a finding matters.
fn kind_docs(findings: &[&Finding]) -> String {
    let mut kinds: Vec<Kind> = findings.iter().map(|f| f.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let mut out = String::from("\n<details><summary>What these findings mean</summary>\n\n");
    for k in kinds {
        let d = k.doc();
        out.push_str(&format!(
            "- {}: {} **Use instead:** {}\n",
            code_span(k.id()),
            escape_text(d.what),
            escape_text(d.use_instead)
        ));
    }
    out.push_str("\nRun `retrygate explain <kind>` for why each one matters and an example.\n\n</details>\n");
    out
}

/// The notes as a list, blocking ones first and marked.
fn notes(notes: &[Note]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut ordered: Vec<&Note> = notes.iter().collect();
    // Stable: within each group the producer's order is kept.
    ordered.sort_by_key(|n| !n.blocking);
    let mut out = format!("\n#### Notes ({})\n\n", notes.len());
    for n in ordered.iter().take(MAX_NOTES) {
        // Every item starts with fixed text, so a message can never begin a
        // nested list, a heading or a quote.
        let mark = if n.blocking { "⛔ **blocking**" } else { "ℹ️" };
        let text = escape_text(&crate::text::truncate(&n.message, MAX_CELL_CHARS));
        match &n.path {
            Some(p) => out.push_str(&format!("- {mark} {}: {text}\n", code_span(p))),
            None => out.push_str(&format!("- {mark} {text}\n")),
        }
    }
    if ordered.len() > MAX_NOTES {
        out.push_str(&format!(
            "- …and {} not shown\n",
            plural(ordered.len() - MAX_NOTES, "more note", "more notes")
        ));
    }
    out
}

/// Inline text safe in a table cell or a list item: Markdown and HTML
/// punctuation is backslash-escaped (CommonMark allows escaping any ASCII
/// punctuation) and line breaks become `<br>`.
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push_str("<br>");
            }
            '\n' => out.push_str("<br>"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' | '!' | '&' | '$' | '{'
            | '}' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `s` as an inline code span that survives any content: the fence is one
/// backtick longer than the longest run inside, line breaks and control
/// characters are shown as escapes (a span cannot hold a line break in a
/// table), and `|` is escaped so a table cell is not split.
pub fn code_span(s: &str) -> String {
    let content = super::text::one_line(s).replace('|', "\\|");
    if content.is_empty() {
        return "` `".to_string();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick needs a space of padding,
    // which CommonMark strips again when rendering.
    let pad = if content.starts_with('`') || content.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{content}{pad}{fence}")
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
