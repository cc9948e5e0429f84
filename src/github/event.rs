//! The webhook event that started the job, read from `$GITHUB_EVENT_PATH`
//! and reduced to the few facts the gate and the publisher use.
//!
//! [`Trigger::parse`] is pure: it never calls the API. Payload shapes follow
//! GitHub's (octokit/webhooks examples in `tests/fixtures/github/`). Only the
//! fields used are declared, so a payload with more is fine, and a payload
//! missing one of them is an error naming the field.

use serde::Deserialize;

/// The `pull_request` actions that (re)compute the verdict. `edited` also
/// does when it changed the base (a retarget: the config and the change are
/// another branch's now); other edits (title, body) and `closed`,
/// `assigned`... leave the verdict as it was.
pub(crate) const GATED_PR_ACTIONS: &[&str] =
    &["opened", "synchronize", "reopened", "ready_for_review", "labeled", "unlabeled", "edited"];

/// A user as payloads and the API describe one.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub(crate) struct User {
    pub(crate) login: String,
    /// `User`, `Bot` or `Organization`.
    #[serde(rename = "type", default)]
    pub(crate) kind: String,
}

impl User {
    /// A bot account: the account type says so, or the login has GitHub's
    /// `[bot]` suffix (which ordinary users cannot take).
    pub(crate) fn is_bot(&self) -> bool {
        self.kind == "Bot" || self.login.ends_with("[bot]")
    }
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Label {
    pub(crate) name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RepoRef {
    pub(crate) full_name: String,
}

/// One side of a pull request.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Branch {
    pub(crate) sha: String,
    #[serde(rename = "ref")]
    pub(crate) branch: String,
    /// `null` when the fork was deleted.
    pub(crate) repo: Option<RepoRef>,
}

/// A pull request as the `pull_request` payload and `GET /pulls/{n}` give it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PullRequest {
    pub(crate) number: u64,
    /// GraphQL id, needed to disable auto-merge.
    pub(crate) node_id: String,
    pub(crate) head: Branch,
    pub(crate) base: Branch,
    pub(crate) user: User,
    #[serde(default)]
    pub(crate) labels: Vec<Label>,
    /// Present (non-null) when auto-merge is enabled.
    #[serde(default)]
    pub(crate) auto_merge: Option<serde_json::Value>,
    #[serde(default)]
    pub(crate) state: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct PullRequestEvent {
    action: String,
    pull_request: PullRequest,
    /// On `edited`: what changed (`base`, `title`, `body`).
    #[serde(default)]
    changes: Option<PrChanges>,
}

#[derive(Debug, Clone, Deserialize)]
struct PrChanges {
    #[serde(default)]
    base: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
struct MergeGroupEvent {
    action: String,
    merge_group: MergeGroup,
}

/// A merge queue's group: the queue tests `head_sha`, which is `base_sha`
/// with the queued pull requests merged on top, in order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct MergeGroup {
    pub(crate) head_sha: String,
    /// `refs/heads/gh-readonly-queue/<base>/pr-<N>-<base_sha>`.
    pub(crate) head_ref: String,
    /// Listed in GitHub's webhook documentation; older payload examples lack
    /// it, and a group without it cannot be judged (an error, never a pass).
    #[serde(default)]
    pub(crate) base_sha: String,
    /// `refs/heads/<base>`.
    pub(crate) base_ref: String,
}

impl MergeGroup {
    /// The base branch's name (`main` for `refs/heads/main`).
    pub(crate) fn base_branch(&self) -> &str {
        self.base_ref.strip_prefix("refs/heads/").unwrap_or(&self.base_ref)
    }

    /// The pull request the group was made for (the last one queued), from
    /// `head_ref`'s `pr-<N>-`.
    pub(crate) fn last_pr(&self) -> Option<u64> {
        let tail = self.head_ref.rsplit('/').next()?;
        tail.strip_prefix("pr-")?.split('-').next()?.parse().ok()
    }
}

#[derive(Debug, Clone, Deserialize)]
struct IssueCommentEvent {
    action: String,
    issue: Issue,
    comment: Comment,
}

#[derive(Debug, Clone, Deserialize)]
struct Issue {
    number: u64,
    /// Present only when the issue is a pull request.
    #[serde(default)]
    pull_request: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
struct Comment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    user: User,
    /// Set when a GitHub App posted the comment on the user's behalf.
    #[serde(default)]
    performed_via_github_app: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
struct WorkflowRunEvent {
    action: String,
    workflow_run: WorkflowRunObj,
}

#[derive(Debug, Clone, Deserialize)]
struct WorkflowRunObj {
    id: u64,
    head_sha: String,
    #[serde(default)]
    pull_requests: Vec<RunPullRequest>,
    head_repository: Option<RepoRef>,
}

#[derive(Debug, Clone, Deserialize)]
struct RunPullRequest {
    number: u64,
}

/// A comment on a pull request, as far as a sign-off needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrComment {
    pub(crate) pr_number: u64,
    pub(crate) comment_id: u64,
    pub(crate) body: String,
    pub(crate) author: User,
    /// The GitHub App that posted it for `author` (its slug, else its
    /// name), from `performed_via_github_app`: such a comment is an app's,
    /// not a person's.
    pub(crate) via_app: Option<String>,
}

/// A completed run of the read-only `pull_request` workflow whose verdict
/// is to be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompletedRun {
    pub(crate) run_id: u64,
    pub(crate) head_sha: String,
    /// The run's head repository (`owner/name`), the fork for fork PRs.
    pub(crate) head_repository: Option<String>,
    /// PR numbers GitHub attached to the run: empty for fork PRs.
    pub(crate) pull_requests: Vec<u64>,
}

/// What the job was started for.
#[derive(Debug, Clone)]
pub(crate) enum Trigger {
    /// Compute (and publish) the verdict for this pull request.
    PullRequest(Box<PullRequest>),
    /// A comment on a pull request: maybe a sign-off.
    Comment(PrComment),
    /// Publish the verdict another run computed.
    WorkflowRun(CompletedRun),
    /// Judge a merge queue's group commit.
    MergeGroup(MergeGroup),
    /// Nothing to do, and why.
    Ignored(String),
}

impl Trigger {
    /// Reads the payload of event `event_name`. `source` names the file in
    /// errors.
    pub(crate) fn parse(event_name: &str, payload: &str, source: &str) -> anyhow::Result<Trigger> {
        let bad = |e: serde_json::Error| {
            anyhow::anyhow!(
                "{source}:{}: the {event_name} payload is not what GitHub sends ({e}); run retrygate github from a workflow triggered by pull_request, issue_comment, workflow_run or merge_group",
                e.line()
            )
        };
        match event_name {
            "pull_request" => {
                let ev: PullRequestEvent = serde_json::from_str(payload).map_err(bad)?;
                if !GATED_PR_ACTIONS.contains(&ev.action.as_str()) {
                    return Ok(Trigger::Ignored(format!(
                        "pull_request action `{}` does not change what the gate decides",
                        ev.action
                    )));
                }
                if ev.action == "edited" && ev.changes.as_ref().and_then(|c| c.base.as_ref()).is_none() {
                    return Ok(Trigger::Ignored(
                        "pull_request `edited` without a base change (title or body) does not change what the gate decides".into(),
                    ));
                }
                Ok(Trigger::PullRequest(Box::new(ev.pull_request)))
            }
            "issue_comment" => {
                let ev: IssueCommentEvent = serde_json::from_str(payload).map_err(bad)?;
                if ev.issue.pull_request.is_none() {
                    return Ok(Trigger::Ignored(format!("#{} is an issue, not a pull request", ev.issue.number)));
                }
                if ev.action != "created" {
                    return Ok(Trigger::Ignored(format!(
                        "comment {}: only new comments can sign off (action `{}`)",
                        ev.comment.id, ev.action
                    )));
                }
                let via_app = ev.comment.performed_via_github_app.filter(|a| !a.is_null()).map(|a| {
                    ["slug", "name"]
                        .iter()
                        .find_map(|k| a.get(k).and_then(serde_json::Value::as_str))
                        .unwrap_or("an unnamed app")
                        .to_string()
                });
                Ok(Trigger::Comment(PrComment {
                    pr_number: ev.issue.number,
                    comment_id: ev.comment.id,
                    body: ev.comment.body.unwrap_or_default(),
                    author: ev.comment.user,
                    via_app,
                }))
            }
            "workflow_run" => {
                let ev: WorkflowRunEvent = serde_json::from_str(payload).map_err(bad)?;
                if ev.action != "completed" {
                    return Ok(Trigger::Ignored(format!(
                        "workflow_run action `{}`: the verdict is published when the run completes",
                        ev.action
                    )));
                }
                let run = ev.workflow_run;
                Ok(Trigger::WorkflowRun(CompletedRun {
                    run_id: run.id,
                    head_sha: run.head_sha,
                    head_repository: run.head_repository.map(|r| r.full_name),
                    pull_requests: run.pull_requests.iter().map(|p| p.number).collect(),
                }))
            }
            "merge_group" => {
                let ev: MergeGroupEvent = serde_json::from_str(payload).map_err(bad)?;
                if ev.action != "checks_requested" {
                    return Ok(Trigger::Ignored(format!(
                        "merge_group action `{}`: only `checks_requested` asks for a verdict",
                        ev.action
                    )));
                }
                if ev.merge_group.base_sha.is_empty() {
                    anyhow::bail!(
                        "{source}: the merge_group payload has no merge_group.base_sha, so the group's change cannot be told from its base; run retrygate github on GitHub's merge_group event as it is sent today"
                    );
                }
                Ok(Trigger::MergeGroup(ev.merge_group))
            }
            "pull_request_target" => anyhow::bail!(
                "retrygate github refuses pull_request_target: that event runs with a write token next to the PR's code (a \"pwn request\"); use pull_request to compute and workflow_run to publish (docs/github.md, \"Pull requests from forks\")"
            ),
            other => anyhow::bail!(
                "event `{other}` is not one retrygate github handles; trigger it on pull_request, issue_comment, workflow_run or merge_group"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/github/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn pull_request_opened_gives_the_pr_facts() {
        let t = Trigger::parse("pull_request", &fixture("pull_request__opened.payload.json"), "event.json")
            .unwrap();
        let Trigger::PullRequest(pr) = t else { panic!("{t:?}") };
        assert_eq!(pr.number, 2);
        assert_eq!(pr.head.sha, "ec26c3e57ca3a959ca5aad62de7213c562f8c821");
        assert_eq!(pr.base.sha, "f95f852bd8fca8fcc58a9a2d6c842781e32a215e");
        assert_eq!(pr.head.branch, "changes");
        assert_eq!(pr.user.login, "Codertocat");
        assert!(!pr.user.is_bot());
        assert_eq!(pr.labels.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["bug"]);
        assert_eq!(pr.node_id, "MDExOlB1bGxSZXF1ZXN0Mjc5MTQ3NDM3");
        assert!(pr.auto_merge.is_none());
    }

    #[test]
    fn a_push_to_the_pull_request_recomputes() {
        let t =
            Trigger::parse("pull_request", &fixture("pull_request__synchronize.payload.json"), "e").unwrap();
        assert!(
            matches!(&t, Trigger::PullRequest(pr) if pr.head.sha == "ec26c3e57ca3a959ca5aad62de7213c562f8c821"),
            "{t:?}"
        );
    }

    #[test]
    fn comments_on_plain_issues_are_ignored() {
        let t =
            Trigger::parse("issue_comment", &fixture("issue_comment__created.payload.json"), "e").unwrap();
        assert!(matches!(&t, Trigger::Ignored(why) if why.contains("#1 is an issue")), "{t:?}");
    }

    #[test]
    fn comments_on_pull_requests_are_read_and_edits_ignored() {
        let edited = fixture("issue_comment_edited_webhook_event.json");
        let t = Trigger::parse("issue_comment", &edited, "e").unwrap();
        assert!(matches!(&t, Trigger::Ignored(why) if why.contains("only new comments")), "{t:?}");
        let created = edited.replacen("\"action\": \"edited\"", "\"action\": \"created\"", 1);
        let Trigger::Comment(c) = Trigger::parse("issue_comment", &created, "e").unwrap() else { panic!() };
        assert_eq!(c.pr_number, 5);
        assert_eq!(c.author.login, "gagbo-test-app[bot]");
        assert!(c.author.is_bot());
        assert_eq!(c.via_app, None);
        let mut v: serde_json::Value = serde_json::from_str(&created).unwrap();
        v["comment"]["performed_via_github_app"] =
            serde_json::json!({"id": 1, "slug": "copilot-swe-agent", "name": "Copilot"});
        let Trigger::Comment(c) = Trigger::parse("issue_comment", &v.to_string(), "e").unwrap() else {
            panic!()
        };
        assert_eq!(c.via_app.as_deref(), Some("copilot-swe-agent"));
    }

    #[test]
    fn workflow_run_gives_the_run_and_its_prs() {
        let t = Trigger::parse(
            "workflow_run",
            &fixture("workflow_run__completed.with-pull-requests.payload.json"),
            "e",
        )
        .unwrap();
        let Trigger::WorkflowRun(run) = t else { panic!() };
        assert_eq!(run.run_id, 289782451);
        assert_eq!(run.head_sha, "3484a3fb816e0859fd6e1cea078d76385ff50625");
        assert_eq!(run.pull_requests, [2]);
        assert_eq!(run.head_repository.as_deref(), Some("octo-org/octo-repo"));
        let t =
            Trigger::parse("workflow_run", &fixture("workflow_run__requested.payload.json"), "e").unwrap();
        assert!(matches!(t, Trigger::Ignored(_)));
    }

    #[test]
    fn a_retarget_recomputes_and_other_edits_are_ignored() {
        let edited = fixture("pull_request__opened.payload.json").replacen(
            "\"action\": \"opened\"",
            "\"action\": \"edited\"",
            1,
        );
        let t = Trigger::parse("pull_request", &edited, "e").unwrap();
        assert!(matches!(&t, Trigger::Ignored(why) if why.contains("without a base change")), "{t:?}");
        let mut v: serde_json::Value = serde_json::from_str(&edited).unwrap();
        v["changes"] = serde_json::json!({"base": {"ref": {"from": "release"}, "sha": {"from": "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"}}});
        let t = Trigger::parse("pull_request", &v.to_string(), "e").unwrap();
        assert!(matches!(&t, Trigger::PullRequest(pr) if pr.base.branch == "master"), "{t:?}");
    }

    #[test]
    fn merge_group_gives_the_group_and_needs_its_base() {
        let payload = fixture("merge_group__checks_requested.payload.json");
        let e = Trigger::parse("merge_group", &payload, "event.json").unwrap_err();
        assert!(
            e.to_string().starts_with("event.json: the merge_group payload has no merge_group.base_sha"),
            "{e}"
        );
        let mut v: serde_json::Value = serde_json::from_str(&payload).unwrap();
        v["merge_group"]["base_sha"] = serde_json::json!("929f8209d40f77f4abc622a499c93a83babdbe64");
        let Trigger::MergeGroup(g) = Trigger::parse("merge_group", &v.to_string(), "e").unwrap() else {
            panic!()
        };
        assert_eq!(g.head_sha, "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d");
        assert_eq!((g.base_branch(), g.last_pr()), ("main", Some(104)));
        v["action"] = serde_json::json!("destroyed");
        assert!(matches!(Trigger::parse("merge_group", &v.to_string(), "e").unwrap(), Trigger::Ignored(_)));
    }

    #[test]
    fn bad_payloads_and_events_are_errors_that_say_what_to_do() {
        let e = Trigger::parse("pull_request", "{\"action\": \"opened\"}", "/tmp/event.json").unwrap_err();
        assert!(
            e.to_string().starts_with("/tmp/event.json:1: the pull_request payload is not what GitHub sends"),
            "{e}"
        );
        assert!(e.to_string().contains("missing field `pull_request`"), "{e}");
        let e = Trigger::parse("pull_request_target", "{}", "e").unwrap_err();
        assert!(e.to_string().contains("pwn request"), "{e}");
        let e = Trigger::parse("push", "{}", "e").unwrap_err();
        assert!(e.to_string().contains("event `push` is not one retrygate github handles"), "{e}");
        let closed = fixture("pull_request__opened.payload.json").replacen(
            "\"action\": \"opened\"",
            "\"action\": \"closed\"",
            1,
        );
        assert!(matches!(Trigger::parse("pull_request", &closed, "e").unwrap(), Trigger::Ignored(_)));
    }
}
