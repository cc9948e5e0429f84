//! Renderings of a gate verdict. The Markdown is the sticky-comment body,
//! laid out so a maintainer knows what to do in ten seconds: the header
//! (blocked or passing, and why), the reasons each with its fix, the
//! findings with links to their lines, the ledger, the replay timeline, how
//! to sign off, and the facts in one small line at the end.
//!
//! Everything that comes from the pull request is escaped with the report
//! module's [`escape_text`] and [`code_span`].

use std::fmt::Write as _;
use std::io::{self, Write};

use super::GateVerdict;
use crate::config::{Config, Mode};
use crate::ledger::artifact::LedgerOrigin;
use crate::ledger::LedgerReport;
use crate::policy::{ReplayStatus, ReplaySummary};
use crate::replay::ReplayReport;
use crate::report::markdown::{code_span, escape_text, MAX_CELL_CHARS};
use crate::report::{self, sorted_findings, Format, Verdict};

/// Ledger problems listed in the comment (the JSON carries them all).
const MAX_LEDGER_PROBLEMS: usize = 10;

/// GitHub refuses a comment over 65,536 characters. Findings rows (at most
/// ~700 characters each) and the replay's timeline are capped so the whole
/// body stays under it: 50 rows and 20,000 characters of replay.
pub const MAX_FINDING_ROWS: usize = 50;
/// Characters of the replay's own Markdown kept in the comment.
pub const MAX_REPLAY_CHARS: usize = 20_000;

/// Writes `gate` in `format`. `markdown` is the pre-rendered comment body
/// (it needs the replay report and the config, which JSON does not carry).
pub fn render(gate: &GateVerdict, markdown: &str, format: Format, w: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *w, gate)?;
            writeln!(w)
        }
        Format::Markdown => w.write_all(markdown.as_bytes()),
        Format::Text => text(gate, w),
        Format::Sarif => report::render(&gate.report(), Format::Sarif, w),
        Format::Github => {
            let rep = gate.report();
            for f in sorted_findings(&rep) {
                writeln!(w, "{}", report::github::finding_command(f))?;
            }
            for n in &gate.notes {
                writeln!(w, "{}", report::github::note_command(n))?;
            }
            let level = if gate.verdict == Verdict::Block { "error" } else { "warning" };
            for r in &gate.reasons {
                writeln!(
                    w,
                    "::{level} title={}::{}",
                    report::github::escape_property(&format!("retrygate {}", r.code)),
                    report::github::escape_data(&format!("{} (fix: {})", r.message, r.fix))
                )?;
            }
            // Codes only: nothing from the pull request, so it cannot read as a command.
            writeln!(w, "{}", closing_line(gate))
        }
    }
}

/// `retrygate: BLOCK: ledger-missing, replay-failed`: the verdict and the
/// reason codes, in every line-oriented format.
fn closing_line(gate: &GateVerdict) -> String {
    let codes: Vec<&str> = gate.reasons.iter().map(|r| r.code.as_str()).collect();
    let why = if codes.is_empty() { "nothing blocks".to_string() } else { codes.join(", ") };
    format!("retrygate: {}: {why}", verdict_word(gate))
}

/// Text for a terminal: the verdict and each reason with its fix, then the
/// findings in the scan's own text shape.
fn text(gate: &GateVerdict, w: &mut dyn Write) -> io::Result<()> {
    let one = report::text::one_line;
    writeln!(w, "retrygate check: {} ({})", verdict_word(gate), one(&who(gate)))?;
    for r in &gate.reasons {
        writeln!(w, "  {}: {}\n    fix: {}", r.code, one(&r.message), one(&r.fix))?;
    }
    if let Some(s) = &gate.sign_off {
        writeln!(w, "  sign-off: {}", one(&s.message))?;
    }
    if let Some(l) = &gate.evidence.ledger {
        write!(w, "  {}", crate::ledger::render::render_text(l).replace('\n', "\n  ").trim_end())?;
        writeln!(w)?;
    }
    if let Some(r) = &gate.evidence.replay {
        writeln!(w, "  replay: {} ({})", status_word(r.status), one(&replay_line(r)))?;
    }
    writeln!(w)?;
    // The scan's lines, without its own closing verdict line: that one knows
    // only the findings, and the gate's verdict also rests on the evidence.
    let mut scan = Vec::new();
    report::text::render(&gate.report(), &mut scan)?;
    let scan = String::from_utf8_lossy(&scan);
    // The verdict line is always the last one.
    if let Some((body, _)) = scan.trim_end_matches('\n').rsplit_once('\n') {
        writeln!(w, "{body}")?;
    }
    writeln!(w, "{}", closing_line(gate))
}

fn verdict_word(gate: &GateVerdict) -> &'static str {
    match (gate.verdict, gate.reasons.is_empty(), gate.facts.mode) {
        (Verdict::Block, _, _) => "BLOCK",
        (Verdict::Pass, true, _) => "PASS",
        (Verdict::Pass, false, Mode::Advisory) => "PASS (advisory mode: would block)",
        (Verdict::Pass, false, _) => "PASS (signed off)",
    }
}

fn who(gate: &GateVerdict) -> String {
    let a = &gate.facts.agent;
    if a.is_agent {
        format!("agent pull request: {}", a.because.join("; "))
    } else {
        "not an agent's pull request".to_string()
    }
}

fn status_word(s: ReplayStatus) -> &'static str {
    match s {
        ReplayStatus::NotRequired => "not required",
        ReplayStatus::Missing => "missing",
        ReplayStatus::Rejected => "rejected",
        ReplayStatus::NotRun => "not run",
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

/// The sticky-comment body.
pub fn markdown(
    gate: &GateVerdict,
    replay: Option<&ReplayReport>,
    config: &Config,
    link_base: Option<&str>,
) -> String {
    let mut o = String::new();
    header(&mut o, gate);
    findings_table(&mut o, gate, link_base);
    if let Some(l) = &gate.evidence.ledger {
        ledger_section(&mut o, l);
    }
    if let Some(r) = &gate.evidence.replay {
        replay_section(&mut o, r, replay);
    }
    sign_off_section(&mut o, gate, config);
    let f = &gate.facts;
    let _ = writeln!(
        o,
        "\n<sub>head {} · base {} ({}) · merge base {} · config {} · mode {} · {}</sub>",
        code_span(&f.head),
        code_span(&f.base),
        code_span(crate::text::short_sha(&f.base_sha)),
        code_span(crate::text::short_sha(&f.merge_base)),
        code_span(&f.config_source),
        code_span(match f.mode {
            Mode::Enforce => "enforce",
            Mode::Advisory => "advisory",
        }),
        escape_text(&who(gate))
    );
    o
}

/// The verdict in a few words: the comment's header and the check run's
/// title both start from it, so they cannot disagree (an advisory pass that
/// would block says so in both).
pub fn headline(gate: &GateVerdict) -> &'static str {
    match (gate.verdict, gate.reasons.is_empty(), gate.facts.mode) {
        (Verdict::Block, _, _) => "blocked",
        (Verdict::Pass, true, _) => "passing",
        (Verdict::Pass, false, Mode::Advisory) => "passing (advisory mode, would block)",
        (Verdict::Pass, false, _) => "passing (signed off)",
    }
}

fn header(o: &mut String, gate: &GateVerdict) {
    let n = gate.reasons.len();
    let icon = match (gate.verdict, n, gate.facts.mode) {
        (Verdict::Block, _, _) => "❌",
        (Verdict::Pass, 0, _) => "✅",
        (Verdict::Pass, _, Mode::Advisory) => "⚠️",
        (Verdict::Pass, _, _) => "✅",
    };
    let _ = writeln!(o, "### {icon} retrygate: {}\n", headline(gate));
    if n == 0 {
        let t = report::Tally::of(&gate.report());
        let warnings = if t.warnings > 0 {
            format!(" ({})", report::plural(t.warnings, "warning", "warnings"))
        } else {
            String::new()
        };
        let evidence = if gate.facts.agent.is_agent {
            "the evidence holds"
        } else {
            "no evidence is owed (not an agent's pull request)"
        };
        let _ = writeln!(
            o,
            "No blocking finding{warnings}, and {evidence} for {}.\n",
            code_span(crate::text::short_sha(&gate.facts.head))
        );
        return;
    }
    let _ = writeln!(o, "| | Why | How to fix |\n|---|---|---|");
    for r in &gate.reasons {
        let _ = writeln!(
            o,
            "| ⛔ | **{}**: {} | {} |",
            escape_text(&r.code),
            escape_text(&crate::text::truncate(&r.message, MAX_CELL_CHARS)),
            escape_text(&crate::text::truncate(&r.fix, MAX_CELL_CHARS))
        );
    }
}

fn findings_table(o: &mut String, gate: &GateVerdict, link_base: Option<&str>) {
    let report = gate.report();
    let all = sorted_findings(&report);
    if all.is_empty() {
        let _ = writeln!(o, "\nNo retry regressions found in the changed files.");
    } else {
        let _ = writeln!(o, "\n#### Findings ({})\n", all.len());
        let _ = writeln!(o, "| Severity | Kind | Location | Message | Rule |\n|---|---|---|---|---|");
        for f in all.iter().take(MAX_FINDING_ROWS) {
            let loc = f.location();
            let location = match link_base {
                Some(base) => {
                    let anchor = match (f.line, f.end_line) {
                        (0, _) => String::new(),
                        (l, e) if e > l => format!("#L{l}-L{e}"),
                        (l, _) => format!("#L{l}"),
                    };
                    format!(
                        "[{}]({}/{}{anchor})",
                        code_span(&loc),
                        base.trim_end_matches('/'),
                        url_path(&f.path)
                    )
                }
                None => code_span(&loc),
            };
            let sev = match f.severity {
                crate::finding::Severity::Error => "🔴 error",
                crate::finding::Severity::Warning => "🟡 warning",
                crate::finding::Severity::Note => "🔵 note",
            };
            let _ = writeln!(
                o,
                "| {sev} | {} | {location} | {} | {} |",
                code_span(f.kind.id()),
                escape_text(&crate::text::truncate(&f.message, MAX_CELL_CHARS)),
                code_span(&f.rule)
            );
        }
        if all.len() > MAX_FINDING_ROWS {
            let _ = writeln!(
                o,
                "\n…and {} more; `retrygate check --format json` lists them all.",
                all.len() - MAX_FINDING_ROWS
            );
        }
    }
    let blocking: Vec<_> = gate.notes.iter().filter(|n| n.blocking).collect();
    if !blocking.is_empty() {
        let _ = writeln!(o, "\n**Could not analyse** ({}):\n", blocking.len());
        for n in blocking.iter().take(20) {
            let place = n.path.as_deref().map(|p| format!("{}: ", code_span(p))).unwrap_or_default();
            let _ = writeln!(
                o,
                "- ⛔ {place}{}",
                escape_text(&crate::text::truncate(&n.message, MAX_CELL_CHARS))
            );
        }
    }
}

/// Percent-encodes a repository path for a URL, keeping `/`.
fn url_path(p: &str) -> String {
    crate::http::encode_path(p)
}

fn ledger_section(o: &mut String, l: &LedgerReport) {
    let _ = writeln!(o, "\n#### Tool-call ledger\n");
    if !l.present && !l.looked.is_empty() {
        let _ = writeln!(o, "⛔ **Ledger missing**. Looked, in order:\n");
        for (i, place) in l.looked.iter().enumerate() {
            let _ = writeln!(o, "{}. {}", i + 1, escape_text(&crate::text::truncate(place, MAX_CELL_CHARS)));
        }
        let _ = writeln!(
            o,
            "\nRecord the agent's session with `retrygate ledger hook` (see docs/ledger.md), then commit the ledger or upload it from the agent's workflow run as an artifact."
        );
        return;
    }
    if !l.present {
        let _ = writeln!(
            o,
            "⛔ **Ledger missing**: nothing at {}. Record the agent's session with `retrygate ledger hook` (see docs/ledger.md) and commit the ledger, or pass `--ledger PATH`.",
            code_span(&l.ledger)
        );
        return;
    }
    let state = if l.valid { "✅ valid" } else { "⛔ invalid" };
    let mut line = format!("{state}: {} ({} records", code_span(&l.ledger), l.records);
    if let Some(f) = &l.format {
        let _ = write!(line, ", {f}");
    }
    line.push(')');
    if let Some(c) = &l.coverage {
        let _ = write!(line, "; explains {} of {} changed files", c.explained, c.changed);
    }
    let _ = writeln!(o, "{line}.");
    if let Some(origin) = &l.origin {
        let _ = writeln!(o, "\nFrom {}.", origin_markdown(origin));
    }
    if !l.problems.is_empty() {
        o.push('\n');
        for p in l.problems.iter().take(MAX_LEDGER_PROBLEMS) {
            let at = p.line.map(|n| format!("line {n}: ")).unwrap_or_default();
            let _ = writeln!(
                o,
                "- {at}{} (fix: {})",
                escape_text(&crate::text::truncate(&p.message, MAX_CELL_CHARS)),
                escape_text(&crate::text::truncate(&p.fix, MAX_CELL_CHARS))
            );
        }
        let more = l.problems.len().saturating_sub(MAX_LEDGER_PROBLEMS) as u64 + l.problems_omitted;
        if more > 0 {
            let _ = writeln!(o, "- …and {more} more (`retrygate ledger verify` lists them)");
        }
    }
}

/// Where the ledger came from, with a link to the workflow run that
/// uploaded it when it is an artifact.
fn origin_markdown(origin: &LedgerOrigin) -> String {
    let entry =
        |e: &Option<String>| e.as_deref().map(|e| format!("{} in ", code_span(e))).unwrap_or_default();
    match origin {
        LedgerOrigin::FileAtHead { commit, path } => {
            format!("{} committed at {}", code_span(path), code_span(crate::text::short_sha(commit)))
        }
        LedgerOrigin::Artifact { artifact, entry: e } => {
            let run = match &artifact.run_url {
                Some(url) => format!("[workflow run {}]({url})", artifact.run_id),
                None => format!("workflow run {}", artifact.run_id),
            };
            format!("{}artifact {} {} of {run}", entry(e), artifact.artifact_id, code_span(&artifact.name))
        }
        LedgerOrigin::ArtifactFile { zip, entry: e } => {
            format!("{}the artifact zip {}", entry(e), code_span(zip))
        }
        LedgerOrigin::File { path } => format!("the file {}", code_span(path)),
    }
}

fn replay_section(o: &mut String, r: &ReplaySummary, report: Option<&ReplayReport>) {
    let mark = match r.status {
        ReplayStatus::Pass | ReplayStatus::NotRequired => "✅",
        _ => "⛔",
    };
    let _ = writeln!(o, "\n#### 429 replay: {mark} {}\n", status_word(r.status));
    let _ = writeln!(o, "{}.", escape_text(&r.why));
    if let Some(s) = &r.source {
        let _ = writeln!(o, "\nSource: {}.", code_span(s));
    }
    for p in &r.problems {
        let _ = writeln!(o, "- ⛔ {}", escape_text(&crate::text::truncate(p, MAX_CELL_CHARS * 2)));
    }
    // The timeline of a report that was rejected is not evidence; it is not
    // shown, so a forged story cannot appear in the comment.
    if let (Some(rep), true) = (report, matches!(r.status, ReplayStatus::Pass | ReplayStatus::Fail)) {
        let body = cap_replay(&crate::replay::render_markdown(rep));
        // Nest the replay's own heading under this section.
        let _ = writeln!(o, "\n{}", body.replacen("### ", "##### ", 1).trim_end());
    }
}

/// The replay's Markdown cut at a client boundary when it is too long for a
/// comment; the JSON report keeps every request.
fn cap_replay(md: &str) -> String {
    if md.len() <= MAX_REPLAY_CHARS {
        return md.to_string();
    }
    let mut cut = MAX_REPLAY_CHARS;
    while !md.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = md[..cut].rfind("\n<details>").unwrap_or(cut);
    format!(
        "{}\n\n…the timeline is cut here to fit a comment; the replay's JSON report has every request.\n",
        md[..cut].trim_end()
    )
}

fn sign_off_section(o: &mut String, gate: &GateVerdict, config: &Config) {
    let head = &gate.facts.head;
    if let Some(s) = gate.sign_off.as_ref().filter(|s| s.accepted) {
        let _ = writeln!(o, "\n#### Sign-off\n\n✅ {}", escape_text(&s.message));
        return;
    }
    if gate.reasons.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n#### Sign-off\n");
    if let Some(s) = &gate.sign_off {
        let _ = writeln!(o, "⛔ {}\n", escape_text(&s.message));
    }
    let _ = writeln!(
        o,
        "Fix the reasons above and push, or a maintainer with {} permission can lift every block for this commit by commenting `{} {head}` (locally: `retrygate check --sign-off {head}`). A new push voids a sign-off.",
        format!("{:?}", config.sign_off.min_permission).to_lowercase(),
        config.sign_off.command.replace('`', "'"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Evidence, GateFacts};
    use crate::policy::agent::AgentDecision;
    use crate::policy::Reason;

    fn verdict(verdict: Verdict, mode: Mode, reasons: &[&str]) -> GateVerdict {
        GateVerdict {
            verdict,
            findings: vec![],
            notes: vec![],
            reasons: reasons
                .iter()
                .map(|c| Reason {
                    code: c.to_string(),
                    message: format!("{c} <b>|x|</b>"),
                    fix: "do it".into(),
                })
                .collect(),
            evidence: Evidence { ledger: None, replay: None },
            facts: GateFacts {
                base: "main".into(),
                base_sha: "b".repeat(40),
                merge_base: "b".repeat(40),
                head: "a".repeat(40),
                head_branch: None,
                author: None,
                labels: vec![],
                agent: AgentDecision { is_agent: false, because: vec![] },
                config_source: "defaults".into(),
                mode,
            },
            sign_off: None,
        }
    }

    #[test]
    fn the_header_says_blocked_passing_advisory_or_signed_off() {
        let c = Config::default();
        let md = |v: &GateVerdict| markdown(v, None, &c, None);
        assert!(md(&verdict(Verdict::Block, Mode::Enforce, &["ledger-missing"]))
            .starts_with("### ❌ retrygate: blocked\n"));
        let pass = md(&verdict(Verdict::Pass, Mode::Enforce, &[]));
        assert!(pass.starts_with("### ✅ retrygate: passing\n"), "{pass}");
        assert!(pass.contains("no evidence is owed"), "{pass}");
        assert!(!pass.contains("#### Sign-off"), "nothing to sign off: {pass}");
        assert!(md(&verdict(Verdict::Pass, Mode::Advisory, &["x"]))
            .starts_with("### ⚠️ retrygate: passing (advisory"));
        assert!(md(&verdict(Verdict::Pass, Mode::Enforce, &["x"]))
            .starts_with("### ✅ retrygate: passing (signed off)"));
    }

    #[test]
    fn reasons_from_the_pull_request_are_escaped_in_the_table() {
        let v = verdict(Verdict::Block, Mode::Enforce, &["replay-rejected"]);
        let md = markdown(&v, None, &Config::default(), None);
        assert!(md.contains("**replay-rejected**: replay-rejected \\<b\\>\\|x\\|\\</b\\> | do it |"), "{md}");
        assert!(md.contains(&format!("`/retrygate sign-off {}`", "a".repeat(40))), "{md}");
    }

    #[test]
    fn closing_lines_and_url_paths() {
        assert_eq!(
            closing_line(&verdict(Verdict::Block, Mode::Enforce, &["a", "b"])),
            "retrygate: BLOCK: a, b"
        );
        assert_eq!(
            closing_line(&verdict(Verdict::Pass, Mode::Enforce, &[])),
            "retrygate: PASS: nothing blocks"
        );
        assert_eq!(url_path("src/a b#c.rs"), "src/a%20b%23c.rs");
        assert_eq!(url_path("ü.rs"), "%C3%BC.rs");
        let long = format!("### head\n{}", "\n<details>client</details>\n".repeat(2000));
        let capped = cap_replay(&long);
        assert!(capped.len() < MAX_REPLAY_CHARS + 200, "{}", capped.len());
        assert!(capped.trim_end().ends_with("has every request."));
        assert!(!capped.contains("<details>client\n"), "cut at a client boundary");
        assert_eq!(cap_replay("short"), "short");
    }
}
