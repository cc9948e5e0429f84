//! The plain-text rendering for terminals: one line per finding, in the
//! `path:line: severity[kind]: message (rule)` shape compilers use, then one
//! line per note and a closing verdict line. A gate's verdict opens with its
//! headline and each reason with its fix, and the evidence in a few lines.
//!
//! Paths and messages can come from the pull request itself (a file name is
//! whatever the author chose), so every line break and control character is
//! written as a visible escape: a finding can never spill onto a second line
//! or send escape sequences to the reader's terminal.

use std::io::{self, Write};

use super::{headline, plural, reason, sorted_findings, Tally};
use crate::decision::{GateVerdict, ReplayStatus, ReplaySummary};
pub(crate) use crate::text::one_line;

/// Writes the verdict: a gate's with its reasons and evidence first, then
/// one line per finding and note, then the closing verdict line.
pub(crate) fn render(v: &GateVerdict, w: &mut dyn Write) -> io::Result<()> {
    if !v.is_scan() {
        gate_preamble(v, w)?;
    }
    for f in sorted_findings(&v.findings) {
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
    for n in &v.notes {
        let tag = if n.blocking { "blocking note" } else { "note" };
        match &n.path {
            Some(p) => writeln!(w, "{}: {tag}: {}", one_line(p), one_line(&n.message))?,
            None => writeln!(w, "{tag}: {}", one_line(&n.message))?,
        }
    }
    writeln!(w, "{}", closing_line(v))
}

/// The last line of the text: [`verdict_line`], and for a scan the counts.
fn closing_line(v: &GateVerdict) -> String {
    if !v.is_scan() {
        return verdict_line(v);
    }
    let t = Tally::of(v);
    format!(
        "{} ({}, {})",
        verdict_line(v),
        plural(t.findings(), "finding", "findings"),
        plural(t.blocking_notes + t.info_notes, "note", "notes")
    )
}

/// `retrygate: BLOCK: …`, the line every line-oriented format ends with. A
/// scan says why in a sentence from its counts; a gate names its reason
/// codes. Nothing in it comes from the pull request, so it reads the same in
/// a log and cannot be forged.
pub(crate) fn verdict_line(v: &GateVerdict) -> String {
    if v.is_scan() {
        return format!("retrygate: {}: {}", v.verdict.as_str().to_uppercase(), reason(v));
    }
    let codes: Vec<&str> = v.reasons.iter().map(|r| r.code.as_str()).collect();
    let why = if codes.is_empty() { "nothing blocks".to_string() } else { codes.join(", ") };
    format!("retrygate: {}: {why}", headline(v).shout())
}

/// `retrygate check: BLOCK (agent pull request: …)`, each reason with its
/// fix, the sign-off, the ledger and the replay, then a blank line.
fn gate_preamble(v: &GateVerdict, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "retrygate check: {} ({})", headline(v).shout(), one_line(&who(v)))?;
    for r in &v.reasons {
        writeln!(w, "  {}: {}\n    fix: {}", r.code, one_line(&r.message), one_line(&r.fix))?;
    }
    if let Some(s) = &v.sign_off {
        writeln!(w, "  sign-off: {}", one_line(&s.message))?;
    }
    if let Some(l) = &v.evidence.ledger {
        write!(w, "  {}", crate::ledger::render::render_text(l).replace('\n', "\n  ").trim_end())?;
        writeln!(w)?;
    }
    if let Some(r) = &v.evidence.replay {
        writeln!(w, "  replay: {} ({})", status_word(r.status), one_line(&replay_line(r)))?;
        if let Some(c) = &r.coverage {
            writeln!(w, "    called: {}", one_line(&c.called_list()))?;
            for (_, line) in c.lines() {
                writeln!(w, "    coverage: {}", one_line(&line))?;
            }
        }
    }
    writeln!(w)
}

/// Whether the pull request was judged as an agent's, and why.
pub(crate) fn who(v: &GateVerdict) -> String {
    match &v.facts {
        Some(f) if f.agent.is_agent => format!("agent pull request: {}", f.agent.because.join("; ")),
        Some(_) => "not an agent's pull request".to_string(),
        None => "a scan of the diff".to_string(),
    }
}

/// The replay status in words.
pub(crate) fn status_word(s: ReplayStatus) -> &'static str {
    match s {
        ReplayStatus::NotRequired => "not required",
        ReplayStatus::Missing => "missing",
        ReplayStatus::Rejected => "rejected",
        ReplayStatus::NotRun => "not run",
        ReplayStatus::NoRetry => "no client retried",
        ReplayStatus::Pass => "pass",
        ReplayStatus::Fail => "fail",
    }
}

fn replay_line(r: &ReplaySummary) -> String {
    let mut parts = vec![r.why.clone()];
    if let Some(s) = &r.source {
        parts.push(s.clone());
    }
    parts.extend(r.problems.iter().cloned());
    parts.extend(r.reasons.iter().cloned());
    parts.join("; ")
}
