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
    /// Find retry regressions in the change from merge-base(BASE, HEAD) to HEAD
    /// (with the `paths` and `rules` of .github/retrygate.yml at BASE; defaults without one).
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

/// The longest time any `--timeout`-like flag accepts: a day. A replay or a
/// replay command that needs longer is misconfigured, and larger numbers
/// (`1e20`) do not fit the clocks they are added to.
pub const MAX_TIMEOUT_SECS: f64 = 24.0 * 60.0 * 60.0;

/// The one parser of every duration flag (`--timeout`, `--replay-timeout`):
/// seconds as a decimal number, above 0 and at most [`MAX_TIMEOUT_SECS`].
/// `inf`, `NaN`, negative and absurd values are usage errors (exit 2).
pub fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds; write e.g. 60 or 2.5"))?;
    if !secs.is_finite() {
        return Err(format!("'{text}' is not a finite number of seconds; write e.g. 60 or 2.5"));
    }
    if secs <= 0.0 {
        return Err(format!("{text} seconds is not a duration; give a number above 0, e.g. 60"));
    }
    if secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "{text} seconds is more than the {MAX_TIMEOUT_SECS} seconds (one day) retrygate accepts; give a shorter timeout"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
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
    // The one exit boundary: every command ends in 0, 1 or 2, and a panic
    // anywhere on this thread is "could not decide" (2), never Rust's 101.
    // That matters beyond tidiness: Claude Code's PreToolUse treats every
    // exit other than 2 as "go ahead", so a panicking `ledger hook` that
    // exited 101 would wave the edit through.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli.command)));
    match outcome {
        Ok(Ok(exit)) => exit.into(),
        Ok(Err(e)) => {
            eprintln!("retrygate: error: {e:#}");
            Exit::Error.into()
        }
        Err(panic) => {
            eprintln!(
                "retrygate: internal error ({}); this is a bug in retrygate, please report it; the change is treated as blocked (exit 2)",
                panic_message(panic.as_ref())
            );
            Exit::Error.into()
        }
    }
}

/// The message a panic was raised with, for the one-line error.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic")
}

/// Names the command for [`FORCE_PANIC_VAR`].
fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Scan(_) => "scan",
        Command::Check(_) => "check",
        Command::Replay(_) => "replay",
        Command::Ledger(_) => "ledger",
        Command::Rules(_) => "rules",
        Command::Demo(_) => "demo",
        Command::Github(_) => "github",
        Command::Explain { .. } => "explain",
        Command::ReplayClient(_) => "replay-client",
    }
}

/// Exists only for the exit-boundary test (`tests/cli_errors.rs`): when this
/// variable names the command being run (`scan`, `check`, `ledger`,
/// `github`, ...), the binary panics inside that command, so the test can
/// see the panic become exit 2. Nothing else reads it, and no real input can
/// reach a panic this way.
pub const FORCE_PANIC_VAR: &str = "RETRYGATE_TEST_FORCE_PANIC";

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// Runs one command. Errors become exit 2 in [`main`].
pub fn run(command: Command) -> anyhow::Result<Exit> {
    if std::env::var(FORCE_PANIC_VAR).is_ok_and(|v| v == command_name(&command)) {
        panic!("{FORCE_PANIC_VAR} asked for a panic in `{}`", command_name(&command));
    }
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

/// The scan as a [`Report`]: the config from the base commit (as `check`
/// reads it; the defaults when the base has none), the change set, then
/// every analyzer as that config shapes them.
pub fn scan_report(range: &RangeArgs) -> anyhow::Result<Report> {
    let cs = ChangeSet::from_git(&range.repo, &range.base, &range.head)?;
    let git = crate::changeset::Git::open(&range.repo)?;
    let base_sha = git.resolve_commit(&range.base)?;
    let base = crate::gate::facts::config_at_base(&git, &base_sha)?;
    let outcome = crate::gate::scan_with_config(&git, &base_sha, &base.config, &cs)?;
    Ok(Report::from_scan(outcome.findings, outcome.notes))
}

/// Runs the bundled analyzers over a change set with the default config.
pub fn scan_changeset(cs: &ChangeSet) -> anyhow::Result<Report> {
    let rust = analyze::rust::RustAnalyzer::for_changeset(cs);
    let packs = analyze::rules::RulePackAnalyzer::bundled()?.with_head(cs);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_accept_decimals_and_refuse_what_no_clock_holds() {
        assert_eq!(parse_seconds("60").unwrap(), std::time::Duration::from_secs(60));
        assert_eq!(parse_seconds("0.25").unwrap(), std::time::Duration::from_millis(250));
        assert_eq!(parse_seconds("86400").unwrap(), std::time::Duration::from_secs(86_400));
        for (bad, why) in [
            ("1e20", "more than the 86400 seconds (one day)"),
            ("1e19", "more than the 86400 seconds"),
            ("86400.5", "more than the 86400 seconds"),
            ("inf", "not a finite number"),
            ("NaN", "not a finite number"),
            ("-5", "not a duration"),
            ("0", "not a duration"),
            ("soon", "not a number of seconds"),
        ] {
            let err = parse_seconds(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
