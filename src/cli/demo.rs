//! `retrygate demo`: the checkout incident, replayed end to end, offline.
//!
//! It builds a throwaway git repository in a temporary directory: `main`
//! holds the checkout client as it was before the incident and a
//! `.github/retrygate.yml`, and the branch `claude/faster-checkout` holds the
//! coding agent's pull request. Then it plays the gate three times:
//!
//! 1. the agent's patch, with no ledger, and a replay of the patched
//!    client's checkout POST (the built-in `storm` client) against `default`
//!    (429 with Retry-After) and `reset-after-write` (the order is created,
//!    then the connection is reset) -> **blocked**: the findings, "ledger
//!    missing", and the storm as the server saw it, a second order included;
//! 2. the agent's second push, the calm patch (bounded retries, jitter on top
//!    of Retry-After, POST sent once), with its tool-call ledger and a replay
//!    of the code it changed, the cart read: the `reference` client's GET,
//!    which waits at least each Retry-After with jitter on top -> **pass**.
//!    The POST is not what is replayed: it is never retried, so its replay
//!    would exercise no retry, and such a replay is no evidence
//!    (`replay-no-retry`). The ledger is committed with the change, or, with
//!    `--ledger-from artifact`, zipped outside the repository as an agent's
//!    workflow run uploads it and passed as `--ledger-artifact`.
//!
//! 3. the agent's third push: the same calm code, with the cart read's retry
//!    cap, which the client reads at run time from a file no analyzer reads
//!    as a retry setting, raised from 4 to 9. Every check of the head's own
//!    replay passes, and the scenarios recover after three 429s, so they
//!    cannot tell the caps apart; the replay with `main` beside it adds a
//!    run in which neither side recovers -> **blocked** by the comparison
//!    alone (`replay-failed`, `retry-count-raised` seen in the replay).
//!
//! It prints the three sticky-comment bodies. Everything it needs is in the
//! binary: the example files are embedded and the replayed clients are the
//! binary's own hidden `replay-client` subcommand.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context};
use sha2::{Digest, Sha256};

use retrygate::gate::{self, CheckInput, GateOutcome};
use retrygate::ledger::append::{append, NewRecord};
use retrygate::ledger::pyjson::Value;
use retrygate::printer::{Format, Verdict};
use retrygate::replay::base::BaseWorktree;
use retrygate::replay::{run_differential_blocking, run_replay_blocking, LoadedScenario, ReplayOptions};

use super::{Exit, FormatArg};

/// The client before the incident.
pub(crate) const BEFORE: &str = include_str!("../../examples/checkout-incident/before.rs");
/// The agent's "make checkout faster" patch.
pub(crate) const AGENT_PATCH: &str = include_str!("../../examples/checkout-incident/agent_patch.rs");
/// The agent's second push: bounded, jittered, Retry-After honoured, POST once.
pub(crate) const CALM_PATCH: &str = include_str!("../../examples/checkout-incident/calm_patch.rs");

const CLIENT_PATH: &str = "src/checkout.rs";
const PR_BRANCH: &str = "claude/faster-checkout";
const LEDGER_PATH: &str = ".tool_ledger.jsonl";
/// Where act 3's client reads its cart-read retry cap at run time.
const TUNING_PATH: &str = "cart.tuning";
/// The cap act 3 raises it to (the reference client's own is 4).
const TUNED_RETRIES: u32 = 9;
/// 12 clients x 2 judged retry rounds: enough for `desynchronized` to decide.
const CLIENTS: usize = 12;
/// The scenarios a POSTing client is replayed against.
const SCENARIOS: &str = "default,reset-after-write";

/// The base config of the demo repository.
const CONFIG: &str = "\
# retrygate's policy for this repository (read from the base branch).
replay: { scenario: [default, reset-after-write], clients: 12 }
limits: { max_attempts: 5 }
";

#[derive(Debug, clap::Args)]
pub(crate) struct DemoArgs {
    /// How to show each verdict (markdown is the pull-request comment).
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: FormatArg,
    /// Keep the temporary repository and print its path.
    #[arg(long)]
    pub keep: bool,
    /// How the calm second push carries its ledger: committed with the
    /// change, or uploaded by the agent's workflow run as an artifact (played
    /// here by a local zip, passed as `--ledger-artifact`).
    #[arg(long, value_enum, default_value = "commit")]
    pub ledger_from: LedgerFrom,
}

/// Where the calm push's ledger travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LedgerFrom {
    /// `.tool_ledger.jsonl` committed at the head.
    Commit,
    /// The `tool-ledger` artifact's zip (`--ledger-artifact`).
    Artifact,
}

pub(crate) fn run(args: DemoArgs) -> anyhow::Result<Exit> {
    let exe =
        std::env::current_exe().context("finding the retrygate binary to replay its built-in clients")?;
    let dir = tempfile::Builder::new().prefix("retrygate-demo-").tempdir().context("creating a temp dir")?;
    let repo = dir.path();
    build_repo(repo)?;
    println!("retrygate demo: the checkout incident, offline, in {}\n", repo.display());
    println!("base main: {CLIENT_PATH} with a 2.5 s timeout, 2 jittered retries, POST /checkout sent once;");
    println!("           .github/retrygate.yml demands a ledger and a 429 replay of agent PRs, at most 5 attempts.");
    println!("pull request {PR_BRANCH} (Co-authored-by: Claude): 800 ms timeout, 6 retries, 10 ms constant sleep, POST retried.\n");

    // Act 1: the agent's patch.
    let report1 = repo.join("replay-agent.json");
    let head1 = rev(repo, PR_BRANCH)?;
    println!("$ retrygate replay --scenario {SCENARIOS} --clients {CLIENTS} --report replay-agent.json -- retrygate replay-client --profile storm --method POST");
    replay(repo, &exe, &["--profile", "storm", "--method", "POST"], &head1, &report1)?;
    println!("$ retrygate check --base main --head {PR_BRANCH} --replay-report replay-agent.json\n");
    let first = check(repo, &report1)?;
    show(&first, args.format.into())?;
    let codes: Vec<&str> = first.gate.reasons.iter().map(|r| r.code.as_str()).collect();
    if first.verdict != Verdict::Block
        || !codes.contains(&"ledger-missing")
        || !codes.contains(&"replay-failed")
    {
        bail!("the demo expected the agent's patch to be blocked for its findings, the missing ledger and the failed replay, but got {:?} {codes:?}; this is a bug in retrygate", first.verdict);
    }

    // Act 2: the calm patch, with its ledger.
    // The agent's workflow run: where an uploaded ledger artifact lands.
    let run =
        tempfile::Builder::new().prefix("retrygate-demo-run-").tempdir().context("creating a temp dir")?;
    let zip = run.path().join("tool-ledger.zip");
    let (artifact, flag) = match args.ledger_from {
        LedgerFrom::Commit => {
            println!("\n---\n\nThe agent pushes the calm patch, with its tool-call ledger committed.\n");
            calm_push(repo, None)?;
            (None, String::new())
        }
        LedgerFrom::Artifact => {
            println!("\n---\n\nThe agent pushes the calm patch; its workflow run uploads the tool-call ledger as the artifact `tool-ledger` (here: {}).\n", zip.display());
            calm_push(repo, Some(&zip))?;
            (Some(zip.clone()), " --ledger-artifact tool-ledger.zip".to_string())
        }
    };
    let report2 = repo.join("replay-calm.json");
    let head2 = rev(repo, PR_BRANCH)?;
    // The calm patch changed the cart read's retry (its POST is sent once),
    // so the cart read is what the replay exercises.
    println!("The calm patch retries the cart read (GET) and sends the POST once, so the replay runs the cart read.");
    println!("$ retrygate replay --scenario {SCENARIOS} --clients {CLIENTS} --report replay-calm.json -- retrygate replay-client --profile reference --method GET --path /cart/7");
    replay(
        repo,
        &exe,
        &["--profile", "reference", "--method", "GET", "--path", "/cart/7"],
        &head2,
        &report2,
    )?;
    println!("$ retrygate check --base main --head {PR_BRANCH} --replay-report replay-calm.json{flag}\n");
    let second = gate::check(&CheckInput {
        replay_report: Some(report2.clone()),
        ledger_artifact: artifact,
        ..CheckInput::new(repo, "main", PR_BRANCH)
    })?;
    show(&second, args.format.into())?;

    if second.verdict != Verdict::Pass {
        let codes: Vec<&str> = second.gate.reasons.iter().map(|r| r.code.as_str()).collect();
        bail!("the demo expected the calm patch to pass, but it was blocked: {codes:?}; this is a bug in retrygate");
    }

    // Act 3: a calm-looking head that raises its cap where no analyzer looks.
    println!("\n---\n\nThe agent pushes once more: the same calm code, but the cart read's retry cap, which the client reads at run time from `{TUNING_PATH}`, goes from 4 to {TUNED_RETRIES}. No analyzer reads that file as a retry setting, and the head still honours Retry-After with jitter on top, so every check of its own replay passes. The scenarios recover after three 429s, so they cannot tell a cap of 4 from one of {TUNED_RETRIES} either; the replay with the base beside it adds a run in which neither side recovers, and each stops on its own cap.\n");
    let zip3 = run.path().join("tool-ledger-3.zip");
    let artifact3 = match args.ledger_from {
        LedgerFrom::Commit => None,
        LedgerFrom::Artifact => Some(zip3.clone()),
    };
    tune_push(repo, artifact3.as_deref())?;
    let report3 = repo.join("replay-tuned.json");
    let head3 = rev(repo, PR_BRANCH)?;
    println!("$ retrygate replay --base main --scenario {SCENARIOS} --clients {CLIENTS} --report replay-tuned.json -- retrygate replay-client --profile reference --method GET --path /cart/7 --max-retries-from {TUNING_PATH}");
    differential_replay(
        repo,
        &exe,
        &[
            "--profile",
            "reference",
            "--method",
            "GET",
            "--path",
            "/cart/7",
            "--max-retries-from",
            TUNING_PATH,
        ],
        &head3,
        &report3,
    )?;
    let flag3 = if artifact3.is_some() { " --ledger-artifact tool-ledger-3.zip" } else { "" };
    println!("$ retrygate check --base main --head {PR_BRANCH} --replay-report replay-tuned.json{flag3}\n");
    let third = gate::check(&CheckInput {
        replay_report: Some(report3.clone()),
        ledger_artifact: artifact3,
        ..CheckInput::new(repo, "main", PR_BRANCH)
    })?;
    show(&third, args.format.into())?;
    let codes: Vec<&str> = third.gate.reasons.iter().map(|r| r.code.as_str()).collect();
    if third.verdict != Verdict::Block || codes != ["replay-failed"] {
        bail!("the demo expected the raised cap to be blocked by the replay's comparison alone, but got {:?} {codes:?}; this is a bug in retrygate", third.verdict);
    }

    if args.keep {
        let kept = dir.keep();
        println!("\nkept the repository at {}", kept.display());
    }
    println!("\nblocked, passing, blocked again: exit code 1 for the first push, 0 for the second, 1 for the third (by the comparison alone).");
    Ok(Exit::Pass)
}

fn check(repo: &Path, report: &Path) -> anyhow::Result<GateOutcome> {
    gate::check(&CheckInput {
        replay_report: Some(report.to_path_buf()),
        ..CheckInput::new(repo, "main", PR_BRANCH)
    })
}

fn show(outcome: &GateOutcome, format: Format) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    retrygate::printer::render_checked(&outcome.gate, &outcome.markdown, format, &mut out)?;
    println!("\n(exit code {})", Exit::from(outcome.verdict) as u8);
    Ok(())
}

/// The demo's scenarios and clients, running the binary's built-in client
/// with `client`'s arguments in `repo`, for `commit`.
fn client_options(
    repo: &Path,
    exe: &Path,
    client: &[&str],
    commit: &str,
    timeout: Duration,
) -> ReplayOptions {
    ReplayOptions {
        scenario: SCENARIOS.into(),
        clients: CLIENTS,
        timeout,
        command: [exe.display().to_string().as_str(), "replay-client"]
            .into_iter()
            .chain(client.iter().copied())
            .map(String::from)
            .collect(),
        commit: Some(commit.to_string()),
        cwd: Some(repo.to_path_buf()),
    }
}

/// Replays the built-in client (`retrygate replay-client` with `client`'s
/// arguments) against the loopback 429 server and writes the report for
/// `commit` to `out`.
fn replay(repo: &Path, exe: &Path, client: &[&str], commit: &str, out: &PathBuf) -> anyhow::Result<()> {
    let opts = client_options(repo, exe, client, commit, Duration::from_secs(20));
    let report = run_replay_blocking(&opts)?;
    let json = serde_json::to_string_pretty(&report)?;
    std::fs::write(out, json).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "  replay verdict: {:?} ({} requests)\n",
        report.verdict,
        report
            .parts
            .iter()
            .chain(std::iter::once(&report))
            .flat_map(|r| &r.timeline)
            .map(|t| t.requests.len())
            .sum::<usize>()
    );
    Ok(())
}

/// Writes the incident's base and the agent's first push into a fresh
/// repository at `dir`.
pub(crate) fn build_repo(dir: &Path) -> anyhow::Result<()> {
    git(dir, &["init", "-q", "-b", "main"])?;
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::create_dir_all(dir.join(".github"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )?;
    std::fs::write(dir.join(".github/retrygate.yml"), CONFIG)?;
    std::fs::write(dir.join(".gitignore"), "replay-*.json\n")?;
    std::fs::write(dir.join(CLIENT_PATH), BEFORE)?;
    git(dir, &["add", "-A"])?;
    git(dir, &["commit", "-q", "-m", "checkout client"])?;
    git(dir, &["checkout", "-q", "-b", PR_BRANCH])?;
    std::fs::write(dir.join(CLIENT_PATH), AGENT_PATCH)?;
    git(
        dir,
        &["commit", "-q", "-am", "Make checkout faster\n\nCo-authored-by: Claude <noreply@anthropic.com>"],
    )?;
    Ok(())
}

/// The agent's second push: the calm patch and the ledger of the session
/// that wrote it, committed with it, or (given `artifact`) written outside
/// the repository and zipped there as the agent's upload step would.
fn calm_push(dir: &Path, artifact: Option<&Path>) -> anyhow::Result<()> {
    let scratch = tempfile::tempdir().context("creating a temp dir")?;
    let ledger = match artifact {
        None => dir.join(LEDGER_PATH),
        Some(_) => scratch.path().join(LEDGER_PATH),
    };
    std::fs::write(dir.join(CLIENT_PATH), CALM_PATCH)?;
    calm_records(&ledger)?;
    if let Some(zip) = artifact {
        zip_ledger(&ledger, zip)?;
    }
    git(dir, &["add", "-A"])?;
    git(dir, &["commit", "-q", "-m", "Honour Retry-After with jitter; keep POST single\n\nCo-authored-by: Claude <noreply@anthropic.com>"])?;
    Ok(())
}

fn obj(pairs: &[(&str, &str)]) -> Value {
    Value::Object(pairs.iter().map(|(k, v)| (k.to_string(), Value::Str(v.to_string()))).collect())
}

/// The session that wrote the calm patch: it read the client, edited it,
/// and ran the tests.
fn calm_records(ledger: &Path) -> anyhow::Result<()> {
    append(
        ledger,
        NewRecord { tool: "read_file".into(), payload: obj(&[("path", CLIENT_PATH)]), sha256: None },
    )?;
    edit_record(ledger, CLIENT_PATH, CALM_PATCH)?;
    append(
        ledger,
        NewRecord { tool: "bash".into(), payload: obj(&[("command", "cargo test")]), sha256: None },
    )?;
    Ok(())
}

fn edit_record(ledger: &Path, path: &str, content: &str) -> anyhow::Result<()> {
    let sha = hex::encode(Sha256::digest(content.as_bytes()));
    append(
        ledger,
        NewRecord { tool: "edit".into(), payload: obj(&[("path", path)]), sha256: Some(Some(sha)) },
    )?;
    Ok(())
}

fn zip_ledger(ledger: &Path, zip: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(ledger).with_context(|| format!("reading {}", ledger.display()))?;
    let zipped =
        retrygate::ledger::artifact::zip_entries(&[(LEDGER_PATH, &bytes)]).context("zipping the ledger")?;
    std::fs::write(zip, zipped).with_context(|| format!("writing {}", zip.display()))
}

/// The agent's third push: the cart read's retry cap, which the client
/// reads at run time from [`TUNING_PATH`], raised to [`TUNED_RETRIES`], with
/// the ledger grown by that edit (committed, or zipped anew as the next
/// run's artifact).
fn tune_push(dir: &Path, artifact: Option<&Path>) -> anyhow::Result<()> {
    let content = format!("{TUNED_RETRIES}\n");
    std::fs::write(dir.join(TUNING_PATH), &content)?;
    match artifact {
        None => edit_record(&dir.join(LEDGER_PATH), TUNING_PATH, &content)?,
        Some(zip) => {
            let scratch = tempfile::tempdir().context("creating a temp dir")?;
            let ledger = scratch.path().join(LEDGER_PATH);
            calm_records(&ledger)?;
            edit_record(&ledger, TUNING_PATH, &content)?;
            zip_ledger(&ledger, zip)?;
        }
    }
    git(dir, &["add", "-A"])?;
    git(
        dir,
        &[
            "commit",
            "-q",
            "-m",
            "Let the cart read ride out longer 429 bursts\n\nCo-authored-by: Claude <noreply@anthropic.com>",
        ],
    )?;
    Ok(())
}

/// Act 3's replay: the same client and scenarios on the head and, in a
/// worktree beside it, on `main`, compared per operation.
fn differential_replay(
    repo: &Path,
    exe: &Path,
    client: &[&str],
    commit: &str,
    out: &Path,
) -> anyhow::Result<()> {
    let base_sha = rev(repo, "main")?;
    let head = client_options(repo, exe, client, commit, Duration::from_secs(30));
    let worktree = BaseWorktree::add(repo, &base_sha)?;
    let base = ReplayOptions {
        cwd: Some(worktree.path().to_path_buf()),
        commit: Some(base_sha.clone()),
        ..head.clone()
    };
    let list = LoadedScenario::resolve_list(SCENARIOS)?;
    let report = run_differential_blocking(&head, Ok(&base), &base_sha, &list, None)?;
    drop(worktree);
    std::fs::write(out, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("writing {}", out.display()))?;
    if let Some(c) = &report.comparison {
        for f in &c.findings {
            println!("  {} (seen in the replay, [{}]): {}", f.kind.id(), f.scenario, f.message);
        }
    }
    println!("  replay verdict: {:?}\n", report.verdict);
    Ok(())
}

fn rev(dir: &Path, name: &str) -> anyhow::Result<String> {
    Ok(git(dir, &["rev-parse", name])?.trim().to_string())
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=retrygate demo",
            "-c",
            "user.email=demo@retrygate.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .context("running git (is it installed and on PATH?)")?;
    if !out.status.success() {
        bail!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
