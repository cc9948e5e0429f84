//! The flow of `retrygate github` for each event and [`ActionMode`]:
//!
//! | event | full | compute | publish |
//! |---|---|---|---|
//! | `pull_request` | gate, publish | gate, write the verdict file | refused |
//! | `issue_comment` (sign-off) | check the sign-off, gate with it, publish | refused | refused |
//! | `workflow_run` | recompute, publish | refused | recompute, publish |
//! | `merge_group` | judge the group, publish on its commit | refused | refused |
//!
//! **Trust model.** A job that holds a write token (full, publish) runs no
//! pull-request code and trusts nothing the pull request's own run
//! computed: it computes the verdict itself from the base config and the
//! head fetched as data. The one thing it takes from the pull request's run
//! is the replay report (only the PR's code can produce it), labelled as
//! such; for a fork it cannot make the PR pass unless the base config sets
//! `replay.trust_fork_reports: true` ([`crate::gate::ReportOrigin`]). The
//! verdict file a compute job uploads only says which pull request the run
//! was for; its verdict is never published.
//!
//! Every path ends in the job summary and the step outputs, and in an
//! [`ActionOutcome`] that is a pass only for a pass that reached the commit: a
//! block is [`ActionOutcome::Block`], and a verdict that could not be computed or
//! published is [`ActionOutcome::CouldNotDecide`], never a pass (the binary exits
//! 0, 1 and 2 for them).

use std::panic::{catch_unwind, AssertUnwindSafe};

use anyhow::Context;

use super::client::Api;
use super::event::{CompletedRun, MergeGroup, PrComment, PullRequest, Trigger};
use super::merge_group;
use super::publication::{Publication, VerdictFile};
use super::publish::{publish, publish_commit, PrTarget, PublishReport};
use super::signoff::{self, Candidate};
use super::summary;
use super::{ActionEnv, ActionMode, GateRequest};
use crate::config::{Config, SignOffConfig};
use crate::printer::Verdict;

/// Largest event payload read (GitHub caps webhook payloads at 25 MB).
pub(crate) const MAX_EVENT_BYTES: u64 = 25 << 20;

/// How a `retrygate github` job ended. The binary turns it into the exit
/// code: 0 only for [`ActionOutcome::Pass`], a pass that reached the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionOutcome {
    /// A pass, published (or, in compute mode, written), or nothing to do.
    Pass,
    /// A block, or a refused sign-off: a decision, not a failure to decide.
    Block,
    /// No verdict could be computed or published: never a pass.
    CouldNotDecide,
}

/// The gate as `retrygate github` calls it.
pub(crate) type Gate<'a> = dyn Fn(&GateRequest) -> anyhow::Result<Publication> + 'a;

/// Handles the event described by `env`, computing verdicts with `gate`.
pub fn run(env: &ActionEnv, gate: &Gate<'_>) -> anyhow::Result<ActionOutcome> {
    let shown = env.event_path.display().to_string();
    let payload = crate::bounded::read_regular_string(&env.event_path, MAX_EVENT_BYTES)
        .map_err(|e| anyhow::anyhow!("cannot read the event payload {shown} (GITHUB_EVENT_PATH): {e}"))?;
    let trigger = Trigger::parse(&env.event_name, &payload, &shown)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime for the GitHub client")?;
    rt.block_on(flow(env, trigger, gate))
}

async fn flow(env: &ActionEnv, trigger: Trigger, gate: &Gate<'_>) -> anyhow::Result<ActionOutcome> {
    match trigger {
        Trigger::Ignored(why) => nothing_to_do(env, &why),
        Trigger::PullRequest(pr) => match env.mode {
            ActionMode::Publish => anyhow::bail!(
                "--mode publish publishes a verdict file on a workflow_run event, and this is a pull_request event; use --mode compute in the pull_request job (docs/github.md)"
            ),
            ActionMode::Compute => {
                // A read-only job: the replay may run the PR's code here.
                let mut req = GateRequest::for_pr(env, &pr, None, true);
                req.replay_report_origin = crate::gate::ReportOrigin::Caller;
                let (p, decided) = decide(gate, &req);
                let file = VerdictFile {
                    version: super::publication::VERDICT_FILE_VERSION,
                    repository: env.repository.clone(),
                    pr_number: pr.number,
                    head_sha: pr.head.sha.clone(),
                    publication: p.clone(),
                };
                file.write(&env.verdict_file)?;
                // The replay report travels next to it, for the publishing
                // job (the only part of this run it uses).
                if let Some(report) = env.replay_report.as_ref().filter(|r| r.is_file()) {
                    let dest = replay_report_beside(&env.verdict_file);
                    if *report != dest {
                        std::fs::copy(report, &dest).with_context(|| {
                            format!("cannot copy the replay report {} to {}", report.display(), dest.display())
                        })?;
                    }
                }
                eprintln!("retrygate: verdict written to {}", env.verdict_file.display());
                finish(env, &p, decided, None)
            }
            ActionMode::Full => {
                let api = api(env)?;
                // This job holds a write token: the PR's code does not run
                // here; a replay report comes from the replay job.
                let req = GateRequest::for_pr(env, &pr, None, false);
                let (p, decided) = decide(gate, &req);
                let report = publish(&api, &target(&pr), &p, env.bot_login.as_deref(), env.run_url.as_deref()).await;
                finish(env, &p, decided, Some(&report))
            }
        },
        Trigger::Comment(c) => {
            if env.mode != ActionMode::Full {
                anyhow::bail!("a sign-off comment is handled with --mode full (the job needs a write token)");
            }
            sign_off(env, c, gate).await
        }
        Trigger::MergeGroup(group) => {
            if env.mode != ActionMode::Full {
                anyhow::bail!(
                    "a merge_group event is judged with --mode full (the job publishes the check run on the group's commit; docs/github.md, \"Merge queues\")"
                );
            }
            merge_group(env, group, gate).await
        }
        Trigger::WorkflowRun(run) => {
            if env.mode == ActionMode::Compute {
                anyhow::bail!(
                    "--mode compute runs on pull_request; a workflow_run job publishes with --mode publish (docs/github.md)"
                );
            }
            publish_run(env, run, gate).await
        }
    }
}

fn nothing_to_do(env: &ActionEnv, why: &str) -> anyhow::Result<ActionOutcome> {
    eprintln!("retrygate: nothing to do: {why}");
    summary::write_step_summary(env.step_summary.as_deref(), &format!("retrygate: nothing to do: {why}.\n"))?;
    summary::write_outputs(env.output.as_deref(), "none", 0)?;
    Ok(ActionOutcome::Pass)
}

/// Runs the gate, failing closed: an error or a panic becomes a blocking
/// publication that says why, and `false` (could not decide).
fn decide(gate: &Gate<'_>, req: &GateRequest) -> (Publication, bool) {
    let outcome = catch_unwind(AssertUnwindSafe(|| gate(req))).unwrap_or_else(|_| {
        Err(anyhow::anyhow!("the gate panicked; this is a bug in retrygate, please report it"))
    });
    match outcome {
        Ok(p) if p.head_sha == req.head_sha => (p, true),
        Ok(p) => {
            let e = anyhow::anyhow!("the gate judged {} instead of the head {}", p.head_sha, req.head_sha);
            (Publication::could_not_decide(&req.head_sha, &e), false)
        }
        Err(e) => (Publication::could_not_decide(&req.head_sha, &e), false),
    }
}

fn api(env: &ActionEnv) -> anyhow::Result<Api> {
    let token = env.token.as_deref().ok_or_else(|| {
        anyhow::anyhow!("GITHUB_TOKEN is not set; pass the Action's `token` input (default: github.token), or use --mode compute, which needs no token")
    })?;
    let api = Api::new(&env.api_url, env.graphql_url.as_deref(), token, &env.repository)?
        .with_write_interval(env.write_interval)
        .with_deadlines(env.timing.request_deadline, env.timing.publish_deadline);
    Ok(match env.timing.settle {
        Some(settle) => api.with_settle(settle),
        None => api,
    })
}

fn target(pr: &PullRequest) -> PrTarget {
    PrTarget { number: pr.number, node_id: pr.node_id.clone(), auto_merge_enabled: pr.auto_merge.is_some() }
}

async fn fetch_pr(api: &Api, number: u64) -> anyhow::Result<PullRequest> {
    let page = api
        .get(&format!("fetching pull request #{number}"), &api.repo_route(&format!("/pulls/{number}")))
        .await?;
    serde_json::from_value(page.body)
        .with_context(|| format!("GitHub's answer for pull request #{number} is not a pull request"))
}

/// Writes the summary and outputs and picks the outcome. With a publish
/// report, what the check shows decides: the strictest verdict of the open
/// pull requests with this head, and never a pass while an older, kinder
/// check run stands.
fn finish(
    env: &ActionEnv,
    p: &Publication,
    decided: bool,
    report: Option<&PublishReport>,
) -> anyhow::Result<ActionOutcome> {
    let shown = report.map(|r| &r.shown.check).unwrap_or(p);
    let mut md = shown.summary_markdown.clone();
    if let Some(r) = report {
        md.push_str(&r.markdown(&p.head_sha));
    }
    summary::write_step_summary(env.step_summary.as_deref(), &md)?;
    summary::write_outputs(env.output.as_deref(), shown.verdict.as_str(), p.findings.len())?;
    if let Some(path) = &env.sarif {
        summary::write_sarif(path, p)?;
    }
    let published = report.map(PublishReport::verdict_on_github);
    let stale = report.and_then(|r| r.stale.as_deref());
    match published {
        // Compute mode: the annotations are all this job shows.
        None => print!(
            "{}",
            summary::workflow_commands(p, "this job only computes; the workflow_run job publishes")
        ),
        Some(false) => print!(
            "{}",
            summary::workflow_commands(
                shown,
                stale.unwrap_or(
                    "the check run and the commit status could not be written (see the job summary)"
                )
            )
        ),
        Some(true) => {}
    }
    if let Some(stale) = stale {
        eprintln!("retrygate: {stale}");
    }
    eprintln!("retrygate: {}: {}", shown.verdict.as_str().to_uppercase(), shown.title);
    Ok(match (decided && !shown.undecided, shown.verdict, published) {
        (false, _, _) => ActionOutcome::CouldNotDecide,
        (true, _, Some(false)) if stale.is_some() => ActionOutcome::CouldNotDecide,
        (true, Verdict::Block, _) => ActionOutcome::Block,
        (true, Verdict::Pass, Some(false)) => ActionOutcome::CouldNotDecide,
        (true, Verdict::Pass, _) => ActionOutcome::Pass,
    })
}

/// Ends without publishing, saying why: summary, an `::error`, and
/// `outcome` (could not decide, or a block for a refused sign-off, which is
/// a decision, not a failure to decide).
fn refuse(env: &ActionEnv, why: &str, outcome: ActionOutcome) -> anyhow::Result<ActionOutcome> {
    eprintln!("retrygate: {why}");
    println!("::error title=retrygate::{}", crate::printer::github::escape_data(why));
    summary::write_step_summary(env.step_summary.as_deref(), &format!("### retrygate\n\n{why}\n"))?;
    summary::write_outputs(env.output.as_deref(), "none", 0)?;
    Ok(outcome)
}

/// The sign-off config (`sign_off:` of the config) from the base commit.
/// Never from the PR's head: a PR cannot lower its own bar. Read by
/// [`Config::at_base`], as the gate reads it, so a bad config is refused with
/// the gate's own message.
fn sign_off_config(env: &ActionEnv, base_sha: &str) -> anyhow::Result<SignOffConfig> {
    let git = crate::changeset::git::Git::open(&env.workspace)?;
    git.resolve_commit(base_sha).with_context(|| {
        format!("the base commit {base_sha} is not in the checkout {}; check out with fetch-depth: 0 so the sign-off policy can be read from the base", env.workspace.display())
    })?;
    Ok(Config::at_base(&git, base_sha)?.config.sign_off)
}

async fn permission(api: &Api, login: &str) -> anyhow::Result<Option<crate::config::Permission>> {
    // Raw call: octocrab's typed one fails on GitHub's real answers.
    let encoded = crate::http::encode_component(login);
    let route = api.repo_route(&format!("/collaborators/{encoded}/permission"));
    match api.get(&format!("reading {login}'s permission"), &route).await {
        Ok(page) => Ok(signoff::permission_from_api(
            page.body.get("permission").and_then(|v| v.as_str()),
            page.body.get("role_name").and_then(|v| v.as_str()),
        )),
        // Not a collaborator at all.
        Err(e) if e.status() == Some(404) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn sign_off(env: &ActionEnv, c: PrComment, gate: &Gate<'_>) -> anyhow::Result<ActionOutcome> {
    let api = api(env)?;
    // The payload carries no head SHA: the PR's current head is fetched.
    let pr = fetch_pr(&api, c.pr_number).await?;
    let sign_off = sign_off_config(env, &pr.base.sha)?;
    let named = match signoff::parse_command(&c.body, &sign_off.command) {
        None => {
            let why = format!("comment {} is not a `{}` command", c.comment_id, sign_off.command);
            return nothing_to_do(env, &why);
        }
        Some(Err(why)) => return refuse(env, &format!("sign-off ignored: {why}"), ActionOutcome::Block),
        Some(Ok(sha)) => sha,
    };
    if pr.state.as_deref() == Some("closed") {
        return refuse(
            env,
            &format!("sign-off ignored: pull request #{} is closed", pr.number),
            ActionOutcome::Block,
        );
    }
    if let Err(r) =
        signoff::check_person(&c.author.login, c.author.is_bot(), c.via_app.as_deref(), &pr.user.login)
    {
        return refuse(env, &r.to_string(), ActionOutcome::Block);
    }
    let perm = permission(&api, &c.author.login).await?;
    let candidate = Candidate {
        commenter: &c.author.login,
        commenter_is_bot: c.author.is_bot(),
        via_app: c.via_app.as_deref(),
        command: &sign_off.command,
        pr_author: &pr.user.login,
        permission: perm,
        min_permission: sign_off.min_permission,
        named_sha: &named,
        head_sha: &pr.head.sha,
    };
    let accepted = match signoff::decide(&candidate) {
        Ok(s) => s,
        Err(r) => return refuse(env, &r.to_string(), ActionOutcome::Block),
    };
    eprintln!(
        "retrygate: sign-off by {} for {} accepted",
        accepted.by,
        crate::text::short_sha(&accepted.sha)
    );
    // The job holds a write token: the PR's code is not run here.
    let req = GateRequest::for_pr(env, &pr, Some(accepted), false);
    let (p, decided) = decide(gate, &req);
    let report = publish(&api, &target(&pr), &p, env.bot_login.as_deref(), env.run_url.as_deref()).await;
    finish(env, &p, decided, Some(&report))
}

/// The replay report's file name next to the verdict file in the artifact.
pub(crate) const REPLAY_REPORT_FILE: &str = "replay.json";

/// Where the replay report travels, next to `verdict_file`.
pub fn replay_report_beside(verdict_file: &std::path::Path) -> std::path::PathBuf {
    verdict_file.with_file_name(REPLAY_REPORT_FILE)
}

/// Publishes the verdict for a completed `pull_request` run, **recomputed
/// here**: the run executed the pull request's code (a fork's, even its own
/// edited workflow), so its verdict file may say anything. The file is read
/// only to learn which pull request the run was for (a fork's run carries no
/// PR numbers), and that is checked against the run and the PR as the API
/// returns it. The verdict comes from the gate on the head fetched as data
/// (`git fetch origin pull/N/head`), with the config and rules of the base;
/// only the replay report is taken from the run, labelled as the PR's own.
async fn publish_run(env: &ActionEnv, run: CompletedRun, gate: &Gate<'_>) -> anyhow::Result<ActionOutcome> {
    let file = match VerdictFile::read(&env.verdict_file) {
        Ok(f) => f,
        Err(e) => return refuse(env, &format!("refusing to publish: {e:#}"), ActionOutcome::CouldNotDecide),
    };
    if file.repository != env.repository {
        let why = format!(
            "refusing to publish: the verdict file is for {} and this is {}",
            file.repository, env.repository
        );
        return refuse(env, &why, ActionOutcome::CouldNotDecide);
    }
    if file.head_sha != run.head_sha {
        let why = format!(
            "refusing to publish: the verdict file is about {} but workflow run {} ran on {}; the artifact does not belong to this run",
            file.head_sha, run.run_id, run.head_sha
        );
        return refuse(env, &why, ActionOutcome::CouldNotDecide);
    }
    if !run.pull_requests.is_empty() && !run.pull_requests.contains(&file.pr_number) {
        let why = format!(
            "refusing to publish: the verdict file names pull request #{} but workflow run {} belongs to {:?}",
            file.pr_number, run.run_id, run.pull_requests
        );
        return refuse(env, &why, ActionOutcome::CouldNotDecide);
    }
    let api = api(env)?;
    let pr = fetch_pr(&api, file.pr_number).await?;
    if pr.head.sha != file.head_sha {
        let why = format!(
            "refusing to publish: pull request #{} is now at {}, not {} (a newer push will publish its own verdict)",
            pr.number, pr.head.sha, file.head_sha
        );
        return refuse(env, &why, ActionOutcome::CouldNotDecide);
    }
    let pr_repo = pr.head.repo.as_ref().map(|r| r.full_name.as_str());
    if let (Some(a), Some(b)) = (pr_repo, run.head_repository.as_deref()) {
        if a != b {
            let why = format!(
                "refusing to publish: pull request #{} comes from {a} but the run's head repository is {b}",
                pr.number
            );
            return refuse(env, &why, ActionOutcome::CouldNotDecide);
        }
    }
    if let Err(why) = commits_in_checkout(env, &[&pr.base.sha, &pr.head.sha]) {
        let why = format!(
            "refusing to publish: {why}; the publishing job checks out the base with fetch-depth: 0 and fetches the pull request's head as data (`git fetch origin pull/{}/head`), see examples/workflows/retrygate-publish.yml",
            pr.number
        );
        return refuse(env, &why, ActionOutcome::CouldNotDecide);
    }
    let mut req = GateRequest::for_pr(env, &pr, None, false);
    let beside = replay_report_beside(&env.verdict_file);
    req.replay_report = beside.is_file().then_some(beside);
    // The report came from the pull_request run's `retrygate-verdict`.
    req.links.replay_artifact = req
        .replay_report
        .as_ref()
        .and(super::run_page(env, run.run_id))
        .map(|page| ("retrygate-verdict".to_string(), page));
    let (p, decided) = decide(gate, &req);
    let report = publish(&api, &target(&pr), &p, env.bot_login.as_deref(), env.run_url.as_deref()).await;
    finish(env, &p, decided, Some(&report))
}

/// Checks that every commit is in the checkout; the error names the first
/// that is not.
fn commits_in_checkout(env: &ActionEnv, shas: &[&str]) -> Result<(), String> {
    let git = crate::changeset::git::Git::open(&env.workspace).map_err(|e| e.to_string())?;
    for sha in shas {
        git.resolve_commit(sha)
            .map_err(|_| format!("commit {sha} is not in the checkout {}", env.workspace.display()))?;
    }
    Ok(())
}

/// Judges a merge queue's group commit (see [`super::merge_group`]) and
/// publishes the verdict on it.
async fn merge_group(env: &ActionEnv, group: MergeGroup, gate: &Gate<'_>) -> anyhow::Result<ActionOutcome> {
    let api = api(env)?;
    if let Err(why) = commits_in_checkout(env, &[&group.base_sha, &group.head_sha]) {
        let why = format!("cannot judge the merge group: {why}; check out the group with fetch-depth: 0 (examples/workflows/retrygate.yml)");
        let p = Publication::could_not_decide(&group.head_sha, &anyhow::anyhow!(why));
        let report = publish_commit(&api, &p, env.run_url.as_deref()).await;
        return finish(env, &p, false, Some(&report));
    }
    let git = crate::changeset::git::Git::open(&env.workspace)?;
    let range = format!("{}..{}", group.base_sha, group.head_sha);
    let log = git.run(&["log", "--first-parent", "--format=%H%x09%s", &range])?;
    let commits: Vec<(String, String)> = log
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(sha, subject)| (sha.to_string(), subject.to_string()))
        .collect();
    let queued = merge_group::attribute(&commits, group.last_pr());
    let mut verdicts = Vec::new();
    for n in &queued.prs {
        let v = match fetch_pr(&api, *n).await {
            Ok(pr) => {
                let run = super::check_run::find(&api, &pr.head.sha).await?;
                merge_group::judge_pr(run.as_ref(), *n, &pr.head.sha, group.base_branch())
            }
            Err(e) => merge_group::PrVerdict::NotPassing(format!("cannot read it: {e:#}")),
        };
        verdicts.push((*n, v));
    }
    let req = GateRequest {
        repository: env.repository.clone(),
        workspace: env.workspace.clone(),
        pr_number: queued.prs.last().copied().unwrap_or(0),
        base_sha: group.base_sha.clone(),
        base_ref: group.base_branch().to_string(),
        head_sha: group.head_sha.clone(),
        author: String::new(),
        author_is_bot: false,
        forced_agent: Some(false),
        labels: Vec::new(),
        head_branch: group.head_ref.trim_start_matches("refs/heads/").to_string(),
        sign_off: None,
        replay_report: None,
        replay_report_origin: crate::gate::ReportOrigin::Caller,
        allow_replay: false,
        link_base: env.link_base.clone(),
        links: env.links.clone(),
    };
    let (group_p, decided) = decide(gate, &req);
    let p = merge_group::combine(group_p, &verdicts, &queued.unattributed);
    let report = publish_commit(&api, &p, env.run_url.as_deref()).await;
    finish(env, &p, decided, Some(&report))
}
