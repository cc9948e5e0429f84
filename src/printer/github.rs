//! The GitHub Actions rendering: one workflow command per finding and note,
//! which the runner turns into annotations on the pull request's diff, then a
//! plain summary line for the log. A gate's verdict adds one command per
//! reason, with its fix.
//!
//! ```text
//! ::error file=src/client.rs,line=42,endLine=44,title=retry-count-raised (rust/backon-max-times)::retries raised from 2 to 6
//! ```
//!
//! `error` findings become `::error`, `warning` ones `::warning`, `note` ones
//! `::notice`; blocking notes are `::error`, other notes `::notice`. Values are
//! escaped the way the runner unescapes them (actions/toolkit's command
//! encoding): `%`, `\r` and `\n` in the message, and additionally `:` and `,`
//! in properties. An escaped line break also means a message can never start
//! a new line, and so never smuggle in a workflow command of its own.
//!
//! The runner shows at most 10 annotations of each level per step; the check
//! run published by the gate carries the rest.

use std::io::{self, Write};

use super::{sorted_findings, text, GateVerdict, Verdict};
use crate::finding::{Finding, Note, Severity};

/// Writes one workflow command per finding, note and reason, then the
/// verdict line.
pub(crate) fn render(v: &GateVerdict, w: &mut dyn Write) -> io::Result<()> {
    for f in sorted_findings(&v.findings) {
        writeln!(w, "{}", finding_command(f))?;
    }
    for n in &v.notes {
        writeln!(w, "{}", note_command(n))?;
    }
    let level = if v.verdict == Verdict::Block { "error" } else { "warning" };
    if !v.is_scan() {
        for r in &v.reasons {
            writeln!(
                w,
                "::{level} title={}::{}",
                escape_property(&format!("retrygate {}", r.code)),
                escape_data(&format!("{} (fix: {})", r.message, r.fix))
            )?;
        }
    }
    // Built only from counts, kind ids and reason codes: nothing here can
    // read as a command.
    writeln!(w, "{}", text::verdict_line(v))
}

/// The workflow command for one finding.
pub(crate) fn finding_command(f: &Finding) -> String {
    let command = match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
    };
    // Annotations need a line; a whole-file finding (line 0) points at line 1.
    let line = f.line.max(1);
    let props = [
        ("file", f.path.clone()),
        ("line", line.to_string()),
        ("endLine", f.end_line.max(line).to_string()),
        ("title", format!("{} ({})", f.kind.id(), f.rule)),
    ];
    let message = if f.message.is_empty() { f.kind.doc().what } else { &f.message };
    command_line(command, &props, message)
}

/// The workflow command for one note: `error` when it blocks, else `notice`.
pub(crate) fn note_command(n: &Note) -> String {
    let (command, title) =
        if n.blocking { ("error", "retrygate could not analyse this") } else { ("notice", "retrygate note") };
    let mut props = Vec::new();
    if let Some(p) = &n.path {
        props.push(("file", p.clone()));
    }
    props.push(("title", title.to_string()));
    command_line(command, &props, &n.message)
}

fn command_line(command: &str, props: &[(&str, String)], message: &str) -> String {
    let props: Vec<String> = props.iter().map(|(k, v)| format!("{k}={}", escape_property(v))).collect();
    format!("::{command} {}::{}", props.join(","), escape_data(message))
}

/// Escapes a command's message: `%` first (so the escapes themselves survive),
/// then `\r` and `\n`.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a command property's value: as [`escape_data`], plus `:` and `,`,
/// which would otherwise end the value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}
