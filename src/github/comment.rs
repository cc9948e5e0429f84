//! The sticky pull-request comment: one per pull request, found again by a
//! hidden marker **and** by its author being the token's own identity, so a
//! marker planted in someone else's comment is never edited (danger-js and
//! reviewdog match on the marker alone).
//!
//! The comment is edited only when its body changed, and created only after
//! a fresh listing shows it absent: a create that failed in a way that may
//! have landed (a 502 from a gateway, a timeout) is followed, after a short
//! wait ([`super::client::UNKNOWN_WRITE_SETTLE`]) for a create that lands
//! late, by a listing, never by a blind second create.

use serde_json::Value;

use super::client::{write_error, Api, ApiError};
use super::text::cut;

/// The hidden marker that opens the sticky comment's body.
pub const MARKER: &str = "<!-- retrygate:sticky-comment -->";

/// An issue comment body may hold at most 65,536 characters.
pub(crate) const MAX_COMMENT_CHARS: usize = 65_536;

/// The login Actions' `GITHUB_TOKEN` writes as, when `GET /user` is refused.
pub(crate) const ACTIONS_BOT_LOGIN: &str = "github-actions[bot]";

/// What happened to the sticky comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommentOutcome {
    Created {
        id: u64,
    },
    Edited {
        id: u64,
    },
    Unchanged {
        id: u64,
    },
    /// Nothing to comment on: a merge group's commit belongs to no pull request.
    NotApplicable,
}

/// The full body: the marker, then the Markdown, cut to the limit with a
/// pointer to the check run.
pub(crate) fn body(markdown: &str) -> String {
    let full = format!("{MARKER}\n{markdown}");
    cut(
        &full,
        MAX_COMMENT_CHARS,
        "\n\n…cut to fit GitHub's comment limit; the `retrygate` check run and the job summary have the full report.\n",
    )
}

/// The sticky comment among `comments`: the first that carries the marker
/// and was written by `me` (logins compare case-insensitively, as GitHub's do).
pub(crate) fn find_mine<'a>(comments: &'a [Value], me: &str) -> Option<&'a Value> {
    comments.iter().find(|c| {
        let author = c.pointer("/user/login").and_then(Value::as_str).unwrap_or("");
        let body = c.get("body").and_then(Value::as_str).unwrap_or("");
        author.eq_ignore_ascii_case(me) && body.contains(MARKER)
    })
}

/// Who the token writes as: `configured` when given (an App token writes as
/// `<slug>[bot]`), else `GET /user`, which answers for a personal token but
/// is refused (403) for Actions' and App installation tokens, whose comments
/// then come from [`ACTIONS_BOT_LOGIN`].
pub(crate) async fn identity(api: &Api, configured: Option<&str>) -> Result<String, ApiError> {
    if let Some(login) = configured.filter(|l| !l.trim().is_empty()) {
        return Ok(login.trim().to_string());
    }
    match api.get("finding the token's identity", "/user").await {
        Ok(page) => page
            .body
            .get("login")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| ApiError::Decode { what: "GET /user".into(), detail: "no login".into() }),
        Err(e) if matches!(e.status(), Some(401 | 403 | 404)) => Ok(ACTIONS_BOT_LOGIN.to_string()),
        Err(e) => Err(e),
    }
}

async fn list(api: &Api, pr: u64) -> Result<Vec<Value>, ApiError> {
    let route = api.repo_route(&format!("/issues/{pr}/comments?per_page={}", super::client::PER_PAGE));
    api.get_all("listing the pull request's comments", &route, None).await
}

fn id_of(c: &Value) -> u64 {
    c.get("id").and_then(Value::as_u64).unwrap_or(0)
}

/// Creates or edits the sticky comment on pull request `pr` so it reads
/// `markdown`, as `me`.
pub(crate) async fn publish_comment(
    api: &Api,
    pr: u64,
    me: &str,
    markdown: &str,
) -> Result<CommentOutcome, ApiError> {
    let body = body(markdown);
    let issues = api.crab().issues(api.owner.clone(), api.repo.clone());
    let comments = list(api, pr).await?;
    if let Some(c) = find_mine(&comments, me) {
        let id = id_of(c);
        if c.get("body").and_then(Value::as_str) == Some(body.as_str()) {
            return Ok(CommentOutcome::Unchanged { id });
        }
        // octocrab sends this as POST to the comment's URL.
        let _paced = api.pace_write().await;
        let what = "editing the sticky comment";
        let edit = issues.update_comment(octocrab::models::CommentId(id), &body);
        return match api.bounded(what, async { edit.await.map_err(|e| write_error(what, e)) }).await {
            Ok(_) => Ok(CommentOutcome::Edited { id }),
            Err(err) if err.outcome_unknown() => {
                // Read back: the summary says what the comment reads now.
                let api = api.read_back();
                tokio::time::sleep(api.settle().min(api.publish_left())).await;
                match list(&api, pr).await {
                    Ok(now)
                        if find_mine(&now, me).and_then(|c| c.get("body")).and_then(Value::as_str)
                            == Some(body.as_str()) =>
                    {
                        Ok(CommentOutcome::Edited { id })
                    }
                    _ => Err(err),
                }
            }
            Err(err) => Err(err),
        };
    }
    let what = "creating the sticky comment";
    let mut tries = 0;
    loop {
        tries += 1;
        let _paced = api.pace_write().await;
        let create = issues.create_comment(pr, &body);
        let err = match api.bounded(what, async { create.await.map_err(|e| write_error(what, e)) }).await {
            Ok(c) => return Ok(CommentOutcome::Created { id: c.id.into_inner() }),
            Err(err) if !err.outcome_unknown() => return Err(err),
            Err(err) => err,
        };
        // It may have landed, or land in a moment: wait, then look for it
        // before writing again, so a late create does not become two.
        let api = if matches!(err, ApiError::Deadline { which: super::client::Deadline::Publish, .. }) {
            api.read_back()
        } else {
            api.clone()
        };
        tracing::warn!("{err}; looking for the comment in {:?} before trying again", api.settle());
        tokio::time::sleep(api.settle().min(api.publish_left())).await;
        let comments = list(&api, pr).await?;
        if let Some(c) = find_mine(&comments, me) {
            return Ok(CommentOutcome::Created { id: id_of(c) });
        }
        if tries >= 2 || !err.write_retryable() {
            return Err(err);
        }
    }
}

/// Puts `note` on (or, with `None`, takes any note off) the sticky comment
/// of another pull request `pr` with the same head commit
/// ([`super::heads::sibling_notes`]), so its comment never reads kinder
/// than its check. Only an existing comment of `me` is edited; `None` when
/// there is none.
pub(crate) async fn set_note(
    api: &Api,
    pr: u64,
    me: &str,
    note: Option<&str>,
) -> Result<Option<CommentOutcome>, ApiError> {
    let comments = list(api, pr).await?;
    let Some(c) = find_mine(&comments, me) else { return Ok(None) };
    let id = id_of(c);
    let now = c.get("body").and_then(Value::as_str).unwrap_or("");
    if note.is_none() && !now.contains(super::heads::NOTE_MARKER) {
        return Ok(Some(CommentOutcome::Unchanged { id }));
    }
    let new = cut(
        &super::heads::with_note(now, note),
        MAX_COMMENT_CHARS,
        "\n\n…cut to fit GitHub's comment limit; the `retrygate` check run has the full report.\n",
    );
    if new == now {
        return Ok(Some(CommentOutcome::Unchanged { id }));
    }
    let issues = api.crab().issues(api.owner.clone(), api.repo.clone());
    let _paced = api.pace_write().await;
    let what = "editing another pull request's sticky comment";
    let edit = issues.update_comment(octocrab::models::CommentId(id), &new);
    api.bounded(what, async { edit.await.map_err(|e| write_error(what, e)) }).await?;
    Ok(Some(CommentOutcome::Edited { id }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_my_comment_with_the_marker_is_mine() {
        let comments = vec![
            json!({"id": 1, "user": {"login": "mallory"}, "body": format!("{MARKER}\nplanted")}),
            json!({"id": 2, "user": {"login": "github-actions[bot]"}, "body": "no marker"}),
            json!({"id": 3, "user": {"login": "GitHub-Actions[bot]"}, "body": format!("{MARKER}\nmine")}),
        ];
        assert_eq!(find_mine(&comments, "github-actions[bot]").map(id_of), Some(3));
        assert_eq!(find_mine(&comments[..2], "github-actions[bot]"), None);
    }

    #[test]
    fn bodies_start_with_the_marker_and_fit_the_limit() {
        let b = body("hello");
        assert!(b.starts_with(MARKER));
        let b = body(&"x".repeat(100_000));
        assert!(b.chars().count() <= MAX_COMMENT_CHARS);
        assert!(b.starts_with(MARKER) && b.contains("cut to fit GitHub's comment limit"));
    }
}
