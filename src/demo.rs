//! `retrygate demo`: the checkout incident, replayed offline.

use crate::cli::Exit;

#[derive(Debug, clap::Args)]
pub struct DemoArgs {}

pub fn run(_args: DemoArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("demo not built yet")
}
