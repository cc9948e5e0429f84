//! `retrygate completions SHELL` and `retrygate man`: shell completions and
//! the man page, generated from the same clap definitions `--help` reads
//! (clap_complete and clap_mangen), so they never disagree with the flags.

use clap::{Args, CommandFactory};

use super::{Cli, Exit};

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes the completion script for `shell` to stdout.
pub(crate) fn completions(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "retrygate", &mut buf);
    super::write_raw(&buf)?;
    Ok(Exit::Pass)
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// A subcommand's page (`retrygate man scan`); the top-level page, which
    /// lists every subcommand, when omitted.
    pub command: Option<String>,
}

/// Writes a man page (roff) to stdout: `retrygate`'s, or a subcommand's as
/// `retrygate-NAME(1)`.
pub(crate) fn man(args: ManArgs) -> anyhow::Result<Exit> {
    let cmd = Cli::command();
    let page = match &args.command {
        None => cmd,
        Some(name) => {
            let visible: Vec<&str> =
                cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name()).collect();
            let Some(sub) = cmd.find_subcommand(name).filter(|s| !s.is_hide_set()) else {
                anyhow::bail!("no subcommand '{name}'; man pages exist for: {}", visible.join(", "));
            };
            sub.clone().name(format!("retrygate-{name}"))
        }
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(page).render(&mut buf)?;
    super::write_raw(&buf)?;
    Ok(Exit::Pass)
}
