//! Puts a [`Publication`] on a pull request: the check run (or the commit
//! status where check runs cannot be written), the sticky comment, and, when
//! blocked, a best-effort disable of auto-merge. Every step's outcome is
//! kept in a [`PublishReport`] for the job summary; none of them can turn a
//! block into a pass.

use serde_json::json;

use super::check_run::{self, CheckOutcome, ForPr, Stale};
use super::client::{Api, ApiError};
use super::comment::{self, CommentOutcome};
use super::heads::Combined;
use super::publication::Publication;
use super::review::{self, ReviewOutcome};
use crate::printer::Verdict;
use crate::text::short_sha as short;

/// The pull request a publication is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrTarget {
    pub(crate) number: u64,
    /// GraphQL id, for `disablePullRequestAutoMerge`.
    pub(crate) node_id: String,
    /// Whether auto-merge is enabled on it now.
    pub(crate) auto_merge_enabled: bool,
}

/// What happened to auto-merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AutoMerge {
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
pub(crate) struct PublishReport {
    pub(crate) check: Result<CheckOutcome, ApiError>,
    /// What the check shows (or was to show): for a pull request, the
    /// strictest verdict of every open pull request with this head
    /// ([`super::heads`]), and this pull request's comment.
    pub(crate) shown: Combined,
    /// An older, kinder verdict that still stands on the check run, with
    /// what to do about it (one line): the job must fail loudly.
    pub(crate) stale: Option<String>,
    /// Tried only when the check run could not be written.
    pub(crate) status: Option<Result<(), ApiError>>,
    pub(crate) comment: Result<CommentOutcome, ApiError>,
    /// The notes put on (or taken off) the comments of the other pull
    /// requests with this head, where one was edited or failed.
    pub(crate) siblings: Vec<(u64, Result<CommentOutcome, ApiError>)>,
    /// The one-click fixes review; `None` where there is no pull request.
    pub(crate) suggestions: Option<Result<ReviewOutcome, ApiError>>,
    pub(crate) auto_merge: AutoMerge,
}

impl PublishReport {
    /// The verdict reached the commit (check run or status), where branch
    /// protection reads it.
    pub(crate) fn verdict_on_github(&self) -> bool {
        self.stale.is_none() && (self.check.is_ok() || matches!(self.status, Some(Ok(()))))
    }

    /// Some write was refused for lack of permission.
    pub(crate) fn forbidden(&self) -> bool {
        let check = matches!(&self.check, Err(e) if e.is_forbidden());
        let status = matches!(&self.status, Some(Err(e)) if e.is_forbidden());
        let comment = matches!(&self.comment, Err(e) if e.is_forbidden());
        check || status || comment
    }

    /// The "Published" section of the job summary.
    pub(crate) fn markdown(&self, head_sha: &str) -> String {
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
            Ok(CheckOutcome::Superseded { id, stale_id, annotations }) => format!(
                "- check run `retrygate` on `{sha}`: the run showing `success` (id {stale_id}) refused every update, so a new run supersedes it (id {id}, {annotations} annotations); branch protection reads the newest\n"
            ),
            Err(e) => format!("- check run `retrygate` on `{sha}`: **not written**: {e}\n"),
        });
        if let Some(stale) = &self.stale {
            out.push_str(&format!("- **{stale}**\n"));
        }
        if self.shown.entries.len() > 1 {
            let prs: Vec<String> = self.shown.entries.iter().map(|e| format!("#{}", e.pr)).collect();
            out.push_str(&format!(
                "- the check shows the strictest verdict of the open pull requests with this head: {} (`{}`)\n",
                prs.join(", "),
                self.shown.check.verdict.as_str()
            ));
        }
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
        for (n, r) in &self.siblings {
            out.push_str(&match r {
                Ok(CommentOutcome::Edited { id }) => {
                    format!(
                        "- sticky comment of #{n} (same head commit): note on the check updated (id {id})\n"
                    )
                }
                Ok(_) => continue,
                Err(e) => format!("- sticky comment of #{n} (same head commit): **not updated**: {e}\n"),
            });
        }
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

/// The open pull requests whose head is `sha` (GitHub's list of pull
/// requests associated with the commit, narrowed to open ones whose head
/// it is), `pr` always among them.
async fn open_with_head(api: &Api, sha: &str, pr: u64) -> Result<Vec<u64>, ApiError> {
    let route = api.repo_route(&format!("/commits/{sha}/pulls?per_page={}", super::client::PER_PAGE));
    let listed = api.get_all("listing the pull requests of the head commit", &route, None).await?;
    let mut open: Vec<u64> = listed
        .iter()
        .filter(|p| p.get("state").and_then(serde_json::Value::as_str) == Some("open"))
        .filter(|p| p.pointer("/head/sha").and_then(serde_json::Value::as_str) == Some(sha))
        .filter_map(|p| p.get("number").and_then(serde_json::Value::as_u64))
        .collect();
    if !open.contains(&pr) {
        open.push(pr);
    }
    open.sort_unstable();
    open.dedup();
    Ok(open)
}

/// The line that says an older, kinder verdict still stands, and how to
/// clear it.
fn stale_line(api: &Api, p: &Publication, stale: &Stale) -> String {
    let sha = &p.head_sha;
    match stale.id {
        Some(id) => format!(
            "a stale check run remains: `retrygate` (id {id}) on {sha} still shows `{}` from an earlier run, and retrygate could not change it to `failure`, so the pull request may still be merged. Re-run this job; or clear it by hand: `gh api -X PATCH repos/{}/{}/check-runs/{id} -f status=completed -f conclusion=failure -f output[title]='blocked: re-run retrygate' -f output[summary]='re-run retrygate'`",
            stale.conclusion, api.owner, api.repo
        ),
        None => format!(
            "the `retrygate` check run on {sha} could not be read, so an older passing one may remain there and retrygate could not replace it with `failure`. Re-run this job; check the run's conclusion under the pull request's Checks tab, and if it shows success, re-run the job until this line is gone"
        ),
    }
}

/// Publishes `p` for pull request `pr`: check run (status as fallback),
/// sticky comment as `bot_login` (or the identity `GET /user` reports),
/// auto-merge. The check run shows the strictest verdict of every open
/// pull request with this head ([`super::heads`]). Steps are sent one at a
/// time, as GitHub asks of content-creating requests; the publish deadline
/// starts here, not before the gate.
pub(crate) async fn publish(
    api: &Api,
    pr: &PrTarget,
    p: &Publication,
    bot_login: Option<&str>,
    details_url: Option<&str>,
) -> PublishReport {
    api.start_publish();
    // Every request is bounded by the deadlines itself; this only guards
    // against a step that would not stop (with room for the read-backs).
    let limit = api.publish_deadline() + 3 * super::client::READ_BACK_GRACE;
    match tokio::time::timeout(limit, publish_steps(api, pr, p, bot_login, details_url)).await {
        Ok(report) => report,
        Err(_) => timed_out(api, p),
    }
}

fn timed_out(api: &Api, p: &Publication) -> PublishReport {
    let e = crate::github::client::ApiError::Deadline {
        what: "publishing the verdict".into(),
        which: crate::github::client::Deadline::Publish,
        after: api.publish_deadline(),
    };
    let shown = super::heads::combine(0, p, &[], &[]);
    PublishReport {
        check: Err(e.clone()),
        stale: (p.verdict == Verdict::Block)
            .then(|| stale_line(api, p, &Stale { id: None, conclusion: "unknown".into() })),
        shown,
        status: Some(Err(e.clone())),
        comment: Err(e.clone()),
        siblings: Vec::new(),
        suggestions: Some(Err(e.clone())),
        auto_merge: AutoMerge::Failed(e.to_string()),
    }
}

async fn publish_steps(
    api: &Api,
    pr: &PrTarget,
    p: &Publication,
    bot_login: Option<&str>,
    details_url: Option<&str>,
) -> PublishReport {
    // A pass cannot be published without knowing the other pull requests
    // it would stand for; a block can (it is the strictest anyway).
    let (p, open) = match open_with_head(api, &p.head_sha, pr.number).await {
        Ok(open) => (p.clone(), open),
        Err(e) if p.verdict == Verdict::Pass => {
            tracing::warn!(
                "{e}; the pass cannot be published without knowing the other pull requests of the commit"
            );
            let why = anyhow::anyhow!("{e}; a pass is published only when the other open pull requests with this head commit are known");
            let mut undecided = Publication::could_not_decide(&p.head_sha, &why);
            undecided.base = p.base.clone();
            (undecided, vec![pr.number])
        }
        Err(e) => {
            tracing::warn!("{e}; publishing the block for this pull request alone");
            (p.clone(), vec![pr.number])
        }
    };
    let for_pr = ForPr { number: pr.number, open };
    let check = check_run::publish_check_run(api, &p, Some(&for_pr), details_url).await;
    let shown = check.shown.clone();
    let stale = check.stale.as_ref().map(|s| stale_line(api, &shown.check, s));
    let status = match &check.result {
        Ok(_) if stale.is_none() => None,
        Ok(_) => Some(check_run::publish_status(api, &shown.check, details_url).await),
        Err(e) => {
            tracing::warn!("{e}; setting the commit status instead");
            Some(check_run::publish_status(api, &shown.check, details_url).await)
        }
    };
    let me = comment::identity(api, bot_login).await;
    let comment = match &me {
        Ok(me) => comment::publish_comment(api, pr.number, me, &shown.comment_markdown).await,
        Err(e) => Err(e.clone()),
    };
    // The other pull requests' comments: a note while the check is stricter
    // than their own verdict, taken off once it is not.
    let mut siblings = Vec::new();
    if let (Ok(me), Ok(_)) = (&me, &check.result) {
        for (n, note) in super::heads::sibling_notes(pr.number, &shown) {
            match comment::set_note(api, n, me, note.as_deref()).await {
                Ok(Some(CommentOutcome::Unchanged { .. }) | None) => {}
                Ok(Some(outcome)) => siblings.push((n, Ok(outcome))),
                Err(e) => siblings.push((n, Err(e))),
            }
        }
    }
    let auto_merge = match (shown.check.verdict, pr.auto_merge_enabled) {
        (Verdict::Pass, _) => AutoMerge::NotNeeded,
        (Verdict::Block, false) => AutoMerge::NotEnabled,
        (Verdict::Block, true) => disable_auto_merge(api, pr).await,
    };
    // Last: the one-click fixes, within what the deadline leaves.
    let suggestions = Some(match &me {
        Ok(me) => review::publish_suggestions(api, pr.number, &p.head_sha, me, &p.findings).await,
        Err(e) => Err(e.clone()),
    });
    PublishReport { check: check.result, shown, stale, status, comment, siblings, suggestions, auto_merge }
}

/// Publishes `p` on a commit that belongs to no pull request (a merge
/// group's): the check run, the status as fallback, nothing else.
pub(crate) async fn publish_commit(api: &Api, p: &Publication, details_url: Option<&str>) -> PublishReport {
    api.start_publish();
    let check = check_run::publish_check_run(api, p, None, details_url).await;
    let shown = check.shown.clone();
    let stale = check.stale.as_ref().map(|s| stale_line(api, &shown.check, s));
    let status = match &check.result {
        Ok(_) if stale.is_none() => None,
        Ok(_) => Some(check_run::publish_status(api, p, details_url).await),
        Err(e) => {
            tracing::warn!("{e}; setting the commit status instead");
            Some(check_run::publish_status(api, p, details_url).await)
        }
    };
    PublishReport {
        check: check.result,
        shown,
        stale,
        status,
        comment: Ok(CommentOutcome::NotApplicable),
        siblings: Vec::new(),
        suggestions: None,
        auto_merge: AutoMerge::NotNeeded,
    }
}
