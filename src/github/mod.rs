//! Publishing the verdict on GitHub: `retrygate github`, the Action's
//! entrypoint, and the only module that talks to the GitHub API (through
//! octocrab, with its retry layer compiled out).
//!
//! The decision is not made here: [`action::run`] takes the gate as a
//! parameter (a function from a [`GateRequest`], the pull request's facts,
//! to a [`Publication`]), so the network side is complete and testable on its
//! own, and a laptop computes the same verdict as the Action: the binary
//! passes [`check_gate`], which is [`crate::gate::check`].
//!
//! - [`event`]: the webhook payload, reduced to a [`event::Trigger`];
//! - [`signoff`]: `/retrygate sign-off <full sha>`, parsed as GitHub renders
//!   the comment and judged (pure);
//! - [`retry`]: when a read is retried and how long to wait (pure);
//! - [`client`]: the octocrab client, reads with retries, writes once;
//! - [`check_run`], [`comment`], [`publish`]: the check run, the status, the
//!   sticky comment and auto-merge;
//! - [`review`]: one-click fixes as `suggestion` review comments;
//! - [`summary`]: job summary, step outputs, SARIF, workflow commands;
//! - [`artifact`]: the tool-ledger artifact of the head commit, found and
//!   downloaded for the gate;
//! - [`heads`]: one head commit shared by several pull requests: the
//!   strictest verdict wins (pure);
//! - [`merge_group`]: the verdict of a merge queue's group (pure);
//! - [`action`]: the flow for each event and mode.

pub(crate) mod action;
pub(crate) mod artifact;
pub(crate) mod check_run;
pub(crate) mod client;
pub(crate) mod comment;
pub(crate) mod event;
pub(crate) mod heads;
pub(crate) mod merge_group;
pub(crate) mod publication;
pub(crate) mod publish;
pub(crate) mod retry;
pub(crate) mod review;
pub(crate) mod signoff;
pub(crate) mod summary;
pub(crate) mod text;

use std::path::PathBuf;

pub use action::{run, ActionOutcome};
pub use publication::{Publication, VerdictFile};
pub(crate) use signoff::SignOff;

/// What `retrygate github` does with the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionMode {
    /// Compute the verdict and publish it (same-repository pull requests).
    Full,
    /// Compute the verdict and write it to the verdict file, publishing
    /// nothing: the read-only `pull_request` job of the fork-safe split.
    Compute,
    /// Publish the verdict file another run computed: the `workflow_run` job.
    Publish,
}

/// `retrygate github` options (the binary fills them from its flags and
/// `RETRYGATE_*` variables). Everything else comes from the runner's
/// environment (`GITHUB_*`).
#[derive(Debug, Clone)]
pub struct ActionOptions {
    /// full: compute and publish; compute: write the verdict file only;
    /// publish: publish a verdict file from a workflow_run.
    pub mode: ActionMode,
    /// Where `compute` writes and `publish` reads the verdict.
    pub verdict_file: PathBuf,
    /// Also write the findings as SARIF 2.1.0 to this file.
    pub sarif: Option<PathBuf>,
    /// The login the token writes comments as, when `GET /user` cannot say
    /// (a GitHub App token: `<app-slug>[bot]`); default `github-actions[bot]`.
    pub bot_login: Option<String>,
    /// A report of `retrygate replay --report PATH`: from the replay job's
    /// artifact (full mode) or run earlier in the same read-only job
    /// (compute mode). Publish mode finds it next to the verdict file.
    pub replay_report: Option<PathBuf>,
    /// The repository checkout (default: `$GITHUB_WORKSPACE`, else `.`).
    pub repo: Option<PathBuf>,
}

/// Everything `retrygate github` reads from the runner, gathered once so
/// the flow can be driven without touching the process environment.
#[derive(Debug, Clone)]
pub struct ActionEnv {
    /// `GITHUB_EVENT_NAME`.
    pub event_name: String,
    /// `GITHUB_EVENT_PATH`.
    pub event_path: PathBuf,
    /// `GITHUB_REPOSITORY` (`owner/name`).
    pub repository: String,
    /// `GITHUB_API_URL`.
    pub api_url: String,
    /// `GITHUB_GRAPHQL_URL`; `{api_url}/graphql` when unset.
    pub graphql_url: Option<String>,
    /// `GITHUB_TOKEN` (the Action's `token` input).
    pub token: Option<String>,
    /// The checkout (`GITHUB_WORKSPACE`).
    pub workspace: PathBuf,
    /// `GITHUB_STEP_SUMMARY`.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_OUTPUT`.
    pub output: Option<PathBuf>,
    /// This workflow run's page, linked from the check run and status.
    pub run_url: Option<String>,
    /// `{server}/{owner}/{repo}/blob/{head}`: where line links in the report
    /// point (`{head}` stands for the head commit).
    pub link_base: Option<String>,
    /// The docs at the Action's ref and this run's page, for the comment
    /// ([`crate::printer::Links::from_vars`]).
    pub links: crate::printer::Links,
    /// Which part of the flow this step runs: full, compute or publish.
    pub mode: ActionMode,
    /// Where the judging step writes, and the publishing step reads, the verdict.
    pub verdict_file: PathBuf,
    /// Where to write SARIF for code scanning, if wanted.
    pub sarif: Option<PathBuf>,
    /// The login the token writes comments as (finds the sticky comment).
    pub bot_login: Option<String>,
    /// A replay report to weigh as evidence (the Action's `replay-report`).
    pub replay_report: Option<PathBuf>,
    /// Least time between two writes ([`client::MIN_WRITE_INTERVAL`]).
    pub write_interval: std::time::Duration,
    /// Deadlines and waits of the client (tests shorten them).
    pub timing: Timing,
}

/// The client's deadlines and waits; `None` keeps the default (for the
/// deadlines: `RETRYGATE_REQUEST_DEADLINE`, `RETRYGATE_PUBLISH_DEADLINE`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// Longest wait for one API request, retries included.
    pub request_deadline: Option<std::time::Duration>,
    /// Longest the whole publish may take, counted from its start.
    pub publish_deadline: Option<std::time::Duration>,
    /// [`client::UNKNOWN_WRITE_SETTLE`].
    pub settle: Option<std::time::Duration>,
}

impl ActionEnv {
    /// Reads the runner's environment, with `args` on top.
    pub fn from_env(args: &ActionOptions) -> anyhow::Result<ActionEnv> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let need = |k: &str| {
            var(k).ok_or_else(|| {
                anyhow::anyhow!("{k} is not set; retrygate github runs inside GitHub Actions (see docs/github.md), or set {k} yourself")
            })
        };
        let link_base = match (var("GITHUB_SERVER_URL"), var("GITHUB_REPOSITORY")) {
            (Some(server), Some(repo)) => Some(format!("{server}/{repo}/blob/{{head}}")),
            _ => None,
        };
        let run_url = match (var("GITHUB_SERVER_URL"), var("GITHUB_REPOSITORY"), var("GITHUB_RUN_ID")) {
            (Some(server), Some(repo), Some(id)) => Some(format!("{server}/{repo}/actions/runs/{id}")),
            _ => None,
        };
        let workspace = args
            .repo
            .clone()
            .or_else(|| var("GITHUB_WORKSPACE").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("."));
        let in_workspace = |p: &PathBuf| if p.is_absolute() { p.clone() } else { workspace.join(p) };
        Ok(ActionEnv {
            event_name: need("GITHUB_EVENT_NAME")?,
            event_path: PathBuf::from(need("GITHUB_EVENT_PATH")?),
            repository: need("GITHUB_REPOSITORY")?,
            api_url: var("GITHUB_API_URL").unwrap_or_else(|| client::DEFAULT_API_URL.to_string()),
            graphql_url: var("GITHUB_GRAPHQL_URL"),
            token: var("GITHUB_TOKEN"),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: var("GITHUB_OUTPUT").map(PathBuf::from),
            run_url,
            link_base,
            links: crate::printer::Links::from_vars(&var),
            mode: args.mode,
            verdict_file: in_workspace(&args.verdict_file),
            sarif: args.sarif.as_ref().map(in_workspace),
            bot_login: args.bot_login.clone(),
            replay_report: args.replay_report.as_ref().map(in_workspace),
            write_interval: client::MIN_WRITE_INTERVAL,
            timing: Timing::default(),
            workspace,
        })
    }
}

/// The pull request's facts the gate decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRequest {
    /// `owner/name` of the base repository.
    pub(crate) repository: String,
    /// The checkout holding both commits.
    pub(crate) workspace: PathBuf,
    /// The pull request's number.
    pub pr_number: u64,
    /// The base commit (the event's `pull_request.base.sha`).
    pub base_sha: String,
    /// The base branch: the check run is bound to it as well as to the head
    /// (a pull request retargeted to another branch is judged again).
    pub base_ref: String,
    /// The pull request's head commit (never the merge ref).
    pub head_sha: String,
    pub(crate) author: String,
    pub(crate) author_is_bot: bool,
    /// `Some(false)` judges the change as a person's whatever the facts say
    /// (a merge group: each pull request's evidence was judged on its own).
    pub(crate) forced_agent: Option<bool>,
    pub(crate) labels: Vec<String>,
    pub(crate) head_branch: String,
    /// A maintainer's sign-off, already checked against the current head.
    pub sign_off: Option<SignOff>,
    /// A replay report from the pull request's replay job, if any.
    pub(crate) replay_report: Option<PathBuf>,
    /// Who made that report: always the pull request's own run on GitHub.
    pub replay_report_origin: crate::gate::ReportOrigin,
    /// Whether the replay may run the PR's code here. False when the job
    /// holds a write token (a sign-off comment): the PR's code is data there.
    pub allow_replay: bool,
    /// Prefix of line links in the report (see [`ActionEnv::link_base`]).
    pub(crate) link_base: Option<String>,
    /// The docs, the run, and where the replay report can be downloaded.
    pub(crate) links: crate::printer::Links,
}

impl GateRequest {
    /// The request for pull request `pr`.
    pub(crate) fn for_pr(
        env: &ActionEnv,
        pr: &event::PullRequest,
        sign_off: Option<SignOff>,
        allow_replay: bool,
    ) -> GateRequest {
        GateRequest {
            repository: env.repository.clone(),
            workspace: env.workspace.clone(),
            pr_number: pr.number,
            base_sha: pr.base.sha.clone(),
            base_ref: pr.base.branch.clone(),
            head_sha: pr.head.sha.clone(),
            author: pr.user.login.clone(),
            author_is_bot: pr.user.is_bot(),
            forced_agent: None,
            labels: pr.labels.iter().map(|l| l.name.clone()).collect(),
            head_branch: pr.head.branch.clone(),
            sign_off,
            replay_report: env.replay_report.clone(),
            replay_report_origin: crate::gate::ReportOrigin::PullRequestRun { fork: is_fork(env, pr) },
            allow_replay,
            link_base: env.link_base.clone(),
            links: crate::printer::Links {
                replay_artifact: this_runs_replay_artifact(env),
                ..env.links.clone()
            },
        }
    }
}

/// The artifact of this run that holds the replay report the gate reads:
/// the replay job's `retrygate-replay` (mode `full`), or the
/// `retrygate-verdict` this job uploads (mode `compute`).
fn this_runs_replay_artifact(env: &ActionEnv) -> Option<(String, String)> {
    env.replay_report.as_ref()?;
    let name = match env.mode {
        ActionMode::Full => "retrygate-replay",
        ActionMode::Compute => "retrygate-verdict",
        ActionMode::Publish => return None,
    };
    Some((name.to_string(), env.links.run.clone()?))
}

/// The page of workflow run `run_id` of this repository, when the server is
/// known.
pub(crate) fn run_page(env: &ActionEnv, run_id: u64) -> Option<String> {
    server_url(env).map(|s| format!("{s}/{}/actions/runs/{run_id}", env.repository))
}

/// Whether `pr` comes from another repository than the one the job runs
/// in (a deleted fork counts as a fork).
pub(crate) fn is_fork(env: &ActionEnv, pr: &event::PullRequest) -> bool {
    pr.head.repo.as_ref().map(|r| r.full_name.as_str()) != Some(env.repository.as_str())
}

/// The gate `retrygate github` uses: [`crate::gate::check`] (the same
/// decision as `retrygate check`) on the PR's facts, its Markdown as the
/// check summary and the sticky comment.
pub fn check_gate(req: &GateRequest) -> anyhow::Result<Publication> {
    check_gate_with(req, None)
}

/// The gate of the job `env` describes: [`check_gate`], with the
/// repository's Actions artifacts as a place to look for the ledger when the
/// job has a token ([`artifact::GithubArtifacts`]). Every job that decides
/// (a pull request's, a sign-off's, a publishing job that recomputes) uses it.
pub fn gate_for(env: &ActionEnv) -> impl Fn(&GateRequest) -> anyhow::Result<Publication> {
    let artifacts = env.token.as_deref().map(|token| {
        artifact::GithubArtifacts::new(&env.api_url, token, &env.repository, server_url(env).as_deref())
            .shared()
    });
    move |req: &GateRequest| check_gate_with(req, artifacts.clone())
}

/// `GITHUB_SERVER_URL`, recovered from the line-link prefix
/// `{server}/{owner}/{repo}/blob/{head}`.
fn server_url(env: &ActionEnv) -> Option<String> {
    let suffix = format!("/{}/blob/{{head}}", env.repository);
    env.link_base.as_deref().and_then(|l| l.strip_suffix(&suffix)).map(str::to_string)
}

/// [`check_gate`] with `artifacts` as where Actions artifacts are looked up.
pub(crate) fn check_gate_with(
    req: &GateRequest,
    artifacts: Option<std::sync::Arc<dyn crate::ledger::artifact::ArtifactSource>>,
) -> anyhow::Result<Publication> {
    let input = crate::gate::CheckInput {
        artifacts,
        author: Some(req.author.clone()).filter(|a| !a.is_empty()),
        forced_agent: req.forced_agent,
        labels: req.labels.clone(),
        head_branch: Some(req.head_branch.clone()),
        replay_report: req.replay_report.clone(),
        replay_report_origin: req.replay_report_origin,
        sign_off: req
            .sign_off
            .as_ref()
            .map(|s| crate::decision::SignOffRequest { sha: s.sha.clone(), by: Some(s.by.clone()) }),
        allow_replay_command: req.allow_replay,
        link_base: req.link_base.clone(),
        links: req.links.clone(),
        ..crate::gate::CheckInput::new(&req.workspace, &req.base_sha, &req.head_sha)
    };
    let outcome = crate::gate::check(&input)?;
    let base = publication::BaseBinding { branch: req.base_ref.clone(), sha: req.base_sha.clone() };
    Ok(Publication::from_verdict(&req.head_sha, Some(base), &outcome.gate, outcome.markdown))
}
