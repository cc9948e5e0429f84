//! Defines retrygate's command line and maps every outcome to an exit code:
//! 0 pass, 1 blocked/failed, 2 could not decide (usage or internal error).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::analyze::{self, Analyzer};
use crate::changeset::ChangeSet;
use crate::finding::Kind;
use crate::report::{self, Format, Report, Verdict};

/// The three outcomes every command maps onto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Pass = 0,
    Fail = 1,
    Error = 2,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

impl From<Verdict> for Exit {
    fn from(v: Verdict) -> Exit {
        match v {
            Verdict::Pass => Exit::Pass,
            Verdict::Block => Exit::Fail,
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "retrygate",
    version,
    about = "A merge gate for pull requests that make retries more dangerous"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find retry regressions in the change from merge-base(BASE, HEAD) to HEAD.
    Scan(ScanArgs),
    /// The full verdict for a change: scan, ledger, replay, policy (config from the base), sign-off.
    Check(crate::gate::cli::CheckArgs),
    /// Run a command against the loopback 429 server and judge it from the server's journal.
    Replay(crate::replay::cli::ReplayArgs),
    /// Write, show and verify the agent's tool-call ledger.
    Ledger(crate::ledger::cli::LedgerArgs),
    /// Work with the YAML rule packs.
    Rules(crate::analyze::rules::cli::RulesArgs),
    /// Replay the checkout incident end to end, offline, in a temporary repository.
    Demo(crate::demo::DemoArgs),
    /// The GitHub Action's entrypoint: read the event, compute the verdict, publish it.
    Github(crate::github::GithubArgs),
    /// Explain a finding kind (What it flags / Why it matters / Example / Use instead).
    Explain {
        /// A finding kind such as `jitter-removed`; all kinds when omitted.
        kind: Option<String>,
        /// Print the README's Markdown table of all kinds instead.
        #[arg(long, conflicts_with = "kind")]
        markdown: bool,
    },
    /// A built-in example HTTP client for the replay (storm, calm, compliant, reference).
    #[command(hide = true, name = "replay-client")]
    ReplayClient(crate::replay::clients::ClientArgs),
}

/// The revision range and output options shared by `scan` (and later `check`).
#[derive(Debug, Args, Clone)]
pub struct RangeArgs {
    /// The repository to read (default: the current directory).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// The branch or commit the pull request targets.
    #[arg(long)]
    pub base: String,
    /// The pull request's head commit.
    #[arg(long, default_value = "HEAD")]
    pub head: String,
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub range: RangeArgs,
    /// Output format (default: text on a terminal, json otherwise).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    init_tracing();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => Exit::Error.into(),
            };
        }
    };
    match run(cli.command) {
        Ok(exit) => exit.into(),
        Err(e) => {
            eprintln!("retrygate: error: {e:#}");
            Exit::Error.into()
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// Runs one command. Errors become exit 2 in [`main`].
pub fn run(command: Command) -> anyhow::Result<Exit> {
    match command {
        Command::Scan(args) => {
            let report = scan_report(&args.range)?;
            let format = args.format.unwrap_or_else(default_format);
            emit(&report, format)?;
            Ok(report.verdict.into())
        }
        Command::Check(args) => crate::gate::cli::run(args),
        Command::Replay(args) => crate::replay::cli::run(args),
        Command::Ledger(args) => crate::ledger::cli::run(args),
        Command::Rules(args) => crate::analyze::rules::cli::run(args),
        Command::Demo(args) => crate::demo::run(args),
        Command::Github(args) => crate::github::run_cli(args),
        Command::Explain { markdown: true, .. } => {
            print!("{}", crate::finding::kinds_markdown_table());
            Ok(Exit::Pass)
        }
        Command::Explain { kind, .. } => explain(kind.as_deref()),
        Command::ReplayClient(args) => crate::replay::clients::run(args),
    }
}

/// The scan as a [`Report`]: change set, then every analyzer.
pub fn scan_report(range: &RangeArgs) -> anyhow::Result<Report> {
    let cs = ChangeSet::from_git(&range.repo, &range.base, &range.head)?;
    scan_changeset(&cs)
}

/// Runs the bundled analyzers over a change set.
pub fn scan_changeset(cs: &ChangeSet) -> anyhow::Result<Report> {
    let rust = analyze::rust::RustAnalyzer::for_changeset(cs);
    let packs = analyze::rules::RulePackAnalyzer::bundled()?;
    let analyzers: [&dyn Analyzer; 2] = [&rust, &packs];
    let outcome = analyze::scan(cs, &analyzers);
    Ok(Report::from_scan(outcome.findings, outcome.notes))
}

pub fn default_format() -> Format {
    if std::io::stdout().is_terminal() {
        Format::Text
    } else {
        Format::Json
    }
}

/// Renders to stdout; a closed pipe is not an error worth a stack of messages.
pub fn emit(report: &Report, format: Format) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match report::render(report, format, &mut lock).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn explain(kind: Option<&str>) -> anyhow::Result<Exit> {
    let kinds: Vec<Kind> = match kind {
        None => Kind::ALL.to_vec(),
        Some(id) => match Kind::parse(id) {
            Some(k) => vec![k],
            None => {
                let known: Vec<&str> = Kind::ALL.iter().map(|k| k.id()).collect();
                anyhow::bail!("unknown finding kind '{id}'; known kinds: {}", known.join(", "));
            }
        },
    };
    let mut out = String::new();
    for k in kinds {
        let d = k.doc();
        out.push_str(&format!(
            "{} (default severity: {})\n  What it flags: {}\n  Why it matters: {}\n  Example: {}\n  Use instead: {}\n\n",
            k.id(),
            k.default_severity(),
            d.what,
            d.why,
            d.example,
            d.use_instead
        ));
    }
    print!("{out}");
    Ok(Exit::Pass)
}
