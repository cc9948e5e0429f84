//! The binary's command line: every flag and subcommand (clap), and the
//! one mapping from library results to exit codes: 0 pass, 1 blocked/failed,
//! 2 could not decide (usage or internal error).
//!
//! This is a module of the binary (`src/main.rs` declares it; `src/lib.rs`
//! does not), not a `src/bin/` target or a crate of its own: one package
//! keeps `cargo install retrygate` and `CARGO_BIN_EXE_retrygate` as they
//! were, and the library cannot reach this module, so library code can
//! neither import [`Exit`] nor depend on clap (`tests/it/binary_boundary.rs`
//! checks the library's sources for it). Library functions return verdicts,
//! outcomes and errors; the functions here print them and choose the code.
//!
//! - [`check`], [`ledger`], [`replay`], [`rules`], [`github`]: one
//!   subcommand each (flags to library inputs, results to an [`Exit`]);
//! - [`demo`]: `retrygate demo`, the checkout incident end to end, offline;
//! - [`replay_client`]: the hidden `replay-client`, the built-in example
//!   clients the demo and the tests replay.

pub(crate) mod check;
pub(crate) mod config;
pub(crate) mod demo;
pub(crate) mod generate;
pub(crate) mod github;
pub(crate) mod layers;
pub(crate) mod ledger;
pub(crate) mod replay;
pub(crate) mod replay_client;
pub(crate) mod rules;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use retrygate::finding::Kind;
use retrygate::printer::{self, Format, GateVerdict, Verdict};

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

/// The exit codes every verdict command shares, shown under `--help`.
pub(crate) const EXIT_CODES_HELP: &str = "Exit codes: 0 pass, 1 blocked (or the replay failed), 2 could not decide (a usage error, unreadable input, an internal error). 2 never means pass: the Action fails the check on it.";

#[derive(Debug, Parser)]
#[command(
    name = "retrygate",
    version,
    about = "A merge gate for pull requests that make retries more dangerous",
    after_help = EXIT_CODES_HELP
)]
pub(crate) struct Cli {
    /// When to colour the output: auto (a terminal, unless NO_COLOR is set),
    /// always, or never.
    #[arg(long, value_enum, global = true, default_value = "auto", env = "RETRYGATE_COLOR")]
    pub color: ColorArg,
    #[command(subcommand)]
    pub command: Command,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorArg {
    Auto,
    Always,
    Never,
}

impl ColorArg {
    /// Whether to colour: `always`/`never` as said; `auto` colours a
    /// terminal unless `NO_COLOR` is set to anything non-empty
    /// (no-color.org).
    pub(crate) fn enabled(self, is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        match self {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => is_terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Find retry regressions in the change from merge-base(BASE, HEAD) to HEAD
    /// (with the `paths` and `rules` of .github/retrygate.yml at BASE; defaults without one).
    #[command(after_help = "Exit codes: 0 no blocking finding, 1 blocking findings, 2 could not decide.")]
    Scan(ScanArgs),
    /// The full verdict for a change: scan, ledger, replay, policy (config from the base), sign-off.
    #[command(after_help = EXIT_CODES_HELP)]
    Check(check::CheckArgs),
    /// Run a command against the loopback 429 server and judge it from the server's journal.
    #[command(after_help = "Exit codes: 0 the replay passed, 1 it failed, 2 it could not run.")]
    Replay(replay::ReplayArgs),
    /// Write, show and verify the agent's tool-call ledger.
    Ledger(ledger::LedgerArgs),
    /// Work with the YAML rule packs.
    Rules(rules::RulesArgs),
    /// Replay the checkout incident end to end, offline, in a temporary repository.
    Demo(demo::DemoArgs),
    /// The GitHub Action's entrypoint: read the event, compute the verdict, publish it.
    #[command(
        after_help = "Exit codes: 0 a pass that reached the commit, 1 blocked (the job fails too), 2 could not decide or publish."
    )]
    Github(github::GithubArgs),
    /// Check the retrygate config before a pull request relies on it.
    Config(config::ConfigArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(generate::CompletionsArgs),
    /// Print the man page (roff), or a subcommand's.
    Man(generate::ManArgs),
    /// List every retrying layer a revision declares (client, SDK, mesh, proxy), linked into
    /// operations, with each operation's worst-case attempts per inbound request.
    #[command(
        after_help = "Exit codes: 0 listed, 1 a file that could declare retries could not be read (the listing is incomplete), 2 could not run."
    )]
    Layers(layers::LayersArgs),
    /// Explain a finding kind (What it flags / Why it matters / Example / Use instead).
    Explain {
        /// A finding kind such as `jitter-removed`, or a Rust check id such as `rust/backon-jitter`; all kinds when omitted.
        kind: Option<String>,
        /// Print the README's Markdown table of all kinds instead.
        #[arg(long, conflicts_with = "kind")]
        markdown: bool,
    },
    /// A built-in example HTTP client for the replay (storm, calm, compliant, reference).
    #[command(hide = true, name = "replay-client")]
    ReplayClient(replay_client::ClientArgs),
}

/// The revision range and output options shared by `scan` (and later `check`).
#[derive(Debug, Args, Clone)]
pub(crate) struct RangeArgs {
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
pub(crate) struct ScanArgs {
    #[command(flatten)]
    pub range: RangeArgs,
    /// Output format (default: text, on a terminal or not).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
}

/// `--format` of `scan`, `check` and `demo`: the library's [`Format`], as
/// the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    Markdown,
    Sarif,
    Github,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Sarif => Format::Sarif,
            FormatArg::Github => Format::Github,
        }
    }
}

/// Entry point of the binary.
pub(crate) fn main() -> ExitCode {
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
    let color = cli.color.enabled(std::io::stdout().is_terminal(), std::env::var_os("NO_COLOR").as_deref());
    COLOR.store(color, std::sync::atomic::Ordering::Relaxed);
    init_tracing(cli.color.enabled(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR").as_deref()));
    // The one exit boundary: every command ends in 0, 1 or 2, and a panic
    // anywhere on this thread is "could not decide" (2), never Rust's 101.
    // That matters beyond tidiness: Claude Code's PreToolUse treats every
    // exit other than 2 as "go ahead", so a panicking `ledger hook` that
    // exited 101 would wave the edit through.
    match retrygate::text::catch_panic(|| run(cli.command)) {
        Ok(Ok(exit)) => exit.into(),
        Ok(Err(e)) => {
            eprintln!("retrygate: error: {e:#}");
            Exit::Error.into()
        }
        Err(panicked) => {
            eprintln!("retrygate: {panicked} (exit 2)");
            Exit::Error.into()
        }
    }
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
        Command::Layers(_) => "layers",
        Command::ReplayClient(_) => "replay-client",
        Command::Config(_) => "config",
        Command::Completions(_) => "completions",
        Command::Man(_) => "man",
    }
}

/// Exists only for the exit-boundary test (`tests/it/exit_boundary.rs`): when this
/// variable names the command being run (`scan`, `check`, `ledger`,
/// `github`, ...), the binary panics inside that command, so the test can
/// see the panic become exit 2. Nothing else reads it, and no real input can
/// reach a panic this way.
pub(crate) const FORCE_PANIC_VAR: &str = "RETRYGATE_TEST_FORCE_PANIC";

fn init_tracing(ansi: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
}

/// Runs one command. Errors become exit 2 in [`main`].
pub(crate) fn run(command: Command) -> anyhow::Result<Exit> {
    if std::env::var(FORCE_PANIC_VAR).is_ok_and(|v| v == command_name(&command)) {
        panic!("{FORCE_PANIC_VAR} asked for a panic in `{}`", command_name(&command));
    }
    match command {
        Command::Scan(args) => {
            let report = retrygate::scan::scan_report(&args.range.repo, &args.range.base, &args.range.head)?;
            let format = args.format.map_or_else(default_format, Format::from);
            emit(&report, format)?;
            Ok(report.verdict.into())
        }
        Command::Check(args) => check::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Ledger(args) => ledger::run(args),
        Command::Rules(args) => rules::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Github(args) => github::run(args),
        Command::Layers(args) => layers::run(args),
        Command::Explain { markdown: true, .. } => {
            print!("{}", retrygate::finding::kinds_markdown_table());
            Ok(Exit::Pass)
        }
        Command::Explain { kind, .. } => explain(kind.as_deref()),
        Command::ReplayClient(args) => replay_client::run(args),
        Command::Config(args) => config::run(args),
        Command::Completions(args) => generate::completions(args),
        Command::Man(args) => generate::man(args),
    }
}

/// Text, whether or not stdout is a terminal (as ripgrep, ruff and Semgrep
/// do): a report piped to `less` or a CI log is still read by a person.
/// Programs ask for `--format json`.
pub(crate) fn default_format() -> Format {
    Format::Text
}

/// Renders to stdout; a closed pipe is not an error worth a stack of messages.
pub(crate) fn emit(report: &GateVerdict, format: Format) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    printer::render(report, format, &mut buf)?;
    write_stdout(&buf, format)
}

/// Whether `--color` (with `NO_COLOR` and the terminal) asked for colour;
/// set once in [`main`].
static COLOR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes a rendering to stdout, painting the text format when colour is on
/// (only the text format: JSON, SARIF and Markdown are read by programs).
/// A closed pipe is not an error.
pub(crate) fn write_stdout(bytes: &[u8], format: Format) -> anyhow::Result<()> {
    let painted;
    let bytes = if format == Format::Text && COLOR.load(std::sync::atomic::Ordering::Relaxed) {
        painted = paint(&String::from_utf8_lossy(bytes));
        painted.as_bytes()
    } else {
        bytes
    };
    write_raw(bytes)
}

/// Writes bytes to stdout as they are; a closed pipe (`| head`) is not an
/// error.
pub(crate) fn write_raw(bytes: &[u8]) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match lock.write_all(bytes).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// ANSI colour for the text format: each finding's severity and the
/// verdict word. The text printer escapes every control character that
/// comes from the pull request, so the only escapes here are these.
pub(crate) fn paint(text: &str) -> String {
    const RED: &str = "\x1b[1;31m";
    const YELLOW: &str = "\x1b[33m";
    const CYAN: &str = "\x1b[36m";
    const GREEN: &str = "\x1b[1;32m";
    const RESET: &str = "\x1b[0m";
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let painted = if let Some(rest) = line.strip_prefix("retrygate: BLOCK") {
            format!("retrygate: {RED}BLOCK{RESET}{rest}")
        } else if let Some(rest) = line.strip_prefix("retrygate: PASS") {
            format!("retrygate: {GREEN}PASS{RESET}{rest}")
        } else if let Some(rest) = line.strip_prefix("retrygate check: BLOCK") {
            format!("retrygate check: {RED}BLOCK{RESET}{rest}")
        } else if let Some(rest) = line.strip_prefix("retrygate check: PASS") {
            format!("retrygate check: {GREEN}PASS{RESET}{rest}")
        } else {
            let mut l = line.to_string();
            for (word, colour) in [(": error[", RED), (": warning[", YELLOW), (": note[", CYAN)] {
                if let Some(at) = l.find(word) {
                    let name = &word[2..word.len() - 1];
                    l.replace_range(at + 2..at + 2 + name.len(), &format!("{colour}{name}{RESET}"));
                    break;
                }
            }
            l
        };
        out.push_str(&painted);
    }
    out
}

fn explain(kind: Option<&str>) -> anyhow::Result<Exit> {
    if let Some(text) = kind.and_then(retrygate::analyze::rust::checks::explain) {
        print!("{text}");
        return Ok(Exit::Pass);
    }
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
