//! `retrygate demo`: the checkout incident, replayed offline.
//!
//! It builds a throwaway git repository in a temporary directory: `main`
//! holds the checkout client as it was before the incident, and the branch
//! `claude/faster-checkout` holds the coding agent's patch. Then it runs the
//! same scan `retrygate scan` runs and prints what a maintainer would see.
//! Everything it needs is embedded in the binary.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};

use crate::changeset::ChangeSet;
use crate::cli::Exit;
use crate::report::{self, Format, Verdict};

/// The client before the incident.
pub const BEFORE: &str = include_str!("../examples/checkout-incident/before.rs");
/// The agent's "make checkout faster" patch.
pub const AGENT_PATCH: &str = include_str!("../examples/checkout-incident/agent_patch.rs");

const CLIENT_PATH: &str = "src/checkout.rs";
const PR_BRANCH: &str = "claude/faster-checkout";

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Output format of the scan it shows.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Keep the temporary repository and print its path.
    #[arg(long)]
    pub keep: bool,
}

pub fn run(args: DemoArgs) -> anyhow::Result<Exit> {
    let dir = tempfile::Builder::new().prefix("retrygate-demo-").tempdir().context("creating a temp dir")?;
    let repo = dir.path();
    build_repo(repo)?;
    println!("retrygate demo: the checkout incident, offline\n");
    println!("  repository  {}", repo.display());
    println!("  base        main: {CLIENT_PATH} with a 2.5 s timeout, 2 jittered retries, POST /checkout sent once");
    println!("  pull request {PR_BRANCH}: the agent's patch (800 ms timeout, 6 retries, 10 ms constant sleep, POST retried)\n");
    println!("$ retrygate scan --repo {} --base main --head {PR_BRANCH}\n", repo.display());

    let cs = ChangeSet::from_git(repo, "main", PR_BRANCH)?;
    let report = crate::cli::scan_changeset(&cs)?;
    let mut out = std::io::stdout().lock();
    report::render(&report, args.format, &mut out)?;
    let exit = Exit::from(report.verdict);
    println!(
        "\nexit code {} ({})",
        exit as u8,
        if report.verdict == Verdict::Block { "blocked" } else { "passed" }
    );

    if args.keep {
        let kept = dir.keep();
        println!("kept the repository at {}", kept.display());
    }
    if report.verdict != Verdict::Block {
        bail!("the demo expected the agent's patch to be blocked, but the scan passed; this is a bug in retrygate");
    }
    Ok(Exit::Pass)
}

/// Writes the incident's two commits into a fresh repository at `dir`.
pub fn build_repo(dir: &Path) -> anyhow::Result<()> {
    git(dir, &["init", "-q", "-b", "main"])?;
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )?;
    std::fs::write(dir.join(CLIENT_PATH), BEFORE)?;
    git(dir, &["add", "-A"])?;
    git(dir, &["commit", "-q", "-m", "checkout client"])?;
    git(dir, &["checkout", "-q", "-b", PR_BRANCH])?;
    std::fs::write(dir.join(CLIENT_PATH), AGENT_PATCH)?;
    git(
        dir,
        &["commit", "-q", "-am", "Make checkout faster\n\nCo-authored-by: Claude <noreply@anthropic.com>"],
    )?;
    Ok(())
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=retrygate demo",
            "-c",
            "user.email=demo@retrygate.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .context("running git (is it installed and on PATH?)")?;
    if !out.status.success() {
        bail!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}
