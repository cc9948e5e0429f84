//! The printer: every rendering of a verdict, one function per format,
//! chosen in one place ([`render`]).
//!
//! All formats render the one verdict type, [`GateVerdict`] (a scan is a
//! verdict with no evidence); none of them decides anything. The headline a
//! verdict gets is chosen once, by [`headline`], and the check run's title
//! ([`check_title`]), the comment's header and the terminal's verdict line
//! all read it.

pub mod amplification;
pub(crate) mod github;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod sarif;
pub(crate) mod text;

use std::io::{self, Write};

use crate::config::{Enforcement, SignOffConfig};
pub use crate::decision::{GateVerdict, Verdict};
use crate::finding::{Finding, Severity};
use crate::replay::ReplayReport;

/// What the Markdown needs besides the verdict; every field is optional, and
/// a scan's Markdown has none of them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The replay report behind `evidence.replay`, for its per-client detail.
    pub replay: Option<&'a ReplayReport>,
    /// The base config's sign-off rule, for the "how to sign off" line.
    pub sign_off: Option<&'a SignOffConfig>,
    /// `https://github.com/OWNER/REPO/blob/HEADSHA`: the Location cells link
    /// to their lines under it. `None` (a CLI run outside a repository's
    /// context) leaves them plain text.
    pub link_base: Option<&'a str>,
    /// The docs, the run and the replay artifact; `None` = no such links.
    pub links: Option<&'a Links>,
}

/// Links the comment offers a maintainer: retrygate's docs, the workflow
/// run, and the replay report's artifact. Each is known or left out: a link
/// whose target is not known is never written (no `[docs]()`, no guessed
/// URL), so a comment rendered outside GitHub has plain text where the
/// links would be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// The tree of retrygate's source at the release or commit that runs,
    /// `https://github.com/OWNER/REPO/blob/REF`; a page is `{docs}/docs/NAME.md`.
    pub docs: Option<String>,
    /// This workflow run's page, `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID`.
    pub run: Option<String>,
    /// Where the replay report can be downloaded: the artifact's name and
    /// the page of the run that uploaded it (its "Artifacts" list).
    pub replay_artifact: Option<(String, String)>,
}

impl Links {
    /// The links of a GitHub Actions job, from its variables (`var` returns
    /// a variable's non-empty value):
    /// - `run` from `GITHUB_SERVER_URL`, `GITHUB_REPOSITORY` and `GITHUB_RUN_ID`;
    /// - `docs` at the Action's own repository and ref
    ///   (`RETRYGATE_ACTION_REPOSITORY`, `RETRYGATE_ACTION_REF`, which
    ///   `action.yml` sets from `github.action_repository` and
    ///   `github.action_ref`), else, when those are empty (a local action,
    ///   `uses: ./`, or the binary run on its own), at this version's release
    ///   tag in retrygate's home repository (`Cargo.toml`'s `repository`).
    ///
    /// Outside GitHub Actions (no `GITHUB_SERVER_URL`), no link at all.
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Links {
        let Some(server) = var("GITHUB_SERVER_URL").map(|s| s.trim_end_matches('/').to_string()) else {
            return Links::default();
        };
        let repo = var("GITHUB_REPOSITORY").filter(|r| r.contains('/'));
        let run = match (&repo, var("GITHUB_RUN_ID")) {
            (Some(repo), Some(id)) if id.bytes().all(|b| b.is_ascii_digit()) => {
                Some(format!("{server}/{repo}/actions/runs/{id}"))
            }
            _ => None,
        };
        let action = var("RETRYGATE_ACTION_REPOSITORY").filter(|r| r.contains('/'));
        let docs = match (action, var("RETRYGATE_ACTION_REF")) {
            (Some(a), Some(r)) => Some(format!("{server}/{a}/blob/{}", crate::http::encode_path(&r))),
            _ => release_docs(),
        };
        Links { docs, run, replay_artifact: None }
    }

    /// `{docs}/docs/{page}`, when the docs are known.
    pub(crate) fn doc(&self, page: &str) -> Option<String> {
        self.docs.as_ref().map(|d| format!("{}/docs/{page}", d.trim_end_matches('/')))
    }
}

/// retrygate's docs at this version's release tag (`vX.Y.Z`) in its home
/// repository; `None` when the crate names no repository.
pub(crate) fn release_docs() -> Option<String> {
    let home = env!("CARGO_PKG_REPOSITORY").trim_end_matches('/');
    (!home.is_empty()).then(|| format!("{home}/blob/v{}", env!("CARGO_PKG_VERSION")))
}

/// The verdict in a few words, chosen in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Headline {
    /// Something blocks the merge.
    Blocked,
    /// Nothing blocks.
    Passing,
    /// Something would block, but the base config says `mode: advisory`.
    PassingAdvisory,
    /// Something would block, but a maintainer signed off on this head.
    PassingSignedOff,
}

impl Headline {
    /// `blocked`, `passing (signed off)`: the comment's header and the check
    /// run's title start with it.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Headline::Blocked => "blocked",
            Headline::Passing => "passing",
            Headline::PassingAdvisory => "passing (advisory mode, would block)",
            Headline::PassingSignedOff => "passing (signed off)",
        }
    }

    pub(crate) fn icon(self) -> &'static str {
        match self {
            Headline::Blocked => "❌",
            Headline::Passing | Headline::PassingSignedOff => "✅",
            Headline::PassingAdvisory => "⚠️",
        }
    }

    /// The terminal's form: `BLOCK`, `PASS (signed off)`.
    pub(crate) fn shout(self) -> &'static str {
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
        (Verdict::Pass, false) if v.facts.as_ref().is_some_and(|f| f.mode == Enforcement::Advisory) => {
            Headline::PassingAdvisory
        }
        (Verdict::Pass, false) => Headline::PassingSignedOff,
    }
}

/// The check run's title when the gate failed before reaching a verdict.
pub(crate) const COULD_NOT_DECIDE_TITLE: &str = "retrygate could not decide (blocked until it can)";

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
pub(crate) struct Tally {
    /// Findings of severity `error` (they block).
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    /// Findings of severity `note`.
    pub(crate) notes: usize,
    /// Notes that block: something could not be analysed.
    pub(crate) blocking_notes: usize,
    /// Notes that are information only.
    pub(crate) info_notes: usize,
}

impl Tally {
    pub(crate) fn of(report: &GateVerdict) -> Tally {
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

    pub(crate) fn findings(&self) -> usize {
        self.errors + self.warnings + self.notes
    }
}

pub(crate) use crate::text::plural;

/// The findings in the order every reporter uses ([`Finding::sort_key`]),
/// whatever order the producer left them in.
pub(crate) fn sorted_findings(findings: &[Finding]) -> Vec<&Finding> {
    let mut v: Vec<&Finding> = findings.iter().collect();
    v.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    v
}

/// Why a scan's verdict is what it is, in one sentence without a trailing
/// period, for the line-oriented formats.
///
/// A `Block` with no blocking finding and no blocking note can only come from
/// a later gate stage (ledger, replay, decision) whose own reasons say why.
pub(crate) fn reason(report: &GateVerdict) -> String {
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
    /// Plain text for a terminal.
    Text,
    /// The stable JSON interface that `scan` and `check` print.
    Json,
    /// The sticky pull request comment.
    Markdown,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
    /// GitHub workflow commands (`::error file=...::`), one per finding.
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
pub(crate) fn severity_badge(s: Severity) -> &'static str {
    match s {
        Severity::Error => "🔴 error",
        Severity::Warning => "🟡 warning",
        Severity::Note => "🔵 note",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Links {
        let map: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Links::from_vars(&|k| map.get(k).cloned().filter(|v| !v.is_empty()))
    }

    #[test]
    fn links_come_from_the_action_ref_else_the_release_tag_and_none_outside_actions() {
        let job = [
            ("GITHUB_SERVER_URL", "https://github.example/"),
            ("GITHUB_REPOSITORY", "acme/shop"),
            ("GITHUB_RUN_ID", "77"),
            ("RETRYGATE_ACTION_REPOSITORY", "retrygate/retrygate"),
            ("RETRYGATE_ACTION_REF", "0123456789abcdef0123456789abcdef01234567"),
        ];
        let l = vars(&job);
        assert_eq!(l.run.as_deref(), Some("https://github.example/acme/shop/actions/runs/77"));
        assert_eq!(
            l.doc("gate.md").as_deref(),
            Some("https://github.example/retrygate/retrygate/blob/0123456789abcdef0123456789abcdef01234567/docs/gate.md")
        );
        // A local action (`uses: ./`) has an empty action repository: the
        // docs of this version's release tag.
        let l = vars(&job[..3]);
        assert_eq!(
            l.docs.as_deref(),
            Some(
                format!("https://github.com/retrygate/retrygate/blob/v{}", env!("CARGO_PKG_VERSION"))
                    .as_str()
            )
        );
        assert_eq!(l.docs, release_docs());
        // A run id that is not a number is no link.
        assert_eq!(vars(&[job[0], job[1], ("GITHUB_RUN_ID", "7 7")]).run, None);
        // Outside GitHub Actions: no link at all.
        assert_eq!(vars(&[("GITHUB_REPOSITORY", "acme/shop"), ("GITHUB_RUN_ID", "77")]), Links::default());
    }
}
