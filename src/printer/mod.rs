//! The printer: every rendering of a verdict, one function per format,
//! chosen in one place ([`render`]).
//!
//! All formats render the one verdict type, [`GateVerdict`] (a scan is a
//! verdict with no evidence); none of them decides anything. The headline a
//! verdict gets is chosen once, by [`headline`], and the check run's title
//! ([`check_title`]), the comment's header and the terminal's verdict line
//! all read it.

pub mod amplification;
pub mod github;
pub mod json;
pub mod markdown;
pub mod sarif;
pub mod text;

use std::io::{self, Write};

use crate::config::{Mode, SignOff};
use crate::finding::{Finding, Severity};
pub use crate::policy::{GateVerdict, Verdict};
use crate::replay::ReplayReport;

/// What the Markdown needs besides the verdict; every field is optional, and
/// a scan's Markdown has none of them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The replay report behind `evidence.replay`, for its per-client detail.
    pub replay: Option<&'a ReplayReport>,
    /// The base config's sign-off rule, for the "how to sign off" line.
    pub sign_off: Option<&'a SignOff>,
    /// `https://github.com/OWNER/REPO/blob/HEADSHA`: the Location cells link
    /// to their lines under it. `None` (a CLI run outside a repository's
    /// context) leaves them plain text.
    pub link_base: Option<&'a str>,
}

/// The verdict in a few words, chosen in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Headline {
    Blocked,
    Passing,
    /// Something would block, but the base config says `mode: advisory`.
    PassingAdvisory,
    /// Something would block, but a maintainer signed off on this head.
    PassingSignedOff,
}

impl Headline {
    /// `blocked`, `passing (signed off)`: the comment's header and the check
    /// run's title start with it.
    pub fn words(self) -> &'static str {
        match self {
            Headline::Blocked => "blocked",
            Headline::Passing => "passing",
            Headline::PassingAdvisory => "passing (advisory mode, would block)",
            Headline::PassingSignedOff => "passing (signed off)",
        }
    }

    pub fn icon(self) -> &'static str {
        match self {
            Headline::Blocked => "❌",
            Headline::Passing | Headline::PassingSignedOff => "✅",
            Headline::PassingAdvisory => "⚠️",
        }
    }

    /// The terminal's form: `BLOCK`, `PASS (signed off)`.
    pub fn shout(self) -> &'static str {
        match self {
            Headline::Blocked => "BLOCK",
            Headline::Passing => "PASS",
            Headline::PassingAdvisory => "PASS (advisory mode: would block)",
            Headline::PassingSignedOff => "PASS (signed off)",
        }
    }
}

/// The headline of `v`: blocked, passing, or passing although something
/// would block (advisory mode, or a sign-off on this head).
pub fn headline(v: &GateVerdict) -> Headline {
    match (v.verdict, v.reasons.is_empty()) {
        (Verdict::Block, _) => Headline::Blocked,
        (Verdict::Pass, true) => Headline::Passing,
        (Verdict::Pass, false) if v.facts.as_ref().is_some_and(|f| f.mode == Mode::Advisory) => {
            Headline::PassingAdvisory
        }
        (Verdict::Pass, false) => Headline::PassingSignedOff,
    }
}

/// The check run's title when the gate failed before reaching a verdict.
pub const COULD_NOT_DECIDE_TITLE: &str = "retrygate could not decide (blocked until it can)";

/// The check run's title: the headline, then who signed off or the reason
/// codes. Built from codes and the sign-off only, never from the pull
/// request's text.
pub fn check_title(v: &GateVerdict) -> String {
    let words = headline(v).words();
    let mut codes: Vec<&str> = v.reasons.iter().map(|r| r.code.as_str()).collect();
    codes.dedup();
    match (v.verdict, v.accepted_sign_off()) {
        (Verdict::Pass, Some(s)) => format!(
            "{words}: by {} for {}",
            s.by.as_deref().unwrap_or("a maintainer"),
            crate::text::short_sha(&s.sha)
        ),
        _ if !codes.is_empty() => format!("{words}: {}", codes.join(", ")),
        (Verdict::Pass, None) => format!("{words}: no blocking retry regressions"),
        (Verdict::Block, _) => words.to_string(),
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
    pub fn of(report: &GateVerdict) -> Tally {
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

pub use crate::text::plural;

/// The findings in the order every reporter uses ([`Finding::sort_key`]),
/// whatever order the producer left them in.
pub fn sorted_findings(findings: &[Finding]) -> Vec<&Finding> {
    let mut v: Vec<&Finding> = findings.iter().collect();
    v.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    v
}

/// Why a scan's verdict is what it is, in one sentence without a trailing
/// period, for the line-oriented formats.
///
/// A `Block` with no blocking finding and no blocking note can only come from
/// a later gate stage (ledger, replay, policy) whose own reasons say why.
pub fn reason(report: &GateVerdict) -> String {
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

/// Writes `v` to `w` in `format`, with no [`Context`] (a scan's output).
pub fn render(v: &GateVerdict, format: Format, w: &mut dyn Write) -> io::Result<()> {
    render_in(v, &Context::default(), format, w)
}

/// Writes `v` to `w` in `format`; the Markdown uses `ctx`.
pub fn render_in(v: &GateVerdict, ctx: &Context<'_>, format: Format, w: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => text::render(v, w),
        Format::Json => json::render(v, w),
        Format::Markdown => w.write_all(markdown::render_comment(v, ctx).as_bytes()),
        Format::Sarif => sarif::render(v, w),
        Format::Github => github::render(v, w),
    }
}

/// Writes a gate's verdict whose Markdown was already rendered (with its
/// context) when the gate ran: `retrygate check` and the demo.
pub fn render_checked(v: &GateVerdict, markdown: &str, format: Format, w: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Markdown => w.write_all(markdown.as_bytes()),
        _ => render(v, format, w),
    }
}

/// The badge a severity gets in every Markdown table.
pub fn severity_badge(s: Severity) -> &'static str {
    match s {
        Severity::Error => "🔴 error",
        Severity::Warning => "🟡 warning",
        Severity::Note => "🔵 note",
    }
}
