//! The replay report: a stable JSON document for the gate
//! (`retrygate check --replay-report`) and Markdown/text renderings that tell
//! the failing-then-passing story from the server's side, one timeline per
//! client, for a PR comment.
//!
//! JSON shape (`version` 1; fields are only ever added):
//! ```json
//! {"version": 1, "verdict": "fail", "scenario": "default", "scenario_sha256": "…",
//!  "commit": "3f2a…" , "command": ["curl", "--retry", "5", "…"], "clients": 4,
//!  "timeout_s": 60.0, "timed_out": false, "wall_ms": 3012.4, "demanded_wait_ms": 3000,
//!  "reasons": ["retry-after-honored: 3 of 9 retries came sooner than Retry-After asked"],
//!  "checks": [{"check": "retry-after-honored", "status": "fail", "level": "error",
//!              "message": "…", "violations": [{"client": 0, "seq": 1, "level": "error", "message": "…"}]}],
//!  "desync_rounds": [{"round": 1, "clients": 8, "median_wait_ms": 1003.2, "scale_ms": 1000.0,
//!                     "median_pair_ms": 2.4, "concentration": 122.0, "spread_ms": 6.1, "threshold_ms": 100.0,
//!                     "at_once": false, "immediate": false, "lockstep": true, …}],
//!  "desync": {"reading": "lockstep", "concentration": 118.0, "pass_bar": 12.0, "lockstep_bar": 22.0,
//!             "judged_waits": 24, "pairs": 84, "retry_pair_ms": 2.5, "noise_pair_ms": 6.9, "noise_spread_ms": 17.0},
//!  "timeline": [{"client": 0, "exit": {"state": "exited", "code": 0}, "requests": [
//!      {"seq": 0, "at_ms": 2.1, "method": "GET", "path": "/c/0", "status": 429, "retry_after": "1",
//!       "gap_ms": null, "asked_ms": null, "broke": []}], "stdout_tail": "", "stderr_tail": ""}],
//!  "stray_requests": 0, "malformed_requests": [],
//!  "writes": {"applied": 2, "operations": 1, "duplicates": [3], "deduplicated": [], "parked": []},
//!  "server_errors": [], "parts": [],
//!  "exercised": [{"operation": "GET /orders", "requests": 4, "retries": 3}]}
//! ```
//! `desync` is the pooled `desynchronized` reading (absent when there was too
//! little evidence); `rerun_of` (absent unless it happened) names the
//! inconclusive first run a rerun replaced:
//! `{"clients": 8, "desync": {…}, "message": "…"}`.
//! `exercised` lists every operation (`METHOD /normalised/path`) the clients
//! called, over every scenario. `writes`, `server_errors` and `parts` are
//! left out when empty; a request
//! of a write carries `"write": {"operation": "key:…", "effect": "applied"}`
//! and, when its answer was never delivered, `"lost": "reset"`. A report of
//! several scenarios has one whole report per scenario in `parts`:
//! ```json
//! {"version": 1, "verdict": "fail", "scenario": "post,lost-response", "scenario_sha256": "…",
//!  "checks": [{"check": "no-duplicate-write", "status": "fail", "message": "[lost-response] writes applied: 2 …"}],
//!  "timeline": [], "parts": [{"scenario": "post", …}, {"scenario": "lost-response", …}], …}
//! ```

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::checks::{
    self, CheckResult, CheckStatus, DesyncRound, DesyncSummary, Judgement, ReplayCheck, Violation,
    WriteAccount,
};
use super::compare::{exercised_operations, Comparison, ExercisedOperation};
use super::journal::{Journal, Loss, Malformed, WriteEffect, WriteRecord};
use super::runner::{ClientExit, ClientRun};
use super::scenario::Level;
use crate::text::plural;

/// The reasons a comparison fails a replay: "could not decide", or one per
/// finding, in the order the comparison lists them.
pub(crate) fn comparison_reasons(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = &c.undecided {
        out.push(format!("could not decide: {why}"));
    }
    for f in &c.findings {
        out.push(format!("{} (seen in the replay, [{}]): {}", f.kind.id(), f.scenario, f.message));
    }
    out
}

/// The current JSON `version`.
pub(crate) const REPORT_VERSION: u32 = 1;

/// Pass or fail; an error that prevented a decision is not a report at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReplayVerdict {
    /// Every check of weight `error` passed.
    Pass,
    /// A check of weight `error` failed, or the clients timed out.
    Fail,
}

/// Everything one replay showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayReport {
    pub(crate) version: u32,
    /// Pass or fail.
    pub verdict: ReplayVerdict,
    /// The bundled scenario's name, or the scenario file path as given.
    pub scenario: String,
    pub(crate) scenario_description: String,
    /// Hex SHA-256 of the scenario text that ran.
    pub scenario_sha256: String,
    /// The commit this replay vouches for (`--commit`, else `git rev-parse HEAD`).
    pub commit: Option<String>,
    /// The client command each client ran (CMD and its arguments).
    pub command: Vec<String>,
    /// How many clients ran at once.
    pub clients: usize,
    pub(crate) timeout_s: f64,
    /// CMD was still running at the timeout and was killed; the replay fails.
    pub timed_out: bool,
    /// From the release of the clients to the last one ending.
    pub wall_ms: f64,
    /// The waits the scenario demands before a first 2xx.
    pub demanded_wait_ms: u64,
    /// One line per reason the verdict is `fail`.
    pub reasons: Vec<String>,
    pub(crate) checks: Vec<CheckResult>,
    /// The `desynchronized` reading of each round of retries.
    pub desync_rounds: Vec<DesyncRound>,
    /// The pooled `desynchronized` reading and its noise baseline, when
    /// there was enough evidence to read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desync: Option<DesyncSummary>,
    /// When the first run of this scenario was inconclusive on
    /// `desynchronized` and was rerun with more clients: that first run's
    /// clients and figures. This report is the rerun's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rerun_of: Option<RerunNote>,
    /// Each client's requests as the server saw them.
    pub timeline: Vec<ClientTimeline>,
    /// Requests outside `/c/<i>/` (answered 404).
    pub(crate) stray_requests: usize,
    /// Connections whose bytes were not HTTP (answered 400).
    pub malformed_requests: Vec<Malformed>,
    /// The write store's account (POST/PATCH applied, duplicated,
    /// deduplicated, parked); absent when no write arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<WriteAccount>,
    /// Requests the server failed to answer (a bug in retrygate); any one
    /// fails the replay.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) server_errors: Vec<String>,
    /// With several scenarios (`--scenario a,b`): one full report each, in
    /// order. The fields above then sum them up: `checks` has each check once
    /// (failed if it failed in any scenario), `timeline` is empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ReplayReport>,
    /// With `retrygate replay --base REV`: the base's report and the
    /// comparison, bound to both commits. This report is the head's; a
    /// finding of the comparison, or a base that could not run, fails it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Box<Comparison>>,
    /// Every operation (`METHOD /normalised/path`) the clients called, with
    /// how many requests and retries each got (over every scenario of a
    /// combined report; the head's own with `--base`). The gate names each
    /// operation whose retry the change touched that is not in it. Empty in
    /// a report written before it existed; the gate recomputes it from
    /// `timeline` either way.
    #[serde(default)]
    pub exercised: Vec<ExercisedOperation>,
}

/// The inconclusive first run a report's rerun replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct RerunNote {
    pub(crate) clients: usize,
    /// Its pooled reading; absent when its judged waits were too few for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) desync: Option<DesyncSummary>,
    /// Its `desynchronized` line.
    pub(crate) message: String,
}

/// One client's story.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientTimeline {
    /// The client's index (its `/c/<i>/` prefix).
    pub client: usize,
    /// How its command ended.
    pub exit: ClientExit,
    /// Its requests in arrival order.
    pub requests: Vec<TimelineRequest>,
    /// The last bytes its command wrote to stdout.
    pub stdout_tail: String,
    /// The last bytes its command wrote to stderr.
    pub stderr_tail: String,
}

/// One request as the server saw it, with what the judge made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineRequest {
    pub(crate) seq: usize,
    pub(crate) at_ms: f64,
    pub(crate) method: String,
    pub(crate) path: String,
    /// The status code served.
    pub status: u16,
    /// The `Retry-After` value served, as sent.
    pub retry_after: Option<String>,
    /// The `Idempotency-Key` header, when sent.
    pub idempotency_key: Option<String>,
    /// The `User-Agent` header, when sent.
    pub user_agent: Option<String>,
    /// How long the server held the answer.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) delay_ms: u64,
    /// Since this client's previous request.
    pub gap_ms: Option<f64>,
    /// The least wait the previous answer's Retry-After asked for.
    pub asked_ms: Option<f64>,
    /// Checks this request broke.
    pub broke: Vec<ReplayCheck>,
    /// For a POST/PATCH: its operation and what the write store did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) write: Option<WriteRecord>,
    /// The answer was never delivered (connection closed or reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lost: Option<Loss>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// What [`ReplayReport::assemble`] needs besides the judgement.
#[derive(Debug, Clone)]
pub struct ReportContext {
    /// The bundled scenario's name, or the scenario file as given.
    pub scenario: String,
    /// The scenario's own description.
    pub scenario_description: String,
    /// Hex SHA-256 of the scenario text.
    pub scenario_sha256: String,
    /// The commit the replay vouches for.
    pub commit: Option<String>,
    /// The client command.
    pub command: Vec<String>,
    /// The `--timeout`, in seconds.
    pub timeout_s: f64,
    /// Whether a client was still running at the timeout.
    pub timed_out: bool,
    /// From the clients' release to the last one ending.
    pub wall_ms: f64,
    /// The waits the scenario demands before a first 2xx.
    pub demanded_wait_ms: u64,
}

impl ReplayReport {
    /// Builds the report from the journal, the runs and the judgement.
    pub fn assemble(
        ctx: ReportContext,
        journal: &Journal,
        runs: &[ClientRun],
        judgement: Judgement,
    ) -> ReplayReport {
        let mut timeline = Vec::new();
        for run in runs {
            let entries = journal.of_client(run.client);
            let mut requests = Vec::new();
            for (k, e) in entries.iter().enumerate() {
                let prev = k.checked_sub(1).map(|p| entries[p]);
                let broke: Vec<ReplayCheck> = judgement
                    .checks
                    .iter()
                    .filter(|c| c.violations.iter().any(|v| v.seq == Some(e.seq)))
                    .map(|c| c.check)
                    .collect();
                requests.push(TimelineRequest {
                    seq: e.seq,
                    at_ms: e.at_ms,
                    method: e.method.clone(),
                    path: e.path.clone(),
                    status: e.status,
                    retry_after: e.retry_after.clone(),
                    idempotency_key: e.idempotency_key.clone(),
                    user_agent: e.user_agent.clone(),
                    delay_ms: e.delay_ms,
                    gap_ms: prev.map(|p| e.at_ms - p.at_ms),
                    asked_ms: prev
                        .and_then(|p| checks::asked_wait_ms(p, journal.anchor_unix_ms).ok().flatten()),
                    broke,
                    write: e.write.clone(),
                    lost: e.lost,
                });
            }
            timeline.push(ClientTimeline {
                client: run.client,
                exit: run.exit.clone(),
                requests,
                stdout_tail: run.stdout_tail.clone(),
                stderr_tail: run.stderr_tail.clone(),
            });
        }
        let mut reasons = Vec::new();
        if ctx.timed_out {
            reasons.push(format!(
                "CMD was still running at --timeout {}s and was killed; raise --timeout or find what hangs",
                ctx.timeout_s
            ));
        }
        for e in &journal.server_errors {
            reasons.push(format!("{e}; the replay cannot vouch for this client"));
        }
        for c in &judgement.checks {
            if c.status == CheckStatus::Fail && c.level == Level::Error {
                reasons.push(format!("{}: {}", c.check.id(), c.message));
            }
        }
        let writes = journal
            .entries
            .iter()
            .any(|e| e.write.is_some())
            .then(|| checks::write_account(journal, runs.len()));
        let verdict = if reasons.is_empty() { ReplayVerdict::Pass } else { ReplayVerdict::Fail };
        let mut report = ReplayReport {
            version: REPORT_VERSION,
            verdict,
            scenario: ctx.scenario,
            scenario_description: ctx.scenario_description,
            scenario_sha256: ctx.scenario_sha256,
            commit: ctx.commit,
            command: ctx.command,
            clients: runs.len(),
            timeout_s: ctx.timeout_s,
            timed_out: ctx.timed_out,
            wall_ms: ctx.wall_ms,
            demanded_wait_ms: ctx.demanded_wait_ms,
            reasons,
            checks: judgement.checks,
            desync_rounds: judgement.desync_rounds,
            desync: judgement.desync,
            rerun_of: None,
            timeline,
            stray_requests: journal.entries.iter().filter(|e| e.client.is_none()).count(),
            malformed_requests: journal.malformed.clone(),
            writes,
            server_errors: journal.server_errors.clone(),
            parts: Vec::new(),
            comparison: None,
            exercised: Vec::new(),
        };
        report.exercised = exercised_operations(&report);
        report
    }

    /// One report for several scenarios run in turn: each part kept whole,
    /// and a summary on top that fails when any part fails.
    pub(crate) fn combine(scenario_sha256: String, parts: Vec<ReplayReport>) -> ReplayReport {
        let mut checks = Vec::new();
        for id in ReplayCheck::ALL {
            let of: Vec<(&str, &CheckResult)> =
                parts.iter().filter_map(|p| p.check(id).map(|c| (p.scenario.as_str(), c))).collect();
            checks.push(combine_check(id, &of));
        }
        let mut reasons = Vec::new();
        for p in &parts {
            reasons.extend(p.reasons.iter().map(|r| format!("[{}] {r}", p.scenario)));
        }
        let verdict = if reasons.is_empty() && parts.iter().all(|p| p.verdict == ReplayVerdict::Pass) {
            ReplayVerdict::Pass
        } else {
            ReplayVerdict::Fail
        };
        let first = parts.first();
        let mut report = ReplayReport {
            version: REPORT_VERSION,
            verdict,
            scenario: parts.iter().map(|p| p.scenario.as_str()).collect::<Vec<_>>().join(","),
            scenario_description: format!("{} scenarios, run one after the other", parts.len()),
            scenario_sha256,
            commit: first.and_then(|p| p.commit.clone()),
            command: first.map(|p| p.command.clone()).unwrap_or_default(),
            clients: first.map(|p| p.clients).unwrap_or(0),
            timeout_s: first.map(|p| p.timeout_s).unwrap_or(0.0),
            timed_out: parts.iter().any(|p| p.timed_out),
            wall_ms: parts.iter().map(|p| p.wall_ms).sum(),
            demanded_wait_ms: parts.iter().fold(0u64, |a, p| a.saturating_add(p.demanded_wait_ms)),
            reasons,
            checks,
            desync_rounds: Vec::new(),
            desync: None,
            rerun_of: None,
            timeline: Vec::new(),
            stray_requests: parts.iter().map(|p| p.stray_requests).sum(),
            malformed_requests: parts.iter().flat_map(|p| p.malformed_requests.clone()).collect(),
            writes: None,
            server_errors: parts.iter().flat_map(|p| p.server_errors.clone()).collect(),
            parts,
            comparison: None,
            exercised: Vec::new(),
        };
        report.exercised = exercised_operations(&report);
        report
    }

    /// How many clients sent a request again after an answer that was not a
    /// delivered 2xx: the clients whose retries this replay exercised (over
    /// every scenario of a combined report).
    pub(crate) fn clients_that_retried(&self) -> usize {
        if !self.parts.is_empty() {
            return self.parts.iter().map(ReplayReport::clients_that_retried).sum();
        }
        let failed = |q: &TimelineRequest| !(200..300).contains(&q.status) || q.lost.is_some();
        self.timeline.iter().filter(|t| t.requests.windows(2).any(|w| failed(&w[0]))).count()
    }

    /// When no client retried, what that means, in two sentences; `None`
    /// when one did. Such a replay is no evidence about retries: the gate
    /// does not count it (`replay-no-retry`).
    pub(crate) fn no_retry(&self) -> Option<String> {
        if self.clients_that_retried() > 0 {
            return None;
        }
        let timelines: Vec<&ClientTimeline> = if self.parts.is_empty() {
            self.timeline.iter().collect()
        } else {
            self.parts.iter().flat_map(|p| p.timeline.iter()).collect()
        };
        let gave_up = timelines
            .iter()
            .filter(|t| !t.requests.is_empty())
            .filter(|t| !t.requests.iter().any(|q| (200..300).contains(&q.status) && q.lost.is_none()))
            .count();
        // With several scenarios each client runs once per scenario.
        let (one, many) =
            if self.parts.is_empty() { ("client", "clients") } else { ("client run", "client runs") };
        let n = timelines.len();
        let what = if gave_up == 0 {
            format!(
                "{} got a 2xx without a failed answer first, so none had a reason to retry",
                if n == 1 { format!("the one {one}") } else { format!("all {n} {many}") }
            )
        } else if gave_up == n {
            format!(
                "{} stopped at the first failed answer",
                if n == 1 { format!("the one {one}") } else { format!("all {n} {many}") }
            )
        } else {
            format!(
                "{gave_up} of {} stopped at the first failed answer and the rest needed no retry",
                crate::text::plural(n, one, many)
            )
        };
        Some(format!(
            "No client retried: {what}. A client that gives up did not storm the dependency, but the retry code \
             under review never ran, so this replay shows nothing about it and the gate does not count it as \
             evidence."
        ))
    }

    /// Attaches the comparison with the base: each finding, and a base
    /// that could not run, becomes a reason and fails the verdict.
    pub fn with_comparison(mut self, comparison: Comparison) -> ReplayReport {
        self.reasons.extend(comparison_reasons(&comparison));
        if !self.reasons.is_empty() {
            self.verdict = ReplayVerdict::Fail;
        }
        self.comparison = Some(Box::new(comparison));
        self
    }

    /// The result of one check.
    pub fn check(&self, id: ReplayCheck) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.check == id)
    }

    /// The JSON Schema of the report (`schemas/replay-report.schema.json`
    /// is this, checked by a test).
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(ReplayReport)).unwrap_or_default()
    }

    /// Reads a report written with `--format json` / `--report`.
    pub fn from_json(text: &str) -> anyhow::Result<ReplayReport> {
        let report: ReplayReport = serde_json::from_str(text).map_err(|e| {
            anyhow::anyhow!(
                "not a retrygate replay report: {e}; write one with `retrygate replay --report PATH`"
            )
        })?;
        if report.version != REPORT_VERSION {
            anyhow::bail!(
                "replay report version {} is not supported (expected {REPORT_VERSION}); re-run the replay with this retrygate",
                report.version
            );
        }
        Ok(report)
    }
}

/// One check over several scenarios: failed if it failed anywhere (at the
/// heaviest level), else passed if it passed anywhere, else n/a or off.
fn combine_check(id: ReplayCheck, of: &[(&str, &CheckResult)]) -> CheckResult {
    let rank = |l: Level| match l {
        Level::Off => 0,
        Level::Warning => 1,
        Level::Error => 2,
    };
    let failed: Vec<&(&str, &CheckResult)> =
        of.iter().filter(|(_, c)| c.status == CheckStatus::Fail).collect();
    let (status, level) = if let Some(worst) = failed.iter().map(|(_, c)| c.level).max_by_key(|l| rank(*l)) {
        (CheckStatus::Fail, worst)
    } else if let Some((_, c)) = of.iter().find(|(_, c)| c.status == CheckStatus::Pass) {
        (CheckStatus::Pass, c.level)
    } else if let Some((_, c)) = of.iter().find(|(_, c)| c.status == CheckStatus::NotApplicable) {
        (CheckStatus::NotApplicable, c.level)
    } else {
        (CheckStatus::Off, of.first().map(|(_, c)| c.level).unwrap_or(Level::Off))
    };
    let shown: Vec<&(&str, &CheckResult)> = if failed.is_empty() { of.iter().collect() } else { failed };
    let message =
        shown.iter().map(|(name, c)| format!("[{name}] {}", c.message)).collect::<Vec<_>>().join("; ");
    let violations = of
        .iter()
        .flat_map(|(name, c)| {
            c.violations.iter().map(move |v| Violation {
                client: v.client,
                // A seq names a request of that scenario's own journal.
                seq: None,
                level: v.level,
                message: format!("[{name}] {}", v.message),
            })
        })
        .collect();
    CheckResult { check: id, status, level, message, violations }
}

/// CMD as a reader sees it, as a shell would take it: a program named by a
/// path by its file name only (the runner's or the laptop's directories say
/// nothing to a reviewer), and a word with a space or a quote in single
/// quotes. The JSON report keeps the command whole.
fn shown_command(command: &[String]) -> String {
    let mut words: Vec<String> = Vec::with_capacity(command.len());
    for (i, w) in command.iter().enumerate() {
        let w = match std::path::Path::new(w).file_name().and_then(|n| n.to_str()) {
            Some(name) if i == 0 && w.contains('/') => name,
            _ => w.as_str(),
        };
        let plain = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
        words.push(if plain { w.to_string() } else { format!("'{}'", w.replace('\'', "'\\''")) });
    }
    words.join(" ")
}

/// The no-retry note as a Markdown quote, its first clause in bold.
pub(crate) fn no_retry_quote(note: &str) -> String {
    match note.split_once(": ") {
        Some((head, rest)) => format!("> **{head}**: {rest}"),
        None => format!("> **{note}**"),
    }
}

fn status_mark(s: CheckStatus, level: Level) -> &'static str {
    match (s, level) {
        (CheckStatus::Pass, _) => "✅ pass",
        (CheckStatus::Fail, Level::Error) => "❌ fail",
        (CheckStatus::Fail, _) => "⚠️ fail",
        (CheckStatus::NotApplicable, _) => "➖ n/a",
        (CheckStatus::Off, _) => "➖ off",
    }
}

fn ms(v: f64) -> String {
    if v.abs() >= 10_000.0 {
        format!("{:.1} s", v / 1000.0)
    } else {
        format!("{v:.0} ms")
    }
}

/// Markdown for a PR comment: verdict, checks, lockstep rounds, and a
/// collapsible timeline per client.
pub fn render_markdown(r: &ReplayReport) -> String {
    with_exercised(markdown(r, true), r)
}

/// [`render_markdown`] without the "no client retried" note, for a page
/// that states it once above the report (the gate's comment does).
pub(crate) fn render_markdown_body(r: &ReplayReport) -> String {
    with_exercised(markdown(r, false), r)
}

/// The operations the clients called, one line: what the gate matches the
/// change's retried operations against. Shown once, for the whole report.
pub(crate) fn exercised_line(r: &ReplayReport) -> String {
    let ops = exercised_operations(r);
    if ops.is_empty() {
        return "Operations called: none (no request reached the server)".to_string();
    }
    let each: Vec<String> = ops
        .iter()
        .map(|e| {
            format!(
                "{} ({}, {})",
                e.operation,
                plural(e.requests, "request", "requests"),
                plural(e.retries, "retry", "retries")
            )
        })
        .collect();
    format!("Operations called: {}", each.join(", "))
}

fn with_exercised(mut md: String, r: &ReplayReport) -> String {
    let _ = writeln!(md, "\n{}.", exercised_line(r).replace('`', "'"));
    md
}

fn markdown(r: &ReplayReport, no_retry_note: bool) -> String {
    let mut o = markdown_head(r, no_retry_note);
    if let Some(c) = &r.comparison {
        let _ = writeln!(o, "\n#### Compared with the base ({})\n", crate::text::short_sha(&c.base_commit));
        for line in c.lines() {
            let _ = writeln!(o, "- {line}");
        }
    }
    o
}

fn markdown_head(r: &ReplayReport, no_retry_note: bool) -> String {
    if !r.parts.is_empty() {
        let mut o = String::new();
        let verdict = match r.verdict {
            ReplayVerdict::Pass => "✅ pass",
            ReplayVerdict::Fail => "❌ fail",
        };
        let _ = writeln!(o, "### 429 replay: {verdict} ({} scenarios: `{}`)\n", r.parts.len(), r.scenario);
        if let Some(none) = r.no_retry().filter(|_| no_retry_note) {
            let _ = writeln!(o, "{}\n", no_retry_quote(&none));
        }
        for reason in &r.reasons {
            let _ = writeln!(o, "- {reason}");
        }
        for p in &r.parts {
            // Each part one level below the summary, however it is nested.
            o.push('\n');
            // The note, when due, is the whole report's, stated once above.
            o.push_str(&markdown(p, false).replacen("### ", "###### ", 1));
        }
        return o;
    }
    let mut o = String::new();
    let verdict = match r.verdict {
        ReplayVerdict::Pass => "✅ pass",
        ReplayVerdict::Fail => "❌ fail",
    };
    let _ = writeln!(
        o,
        "### 429 replay: {verdict} (`{}`, {})\n",
        r.scenario,
        plural(r.clients, "client", "clients")
    );
    if let Some(none) = r.no_retry().filter(|_| no_retry_note) {
        let _ = writeln!(o, "{}\n", no_retry_quote(&none));
    }
    let _ = writeln!(
        o,
        "Scenario `{}` ({}; sha256 `{}`), commit `{}`, CMD `{}`. Wall time {} for {} of demanded waits.\n",
        r.scenario,
        if r.scenario_description.is_empty() { "no description" } else { &r.scenario_description },
        crate::text::short_sha(&r.scenario_sha256),
        r.commit.as_deref().map(crate::text::short_sha).unwrap_or("unknown"),
        shown_command(&r.command).replace('`', "'"),
        ms(r.wall_ms),
        ms(r.demanded_wait_ms as f64),
    );
    if r.timed_out {
        let _ = writeln!(o, "> **CMD was killed at `--timeout {}s`**: the replay fails.\n", r.timeout_s);
    }
    let _ = writeln!(o, "| check | result | weight | detail |\n|---|---|---|---|");
    for c in &r.checks {
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {} |",
            c.check.id(),
            status_mark(c.status, c.level),
            c.level,
            c.message
        );
    }
    let violations: Vec<_> =
        r.checks.iter().flat_map(|c| c.violations.iter().map(move |v| (c.check, v))).collect();
    if !violations.is_empty() {
        o.push('\n');
        for (check, v) in violations.iter().take(20) {
            let _ = writeln!(o, "- `{}` ({}): {}", check.id(), v.level, v.message);
        }
        if violations.len() > 20 {
            let _ = writeln!(o, "- … and {} more (see the JSON report)", violations.len() - 20);
        }
    }
    if !r.desync_rounds.is_empty() {
        let rounds: Vec<String> = r
            .desync_rounds
            .iter()
            .map(|d| {
                if d.immediate {
                    format!("retry {}: immediate (median wait {}), not judged", d.round, ms(d.median_wait_ms))
                } else if d.at_once {
                    format!(
                        "retry {}: came back at once (median wait {}) (**storm**)",
                        d.round,
                        ms(d.median_wait_ms)
                    )
                } else {
                    format!(
                        "retry {}: median pair {} apart over a {} wait, {} full jitter{}",
                        d.round,
                        ms(d.median_pair_ms),
                        ms(d.scale_ms),
                        checks::desync::times(d.concentration),
                        if d.lockstep { " (**above the pass line**)" } else { "" }
                    )
                }
            })
            .collect();
        let _ = writeln!(o, "\nSpread of the fleet per retry round: {}.", rounds.join("; "));
        if let Some(d) = &r.desync {
            let _ = writeln!(o, "\nPooled over the judged rounds: {}.", d.figures());
        }
        if let Some(first) = &r.rerun_of {
            let _ = writeln!(
                o,
                "\nThe first run, with {} clients, was inconclusive ({}), so this scenario was rerun with {}.",
                first.clients,
                first.desync.as_ref().map(|d| d.figures()).unwrap_or_else(|| first.message.clone()),
                r.clients
            );
        }
    }
    if let Some(w) = &r.writes {
        let _ = writeln!(o, "\n**{}**{}.", w.summary(), write_notes(w));
    }
    for e in &r.server_errors {
        let _ = writeln!(o, "\n> **{e}**: the replay fails.");
    }
    if r.stray_requests > 0 || !r.malformed_requests.is_empty() {
        let _ = writeln!(
            o,
            "\nThe server also got {} outside `/c/<i>/` (404) and {} (400).",
            plural(r.stray_requests, "request", "requests"),
            plural(r.malformed_requests.len(), "malformed one", "malformed ones")
        );
    }
    for t in &r.timeline {
        let _ = writeln!(
            o,
            "\n<details><summary>client {}: {}, {}</summary>\n",
            t.client,
            t.exit.describe(),
            plural(t.requests.len(), "request", "requests")
        );
        if t.requests.is_empty() {
            let _ = writeln!(o, "No request arrived from this client.");
        } else {
            let _ = writeln!(
                o,
                "| # | at | request | served | gap | asked | broke |\n|---|---|---|---|---|---|---|"
            );
            for (k, q) in t.requests.iter().enumerate() {
                let mut served = match &q.retry_after {
                    Some(ra) => format!("{} `Retry-After: {ra}`", q.status),
                    None => q.status.to_string(),
                };
                if q.delay_ms > 0 {
                    served.push_str(&format!(" (held {})", ms(q.delay_ms as f64)));
                }
                match q.lost {
                    Some(Loss::Close) => {
                        served = format!("no answer, connection closed (would have been {served})")
                    }
                    Some(Loss::Reset) => served = format!("connection reset (would have been {served})"),
                    None => {}
                }
                if let Some(w) = &q.write {
                    served.push_str(match w.effect {
                        WriteEffect::Applied => ", write applied",
                        WriteEffect::Deduplicated => ", stored result of its key (not applied again)",
                        WriteEffect::NotApplied => "",
                    });
                }
                let key = q.idempotency_key.as_deref().map(|k| format!(" key `{k}`")).unwrap_or_default();
                let broke: Vec<String> = q.broke.iter().map(|c| format!("`{}`", c.id())).collect();
                let _ = writeln!(
                    o,
                    "| {} | +{} | `{} {}`{key} | {served} | {} | {} | {} |",
                    k + 1,
                    ms(q.at_ms),
                    q.method,
                    q.path,
                    q.gap_ms.map(ms).unwrap_or_default(),
                    q.asked_ms.map(|a| format!("≥ {}", ms(a))).unwrap_or_default(),
                    broke.join(" ")
                );
            }
        }
        let _ = writeln!(o, "\n</details>");
    }
    o
}

/// ", 1 repeat answered from its key's stored result, client 0 parked ...".
fn write_notes(w: &WriteAccount) -> String {
    let mut notes = String::new();
    if !w.duplicates.is_empty() {
        let n = w.duplicates.len();
        let _ = write!(
            notes,
            "; {} replayed an applied write and {} applied again",
            plural(n, "request", "requests"),
            if n == 1 { "was" } else { "were" }
        );
    }
    if !w.deduplicated.is_empty() {
        let _ = write!(
            notes,
            "; {} of an applied Idempotency-Key answered from the stored result (deduplicated)",
            plural(w.deduplicated.len(), "repeat", "repeats")
        );
    }
    if !w.parked.is_empty() {
        let who: Vec<String> = w.parked.iter().map(|c| c.to_string()).collect();
        let _ = write!(
            notes,
            "; client {} did not re-send its unanswered write (parked as \"maybe created\", safe)",
            who.join(", ")
        );
    }
    notes
}

/// Plain text for a terminal: verdict, checks and violations, then a compact
/// timeline.
pub fn render_text(r: &ReplayReport) -> String {
    let mut o = render_text_sides(r);
    let _ = writeln!(o, "  {}", exercised_line(r));
    if let Some(c) = &r.comparison {
        let _ = writeln!(o, "compared with the base ({}):", crate::text::short_sha(&c.base_commit));
        for line in c.lines() {
            let _ = writeln!(o, "  {line}");
        }
    }
    o
}

fn render_text_sides(r: &ReplayReport) -> String {
    if !r.parts.is_empty() {
        let verdict = match r.verdict {
            ReplayVerdict::Pass => "PASS",
            ReplayVerdict::Fail => "FAIL",
        };
        let mut o = format!("retrygate replay: {verdict} ({} scenarios: {})\n", r.parts.len(), r.scenario);
        for p in &r.parts {
            o.push_str(&render_text_sides(p));
        }
        return o;
    }
    let mut o = String::new();
    let verdict = match r.verdict {
        ReplayVerdict::Pass => "PASS",
        ReplayVerdict::Fail => "FAIL",
    };
    let _ = writeln!(
        o,
        "retrygate replay: {verdict} (scenario {}, {}, wall {} for {} of demanded waits)",
        r.scenario,
        plural(r.clients, "client", "clients"),
        ms(r.wall_ms),
        ms(r.demanded_wait_ms as f64)
    );
    for reason in &r.reasons {
        let _ = writeln!(o, "  reason: {reason}");
    }
    if let Some(none) = r.no_retry() {
        let _ = writeln!(o, "  {none}");
    }
    for c in &r.checks {
        let s = match c.status {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "FAIL",
            CheckStatus::NotApplicable => "n/a",
            CheckStatus::Off => "off",
        };
        let _ = writeln!(o, "  {:<20} {:<5} {:<8} {}", c.check.id(), s, c.level.to_string(), c.message);
        for v in c.violations.iter().take(10) {
            let _ = writeln!(o, "      - {}", v.message);
        }
    }
    if let Some(w) = &r.writes {
        let _ = writeln!(o, "  {}{}", w.summary(), write_notes(w));
    }
    for e in &r.server_errors {
        let _ = writeln!(o, "  server error: {e}");
    }
    for t in &r.timeline {
        let steps: Vec<String> = t
            .requests
            .iter()
            .map(|q| {
                let status = match q.lost {
                    Some(Loss::Close) => "lost".to_string(),
                    Some(Loss::Reset) => "reset".to_string(),
                    None => q.status.to_string(),
                };
                format!("+{}:{} {status}", ms(q.at_ms), q.method)
            })
            .collect();
        let _ = writeln!(o, "  client {} ({}): {}", t.client, t.exit.describe(), steps.join(", "));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::checks::{run, ChecksInput};
    use crate::replay::scenario::CheckLevels;

    /// A journal where client 0 got a 200 at once.
    fn served() -> Journal {
        let mut j = Journal::default();
        j.entries.push(crate::replay::journal::Entry {
            seq: 0,
            client: Some(0),
            at_ms: 1.0,
            method: "GET".into(),
            path: "/c/0".into(),
            idempotency_key: None,
            user_agent: None,
            status: 200,
            retry_after: None,
            delay_ms: 0,
            answered_ms: Some(2.0),
            write: None,
            lost: None,
        });
        j
    }

    fn report(journal: &Journal) -> ReplayReport {
        let runs = vec![ClientRun {
            client: 0,
            exit: ClientExit::Exited { code: 0 },
            stdout_tail: String::new(),
            stderr_tail: String::new(),
        }];
        let exits = vec![ClientExit::Exited { code: 0 }];
        let j = run(ChecksInput { journal, exits: &exits, budget: 5, levels: &CheckLevels::default() });
        let ctx = ReportContext {
            scenario: "s".into(),
            scenario_description: String::new(),
            scenario_sha256: "0".repeat(64),
            commit: None,
            command: vec!["true".into()],
            timeout_s: 1.0,
            timed_out: false,
            wall_ms: 1.0,
            demanded_wait_ms: 0,
        };
        ReplayReport::assemble(ctx, journal, &runs, j)
    }

    #[test]
    fn a_replay_in_which_no_client_retried_says_so_and_what_giving_up_means() {
        let r = report(&served());
        assert_eq!(r.clients_that_retried(), 0);
        let none = r.no_retry().unwrap();
        assert!(
            none.starts_with("No client retried: the one client got a 2xx without a failed answer first"),
            "{none}"
        );
        assert!(none.contains("A client that gives up did not storm the dependency, but the retry code under review never ran, so this replay shows nothing about it"), "{none}");
        assert!(render_markdown(&r).contains("> **No client retried**: the one client"));
        assert!(!render_markdown_body(&r).contains("No client retried"));
        assert!(render_text(&r).contains("  No client retried:"));
        // A 429, then the 200: that client retried.
        let mut j = served();
        j.entries[0].status = 429;
        let mut ok = j.entries[0].clone();
        (ok.seq, ok.at_ms, ok.status) = (1, 1001.0, 200);
        j.entries.push(ok);
        let r = report(&j);
        assert_eq!((r.clients_that_retried(), r.no_retry()), (1, None));
        assert!(!render_markdown(&r).contains("No client retried"), "{}", render_markdown(&r));
        // A client that got a 429 and stopped gave up.
        j.entries.pop();
        assert_eq!(
            report(&j).no_retry().unwrap().split_once(". ").unwrap().0,
            "No client retried: the one client stopped at the first failed answer"
        );
    }

    #[test]
    fn the_command_is_shown_without_the_directories_of_its_program() {
        let cmd = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            shown_command(&cmd(&["/tmp/x/target/debug/retrygate", "replay-client"])),
            "retrygate replay-client"
        );
        assert_eq!(shown_command(&cmd(&["sh", "-c", "./scripts/replay.sh"])), "sh -c ./scripts/replay.sh");
        assert_eq!(
            shown_command(&cmd(&["bash", "-c", "\"$RETRYGATE\" replay-client --profile it's"])),
            "bash -c '\"$RETRYGATE\" replay-client --profile it'\\''s'"
        );
        let mut r = report(&served());
        r.command = cmd(&["/work/main/target/debug/retrygate", "replay-client"]);
        let md = render_markdown(&r);
        assert!(md.contains("CMD `retrygate replay-client`") && !md.contains("/work/"), "{md}");
    }

    #[test]
    fn a_server_error_fails_the_replay_even_when_every_check_passes() {
        let mut j = served();
        j.server_errors.push("the replay server's request handler panicked while answering GET /c/0".into());
        let r = report(&j);
        assert_eq!(r.verdict, ReplayVerdict::Fail);
        assert!(
            r.reasons[0].contains("panicked while answering GET /c/0; the replay cannot vouch"),
            "{:?}",
            r.reasons
        );
        assert!(render_text(&r).contains("server error: the replay server's request handler panicked"));
        assert!(render_markdown(&r).contains("the replay fails"));
    }

    #[test]
    fn several_scenarios_fail_together_and_render_part_by_part() {
        let pass = report(&served());
        assert_eq!(pass.verdict, ReplayVerdict::Pass);
        let mut j = served();
        j.server_errors.push("boom".into());
        let mut fail = report(&j);
        fail.scenario = "t".into();
        let both = ReplayReport::combine("f".repeat(64), vec![pass.clone(), fail]);
        assert_eq!(both.verdict, ReplayVerdict::Fail);
        assert_eq!(both.scenario, "s,t");
        assert_eq!(both.reasons, ["[t] boom; the replay cannot vouch for this client"]);
        assert_eq!(both.checks.len(), ReplayCheck::ALL.len());
        let md = render_markdown(&both);
        assert!(md.starts_with("### 429 replay: ❌ fail (2 scenarios: `s,t`)"), "{md}");
        assert!(md.contains("\n###### 429 replay: ✅ pass (`s`, 1 client)"), "{md}");
        let json = serde_json::to_string(&both).unwrap();
        assert_eq!(ReplayReport::from_json(&json).unwrap(), both);
        let ok = ReplayReport::combine("f".repeat(64), vec![pass.clone(), pass]);
        assert_eq!(ok.verdict, ReplayVerdict::Pass);
    }
}
