//! The 429 replay: runs the user's own client against a loopback server that
//! answers 429 with Retry-After, and judges the client by what the server
//! observed (docs/replay.md; docs/architecture.md, principle 2).
//!
//! The pieces, each with one job:
//! - [`scenario`]: what the server answers, the budget, the check weights;
//! - [`server`]: the hyper server and its [`journal::Journal`];
//! - [`runner`]: CMD once per client, released together, bounded by a timeout;
//! - [`checks`]: seven pure checks over the journal;
//! - [`report`]: the JSON report for the gate, Markdown and text renderings.
//!
//! The command line (`retrygate replay`) and the built-in example clients
//! (`retrygate replay-client`) are the binary's (`src/cli/`).
//!
//! ```no_run
//! use retrygate::replay::{run_replay_blocking, render_markdown, ReplayOptions};
//! let opts = ReplayOptions::new("default", 4, vec!["curl".into(), "--retry".into(), "5".into()]);
//! let report = run_replay_blocking(&opts)?;
//! println!("{}", render_markdown(&report));
//! # anyhow::Ok(())
//! ```

pub mod base;
pub(crate) mod checks;
pub mod compare;
pub(crate) mod journal;
pub(crate) mod report;
pub mod retry_after;
pub(crate) mod runner;
pub mod scenario;
pub(crate) mod server;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

pub use checks::{CheckStatus, ReplayCheck};
pub use compare::Comparison;
pub use report::{render_markdown, render_text, ReplayReport, ReplayVerdict};
pub use scenario::LoadedScenario;

/// More copies of CMD than this would test the machine, not the client.
pub(crate) const MAX_CLIENTS: usize = 256;

/// What to replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// A bundled scenario name or a path to a scenario file.
    pub scenario: String,
    /// How many copies of CMD run at once.
    pub clients: usize,
    /// Bound on the whole replay; CMD is killed when it is reached.
    pub timeout: Duration,
    /// CMD and its arguments.
    pub command: Vec<String>,
    /// The commit the report vouches for; `None` asks git in `cwd`.
    pub commit: Option<String>,
    /// Where CMD runs (and git is asked); `None` = the current directory.
    pub cwd: Option<PathBuf>,
}

impl ReplayOptions {
    /// Options with a 60 s timeout, run in the current directory.
    pub fn new(scenario: &str, clients: usize, command: Vec<String>) -> ReplayOptions {
        ReplayOptions {
            scenario: scenario.to_string(),
            clients,
            timeout: Duration::from_secs(60),
            command,
            commit: None,
            cwd: None,
        }
    }
}

/// Runs one replay: resolve the scenario(s), start the server, run CMD N
/// times, judge the journal. Several scenarios (`a,b,c`) run one after the
/// other, each with its own server, into one report. `Err` means no decision
/// could be made (exit 2): bad scenario, CMD not found, no socket. Needs a
/// tokio runtime with IO and time enabled; [`run_replay_blocking`] brings
/// its own.
pub async fn run_replay(opts: &ReplayOptions) -> anyhow::Result<ReplayReport> {
    let list = LoadedScenario::resolve_list(&opts.scenario)?;
    run_scenarios(opts, &list).await
}

/// [`run_replay`] over scenarios already loaded (e.g. the base commit's
/// copies, `retrygate replay --config-from`); `opts.scenario` is not read.
pub(crate) async fn run_scenarios(
    opts: &ReplayOptions,
    list: &[LoadedScenario],
) -> anyhow::Result<ReplayReport> {
    if list.is_empty() {
        anyhow::bail!("no scenario to replay");
    }
    if opts.clients == 0 || opts.clients > MAX_CLIENTS {
        anyhow::bail!(
            "--clients must be between 1 and {MAX_CLIENTS}, got {} (8 or more judge desynchronisation)",
            opts.clients
        );
    }
    let program = opts.command.first().map(String::as_str).unwrap_or("");
    runner::resolve_program(program, opts.cwd.as_deref())?;
    let commit = match &opts.commit {
        Some(c) => Some(c.clone()),
        None => head_commit(opts.cwd.as_deref()),
    };
    let mut parts = Vec::new();
    for loaded in list {
        parts.push(run_one(opts, loaded, commit.clone()).await?);
    }
    if parts.len() == 1 {
        return Ok(parts.remove(0));
    }
    Ok(ReplayReport::combine(LoadedScenario::combined_sha256(list), parts))
}

/// The differential replay (`retrygate replay --base REV`): the same
/// scenarios and client count run against the head (`head`) and the base
/// (`base`, whose `cwd` is the base's worktree), side by side, each with its
/// own servers; the head's report comes back with the [`Comparison`]
/// attached. `base` is `Err` when the base could not even be checked out.
/// Fails closed: a base that cannot run, or that ran but from which no
/// request arrived in a scenario (its build or its client broke), makes the
/// comparison "could not decide", with the base's own output, and the
/// report's verdict `fail`. `Err` only when the head itself cannot run.
pub async fn run_differential(
    head: &ReplayOptions,
    base: Result<&ReplayOptions, String>,
    base_commit: &str,
    list: &[LoadedScenario],
    cap_failures: Option<usize>,
) -> anyhow::Result<ReplayReport> {
    // Whatever the configured scenarios, both sides also meet an outage that
    // outlasts their budgets: a scenario that recovers after three 429s makes
    // every cap of 3 or more look the same (issue 53).
    let cap = scenario::to_the_cap(list, cap_failures)?;
    let (report, base_ran) = match base {
        Err(why) => (run_scenarios(head, list).await?, Err(why)),
        Ok(opts) => {
            // Side by side: the replay is mostly waiting, and the two fleets
            // have their own servers, ports and working trees. Each side runs
            // its configured scenarios, then the run to the caps.
            let (h, b) = tokio::join!(run_side(head, list, cap.as_ref()), run_side(opts, list, cap.as_ref()));
            let (h, h_cap) = h?;
            (
                h,
                b.map(|(b, b_cap)| (b, b_cap, h_cap))
                    .map_err(|e| format!("the base did not run the replay: {e:#}")),
            )
        }
    };
    let comparison = match base_ran {
        Err(why) => compare::Comparison::undecided(base_commit, report.commit.clone(), why),
        Ok((b, b_cap, h_cap)) => match base_did_not_run(&b) {
            Some(why) => {
                let mut c = compare::Comparison::undecided(base_commit, report.commit.clone(), why);
                c.base = Some(Box::new(b));
                c
            }
            None => {
                let to_the_cap = match (b_cap, h_cap) {
                    (Some(base), Some(head)) => {
                        Some(compare::CapRun { base: Box::new(base), head: Box::new(head) })
                    }
                    _ => None,
                };
                compare::compare(&b, &report, base_commit, to_the_cap)
            }
        },
    };
    Ok(report.with_comparison(comparison))
}

/// One side of a differential replay: its configured scenarios, then the
/// run to the caps when there is one.
async fn run_side(
    opts: &ReplayOptions,
    list: &[LoadedScenario],
    cap: Option<&LoadedScenario>,
) -> anyhow::Result<(ReplayReport, Option<ReplayReport>)> {
    let report = run_scenarios(opts, list).await?;
    let capped = match cap {
        Some(c) => Some(run_scenarios(opts, std::slice::from_ref(c)).await?),
        None => None,
    };
    Ok((report, capped))
}

/// Why a base's report is no evidence to compare with: a scenario in which
/// no client sent a single request (the base's build or client failed
/// before it reached the server). Names the scenario and quotes the first
/// client's output.
fn base_did_not_run(r: &ReplayReport) -> Option<String> {
    let parts: Vec<&ReplayReport> = if r.parts.is_empty() { vec![r] } else { r.parts.iter().collect() };
    for p in parts {
        if p.timeline.iter().all(|t| t.requests.is_empty()) {
            let first = p.timeline.first();
            let output = first
                .map(|t| format!("{}{}", t.stdout_tail, t.stderr_tail))
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "(no output)".into());
            let exit = first.map(|t| t.exit.describe()).unwrap_or_else(|| "never started".into());
            return Some(format!(
                "the base ran scenario {} but no client of it sent a request (client 0 {exit}); \
                 fix the base's replay command or build, or have a maintainer sign off; the base's output: {output}",
                p.scenario
            ));
        }
    }
    None
}

/// [`run_differential`] on its own tokio runtime.
pub fn run_differential_blocking(
    head: &ReplayOptions,
    base: Result<&ReplayOptions, String>,
    base_commit: &str,
    list: &[LoadedScenario],
    cap_failures: Option<usize>,
) -> anyhow::Result<ReplayReport> {
    runtime()?.block_on(run_differential(head, base, base_commit, list, cap_failures))
}

/// One scenario, rerun once when `desynchronized` was inconclusive and
/// nothing else failed (with the clients [`rerun_plan`] says), if the rest
/// of the scenario's `--timeout` leaves room for it (a run is mostly
/// waiting, so the rerun is given 1.5 times the first run's wall time or
/// more). The rerun's report is the scenario's, and names the first run.
async fn run_one(
    opts: &ReplayOptions,
    loaded: &LoadedScenario,
    commit: Option<String>,
) -> anyhow::Result<ReplayReport> {
    let first = run_once(opts, loaded, commit.clone(), opts.clients, opts.timeout).await?;
    let Some((clients, remaining)) = rerun_plan(&first, opts.timeout) else {
        return Ok(first);
    };
    let message = first.check(ReplayCheck::Desynchronized).map(|c| c.message.clone()).unwrap_or_default();
    let mut rerun = run_once(opts, loaded, commit, clients, remaining).await?;
    rerun.rerun_of = Some(report::RerunNote { clients: first.clients, desync: first.desync, message });
    Ok(rerun)
}

/// Whether a first run is rerun, and with how many clients and how much of
/// `timeout` left: only when `desynchronized` was inconclusive, nothing else
/// failed (the verdict would not hinge on it), the rerun stays within
/// [`MAX_CLIENTS`], and what is left of `timeout` is at least 1.5 times what
/// the first run took.
pub(crate) fn rerun_plan(first: &ReplayReport, timeout: Duration) -> Option<(usize, Duration)> {
    let clients = inconclusive_rerun_clients(first)?;
    let others_failed = first.timed_out
        || !first.server_errors.is_empty()
        || first.checks.iter().any(|c| {
            c.check != ReplayCheck::Desynchronized
                && c.status == CheckStatus::Fail
                && c.level == scenario::Level::Error
        });
    let left = timeout.as_secs_f64() * 1000.0 - first.wall_ms;
    if others_failed || clients > MAX_CLIENTS || left < 1.5 * first.wall_ms {
        return None;
    }
    Some((clients, Duration::try_from_secs_f64(left / 1000.0).unwrap_or(timeout)))
}

/// How many clients a rerun of an inconclusive `first` run uses, or `None`
/// when its `desynchronized` reading was decided. Besides a pooled reading
/// between the bars or within the noise ([`checks::Reading::rerun_clients`]),
/// one more run is inconclusive: too few judged waits only because the first
/// retry round came back within [`checks::desync::IMMEDIATE_MS`] and is not judged.
/// A full-jitter fleet of 8 does that about once in 80 runs (its first waits
/// are uniform over 0-500 ms), so it is chance, and the same fleet is looked
/// at again rather than left unjudged.
fn inconclusive_rerun_clients(first: &ReplayReport) -> Option<usize> {
    if let Some(d) = &first.desync {
        return d.reading.inconclusive().then(|| d.reading.rerun_clients(first.clients));
    }
    let unjudged =
        first.check(ReplayCheck::Desynchronized).is_some_and(|c| c.status == CheckStatus::NotApplicable);
    let rounds = &first.desync_rounds;
    let first_round_skipped = rounds.first().is_some_and(|r| r.immediate) && rounds.len() > 1;
    (unjudged && first_round_skipped).then_some(first.clients)
}

async fn run_once(
    opts: &ReplayOptions,
    loaded: &LoadedScenario,
    commit: Option<String>,
    clients: usize,
    timeout: Duration,
) -> anyhow::Result<ReplayReport> {
    let server = server::ServerHandle::start(loaded.scenario.clone(), clients).await?;
    let urls: Vec<String> = (0..clients).map(|i| server.client_url(i)).collect();
    let released = server.now_ms();
    let outcome = runner::run_clients(&opts.command, &urls, timeout, opts.cwd.as_deref()).await?;
    let wall_ms = server.now_ms() - released;
    let journal = server.journal();
    drop(server);

    let exits: Vec<runner::ClientExit> = outcome.clients.iter().map(|c| c.exit.clone()).collect();
    let judgement = checks::run(checks::ChecksInput {
        journal: &journal,
        exits: &exits,
        budget: loaded.scenario.budget,
        levels: &loaded.scenario.checks,
    });
    let ctx = report::ReportContext {
        scenario: loaded.name.clone(),
        scenario_description: loaded.scenario.description.clone(),
        scenario_sha256: loaded.sha256.clone(),
        commit,
        command: opts.command.clone(),
        timeout_s: opts.timeout.as_secs_f64(),
        timed_out: outcome.timed_out,
        wall_ms,
        demanded_wait_ms: checks::demanded_wait_ms(&journal, clients)
            .unwrap_or_else(|| loaded.scenario.demanded_wait_ms()),
    };
    Ok(ReplayReport::assemble(ctx, &journal, &outcome.clients, judgement))
}

/// [`run_replay`] on its own tokio runtime, for synchronous callers (the
/// gate, the demo, tests).
pub fn run_replay_blocking(opts: &ReplayOptions) -> anyhow::Result<ReplayReport> {
    runtime()?.block_on(run_replay(opts))
}

/// [`run_scenarios`] on its own tokio runtime.
pub fn run_scenarios_blocking(opts: &ReplayOptions, list: &[LoadedScenario]) -> anyhow::Result<ReplayReport> {
    runtime()?.block_on(run_scenarios(opts, list))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the replay's tokio runtime")
}

/// `git rev-parse HEAD` in `dir`, or `None` when it is not a repository.
fn head_commit(dir: Option<&std::path::Path>) -> Option<String> {
    let mut cmd = std::process::Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    let out = cmd
        .args(["rev-parse", "--verify", "-q", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && sha.len() >= 40).then_some(sha)
}

#[cfg(test)]
mod tests {
    use super::checks::{CheckResult, DesyncSummary, Reading};
    use super::*;

    fn first(reading: Reading, clients: usize, wall_ms: f64) -> ReplayReport {
        let mut r = ReplayReport::combine("0".repeat(64), Vec::new());
        r.clients = clients;
        r.wall_ms = wall_ms;
        r.checks = ReplayCheck::ALL
            .iter()
            .map(|&check| CheckResult {
                check,
                status: if check == ReplayCheck::Desynchronized {
                    CheckStatus::Fail
                } else {
                    CheckStatus::Pass
                },
                level: scenario::Level::Error,
                message: String::new(),
                violations: vec![],
            })
            .collect();
        r.desync = Some(DesyncSummary {
            reading,
            concentration: 16.0,
            pass_bar: 12.0,
            lockstep_bar: 22.0,
            judged_waits: 24,
            pairs: 84,
            retry_pair_ms: 18.0,
            noise_pair_ms: 3.0,
            noise_spread_ms: 9.0,
        });
        r
    }

    #[test]
    fn a_base_from_which_no_request_arrived_did_not_run() {
        let mut r = ReplayReport::combine("0".repeat(64), Vec::new());
        r.scenario = "default".into();
        r.timeline = vec![report::ClientTimeline {
            client: 0,
            exit: runner::ClientExit::Exited { code: 101 },
            requests: vec![],
            stdout_tail: String::new(),
            stderr_tail: "error[E0425]: cannot find value `x`\n".into(),
        }];
        let why = base_did_not_run(&r).unwrap();
        assert!(why.contains("scenario default") && why.contains("exited with code 101"), "{why}");
        assert!(why.contains("error[E0425]: cannot find value `x`"), "{why}");
    }

    fn round(round: usize, immediate: bool) -> super::checks::DesyncRound {
        let wait = if immediate { 40.0 } else { 900.0 };
        super::checks::DesyncRound {
            round,
            clients: 8,
            asked_wait_ms: None,
            honoured_retry_after: false,
            median_wait_ms: wait,
            wait_spread_ms: wait,
            arrival_spread_ms: wait,
            spread_ms: wait,
            threshold_ms: 100.0,
            scale_ms: wait,
            median_pair_ms: wait / 3.0,
            concentration: 1.0,
            at_once: immediate,
            immediate,
            lockstep: false,
        }
    }

    #[test]
    fn too_few_judged_waits_because_the_first_round_was_immediate_is_looked_at_again() {
        let t = Duration::from_secs(60);
        let mut r = first(Reading::Spread, 8, 4000.0);
        r.desync = None;
        for c in &mut r.checks {
            if c.check == ReplayCheck::Desynchronized {
                c.status = CheckStatus::NotApplicable;
            }
        }
        r.desync_rounds = vec![round(1, true), round(2, false), round(3, false)];
        assert_eq!(rerun_plan(&r, t).map(|p| p.0), Some(8));
        // Every round judged and still too few (a small fleet), or only an
        // immediate round: a rerun would read the same, so none.
        r.desync_rounds = vec![round(1, false), round(2, false)];
        assert_eq!(rerun_plan(&r, t), None);
        r.desync_rounds = vec![round(1, true)];
        assert_eq!(rerun_plan(&r, t), None);
    }

    #[test]
    fn an_inconclusive_run_is_rerun_once_within_the_time_left() {
        let t = Duration::from_secs(60);
        // Between the bars: three times the clients, with what is left of the timeout.
        assert_eq!(rerun_plan(&first(Reading::Ambiguous, 8, 4000.0), t), Some((24, Duration::from_secs(56))));
        // Within the noise: the same clients again.
        assert_eq!(rerun_plan(&first(Reading::WithinNoise, 8, 4000.0), t).map(|p| p.0), Some(8));
        // A decided reading, too little time, too many clients: no rerun.
        assert_eq!(rerun_plan(&first(Reading::Lockstep, 8, 4000.0), t), None);
        assert_eq!(rerun_plan(&first(Reading::Spread, 8, 4000.0), t), None);
        assert_eq!(rerun_plan(&first(Reading::Ambiguous, 8, 25_000.0), t), None);
        assert_eq!(rerun_plan(&first(Reading::Ambiguous, 100, 4000.0), t), None);
        // Another check failed at error weight: the verdict is fail anyway.
        let mut other = first(Reading::Ambiguous, 8, 4000.0);
        other.checks[2].status = CheckStatus::Fail;
        assert_eq!(rerun_plan(&other, t), None);
        // A timeout too far away to add is no limit, not a panic.
        assert_eq!(rerun_plan(&first(Reading::Ambiguous, 8, 4000.0), Duration::MAX).map(|p| p.0), Some(24));
    }
}
