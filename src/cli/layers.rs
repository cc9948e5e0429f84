//! `retrygate layers`: every retrying layer one revision declares (client
//! retries, SDK defaults, mesh routes, proxies), linked into operations,
//! each with its worst-case attempts per inbound request and where each
//! layer is declared.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::Exit;

#[derive(Debug, Args)]
pub(crate) struct LayersArgs {
    /// The repository to read (default: the current directory).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// The revision to read.
    #[arg(long, default_value = "HEAD")]
    pub rev: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: LayersFormat,
}

/// `--format` of `layers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LayersFormat {
    Text,
    Json,
}

/// Prints the listing. Exit 0 when every file that could carry retries was
/// read, 1 when one could not be (the listing is incomplete), 2 on an error.
pub(crate) fn run(args: LayersArgs) -> anyhow::Result<Exit> {
    let r = retrygate::analyze::layers::at_revision(&args.repo, &args.rev)?;
    let out = match args.format {
        LayersFormat::Text => retrygate::printer::amplification::layers_text(&r),
        LayersFormat::Json => format!("{:#}\n", retrygate::printer::amplification::layers_json(&r)),
    };
    super::write_raw(out.as_bytes())?;
    Ok(if r.unreadable.is_empty() { Exit::Pass } else { Exit::Fail })
}
