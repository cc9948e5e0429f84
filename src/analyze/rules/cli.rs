//! Command line of `retrygate rules`.

use crate::cli::Exit;

#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    /// Arguments (not yet built).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: RulesArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("retrygate rules is not available in this build yet")
}
