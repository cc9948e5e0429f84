//! Command line of `retrygate check`: flags to a [`CheckInput`], the
//! verdict to stdout, the verdict to an exit code (0 pass, 1 blocked,
//! 2 could not decide).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use retrygate::decision::SignOffRequest;
use retrygate::gate::{check, CheckInput};
use retrygate::printer::Format;

use super::{default_format, Exit, FormatArg, RangeArgs};

/// `retrygate check [--repo DIR] --base REV [--head REV] [--ledger PATH | --ledger-artifact ZIP]
/// [--replay-report PATH] [--agent|--human] [--author LOGIN] [--label L]...
/// [--sign-off SHA] [--format F]`
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub range: RangeArgs,
    /// The tool-call ledger (default: ledger.path of the base config as committed at the head,
    /// else the --ledger-artifact zip, else ledger.path in the working tree).
    #[arg(long)]
    pub ledger: Option<PathBuf>,
    /// The zip of the ledger artifact (ledger.artifact) downloaded from the agent's workflow run:
    /// what the Action finds through the artifacts API. A ledger committed at the head still wins.
    #[arg(long, value_name = "ZIP", conflicts_with = "ledger")]
    pub ledger_artifact: Option<PathBuf>,
    /// A report written by `retrygate replay --report PATH` on the head commit.
    #[arg(long)]
    pub replay_report: Option<PathBuf>,
    /// Treat the change as an agent's, whatever the facts say.
    #[arg(long, conflicts_with = "human")]
    pub agent: bool,
    /// Treat the change as a person's, whatever the facts say.
    #[arg(long)]
    pub human: bool,
    /// The pull request author's login (matched against agents.logins).
    #[arg(long)]
    pub author: Option<String>,
    /// A label of the pull request (repeatable; matched against agents.labels).
    #[arg(long = "label")]
    pub labels: Vec<String>,
    /// The head branch name (default: the branch --head names, if any).
    #[arg(long)]
    pub head_branch: Option<String>,
    /// A maintainer's sign-off: lifts every block when it names the head commit by its full SHA.
    #[arg(long, value_name = "SHA")]
    pub sign_off: Option<String>,
    /// Who signs off (shown in the verdict).
    #[arg(long, value_name = "LOGIN", requires = "sign_off")]
    pub signed_off_by: Option<String>,
    /// Seconds replay.command may run.
    #[arg(long, default_value = "120", value_parser = retrygate::duration::parse_seconds)]
    pub replay_timeout: Duration,
    /// Prefix of line links in the Markdown, `{head}` standing for the head commit
    /// (default in GitHub Actions: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/{head}).
    #[arg(long, value_name = "URL")]
    pub link_base: Option<String>,
    /// Output format (default: text, on a terminal or not).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
}

/// Runs `retrygate check`.
pub(crate) fn run(args: CheckArgs) -> anyhow::Result<Exit> {
    let input = CheckInput {
        author: args.author,
        labels: args.labels,
        head_branch: args.head_branch,
        forced_agent: if args.agent {
            Some(true)
        } else if args.human {
            Some(false)
        } else {
            None
        },
        ledger: args.ledger,
        ledger_artifact: args.ledger_artifact,
        replay_report: args.replay_report,
        sign_off: args.sign_off.map(|sha| SignOffRequest { sha, by: args.signed_off_by }),
        replay_timeout: Some(args.replay_timeout),
        link_base: args.link_base.or_else(actions_link_base),
        // In a GitHub Actions job: the run and the docs; elsewhere none.
        links: retrygate::printer::Links::from_vars(&|k| std::env::var(k).ok().filter(|v| !v.is_empty())),
        ..CheckInput::new(args.range.repo, &args.range.base, &args.range.head)
    };
    let outcome = check(&input)?;
    if let Some(s) = outcome.gate.sign_off.as_ref().filter(|s| !s.accepted) {
        eprintln!("retrygate: sign-off rejected: {}", s.message);
    }
    let format = args.format.map_or_else(default_format, Format::from);
    let mut buf = Vec::new();
    retrygate::printer::render_checked(&outcome.gate, &outcome.markdown, format, &mut buf)?;
    super::write_stdout(&buf, format)?;
    Ok(outcome.verdict.into())
}

/// Line links to the repository the Action runs for, from the variables
/// every GitHub Actions job has.
fn actions_link_base() -> Option<String> {
    let server = std::env::var("GITHUB_SERVER_URL").ok().filter(|s| !s.is_empty())?;
    let repo = std::env::var("GITHUB_REPOSITORY").ok().filter(|s| s.contains('/'))?;
    Some(format!("{}/{repo}/blob/{{head}}", server.trim_end_matches('/')))
}
