//! The 429 replay: runs the user's own client against a loopback server that
//! answers 429 with Retry-After, and judges the client by what the server
//! observed (docs/replay.md; docs/architecture.md, principle 2).
//!
//! The pieces, each with one job:
//! - [`scenario`]: what the server answers, the budget, the check weights;
//! - [`server`]: the hyper server and its [`journal::Journal`];
//! - [`runner`]: CMD once per client, released together, bounded by a timeout;
//! - [`judge`]: six pure checks over the journal;
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

pub mod journal;
pub mod judge;
pub mod report;
pub mod retry_after;
pub mod runner;
pub mod scenario;
pub mod server;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

pub use judge::{CheckId, CheckResult, CheckStatus};
pub use report::{render_markdown, render_text, ReplayReport, ReplayVerdict};
pub use scenario::LoadedScenario;

/// More copies of CMD than this would test the machine, not the client.
pub const MAX_CLIENTS: usize = 256;

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
    if opts.clients == 0 || opts.clients > MAX_CLIENTS {
        anyhow::bail!(
            "--clients must be between 1 and {MAX_CLIENTS}, got {} (8 or more judge desynchronisation)",
            opts.clients
        );
    }
    let program = opts.command.first().map(String::as_str).unwrap_or("");
    runner::resolve_program(program)?;
    let commit = match &opts.commit {
        Some(c) => Some(c.clone()),
        None => head_commit(opts.cwd.as_deref()),
    };
    let mut parts = Vec::new();
    for loaded in &list {
        parts.push(run_one(opts, loaded, commit.clone()).await?);
    }
    if parts.len() == 1 {
        return Ok(parts.remove(0));
    }
    Ok(ReplayReport::combine(LoadedScenario::combined_sha256(&list), parts))
}

/// One scenario, rerun once with [`judge::RERUN_FACTOR`] times the clients
/// when `desynchronized` was inconclusive and nothing else failed, if the
/// rest of the scenario's `--timeout` leaves room for it (a run is mostly
/// waiting, so the rerun is given 1.5 times the first run's wall time or
/// more). The rerun's report is the scenario's, and names the first run.
async fn run_one(
    opts: &ReplayOptions,
    loaded: &LoadedScenario,
    commit: Option<String>,
) -> anyhow::Result<ReplayReport> {
    let first = run_once(opts, loaded, commit.clone(), opts.clients, opts.timeout).await?;
    let Some(summary) = first.desync.clone().filter(|d| d.reading.inconclusive()) else {
        return Ok(first);
    };
    let others_failed = first.timed_out
        || !first.server_errors.is_empty()
        || first.checks.iter().any(|c| {
            c.check != CheckId::Desynchronized
                && c.status == CheckStatus::Fail
                && c.level == scenario::Level::Error
        });
    let clients = opts.clients.saturating_mul(judge::RERUN_FACTOR);
    let left = opts.timeout.as_secs_f64() * 1000.0 - first.wall_ms;
    if others_failed || clients > MAX_CLIENTS || left < 1.5 * first.wall_ms {
        return Ok(first);
    }
    let remaining = Duration::from_secs_f64(left.max(0.0) / 1000.0);
    let mut rerun = run_once(opts, loaded, commit, clients, remaining).await?;
    rerun.rerun_of = Some(report::RerunNote { clients: opts.clients, desync: summary });
    Ok(rerun)
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
    let judgement = judge::judge(judge::JudgeInput {
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
        demanded_wait_ms: judge::demanded_wait_ms(&journal, clients)
            .unwrap_or_else(|| loaded.scenario.demanded_wait_ms()),
    };
    Ok(ReplayReport::assemble(ctx, &journal, &outcome.clients, judgement))
}

/// [`run_replay`] on its own tokio runtime, for synchronous callers (the
/// gate, the demo, tests).
pub fn run_replay_blocking(opts: &ReplayOptions) -> anyhow::Result<ReplayReport> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the replay's tokio runtime")?;
    rt.block_on(run_replay(opts))
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
