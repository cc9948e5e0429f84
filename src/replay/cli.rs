//! Command line of `retrygate replay`.

use crate::cli::Exit;

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Arguments (not yet built).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: ReplayArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("retrygate replay is not available in this build yet")
}
