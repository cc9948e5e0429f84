//! Puts a [`Publication`] on a pull request: the check run (or the commit
//! status where check runs cannot be written), the sticky comment, and, when
//! blocked, a best-effort disable of auto-merge. Every step's outcome is
//! kept in a [`PublishReport`] for the job summary; none of them can turn a
//! block into a pass.

use serde_json::json;

use super::checks::{self, CheckOutcome};
use super::client::{Api, ApiError};
use super::comment::{self, CommentOutcome};
use super::publication::Publication;
use super::review::{self, ReviewOutcome};
use crate::printer::Verdict;
use crate::text::short_sha as short;

/// The pull request a publication is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrTarget {
    pub number: u64,
    /// GraphQL id, for `disablePullRequestAutoMerge`.
    pub node_id: String,
    /// Whether auto-merge is enabled on it now.
    pub auto_merge_enabled: bool,
}

/// What happened to auto-merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AutoMerge {
    /// The verdict passes: auto-merge is left alone.
    NotNeeded,
    /// Blocked, and auto-merge was not enabled.
    NotEnabled,
    Disabled,
    /// GitHub refused or failed; the required check still blocks the merge.
    Failed(String),
}

/// The outcome of every publishing step.
#[derive(Debug, Clone)]
pub struct PublishReport {
    pub check: Result<CheckOutcome, ApiError>,
    /// Tried only when the check run could not be written.
    pub status: Option<Result<(), ApiError>>,
    pub comment: Result<CommentOutcome, ApiError>,
    /// The one-click fixes review; `None` where there is no pull request.
    pub suggestions: Option<Result<ReviewOutcome, ApiError>>,
    pub auto_merge: AutoMerge,
}

impl PublishReport {
    /// The verdict reached the commit (check run or status), where branch
    /// protection reads it.
    pub fn verdict_on_github(&self) -> bool {
        self.check.is_ok() || matches!(self.status, Some(Ok(())))
    }

    /// Some write was refused for lack of permission.
    pub fn forbidden(&self) -> bool {
        let check = matches!(&self.check, Err(e) if e.is_forbidden());
        let status = matches!(&self.status, Some(Err(e)) if e.is_forbidden());
        let comment = matches!(&self.comment, Err(e) if e.is_forbidden());
        check || status || comment
    }

    /// The "Published" section of the job summary.
    pub fn markdown(&self, head_sha: &str) -> String {
        let mut out = String::from("\n#### Published\n\n");
        let sha = short(head_sha);
        out.push_str(&match &self.check {
            Ok(CheckOutcome::Created { id, annotations }) => {
                format!("- check run `retrygate` on `{sha}`: created (id {id}, {annotations} annotations)\n")
            }
            Ok(CheckOutcome::Updated { id, annotations }) => {
                format!("- check run `retrygate` on `{sha}`: updated (id {id}, {annotations} annotations in all)\n")
            }
            Ok(CheckOutcome::Unchanged { id }) => {
                format!("- check run `retrygate` on `{sha}`: already up to date (id {id})\n")
            }
            Err(e) => format!("- check run `retrygate` on `{sha}`: **not written**: {e}\n"),
        });
        match &self.status {
            None => {}
            Some(Ok(())) => {
                out.push_str(&format!("- commit status `retrygate` on `{sha}`: set (fallback)\n"))
            }
            Some(Err(e)) => {
                out.push_str(&format!("- commit status `retrygate` on `{sha}`: **not written**: {e}\n"))
            }
        }
        out.push_str(&match &self.comment {
            Ok(CommentOutcome::Created { id }) => format!("- sticky comment: created (id {id})\n"),
            Ok(CommentOutcome::Edited { id }) => format!("- sticky comment: edited (id {id})\n"),
            Ok(CommentOutcome::Unchanged { id }) => format!("- sticky comment: unchanged (id {id})\n"),
            Ok(CommentOutcome::NotApplicable) => {
                "- sticky comment: none (a merge group's commit has no pull request to comment on)\n"
                    .to_string()
            }
            Err(e) => format!("- sticky comment: **not written**: {e}\n"),
        });
        match &self.suggestions {
            None => {}
            Some(Ok(r)) => out.push_str(&r.summary_line()),
            Some(Err(e)) => out.push_str(&format!("- one-click fixes: **not written**: {e}\n")),
        }
        out.push_str(&match &self.auto_merge {
            AutoMerge::NotNeeded => "- auto-merge: left alone (the verdict passes)\n".to_string(),
            AutoMerge::NotEnabled => "- auto-merge: was not enabled\n".to_string(),
            AutoMerge::Disabled => "- auto-merge: **disabled** because the pull request is blocked\n".to_string(),
            AutoMerge::Failed(why) => format!(
                "- auto-merge: could not be disabled ({why}); the required `retrygate` check still stops the merge if branch protection or a ruleset requires it\n"
            ),
        });
        if self.forbidden() {
            out.push_str("\nThe token may not write everything (a pull request from a fork gets a read-only token). Use the fork-safe split in docs/github.md: compute in `pull_request`, publish from `workflow_run`.\n");
        }
        out
    }
}

const DISABLE_AUTO_MERGE: &str =
    "mutation($id: ID!) { disablePullRequestAutoMerge(input: {pullRequestId: $id}) { pullRequest { number } } }";

async fn disable_auto_merge(api: &Api, pr: &PrTarget) -> AutoMerge {
    let body = json!({ "query": DISABLE_AUTO_MERGE, "variables": { "id": pr.node_id } });
    match api.graphql("disabling auto-merge", &body).await {
        Ok(_) => AutoMerge::Disabled,
        Err(e) => AutoMerge::Failed(e.to_string()),
    }
}

/// Publishes `p`: check run (status as fallback), sticky comment as
/// `bot_login` (or the identity `GET /user` reports), auto-merge. Steps are
/// sent one at a time, as GitHub asks of content-creating requests.
pub async fn publish(
    api: &Api,
    pr: &PrTarget,
    p: &Publication,
    bot_login: Option<&str>,
    details_url: Option<&str>,
) -> PublishReport {
    // Reads stop at the publish deadline themselves; octocrab's typed writes
    // only know per-read timeouts, which a server trickling a byte a second
    // never trips. This bounds the whole publish, writes included.
    let left = api.publish_left();
    match tokio::time::timeout(left, publish_steps(api, pr, p, bot_login, details_url)).await {
        Ok(report) => report,
        Err(_) => {
            let e = crate::github::client::ApiError::Deadline {
                what: "publishing the verdict".into(),
                which: crate::github::client::Deadline::Publish,
                after: api.publish_deadline(),
            };
            PublishReport {
                check: Err(e.clone()),
                status: Some(Err(e.clone())),
                comment: Err(e.clone()),
                suggestions: Some(Err(e.clone())),
                auto_merge: AutoMerge::Failed(e.to_string()),
            }
        }
    }
}

async fn publish_steps(
    api: &Api,
    pr: &PrTarget,
    p: &Publication,
    bot_login: Option<&str>,
    details_url: Option<&str>,
) -> PublishReport {
    let check = checks::publish_check_run(api, p, details_url).await;
    let status = match &check {
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("{e}; setting the commit status instead");
            Some(checks::publish_status(api, p, details_url).await)
        }
    };
    let me = comment::identity(api, bot_login).await;
    let comment = match &me {
        Ok(me) => comment::publish_comment(api, pr.number, me, &p.comment_markdown).await,
        Err(e) => Err(e.clone()),
    };
    let auto_merge = match (p.verdict, pr.auto_merge_enabled) {
        (Verdict::Pass, _) => AutoMerge::NotNeeded,
        (Verdict::Block, false) => AutoMerge::NotEnabled,
        (Verdict::Block, true) => disable_auto_merge(api, pr).await,
    };
    // Last: the one-click fixes, within what the deadline leaves.
    let suggestions = Some(match &me {
        Ok(me) => review::publish_suggestions(api, pr.number, &p.head_sha, me, &p.findings).await,
        Err(e) => Err(e.clone()),
    });
    PublishReport { check, status, comment, suggestions, auto_merge }
}

/// Publishes `p` on a commit that belongs to no pull request (a merge
/// group's): the check run, the status as fallback, nothing else.
pub async fn publish_commit(api: &Api, p: &Publication, details_url: Option<&str>) -> PublishReport {
    let check = checks::publish_check_run(api, p, details_url).await;
    let status = match &check {
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("{e}; setting the commit status instead");
            Some(checks::publish_status(api, p, details_url).await)
        }
    };
    PublishReport {
        check,
        status,
        comment: Ok(CommentOutcome::NotApplicable),
        suggestions: None,
        auto_merge: AutoMerge::NotNeeded,
    }
}
