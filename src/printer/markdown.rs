//! The Markdown rendering: the sticky pull-request comment, the check run's
//! summary, the job summary and `--format markdown`, all one layout, laid
//! out so a maintainer knows what to do in ten seconds.
//!
//! Above the first `<details>` there are only three things, at most
//! [`MAX_LINES_BEFORE_DETAILS`] lines in all:
//! 1. the headline (blocked or passing, and why);
//! 2. the reasons, each with its fix (fixes show their commands as code);
//! 3. the findings table, one row per location and kind naming every rule
//!    that found it, each location a link to its line at the head commit
//!    when the repository is known ([`super::Context::link_base`]).
//!
//! Then, for those who want more: what the kinds mean (collapsed), the
//! notes, the ledger, the replay (one line per failed check, the per-client
//! detail collapsed), how to sign off, and the facts in one small line. A
//! scan's verdict has no evidence, so its Markdown ends after the notes.
//!
//! Everything that comes from the pull request (paths, messages, rule ids
//! from rule packs) is escaped: a pipe cannot split a table cell, a backtick
//! cannot close a code span early, a line break cannot end a row, and
//! Markdown or HTML in a message is shown as text, never interpreted, so a
//! file name cannot forge a "passing" header.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::{headline, plural, reason, severity_badge, sorted_findings, Context, Headline, Links};
use crate::config::{Enforcement, SignOffConfig};
use crate::decision::coverage::{Coverage, LineKind};
use crate::decision::{GateVerdict, ReasonCode, ReplayStatus, ReplaySummary, Verdict};
use crate::finding::{Finding, Kind, Note, Severity};
use crate::http::encode_path as path_to_uri;
use crate::ledger::artifact::LedgerOrigin;
use crate::ledger::LedgerReport;
use crate::replay::report::TimelineRequest;
use crate::replay::{CheckStatus, ReplayCheck, ReplayReport};
use crate::text::{short_sha, truncate};

/// Rows of the findings table. A row is one location and kind, however many
/// rules found it. Thirty rows are what a reviewer reads on one screen; the
/// check run's annotations, the JSON and the SARIF carry every finding.
pub const MAX_TABLE_ROWS: usize = 30;

/// The most lines the comment has before its first `<details>`: the
/// headline and its blank line (2), a reasons table (2 + one row per
/// [`ReasonCode`]), the findings heading with its blank lines (3), the table
/// (2 + [`MAX_TABLE_ROWS`]), the "…and N more" line with its blank (2), and
/// the blank line before `<details>` (1).
pub const MAX_LINES_BEFORE_DETAILS: usize = 12 + ReasonCode::ALL.len() + MAX_TABLE_ROWS;

/// Characters of a message or note shown before it is cut with `…`.
pub(crate) const MAX_CELL_CHARS: usize = 300;

/// Characters of a reason's message in the reasons table. The decision writes
/// each reason as one short whole sentence (the ledger and replay sections
/// below hold the detail), so this bound only guards against a message that
/// carries text from the pull request.
pub(crate) const MAX_REASON_CHARS: usize = 400;

/// Notes listed before the rest are summarised in one line.
pub(crate) const MAX_NOTES: usize = 50;

/// Ledger problems listed in the comment (the JSON carries them all).
pub(crate) const MAX_LEDGER_PROBLEMS: usize = 10;

/// GitHub refuses a comment over 65,536 characters. The replay's own
/// Markdown (its checks and each client's requests) is cut to this many
/// characters, at a client boundary, so the whole body stays under it.
pub(crate) const MAX_REPLAY_CHARS: usize = 20_000;

/// The comment body for `v`.
pub fn render_comment(v: &GateVerdict, ctx: &Context<'_>) -> String {
    let none = Links::default();
    let links = ctx.links.unwrap_or(&none);
    let mut o = String::new();
    header(&mut o, v, links);
    findings_table(&mut o, v, ctx.link_base);
    o.push_str(&super::amplification::section(&v.findings));
    notes(&mut o, &v.notes);
    let Some(facts) = &v.facts else {
        return o;
    };
    if let Some(l) = &v.evidence.ledger {
        ledger_section(&mut o, l, links);
    }
    if let Some(r) = &v.evidence.replay {
        replay_section(&mut o, r, ctx.replay, links);
    }
    sign_off_section(&mut o, v, ctx.sign_off.cloned().unwrap_or_default(), links);
    let mut where_from = String::new();
    if let Some(run) = &links.run {
        let _ = write!(where_from, " · [workflow run]({})", url(run));
    }
    if let Some(doc) = links.doc("gate.md") {
        let _ = write!(where_from, " · [how retrygate decides]({})", url(&doc));
    }
    let _ = writeln!(
        o,
        "\n<sub>head {} · base {} ({}) · merge base {} · config {} · mode {} · {}{where_from}</sub>",
        code_span(&facts.head),
        code_span(&facts.base),
        code_span(short_sha(&facts.base_sha)),
        code_span(short_sha(&facts.merge_base)),
        code_span(&facts.config_source),
        code_span(match facts.mode {
            Enforcement::Enforce => "enforce",
            Enforcement::Advisory => "advisory",
        }),
        inline(&super::text::who(v))
    );
    o
}

/// The comment when the gate failed before reaching a verdict: blocking,
/// with the error and what to do.
pub(crate) fn could_not_decide(error: &str, head: &str) -> String {
    format!(
        "### ❌ retrygate: could not decide\n\nThe gate failed before reaching a verdict, so this pull request is blocked until it runs cleanly:\n\n```text\n{}\n```\n\nFix the cause above and re-run the job. A sign-off cannot lift this: the gate has to reach a verdict on `{}` first.\n",
        error.replace("```", "'''"),
        short_sha(head)
    )
}

/// The headline, then the reasons with their fixes, or why it passes.
fn header(o: &mut String, v: &GateVerdict, links: &Links) {
    let h = headline(v);
    let _ = writeln!(o, "### {} retrygate: {}\n", h.icon(), h.words());
    if v.reasons.is_empty() {
        let mut why = escape_text(&capitalise(&reason(v)));
        if let Some(f) = &v.facts {
            let evidence = if f.agent.is_agent {
                "the evidence holds"
            } else {
                "no evidence is owed (not an agent's pull request)"
            };
            let _ = write!(why, ", and {evidence} for {}", code_span(short_sha(&f.head)));
        }
        let _ = writeln!(o, "{why}.");
        return;
    }
    let mark = if h == Headline::Blocked { "⛔" } else { "⚠️" };
    let _ = writeln!(o, "| | Why | How to fix |\n|---|---|---|");
    for r in &v.reasons {
        let _ = writeln!(
            o,
            "| {mark} | **{}**: {} | {} |",
            r.code,
            inline(&truncate(&r.message, MAX_REASON_CHARS)),
            link_docs(&inline(&truncate(&r.fix, MAX_CELL_CHARS)), links)
        );
    }
}

/// One row of the findings table: every finding at one location of one
/// kind (two rules that see the same raised count are one row).
struct Row<'a> {
    findings: Vec<&'a Finding>,
}

impl Row<'_> {
    fn severity(&self) -> Severity {
        self.findings.iter().map(|f| f.severity).max().unwrap_or(Severity::Note)
    }
}

/// The findings merged into rows, in [`Finding::sort_key`] order.
fn rows(findings: &[Finding]) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = Vec::new();
    let mut at: HashMap<(&str, u32, u32, Kind), usize> = HashMap::new();
    for f in sorted_findings(findings) {
        let key = (f.path.as_str(), f.line, f.end_line.max(f.line), f.kind);
        match at.get(&key) {
            Some(&i) => rows[i].findings.push(f),
            None => {
                at.insert(key, rows.len());
                rows.push(Row { findings: vec![f] });
            }
        }
    }
    rows
}

fn findings_table(o: &mut String, v: &GateVerdict, link_base: Option<&str>) {
    let rows = rows(&v.findings);
    if rows.is_empty() {
        let _ = writeln!(o, "\nNo retry regressions found in the changed files.");
        return;
    }
    // The same counts `scan` prints and the reasons above state: one
    // finding per location and kind (the pipeline keeps the most severe).
    let t = super::Tally::of(v);
    let mut parts = Vec::new();
    for (n, one, many) in
        [(t.errors, "blocking", "blocking"), (t.warnings, "warning", "warnings"), (t.notes, "note", "notes")]
    {
        if n > 0 {
            parts.push(plural(n, one, many));
        }
    }
    let _ = writeln!(o, "\n#### Findings ({}): {}\n", t.findings(), parts.join(", "));
    let _ = writeln!(o, "| Severity | Kind | Location | Why | Rule |\n|---|---|---|---|---|");
    for row in rows.iter().take(MAX_TABLE_ROWS) {
        let first = row.findings[0];
        let mut messages: Vec<String> = Vec::new();
        let mut rules: Vec<String> = Vec::new();
        for f in &row.findings {
            let m = if f.message.is_empty() { f.kind.doc().what } else { f.message.as_str() };
            let m = inline(&truncate(m, MAX_CELL_CHARS));
            if !messages.contains(&m) {
                messages.push(m);
            }
            let r = code_span(&f.rule);
            if !rules.contains(&r) {
                rules.push(r);
            }
        }
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} |",
            severity_badge(row.severity()),
            code_span(first.kind.id()),
            location(first, link_base),
            messages.join("<br>"),
            rules.join("<br>")
        );
    }
    let hidden: usize = rows.iter().skip(MAX_TABLE_ROWS).map(|r| r.findings.len()).sum();
    if hidden > 0 {
        let command = if v.is_scan() { "retrygate scan" } else { "retrygate check" };
        let _ = writeln!(
            o,
            "\n…and {} not shown here; `{command} --format json` lists them all.",
            plural(hidden, "more finding", "more findings")
        );
    }
    kind_docs(o, &v.findings);
}

/// `path:line` as code, linked to the line at the head commit when the
/// repository is known.
fn location(f: &Finding, link_base: Option<&str>) -> String {
    let shown = code_span(&f.location());
    let Some(base) = link_base else {
        return shown;
    };
    let anchor = match (f.line, f.end_line) {
        (0, _) => String::new(),
        (l, e) if e > l => format!("#L{l}-L{e}"),
        (l, _) => format!("#L{l}"),
    };
    format!("[{shown}]({}/{}{anchor})", base.trim_end_matches('/'), path_to_uri(&f.path))
}

/// A collapsed "what these kinds mean" block for the kinds in the table, so a
/// reviewer need not leave the comment to learn why a finding matters.
fn kind_docs(o: &mut String, findings: &[Finding]) {
    let mut kinds: Vec<Kind> = findings.iter().map(|f| f.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    o.push_str("\n<details><summary>What these findings mean</summary>\n\n");
    for k in kinds {
        let d = k.doc();
        let _ = writeln!(
            o,
            "- {}: {} **Use instead:** {}",
            code_span(k.id()),
            escape_text(d.what),
            escape_text(d.use_instead)
        );
    }
    o.push_str("\nRun `retrygate explain <kind>` for why each one matters and an example.\n\n</details>\n");
}

/// The notes as a list, blocking ones first and marked.
fn notes(o: &mut String, notes: &[Note]) {
    if notes.is_empty() {
        return;
    }
    let mut ordered: Vec<&Note> = notes.iter().collect();
    // Stable: within each group the producer's order is kept.
    ordered.sort_by_key(|n| !n.blocking);
    let _ = writeln!(o, "\n#### Notes ({})\n", notes.len());
    for n in ordered.iter().take(MAX_NOTES) {
        // Every item starts with fixed text, so a message can never begin a
        // nested list, a heading or a quote.
        let mark = if n.blocking { "⛔ **blocking**" } else { "ℹ️" };
        let text = escape_text(&truncate(&n.message, MAX_CELL_CHARS));
        match &n.path {
            Some(p) => {
                let _ = writeln!(o, "- {mark} {}: {text}", code_span(p));
            }
            None => {
                let _ = writeln!(o, "- {mark} {text}");
            }
        }
    }
    if ordered.len() > MAX_NOTES {
        let _ =
            writeln!(o, "- …and {} not shown", plural(ordered.len() - MAX_NOTES, "more note", "more notes"));
    }
}

fn ledger_section(o: &mut String, l: &LedgerReport, links: &Links) {
    let how = match links.doc("ledger.md#agent-hooks") {
        Some(doc) => format!(" ([how]({}))", url(&doc)),
        None => String::new(),
    };
    let _ = writeln!(o, "\n#### Tool-call ledger\n");
    if !l.present && !l.looked.is_empty() {
        let _ = writeln!(o, "⛔ **Ledger missing**. Looked, in order:\n");
        for (i, place) in l.looked.iter().enumerate() {
            let _ = writeln!(o, "{}. {}", i + 1, inline(&truncate(place, MAX_CELL_CHARS)));
        }
        let _ = writeln!(
            o,
            "\nRecord the agent's session with `retrygate ledger hook`{how}, then commit the ledger or upload it from the agent's workflow run as an artifact."
        );
        return;
    }
    if !l.present {
        let _ = writeln!(
            o,
            "⛔ **Ledger missing**: nothing at {}. Record the agent's session with `retrygate ledger hook`{how} and commit the ledger, or pass `--ledger PATH`.",
            code_span(&l.ledger)
        );
        return;
    }
    let state = if l.valid { "✅ valid" } else { "⛔ invalid" };
    let mut line =
        format!("{state}: {} ({}", code_span(&l.ledger), plural(l.records as usize, "record", "records"));
    if let Some(f) = &l.format {
        let _ = write!(line, ", {}", escape_text(f));
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
                inline(&truncate(&p.message, MAX_CELL_CHARS)),
                link_docs(&inline(&truncate(&p.fix, MAX_CELL_CHARS)), links)
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
            format!("{} committed at {}", code_span(path), code_span(short_sha(commit)))
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

fn replay_section(o: &mut String, r: &ReplaySummary, report: Option<&ReplayReport>, links: &Links) {
    let mark = match r.status {
        ReplayStatus::Pass | ReplayStatus::NotRequired => "✅",
        _ => "⛔",
    };
    let _ = writeln!(o, "\n#### 429 replay: {mark} {}\n", super::text::status_word(r.status));
    let _ = writeln!(o, "{}.", escape_text(&capitalise(&r.why)));
    if let Some(s) = &r.source {
        let _ = writeln!(o, "\nSource: {}.", code_span(s));
    }
    if let (Some((name, run)), Some(_)) = (&links.replay_artifact, &r.source) {
        let _ = writeln!(
            o,
            "\nThe report is the artifact {} of [the workflow run that made it]({}).",
            code_span(name),
            url(&format!("{run}#artifacts"))
        );
    }
    if !r.problems.is_empty() {
        o.push('\n');
    }
    for p in &r.problems {
        let _ = writeln!(o, "- ⛔ {}", escape_text(&truncate(p, MAX_CELL_CHARS * 2)));
    }
    // The timeline of a report that was rejected is not evidence; it is not
    // shown, so a forged story cannot appear in the comment.
    let Some(rep) = report
        .filter(|_| matches!(r.status, ReplayStatus::Pass | ReplayStatus::Fail | ReplayStatus::NoRetry))
    else {
        return;
    };
    if let Some(note) = rep.no_retry().filter(|_| r.status == ReplayStatus::NoRetry) {
        let _ = writeln!(o, "\n{}", crate::replay::report::no_retry_quote(&escape_text(&note)));
        if let Some(doc) = links.doc("replay.md#evidence-that-binds") {
            let _ = writeln!(o, "\n[Why a replay must exercise a retry]({}).", url(&doc));
        }
    }
    let lines = failed_check_lines(rep);
    if !lines.is_empty() {
        o.push('\n');
        for l in lines {
            let _ = writeln!(o, "- {l}");
        }
    }
    if let Some(c) = &r.coverage {
        coverage_lines(o, c);
    }
    let body = cap_replay(&crate::replay::report::render_markdown_body(rep));
    let chart =
        if r.status == ReplayStatus::Fail { storm_chart(rep).unwrap_or_default() } else { String::new() };
    // Nest the replay's own heading under this section.
    let _ = writeln!(
        o,
        "\n<details><summary>Every check, and each client's requests</summary>\n\n{chart}{}\n\n</details>",
        body.replacen("### ", "##### ", 1).trim_end()
    );
}

/// Coverage lines the comment lists; the verdict's JSON
/// (`evidence.replay.coverage`) has every one.
pub(crate) const MAX_COVERAGE_LINES: usize = 10;

/// What the replay called of the operations whose retries the change
/// touched: one line each, those never called first.
fn coverage_lines(o: &mut String, c: &Coverage) {
    let rule = if c.required {
        "`replay.require_coverage: true`, so an operation it never called blocks"
    } else {
        "shown, not required: `replay.require_coverage` is off"
    };
    let _ = writeln!(o, "\n**Coverage** ({rule}). The replay called {}.", escape_text(&c.called_list()));
    let lines = c.lines();
    if lines.is_empty() {
        let _ = writeln!(o, "The scan found no changed retry to match it against.");
        return;
    }
    o.push('\n');
    for (kind, line) in lines.iter().take(MAX_COVERAGE_LINES) {
        let mark = match kind {
            LineKind::NeverCalled if c.required => "⛔",
            LineKind::NeverCalled => "⚠️",
            LineKind::Unmatched => "❔",
            LineKind::Called => "✅",
        };
        let _ = writeln!(o, "- {mark} {}", escape_text(&truncate(line, MAX_CELL_CHARS)));
    }
    if lines.len() > MAX_COVERAGE_LINES {
        let _ = writeln!(
            o,
            "- …and {} more in the verdict's JSON (`evidence.replay.coverage`)",
            lines.len() - MAX_COVERAGE_LINES
        );
    }
}

/// Retries the storm chart plots at most: beyond this a bar chart is a
/// smear, and the tables below hold every request.
pub(crate) const MAX_CHART_RETRIES: usize = 48;

/// The storm as a picture: for each retry that followed a 429 or 503, the
/// wait the server asked for (bars) against when the client came back (the
/// line), as a Mermaid `xychart-beta`, which GitHub renders in comments. A
/// client that honours Retry-After draws its line on or above the bars; a
/// storm draws it along the floor. A differential replay draws the base and
/// the head one above the other on the same scale (the run to the caps
/// included), so the change is what differs. `None` when no retry followed
/// a 429/503.
pub(crate) fn storm_chart(r: &ReplayReport) -> Option<String> {
    let head = chart_points(&reports_of(
        r,
        r.comparison.as_ref().and_then(|c| c.to_the_cap.as_ref()).map(|c| &*c.head),
    ));
    let base = r.comparison.as_ref().and_then(|c| {
        let b = c.base.as_deref()?;
        Some(chart_points(&reports_of(b, c.to_the_cap.as_ref().map(|c| &*c.base))))
    });
    let Some(base) = base else { return head.map(|h| chart(&h, None)) };
    if base.is_none() && head.is_none() {
        return None;
    }
    let top = base.iter().chain(head.iter()).map(top_of).max();
    let side = |p: &Option<Points>| {
        p.as_ref().map_or("No retry after a 429 or 503.\n\n".to_string(), |p| chart(p, top))
    };
    let short =
        r.comparison.as_ref().map(|c| crate::text::short_sha(&c.base_commit).to_string()).unwrap_or_default();
    Some(format!("**Base** ({short}):\n\n{}**Head**:\n\n{}", side(&base), side(&head)))
}

/// A report, its scenarios, and the run to the caps when there is one.
fn reports_of<'a>(r: &'a ReplayReport, cap: Option<&'a ReplayReport>) -> Vec<&'a ReplayReport> {
    let mut out = vec![r];
    out.extend(r.parts.iter());
    out.extend(cap);
    out
}

/// The chart's points: (label, asked ms, came back ms), the first
/// [`MAX_CHART_RETRIES`] of `total`.
struct Points {
    points: Vec<(String, f64, f64)>,
    total: usize,
}

fn chart_points(reports: &[&ReplayReport]) -> Option<Points> {
    let mut points: Vec<(String, f64, f64)> = Vec::new();
    let mut total = 0usize;
    let scenarios_with_points = reports
        .iter()
        .filter(|p| {
            p.timeline.iter().any(|t| t.requests.windows(2).any(|w| matches!(w[0].status, 429 | 503)))
        })
        .count();
    for (i, part) in reports.iter().enumerate() {
        for t in &part.timeline {
            let mut n = 0;
            for w in t.requests.windows(2) {
                if !matches!(w[0].status, 429 | 503) {
                    continue;
                }
                n += 1;
                total += 1;
                if points.len() == MAX_CHART_RETRIES {
                    continue;
                }
                // Short labels: 36 of them share one axis.
                let label = if scenarios_with_points > 1 {
                    format!("s{i}:{}.{n}", t.client)
                } else {
                    format!("{}.{n}", t.client)
                };
                let came_back = w[1].gap_ms.unwrap_or(w[1].at_ms - w[0].at_ms).max(0.0);
                points.push((label, w[1].asked_ms.unwrap_or(0.0).max(0.0), came_back));
            }
        }
    }
    (!points.is_empty()).then_some(Points { points, total })
}

fn top_of(p: &Points) -> u64 {
    let top = p.points.iter().map(|(_, a, c)| a.max(*c)).fold(0.0_f64, f64::max);
    ((top * 1.1 / 100.0).ceil() * 100.0).max(100.0) as u64
}

/// One chart of `p`, on the y scale `top` when given (two charts compared).
fn chart(p: &Points, top: Option<u64>) -> String {
    let top = top.unwrap_or_else(|| top_of(p));
    let points = &p.points;
    let labels: Vec<String> = points.iter().map(|(l, _, _)| format!("\"{l}\"")).collect();
    let asked: Vec<String> = points.iter().map(|(_, a, _)| format!("{}", a.round() as u64)).collect();
    let came: Vec<String> = points.iter().map(|(_, _, c)| format!("{}", c.round() as u64)).collect();
    let shown = if p.total > points.len() {
        format!("the first {} of {} retries after a 429 or 503", points.len(), p.total)
    } else {
        plural(p.total, "retry after a 429 or 503", "retries after a 429 or 503")
    };
    format!(
        "When each client came back ({shown}; `N.M` is client N's retry M): the grey bars are the wait the server asked for, the red line is when the client came back. A client that honours Retry-After keeps the line on or above the bars.\n\n```mermaid\n%%{{init: {{\"xyChart\": {{\"width\": 900, \"height\": 360}}, \"themeVariables\": {{\"xyChart\": {{\"plotColorPalette\": \"#d0d7de, #cf222e\"}}}}}}}}%%\nxychart-beta\n    title \"Asked wait vs. came back, ms\"\n    x-axis [{}]\n    y-axis \"ms after the answer\" 0 --> {top}\n    bar [{}]\n    line [{}]\n```\n\n",
        labels.join(", "),
        asked.join(", "),
        came.join(", ")
    )
}

/// Every retry in the report (a request after another from the same
/// client), with the answer that came before it, across all scenarios.
fn retries(r: &ReplayReport) -> Vec<(&TimelineRequest, &TimelineRequest)> {
    let mut out = Vec::new();
    for t in &r.timeline {
        out.extend(t.requests.windows(2).map(|w| (&w[0], &w[1])));
    }
    for p in &r.parts {
        out.extend(retries(p));
    }
    out
}

/// `10 ms`, or `10–19 ms` for a range.
fn ms_range(values: impl Iterator<Item = f64>) -> Option<String> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return None;
    }
    let (lo, hi) = (lo.round() as u64, hi.round() as u64);
    Some(if lo == hi { format!("{lo} ms") } else { format!("{lo}–{hi} ms") })
}

/// One line per failed check of the replay, with how many retries broke it
/// and the range of what they did: the story in a sentence each, where the
/// per-request detail is collapsed below. A check that judges the fleet
/// rather than single retries (lockstep, recovery, the attempt budget) says
/// it in its own summary line.
fn failed_check_lines(r: &ReplayReport) -> Vec<String> {
    let all = retries(r);
    // Only a retry after an answer that asked for a wait can honour one.
    let asked = all.iter().filter(|(_, q)| q.asked_ms.is_some()).count();
    let mut lines = Vec::new();
    for c in r.checks.iter().filter(|c| c.status == CheckStatus::Fail) {
        let mark = if c.level == crate::replay::scenario::Level::Error { "❌" } else { "⚠️" };
        let broke: Vec<&(&TimelineRequest, &TimelineRequest)> =
            all.iter().filter(|(_, q)| q.broke.contains(&c.check)).collect();
        let of = format!("{} of {}", broke.len(), plural(all.len(), "retry", "retries"));
        let said = match c.check {
            ReplayCheck::RetryAfterHonored if !broke.is_empty() => {
                let of = format!("{} of {}", broke.len(), plural(asked, "retry", "retries"));
                let mut answers: Vec<String> = broke.iter().map(|(p, _)| p.status.to_string()).collect();
                answers.sort_unstable();
                answers.dedup();
                let gaps = ms_range(broke.iter().filter_map(|(_, q)| q.gap_ms)).unwrap_or_default();
                let asked = ms_range(broke.iter().filter_map(|(_, q)| q.asked_ms)).unwrap_or_default();
                Some(format!("{of} came back {gaps} after a {} that asked for {asked}", answers.join(" or ")))
            }
            ReplayCheck::NoUnsafeReplay if !broke.is_empty() => {
                let mut methods: Vec<&str> = broke.iter().map(|(_, q)| q.method.as_str()).collect();
                methods.sort_unstable();
                methods.dedup();
                Some(format!(
                    "{of} re-sent a {} without the same Idempotency-Key",
                    escape_text(&methods.join(" or "))
                ))
            }
            ReplayCheck::NoDuplicateWrite if !broke.is_empty() => {
                Some(format!("{of} applied a write that had already been applied"))
            }
            _ => None,
        };
        let said = said.unwrap_or_else(|| escape_text(&truncate(&c.message, MAX_CELL_CHARS)));
        lines.push(format!("{mark} {}: {said}", code_span(c.check.id())));
    }
    lines
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

fn sign_off_section(o: &mut String, v: &GateVerdict, rule: SignOffConfig, links: &Links) {
    let Some(facts) = &v.facts else {
        return;
    };
    let head = &facts.head;
    if let Some(s) = v.accepted_sign_off() {
        let _ = writeln!(o, "\n#### Sign-off\n\n✅ {}", inline(&s.message));
        return;
    }
    if v.reasons.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n#### Sign-off\n");
    if let Some(s) = &v.sign_off {
        let _ = writeln!(o, "⛔ {}\n", inline(&s.message));
    }
    let _ = writeln!(
        o,
        "Fix the reasons above and push, or a maintainer with {} permission can lift every block for this commit by commenting {} (locally: {}). A new push voids a sign-off.",
        format!("{:?}", rule.min_permission).to_lowercase(),
        code_span(&format!("{} {head}", rule.command)),
        code_span(&format!("retrygate check --sign-off {head}")),
    );
    if let Some(doc) = links.doc("github.md#sign-off-by-comment") {
        let _ = writeln!(o, "\n[Who may sign off, and how]({}).", url(&doc));
    }
    if v.verdict == Verdict::Pass {
        // Advisory mode: nothing to lift, but the same fixes apply.
        let _ = writeln!(o, "\nThe base config sets `mode: advisory`, so none of this blocks the merge.");
    }
}

/// Text written for people that may hold commands in backticks (a reason's
/// message and fix): the backticked parts become code spans, the rest is
/// escaped, so a fix reads `retrygate explain jitter-removed` as code and
/// never as literal backslashes and backticks. An unpaired backtick stays
/// text.
pub fn inline(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, part) in parts.iter().enumerate() {
        let is_code = i % 2 == 1 && i + 1 < parts.len();
        if is_code {
            out.push_str(&code_span(part));
        } else if i % 2 == 1 {
            // The opening backtick of a span that never closes.
            out.push_str(&escape_text(&format!("`{part}")));
        } else {
            out.push_str(&escape_text(part));
        }
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
    let content = crate::text::one_line(s).replace('|', "\\|");
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

/// A URL as a Markdown link destination: in `<…>`, so a parenthesis or a
/// space cannot end it early; `<`, `>` and line breaks are percent-encoded.
fn url(u: &str) -> String {
    let safe = u.replace('<', "%3C").replace('>', "%3E").replace(['\n', '\r'], "");
    format!("<{safe}>")
}

/// `docs/NAME.md` mentioned in rendered text (outside code spans) as a link
/// to that page of retrygate's docs, when the docs are known; unchanged
/// otherwise, so no link ever points nowhere.
fn link_docs(rendered: &str, links: &Links) -> String {
    if links.docs.is_none() {
        return rendered.to_string();
    }
    let mut out = String::with_capacity(rendered.len() + 64);
    let mut in_code = false;
    let mut rest = rendered;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code && rest.starts_with("docs/") {
            let name_len =
                rest[5..].find(|ch: char| !(ch.is_ascii_lowercase() || ch == '-')).unwrap_or(rest.len() - 5);
            if name_len > 0 && rest[5 + name_len..].starts_with(".md") {
                let page = &rest[..5 + name_len + 3];
                if let Some(doc) = links.doc(&page[5..]) {
                    let _ = write!(out, "[{page}]({})", url(&doc));
                    rest = &rest[page.len()..];
                    continue;
                }
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_turns_backticked_commands_into_code_and_escapes_the_rest() {
        assert_eq!(inline("run `retrygate explain x` <now>"), "run `retrygate explain x` \\<now\\>");
        assert_eq!(inline("a `b|c` d"), "a `b\\|c` d");
        assert_eq!(inline("odd ` tick"), "odd \\` tick");
        assert_eq!(inline("``"), "` `");
    }

    #[test]
    fn docs_mentions_become_links_only_when_the_docs_are_known() {
        let known = Links { docs: Some("https://github.com/o/r/blob/abc".into()), ..Links::default() };
        assert_eq!(
            link_docs("install the hook (see docs/ledger.md) `docs/x.md`", &known),
            "install the hook (see [docs/ledger.md](<https://github.com/o/r/blob/abc/docs/ledger.md>)) `docs/x.md`"
        );
        // Not a page name: left alone.
        assert_eq!(link_docs("docs/.md and docs/a_b.md", &known), "docs/.md and docs/a_b.md");
        let none = Links::default();
        assert_eq!(link_docs("see docs/ledger.md", &none), "see docs/ledger.md");
        assert_eq!(url("https://x/a b>(c)"), "<https://x/a b%3E(c)>");
    }

    #[test]
    fn ranges_read_as_one_value_or_a_span() {
        assert_eq!(ms_range([10.2, 15.4, 12.0].into_iter()).as_deref(), Some("10–15 ms"));
        assert_eq!(ms_range([1000.0].into_iter()).as_deref(), Some("1000 ms"));
        assert_eq!(ms_range(std::iter::empty()), None);
    }

    #[test]
    fn a_long_replay_is_cut_at_a_client_boundary() {
        let long = format!("### head\n{}", "\n<details>client</details>\n".repeat(2000));
        let capped = cap_replay(&long);
        assert!(capped.len() < MAX_REPLAY_CHARS + 200, "{}", capped.len());
        assert!(capped.trim_end().ends_with("has every request."));
        assert!(!capped.contains("<details>client\n"), "cut at a client boundary");
        assert_eq!(cap_replay("short"), "short");
    }
}
