//! `retrygate config validate`: reads `.github/retrygate.yml` the way the
//! gate will and says whether it holds, before a pull request finds out.
//!
//! Exit 0 when the config is valid (or absent: the defaults apply), 1 when
//! it is invalid (the one-line error names the file, line and key, and what
//! to change), 2 when it cannot be read at all (no such file given, a
//! revision git cannot resolve).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use retrygate::changeset::Git;
use retrygate::config::{Config, ConfigError, CONFIG_PATH};

use super::Exit;

#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Check a retrygate config: the working tree's `.github/retrygate.yml`,
    /// a FILE, or the one at a commit (`--rev`, as the gate reads the base's).
    #[command(
        after_help = "Exit codes: 0 valid (or no config: the defaults apply), 1 invalid, 2 could not be read."
    )]
    Validate {
        /// A config file to check instead of `.github/retrygate.yml`.
        #[arg(conflicts_with = "rev")]
        file: Option<PathBuf>,
        /// The repository (default: the current directory).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Check `.github/retrygate.yml` at this commit, as the gate reads
        /// the base of a pull request.
        #[arg(long)]
        rev: Option<String>,
    },
}

pub(crate) fn run(args: ConfigArgs) -> anyhow::Result<Exit> {
    match args.command {
        ConfigCommand::Validate { file, repo, rev } => validate(file, repo, rev),
    }
}

fn validate(file: Option<PathBuf>, repo: PathBuf, rev: Option<String>) -> anyhow::Result<Exit> {
    let (checked, result): (String, Result<Option<Config>, ConfigError>) = match (file, rev) {
        (Some(path), _) => {
            let text = std::fs::read(&path).map_err(|e| {
                anyhow::anyhow!("cannot read {}: {e}; name a config file that exists", path.display())
            })?;
            let name = path.display().to_string();
            let text = String::from_utf8(text).map_err(|_| {
                anyhow::anyhow!("{name} is not UTF-8 text; a retrygate config is YAML, saved as UTF-8")
            })?;
            (name.clone(), Config::from_yaml_str(&text, &name).map(Some))
        }
        (None, Some(rev)) => {
            let git = Git::open(&repo)?;
            let sha = git.resolve_commit(&rev)?;
            // The gate's own reader: the same size limit, the same messages.
            return match Config::at_base(&git, &sha) {
                Ok(base) => {
                    println!("{}: valid", base.source);
                    Ok(Exit::Pass)
                }
                Err(e) => {
                    eprintln!("retrygate: {e:#}");
                    Ok(Exit::Fail)
                }
            };
        }
        (None, None) => {
            let present = repo.join(CONFIG_PATH).exists();
            let loaded = Config::load_from_worktree(&repo);
            (CONFIG_PATH.to_string(), loaded.map(|c| present.then_some(c)))
        }
    };
    match result {
        Ok(Some(_)) => {
            println!("{checked}: valid");
            Ok(Exit::Pass)
        }
        Ok(None) => {
            println!("{checked}: not there; the defaults apply (docs/gate.md, \"Config from the base\", lists them)");
            Ok(Exit::Pass)
        }
        Err(e) => {
            eprintln!("retrygate: {e}");
            Ok(Exit::Fail)
        }
    }
}
