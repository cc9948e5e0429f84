//! Command line of `retrygate ledger`.

use crate::cli::Exit;

#[derive(Debug, clap::Args)]
pub struct LedgerArgs {
    /// Arguments (not yet built).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: LedgerArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("retrygate ledger is not available in this build yet")
}
