//! Command line of `retrygate github`, the Action's entrypoint: flags and
//! `RETRYGATE_*` variables to [`ActionOptions`], the runner's environment to
//! an [`ActionEnv`], then [`retrygate::github::run`] with the gate, and its
//! [`ActionOutcome`] to an exit code (0 pass, 1 blocked, 2 could not decide).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use retrygate::github::{gate_for, ActionEnv, ActionMode, ActionOptions, ActionOutcome};

use super::Exit;

/// What `retrygate github` does with the event: the library's [`ActionMode`], as
/// the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Compute the verdict and publish it (same-repository pull requests).
    Full,
    /// Compute the verdict and write it to the verdict file, publishing
    /// nothing: the read-only `pull_request` job of the fork-safe split.
    Compute,
    /// The `workflow_run` job: recompute the verdict from the base config
    /// and the head fetched as data, and publish that. The other run's
    /// verdict file only says which pull request it was for; its verdict is
    /// never published.
    Publish,
}

impl From<ModeArg> for ActionMode {
    fn from(m: ModeArg) -> ActionMode {
        match m {
            ModeArg::Full => ActionMode::Full,
            ModeArg::Compute => ActionMode::Compute,
            ModeArg::Publish => ActionMode::Publish,
        }
    }
}

/// `retrygate github` options. Everything else comes from the runner's
/// environment (`GITHUB_*`).
#[derive(Debug, Args, Clone)]
pub struct GithubArgs {
    /// full: compute and publish; compute: write the verdict file only;
    /// publish: on workflow_run, recompute the verdict for the pull request
    /// the verdict file names, and publish it.
    #[arg(long, value_enum, default_value = "full", env = "RETRYGATE_MODE")]
    pub mode: ModeArg,
    /// Where `compute` writes and `publish` reads the verdict.
    #[arg(long, default_value = "retrygate-verdict/verdict.json", env = "RETRYGATE_VERDICT_FILE")]
    pub verdict_file: PathBuf,
    /// Also write the findings as SARIF 2.1.0 to this file.
    #[arg(long, env = "RETRYGATE_SARIF")]
    pub sarif: Option<PathBuf>,
    /// The login the token writes comments as, when `GET /user` cannot say
    /// (a GitHub App token: `<app-slug>[bot]`); default `github-actions[bot]`.
    #[arg(long, env = "RETRYGATE_BOT_LOGIN")]
    pub bot_login: Option<String>,
    /// A report of `retrygate replay --report PATH`: from the replay job's
    /// artifact (full mode) or run earlier in the same read-only job
    /// (compute mode). Publish mode finds it next to the verdict file.
    #[arg(long, env = "RETRYGATE_REPLAY_REPORT")]
    pub replay_report: Option<PathBuf>,
    /// The repository checkout (default: `$GITHUB_WORKSPACE`, else `.`).
    #[arg(long)]
    pub repo: Option<PathBuf>,
}

impl From<GithubArgs> for ActionOptions {
    fn from(a: GithubArgs) -> ActionOptions {
        ActionOptions {
            mode: a.mode.into(),
            verdict_file: a.verdict_file,
            sarif: a.sarif,
            bot_login: a.bot_login,
            replay_report: a.replay_report,
            repo: a.repo,
        }
    }
}

impl From<ActionOutcome> for Exit {
    fn from(o: ActionOutcome) -> Exit {
        match o {
            ActionOutcome::Pass => Exit::Pass,
            ActionOutcome::Block => Exit::Fail,
            ActionOutcome::CouldNotDecide => Exit::Error,
        }
    }
}

/// `retrygate github`: the environment, then [`retrygate::github::run`] with
/// the gate ([`gate_for`]).
pub(crate) fn run(args: GithubArgs) -> anyhow::Result<Exit> {
    let env = ActionEnv::from_env(&args.into())?;
    Ok(retrygate::github::run(&env, &gate_for(&env))?.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_published_pass_exits_0() {
        let codes: Vec<u8> = [ActionOutcome::Pass, ActionOutcome::Block, ActionOutcome::CouldNotDecide]
            .into_iter()
            .map(|o| Exit::from(o) as u8)
            .collect();
        assert_eq!(codes, [0, 1, 2]);
    }

    #[test]
    fn every_mode_flag_names_its_library_mode() {
        let modes: Vec<(String, ActionMode)> = ModeArg::value_variants()
            .iter()
            .map(|m| (m.to_possible_value().unwrap().get_name().to_string(), ActionMode::from(*m)))
            .collect();
        assert_eq!(
            modes,
            [
                ("full".into(), ActionMode::Full),
                ("compute".into(), ActionMode::Compute),
                ("publish".into(), ActionMode::Publish)
            ]
        );
    }
}
