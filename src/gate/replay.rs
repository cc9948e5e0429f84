//! Replay evidence: a report from `retrygate replay` bound to the head
//! commit and the base config's scenario, or the base config's
//! `replay.command` run through the replay harness.
//!
//! A report is a file anyone in the job could edit, so it is checked before
//! it is believed: it must name the head commit, the scenario the base config
//! demands (by name *and* by the SHA-256 of the scenario text at the base),
//! and its verdict must follow from its own checks and timeline (a flipped
//! `"verdict": "pass"` over failing checks is rejected). This catches edits
//! and reports from another run; it is not a signature, so a report rebuilt
//! consistently by hand is indistinguishable from a real one; the replay
//! should run in the same job as the gate (or by the gate itself).

use std::path::Path;
use std::time::Duration;

use crate::changeset::git::Blob;
use crate::changeset::Git;
use crate::config::ReplayConfig;
use crate::decision::{ReplayStatus, ReplaySummary};
use crate::replay::checks::CheckStatus;
use crate::replay::scenario::{Level, LoadedScenario, BUNDLED};
use crate::replay::{ReplayCheck, ReplayOptions, ReplayReport, ReplayVerdict};

/// Replay reports larger than this are refused unread.
pub(crate) const MAX_REPORT_BYTES: u64 = 64 << 20;

/// Slack on top of the judge's own 50 ms tolerance when re-checking gaps.
const GAP_SLACK_MS: f64 = 51.0;

/// The replay evidence and, when there is one, the report behind it (for
/// the Markdown timeline).
#[derive(Debug, Clone)]
pub(crate) struct ReplayEvidence {
    pub(crate) summary: ReplaySummary,
    pub(crate) report: Option<ReplayReport>,
}

/// Why a replay was demanded, the `why` of every replay summary the gate
/// writes for a change that needs one.
pub(crate) const DUE: &str = "retry or HTTP-client code changed";

impl ReplayEvidence {
    /// Evidence without a report: `status` (not run, rejected) from `source`
    /// because of `problem`.
    pub(crate) fn without_report(status: ReplayStatus, source: String, problem: String) -> ReplayEvidence {
        ReplayEvidence {
            summary: ReplaySummary {
                source: Some(source),
                problems: vec![problem],
                ..ReplaySummary::with_status(status, DUE)
            },
            report: None,
        }
    }
}

/// The scenarios the base config demands, for binding a report to them:
/// one, or a list (`a,b,c`) that a report of several scenarios binds to by
/// their combined digest.
pub(crate) fn expected_scenario(git: &Git, base_sha: &str, spec: &str) -> Result<LoadedScenario, String> {
    let names: Vec<&str> = spec.split(',').map(str::trim).collect();
    if names.len() < 2 {
        return expected_one(git, base_sha, spec);
    }
    let list = base_scenarios(git, base_sha, spec)?;
    let budget = list.iter().map(|l| l.scenario.budget).max().unwrap_or(1);
    let mut combined = list[0].clone();
    combined.name = names.join(",");
    combined.sha256 = LoadedScenario::combined_sha256(&list);
    combined.scenario.budget = budget;
    Ok(combined)
}

/// Each scenario of `spec` (`a,b,c`) as the base commit has it: a bundled
/// one, or the base's copy of a scenario file (never the working tree's,
/// which is the pull request's).
pub fn base_scenarios(git: &Git, base_sha: &str, spec: &str) -> Result<Vec<LoadedScenario>, String> {
    spec.split(',').map(str::trim).map(|n| expected_one(git, base_sha, n)).collect()
}

fn expected_one(git: &Git, base_sha: &str, spec: &str) -> Result<LoadedScenario, String> {
    if let Some((name, text)) = BUNDLED.iter().find(|(n, _)| *n == spec) {
        return LoadedScenario::from_text(name, text).map_err(|e| e.to_string());
    }
    let path = spec.trim_start_matches("./");
    match git.read_blob_at(base_sha, path, 1 << 20) {
        Ok(Some(Blob::Bytes(b))) => {
            let text =
                String::from_utf8(b).map_err(|_| format!("scenario file {path} at the base is not UTF-8"))?;
            LoadedScenario::from_text(spec, &text).map_err(|e| e.to_string())
        }
        Ok(_) => Err(format!(
            "replay.scenario `{spec}` is neither a bundled scenario nor a file at the base commit"
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Reads the report at `path` and judges whether it vouches for `head`.
pub(crate) fn from_report_file(path: &Path, head: &str, expected: &LoadedScenario) -> ReplayEvidence {
    // The file's name only: the comment is read by maintainers, and the
    // runner's or the laptop's directories tell them nothing.
    let shown =
        path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let source = format!("--replay-report {shown}");
    let rejected =
        |problem: String| ReplayEvidence::without_report(ReplayStatus::Rejected, source.clone(), problem);
    // Bounded whatever the metadata says (`/dev/zero` claims 0 bytes).
    let text = match crate::bounded::read_regular_string(path, MAX_REPORT_BYTES) {
        Ok(t) => t,
        Err(e) => return rejected(format!("cannot read the replay report: {e}")),
    };
    match ReplayReport::from_json(&text) {
        Ok(report) => judged(report, source, head, expected),
        Err(e) => rejected(format!("{shown}: {e:#}")),
    }
}

/// The two commits a gate's own replay runs, and how long an outage the
/// run to the caps needs, when the scan knows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sides<'a> {
    pub(crate) base: &'a str,
    pub(crate) head: &'a str,
    pub(crate) cap_failures: Option<usize>,
}

/// The most attempts the scan's findings name on either side, plus one: an
/// outage of that many failures outlasts both budgets the scan knows. The
/// figures are read wherever a finding's `base`/`head` carries them
/// (`attempts`, or `retries` plus the first attempt). `None` when no finding
/// names one; the run to the caps then lasts until the replay's timeout.
pub(crate) fn cap_failures(findings: &[crate::finding::Finding]) -> Option<usize> {
    fn walk(v: &serde_json::Value, most: &mut Option<u64>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    let n = match (k.as_str(), v.as_u64()) {
                        ("attempts" | "max_attempts", Some(n)) => Some(n),
                        ("retries" | "max_retries", Some(n)) => Some(n.saturating_add(1)),
                        _ => None,
                    };
                    if let Some(n) = n {
                        *most = Some(most.map_or(n, |m| m.max(n)));
                    }
                    walk(v, most);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, most)),
            _ => {}
        }
    }
    let mut most = None;
    for f in findings {
        for side in [&f.base, &f.head].into_iter().flatten() {
            walk(side, &mut most);
        }
    }
    most.map(|n| usize::try_from(n.saturating_add(1)).unwrap_or(usize::MAX))
}

/// Runs `replay.command` (through `sh -c`) in `repo`, which must have the
/// head checked out with no tracked change (the replay runs the code on
/// disk), and beside it the same command in a worktree of the base, as
/// `retrygate replay --base` does in the Action: the head is judged on its
/// own checks and on the comparison with its base.
pub(crate) fn run_command(
    git: &Git,
    config: &ReplayConfig,
    command: &str,
    sides: Sides<'_>,
    timeout: Duration,
    expected: &LoadedScenario,
) -> ReplayEvidence {
    let head = sides.head;
    let source = format!("replay.command: {command}");
    let not_run =
        |problem: String| ReplayEvidence::without_report(ReplayStatus::NotRun, source.clone(), problem);
    // The command runs at the top of the working tree, whatever `--repo` named.
    let root = match git.run(&["rev-parse", "--show-toplevel"]) {
        Ok(r) if !r.is_empty() => std::path::PathBuf::from(r),
        _ => return not_run("the repository has no working tree to run replay.command in".to_string()),
    };
    let on_disk = git.run(&["rev-parse", "--verify", "-q", "HEAD"]).unwrap_or_default();
    if !on_disk.eq_ignore_ascii_case(head) {
        return not_run(format!(
            "the working tree has {} checked out, not the head {head}; check out the head, or pass --replay-report",
            if on_disk.is_empty() { "nothing" } else { &on_disk }
        ));
    }
    match git.run(&["status", "--porcelain", "--untracked-files=no"]) {
        Ok(s) if s.is_empty() => {}
        Ok(_) => {
            return not_run(format!(
                "the working tree has uncommitted changes, so it is not the head {head}; commit or stash them"
            ))
        }
        Err(e) => return not_run(e.to_string()),
    }
    // The base's copies of the scenarios, which the report is bound to (a
    // pull request that edits a scenario file does not replay its own).
    let list = match base_scenarios(git, sides.base, &config.scenario) {
        Ok(l) => l,
        Err(e) => return not_run(e),
    };
    let opts = ReplayOptions {
        scenario: config.scenario.clone(),
        clients: config.clients as usize,
        timeout,
        command: vec!["sh".into(), "-c".into(), command.to_string()],
        commit: Some(head.to_string()),
        cwd: Some(root.clone()),
    };
    let worktree = crate::replay::base::BaseWorktree::add(&root, sides.base);
    let base_opts = worktree.as_ref().map(|w| ReplayOptions {
        cwd: Some(w.path().to_path_buf()),
        commit: Some(sides.base.to_string()),
        ..opts.clone()
    });
    let base_opts = base_opts.as_ref().map_err(|e| format!("{e:#}"));
    // The harness starts its own tokio runtime; a thread of its own keeps
    // that legal when the caller is itself inside a runtime.
    let ran = std::thread::scope(|s| {
        s.spawn(|| {
            crate::replay::run_differential_blocking(
                &opts,
                base_opts.clone(),
                sides.base,
                &list,
                sides.cap_failures,
            )
        })
        .join()
        .unwrap_or_else(|_| Err(anyhow::anyhow!("the replay harness panicked")))
    });
    drop(worktree);
    match ran {
        Ok(report) => judged(report, source, head, expected),
        Err(e) => not_run(format!("{e:#}")),
    }
}

fn judged(report: ReplayReport, source: String, head: &str, expected: &LoadedScenario) -> ReplayEvidence {
    let problems = binding_problems(&report, head, expected);
    // A replay counts as evidence only if it exercised a retry: one in which
    // every client gave up at its first failed answer (or never met one)
    // passes its checks without having run the retry code under review.
    let status = if !problems.is_empty() {
        ReplayStatus::Rejected
    } else if report.verdict == ReplayVerdict::Fail {
        ReplayStatus::Fail
    } else if report.no_retry().is_some() {
        ReplayStatus::NoRetry
    } else {
        ReplayStatus::Pass
    };
    let reasons = report.reasons.clone();
    let summary = ReplaySummary {
        status,
        why: DUE.into(),
        source: Some(source),
        commit: report.commit.clone(),
        scenario: Some(report.scenario.clone()),
        scenario_sha256: Some(report.scenario_sha256.clone()),
        reasons,
        problems,
        // Filled by the gate, which has the change's findings.
        coverage: None,
    };
    ReplayEvidence { summary, report: Some(report) }
}

/// Why `report` cannot vouch for `head`; empty when it can.
pub fn binding_problems(report: &ReplayReport, head: &str, expected: &LoadedScenario) -> Vec<String> {
    let mut p = Vec::new();
    match &report.commit {
        None => p.push("the report names no commit, so it cannot vouch for any".into()),
        Some(c) if !c.eq_ignore_ascii_case(head) => {
            p.push(format!("the report was run on commit {c}, not on the head {head}"))
        }
        Some(_) => {}
    }
    // The text is what counts: a bundled name and a file path that hold the
    // same scenario are the same scenario.
    if !report.scenario_sha256.eq_ignore_ascii_case(&expected.sha256) {
        p.push(format!(
            "the report ran scenario `{}` (SHA-256 {}), but the base config demands `{}` (SHA-256 {})",
            report.scenario,
            crate::text::short_sha(&report.scenario_sha256),
            expected.name,
            crate::text::short_sha(&expected.sha256)
        ));
    }
    p.extend(consistency_problems(report, expected.scenario.budget));
    // The list is a summary of the timelines; the gate matches against its
    // own recomputation, and a list that says otherwise was edited. (Empty
    // is a report written before the list existed.)
    if !report.exercised.is_empty()
        && report.exercised != crate::replay::compare::exercised_operations(report)
    {
        p.push("the report's `exercised` operations do not follow from its timelines: the report was edited after the replay".into());
    }
    p.extend(comparison_problems(report));
    p
}

/// Does a differential report's comparison follow from its two sides? The
/// findings are recomputed from the base's report and the head's timelines
/// (a pure function of both), so a finding edited out, or a pass over one,
/// is rejected.
fn comparison_problems(r: &ReplayReport) -> Vec<String> {
    let Some(c) = &r.comparison else { return Vec::new() };
    let edited = "the report was edited after the replay";
    let mut p = Vec::new();
    if c.head_commit != r.commit {
        p.push(format!("the comparison names another head than the report: {edited}"));
    }
    if r.verdict == ReplayVerdict::Pass && (c.undecided.is_some() || !c.findings.is_empty()) {
        p.push(format!(
            "the verdict says pass, but the comparison with the base found the head worse: {edited}"
        ));
    }
    if let (None, Some(base)) = (&c.undecided, &c.base) {
        let mut head = r.clone();
        head.comparison = None;
        let again = crate::replay::compare::compare(base, &head, &c.base_commit, c.to_the_cap.clone());
        if again.findings != c.findings || again.warnings != c.warnings {
            p.push(format!("the comparison's findings do not follow from its two sides: {edited}"));
        }
        if let Some(cap) = &c.to_the_cap {
            if cap.head.commit != r.commit || cap.base.commit.as_deref() != Some(c.base_commit.as_str()) {
                p.push(format!("the run to the caps names other commits than the comparison: {edited}"));
            }
        }
    }
    p
}

/// Does the report's verdict follow from its own checks and timeline? A
/// report of several scenarios is checked part by part, and its verdict
/// must fail when any part does.
fn consistency_problems(r: &ReplayReport, budget: usize) -> Vec<String> {
    let mut p = Vec::new();
    let edited = "the report was edited after the replay";
    if r.verdict == ReplayVerdict::Pass && !r.server_errors.is_empty() {
        p.push(format!("the verdict says pass, but the replay server failed: {edited}"));
    }
    if !r.parts.is_empty() {
        if r.verdict == ReplayVerdict::Pass && r.parts.iter().any(|part| part.verdict != ReplayVerdict::Pass)
        {
            p.push(format!("the verdict says pass, but a scenario in it failed: {edited}"));
        }
        for part in &r.parts {
            p.extend(
                consistency_problems(part, budget).into_iter().map(|e| format!("[{}] {e}", part.scenario)),
            );
        }
        return p;
    }
    for id in ReplayCheck::ALL {
        let n = r.checks.iter().filter(|c| c.check == id).count();
        if n != 1 {
            p.push(format!("check `{}` appears {n} times, not once: {edited}", id.id()));
        }
    }
    let failing: Vec<&str> = r
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail && c.level == Level::Error)
        .map(|c| c.check.id())
        .collect();
    let should_fail = r.timed_out || !failing.is_empty();
    if r.verdict == ReplayVerdict::Pass && should_fail {
        p.push(format!(
            "the verdict says pass, but {}: {edited}",
            if failing.is_empty() {
                "CMD timed out".to_string()
            } else {
                format!(
                    "{} {} failed",
                    if failing.len() == 1 { "check" } else { "checks" },
                    failing.join(", ")
                )
            }
        ));
    }
    if r.verdict == ReplayVerdict::Pass && !r.reasons.is_empty() {
        p.push(format!("the verdict says pass, but it lists reasons to fail: {edited}"));
    }
    if r.timeline.len() != r.clients {
        p.push(format!(
            "the report names {} clients but has {} timelines: {edited}",
            r.clients,
            r.timeline.len()
        ));
    }
    let status_of = |id: ReplayCheck| r.check(id).map(|c| c.status);
    let mut over_budget = false;
    let mut early = false;
    for t in &r.timeline {
        over_budget |= t.requests.len() > budget;
        for q in &t.requests {
            if let (Some(gap), Some(asked)) = (q.gap_ms, q.asked_ms) {
                early |= gap + GAP_SLACK_MS < asked;
            }
            for b in &q.broke {
                if status_of(*b) == Some(CheckStatus::Pass) {
                    p.push(format!(
                        "client {} request {} broke `{}`, yet that check says pass: {edited}",
                        t.client,
                        q.seq,
                        b.id()
                    ));
                }
            }
        }
    }
    if over_budget && status_of(ReplayCheck::AttemptBudget) == Some(CheckStatus::Pass) {
        p.push(format!(
            "a client made more than {budget} attempts, yet `attempt-budget` says pass: {edited}"
        ));
    }
    if early && status_of(ReplayCheck::RetryAfterHonored) == Some(CheckStatus::Pass) {
        p.push(format!("a retry came before its Retry-After, yet `retry-after-honored` says pass: {edited}"));
    }
    p.dedup();
    p
}
