//! Command line of `retrygate ledger`: `verify`, `append`, `show`, `hook`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use retrygate::config::Config;
use retrygate::ledger::append::{append, hash_file, repo_relative, NewRecord};
use retrygate::ledger::hook::{run_hook, Agent, HookDecision, HookEnv, HookError, MAX_INPUT_BYTES};
use retrygate::ledger::lines::ReadLimits;
use retrygate::ledger::pyjson::{self, Value};
use retrygate::ledger::show;
use retrygate::ledger::verify::{self, ChangeTarget};

use super::Exit;

#[derive(Debug, Args)]
pub(crate) struct LedgerArgs {
    #[command(subcommand)]
    pub command: LedgerCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum LedgerCommand {
    /// Verify a ledger: digests, chain, time order, paths, and coverage of a change.
    Verify(VerifyArgs),
    /// Append a v2 record (locked, one whole line).
    Append(AppendArgs),
    /// Print the timeline: time, tool, digest, path or summary.
    Show(ShowArgs),
    /// Act as an agent tool hook (reads the hook JSON on stdin).
    Hook(HookArgs),
}

/// Output format of `verify` and `show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LedgerFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The ledger file (JSON Lines).
    #[arg(long)]
    pub ledger: PathBuf,
    /// The repository whose change the ledger must explain.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// The branch or commit the pull request targets; enables the coverage check.
    #[arg(long)]
    pub base: Option<String>,
    /// The pull request's head commit (default: HEAD).
    #[arg(long, requires = "base")]
    pub head: Option<String>,
    /// `json` prints the report the gate uses.
    #[arg(long, value_enum, default_value = "text")]
    pub format: LedgerFormat,
}

#[derive(Debug, Args)]
pub(crate) struct AppendArgs {
    /// The tool that was called (e.g. `edit`, `Bash`).
    #[arg(long)]
    pub tool: String,
    /// The file the call edited; its SHA-256 on disk now is recorded.
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// The call's arguments as a JSON object.
    #[arg(long)]
    pub payload: Option<String>,
    /// The ledger (default: the config's ledger.path under the repository root).
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// The repository (default: the one containing the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The ledger (default: the config's ledger.path under the repository root).
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// `json` prints one object per record.
    #[arg(long, value_enum, default_value = "text")]
    pub format: LedgerFormat,
}

/// The agents whose hook protocol `ledger hook` speaks: the library's
/// [`Agent`], as the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentArg {
    Claude,
    Codex,
    Cursor,
}

impl From<AgentArg> for Agent {
    fn from(a: AgentArg) -> Agent {
        match a {
            AgentArg::Claude => Agent::Claude,
            AgentArg::Codex => Agent::Codex,
            AgentArg::Cursor => Agent::Cursor,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// The agent whose hook protocol to speak.
    #[arg(value_enum)]
    pub agent: AgentArg,
    /// The ledger (default: the config's ledger.path under the repository root).
    #[arg(long)]
    pub ledger: Option<PathBuf>,
}

/// Runs a `retrygate ledger` command.
pub(crate) fn run(args: LedgerArgs) -> anyhow::Result<Exit> {
    match args.command {
        LedgerCommand::Verify(a) => run_verify(a),
        LedgerCommand::Append(a) => run_append(a),
        LedgerCommand::Show(a) => run_show(a),
        LedgerCommand::Hook(a) => run_hook_cmd(a),
    }
}

fn print_out(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn run_verify(a: VerifyArgs) -> anyhow::Result<Exit> {
    let target = match &a.base {
        Some(base) => {
            let mut t = ChangeTarget::from_git(&a.repo, base, a.head.as_deref().unwrap_or("HEAD"))?;
            // A ledger committed with the change is not itself an edit to explain.
            let root = current_root(Some(&a.repo))?;
            if let Ok(rel) = repo_relative(&root, &std::env::current_dir()?, &a.ledger) {
                t.exclude(&rel);
            }
            Some(t)
        }
        None => None,
    };
    let report = verify::verify(&a.ledger, target.as_ref())?;
    match a.format {
        LedgerFormat::Text => print_out(&retrygate::ledger::render::render_text(&report))?,
        LedgerFormat::Json => print_out(&format!("{}\n", serde_json::to_string_pretty(&report)?))?,
    }
    Ok(if report.valid { Exit::Pass } else { Exit::Fail })
}

/// The repository root for the current directory (or `--repo`).
fn current_root(repo: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match repo {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir()?,
    };
    let root = retrygate::changeset::Git::open(&dir)
        .and_then(|g| g.run(&["rev-parse", "--show-toplevel"]))
        .ok()
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or(dir);
    Ok(root)
}

fn default_ledger(root: &Path) -> anyhow::Result<PathBuf> {
    let config = Config::load_from_worktree(root)?;
    Ok(root.join(config.ledger.path))
}

fn run_append(a: AppendArgs) -> anyhow::Result<Exit> {
    let root = current_root(a.repo.as_deref())?;
    let ledger = match a.ledger {
        Some(l) => l,
        None => default_ledger(&root)?,
    };
    let mut payload = match &a.payload {
        Some(text) => pyjson::parse(text).map_err(|e| anyhow::anyhow!("--payload is not JSON: {e}"))?,
        None => Value::Object(Vec::new()),
    };
    let mut sha256 = None;
    if let Some(p) = &a.path {
        let cwd = std::env::current_dir()?;
        let rel = repo_relative(&root, &cwd, p).map_err(|why| anyhow::anyhow!("--path: {why}"))?;
        let hash = hash_file(&root.join(&rel)).map_err(|e| anyhow::anyhow!("cannot hash {rel}: {e}"))?;
        match &mut payload {
            Value::Object(members) => {
                if members.iter().any(|(k, _)| k == "path") {
                    anyhow::bail!("--payload already has a \"path\"; give the path once, with --path");
                }
                members.insert(0, ("path".to_string(), Value::Str(rel)));
            }
            other => anyhow::bail!("--payload must be a JSON object, got {}", other.type_name()),
        }
        sha256 = Some(hash);
    }
    let done = append(&ledger, NewRecord { tool: a.tool, payload, sha256 })?;
    if done.removed_partial_bytes > 0 {
        eprintln!(
            "retrygate: removed {} bytes of an interrupted earlier write at the end of {}",
            done.removed_partial_bytes,
            ledger.display()
        );
    }
    print_out(&format!("{}: line {} digest {}\n", ledger.display(), done.seq, done.digest))?;
    Ok(Exit::Pass)
}

fn run_show(a: ShowArgs) -> anyhow::Result<Exit> {
    let ledger = match a.ledger {
        Some(l) => l,
        None => default_ledger(&current_root(None)?)?,
    };
    // A FIFO or device would block or never end: refuse it before opening.
    retrygate::bounded::ensure_regular(&ledger)
        .map_err(|e| anyhow::anyhow!("cannot read the ledger {e}; pass --ledger PATH"))?;
    let open = || -> anyhow::Result<std::io::BufReader<std::fs::File>> {
        let file = std::fs::File::open(&ledger).map_err(|e| {
            anyhow::anyhow!("cannot read the ledger {}: {e}; pass --ledger PATH", ledger.display())
        })?;
        let _ = fs4::fs_std::FileExt::lock_shared(&file);
        Ok(std::io::BufReader::with_capacity(1 << 16, file))
    };
    // Streamed: one entry in memory at a time, however long the ledger.
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut unreadable = 0usize;
    let written = match a.format {
        LedgerFormat::Text => {
            // The tool column's width needs every entry: a first pass measures it.
            let mut width = 4usize;
            show::for_each(open()?, ReadLimits::default(), |e| {
                width = width.max(show::tool_width(&e));
                Ok(())
            })?;
            show::for_each(open()?, ReadLimits::default(), |e| {
                unreadable += usize::from(e.error.is_some());
                out.write_all(show::render_line(&e, width).as_bytes())
            })
        }
        LedgerFormat::Json => {
            let mut first = true;
            let r = show::for_each(open()?, ReadLimits::default(), |e| {
                unreadable += usize::from(e.error.is_some());
                let sep = if first { "[\n" } else { ",\n" };
                first = false;
                out.write_all(sep.as_bytes())?;
                out.write_all(show::render_json_element(&e)?.as_bytes())
            });
            r.and_then(|_| out.write_all(if first { b"[]\n" } else { b"\n]\n" }))
        }
    };
    match written.and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    if unreadable > 0 {
        eprintln!(
            "retrygate: {} not readable as records; run `retrygate ledger verify --ledger {}`",
            retrygate::text::plural(unreadable, "line is", "lines are"),
            ledger.display()
        );
        return Ok(Exit::Fail);
    }
    Ok(Exit::Pass)
}

fn run_hook_cmd(a: HookArgs) -> anyhow::Result<Exit> {
    let input = match retrygate::bounded::read_stream(
        std::io::stdin().lock(),
        MAX_INPUT_BYTES as u64,
        "the hook input (stdin)",
    ) {
        Ok(i) => i,
        Err(e) => return Err(HookError::InputTooLarge(e.to_string()).into()),
    };
    let env = HookEnv {
        agent_mutate: std::env::var("AGENT_MUTATE").ok(),
        ledger: a.ledger,
        fallback_dir: std::env::current_dir()?,
    };
    let outcome = run_hook(a.agent.into(), &input, &env)?;
    print_out(&outcome.stdout)?;
    if !outcome.stderr.is_empty() {
        eprint!("{}", outcome.stderr);
    }
    Ok(match outcome.decision {
        HookDecision::Allow => Exit::Pass,
        // 2 is the agents' "block" code; retrygate's Exit::Error is also 2.
        HookDecision::Deny => Exit::Error,
    })
}
