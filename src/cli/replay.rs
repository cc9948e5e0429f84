//! Command line of `retrygate replay`: parse the flags, run the replay,
//! write the report, map the verdict to an exit code (0 pass, 1 fail,
//! 2 could not decide).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use std::path::Path;

use retrygate::changeset::git::Blob;
use retrygate::changeset::Git;
use retrygate::config::Config;
use retrygate::replay::base::BaseWorktree;
use retrygate::replay::{
    render_markdown, render_text, run_differential_blocking, run_replay_blocking, run_scenarios_blocking,
    LoadedScenario, ReplayOptions, ReplayVerdict,
};

use super::Exit;

/// How `retrygate replay` prints its report on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReplayFormat {
    Text,
    Json,
    Markdown,
}

/// `retrygate replay [--scenario NAME|FILE] [--clients N] [--timeout S]
/// [--report PATH] [--format F] [--commit SHA] -- CMD ARGS...`
#[derive(Debug, clap::Args)]
pub(crate) struct ReplayArgs {
    // The help names the bundled scenarios from their one list.
    #[arg(long, default_value = "default", help = format!(
        "A bundled scenario ({}), a path to a scenario YAML file, or several separated by commas (one report)",
        retrygate::replay::scenario::bundled_names()
    ))]
    pub scenario: String,
    /// How many copies of CMD run at once (8 or more, over 3 retry rounds, to judge desynchronisation).
    #[arg(long, default_value_t = 8)]
    pub clients: usize,
    /// Seconds the whole replay may take; CMD is killed after that and the replay fails.
    #[arg(long, default_value = "60", value_parser = retrygate::duration::parse_seconds)]
    pub timeout: Duration,
    /// Also write the JSON report to this file (for `retrygate check --replay-report`).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Output format on stdout (default: text, on a terminal or not).
    #[arg(long, value_enum)]
    pub format: Option<ReplayFormat>,
    /// The commit the report vouches for (default: `git rev-parse HEAD` here, if this is a repository).
    #[arg(long)]
    pub commit: Option<String>,
    /// Take the scenario(s) and the client count from `replay.scenario` and `replay.clients` of the
    /// config at this commit (the pull request's base), scenario files included, not from the
    /// working tree. Not with --scenario or --clients.
    #[arg(long, value_name = "REV", conflicts_with_all = ["scenario", "clients"])]
    pub config_from: Option<String>,
    /// Also run the same command, scenarios and clients against this revision (the pull request's
    /// base), checked out in a temporary worktree, side by side with the head, and compare the two
    /// per operation: a head worse than its base fails the replay; a base that cannot run is
    /// "could not decide" (exit 2).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The client to run, once per client, with RETRYGATE_URL and RETRYGATE_CLIENT set.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// How long a replay runs before it says so on stderr, and how often after.
pub(crate) const PROGRESS_AFTER: Duration = Duration::from_secs(2);
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Progress on stderr for a replay that takes a while: a replay honouring
/// `Retry-After: 1` three times takes over 3 s, and a silent terminal looks
/// hung. Nothing is printed for a replay done within [`PROGRESS_AFTER`].
struct Progress {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Progress {
    fn start(what: String, timeout: Duration) -> Progress {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let started = std::time::Instant::now();
        let thread = std::thread::spawn(move || {
            let mut wait = PROGRESS_AFTER;
            let mut said = false;
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                eprintln!(
                    "retrygate replay: running for {} s ({what}; at most {} s)",
                    started.elapsed().as_secs(),
                    timeout.as_secs()
                );
                said = true;
                wait = PROGRESS_EVERY;
            }
            if said {
                eprintln!("retrygate replay: done after {:.1} s", started.elapsed().as_secs_f64());
            }
        });
        Progress { stop, thread }
    }

    fn finish(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

/// `replay.clients` and the scenarios of `replay.scenario` in the config at
/// `rev`, each scenario file read from `rev` too; and the base's copy put in
/// the working tree of every file the replay runs (named by the config's
/// `replay.command` or by CMD's words) that `rev` has.
fn from_config(rev: &str, command: &[String]) -> anyhow::Result<(usize, Vec<LoadedScenario>)> {
    let git = Git::open(Path::new(".")).map_err(|e| anyhow::anyhow!("--config-from {rev}: {e}"))?;
    let sha = git.resolve_commit(rev).map_err(|e| {
        anyhow::anyhow!("--config-from {rev}: {e}; fetch that commit first (git fetch origin {rev})")
    })?;
    let base = Config::at_base(&git, &sha)?;
    let replay = &base.config.replay;
    let list = retrygate::gate::replay::base_scenarios(&git, &sha, &replay.scenario)
        .map_err(|e| anyhow::anyhow!("--config-from {rev}: {e}"))?;
    // The replay runs the base's copy of every file it names (in the
    // config's replay.command or in CMD), not the pull request's.
    let top = git
        .run(&["rev-parse", "--show-toplevel"])
        .map_err(|e| anyhow::anyhow!("--config-from {rev}: {e}"))?;
    let root = PathBuf::from(top.trim());
    let mut files = retrygate::decision::paths::replay_files(&base.config);
    for word in command {
        files.extend(retrygate::decision::paths::command_files(word));
    }
    for file in files {
        if let Some(Blob::Bytes(bytes)) = git
            .read_blob_at(&sha, &file, 16 << 20)
            .map_err(|e| anyhow::anyhow!("--config-from {rev}: cannot read {file} at that commit: {e}"))?
        {
            let path = root.join(&file);
            let path = path.as_path();
            if std::fs::read(path).ok().as_deref() != Some(bytes.as_slice()) {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("cannot create {}", dir.display()))?;
                }
                std::fs::write(path, &bytes)
                    .with_context(|| format!("cannot put back the base's copy of {file} for the replay"))?;
                eprintln!("retrygate replay: {file} is the base's copy ({rev}), as the replay runs it");
            }
        }
    }
    Ok((replay.clients as usize, list))
}

/// Runs `retrygate replay`.
pub(crate) fn run(args: ReplayArgs) -> anyhow::Result<Exit> {
    let mut opts = ReplayOptions {
        scenario: args.scenario,
        clients: args.clients,
        timeout: args.timeout,
        command: args.command,
        commit: args.commit,
        cwd: None,
    };
    // A bad --base is a usage error, said before anything runs.
    let base = match &args.base {
        None => None,
        Some(rev) => Some(base_commit(rev)?),
    };
    let list = match &args.config_from {
        None => None,
        Some(rev) => {
            let (clients, list) = from_config(rev, &opts.command)?;
            opts.clients = clients;
            Some(list)
        }
    };
    let what = format!(
        "{} client{}, scenario {}",
        opts.clients,
        if opts.clients == 1 { "" } else { "s" },
        opts.scenario
    );
    let progress = Progress::start(what, opts.timeout);
    let report = match (&base, &list) {
        (None, None) => run_replay_blocking(&opts),
        (None, Some(list)) => run_scenarios_blocking(&opts, list),
        (Some((sha, prefix)), list) => differential(&mut opts, sha, prefix, list.as_deref()),
    };
    progress.finish();
    let report = report?;
    let json = serde_json::to_string_pretty(&report).context("cannot serialise the replay report")?;
    if let Some(path) = &args.report {
        std::fs::write(path, format!("{json}\n"))
            .with_context(|| format!("cannot write the replay report to {}", path.display()))?;
    }
    // Text by default, on a terminal or not, like `scan` and `check`.
    let format = args.format.unwrap_or(ReplayFormat::Text);
    let text = match format {
        ReplayFormat::Text => render_text(&report),
        ReplayFormat::Json => format!("{json}\n"),
        ReplayFormat::Markdown => render_markdown(&report),
    };
    super::write_raw(text.as_bytes())?;
    if let Some(why) = report.comparison.as_ref().and_then(|c| c.undecided.as_ref()) {
        // The report (verdict fail) is written for the gate; the exit says
        // that no decision was made.
        eprintln!("retrygate: error: could not decide: {why}");
        return Ok(Exit::Error);
    }
    Ok(match report.verdict {
        ReplayVerdict::Pass => Exit::Pass,
        ReplayVerdict::Fail => Exit::Fail,
    })
}

/// The full commit `rev` names here, and the current directory's path
/// inside the repository (the base's clients run in the same place in the
/// base's worktree).
fn base_commit(rev: &str) -> anyhow::Result<(String, String)> {
    let git = Git::open(Path::new(".")).map_err(|e| anyhow::anyhow!("--base {rev}: {e}"))?;
    let sha = git.resolve_commit(rev).map_err(|e| anyhow::anyhow!("--base {rev}: {e}"))?;
    let prefix =
        git.run(&["rev-parse", "--show-prefix"]).map_err(|e| anyhow::anyhow!("--base {rev}: {e}"))?;
    Ok((sha, prefix.trim().to_string()))
}

/// The head in the current directory and the base in a worktree of `sha`,
/// side by side. A base that cannot be checked out still lets the head run,
/// and the report says "could not decide".
fn differential(
    opts: &mut ReplayOptions,
    sha: &str,
    prefix: &str,
    list: Option<&[LoadedScenario]>,
) -> anyhow::Result<retrygate::replay::ReplayReport> {
    let owned;
    let list = match list {
        Some(l) => l,
        None => {
            owned = LoadedScenario::resolve_list(&opts.scenario)?;
            &owned[..]
        }
    };
    // The head's report names its commit whatever directory the base runs in.
    if opts.commit.is_none() {
        let git = Git::open(Path::new(".")).map_err(|e| anyhow::anyhow!("{e}"))?;
        opts.commit = git.resolve_commit("HEAD").ok();
    }
    let top = Git::open(Path::new("."))
        .and_then(|g| g.run(&["rev-parse", "--show-toplevel"]))
        .map_err(|e| anyhow::anyhow!("--base: {e}"))?;
    let worktree = BaseWorktree::add(Path::new(top.trim()), sha);
    let base_opts = worktree.as_ref().map(|w| ReplayOptions {
        cwd: Some(w.path().join(prefix)),
        commit: Some(sha.to_string()),
        ..opts.clone()
    });
    let base = match &base_opts {
        Ok(b) => Ok(b),
        Err(e) => Err(format!("{e:#}")),
    };
    // No scan here to size the outage from: the run to the caps lasts until
    // each side stops or the timeout ends it.
    let report = run_differential_blocking(opts, base, sha, list, None);
    drop(worktree);
    report
}
