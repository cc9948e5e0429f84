//! One-click fixes on the pull request: the findings that carry a
//! [`Fix`](crate::finding::Fix) become review comments with a `suggestion`
//! block on the head lines they replace, so a maintainer (or the agent)
//! applies each with one click.
//!
//! - **One review, comments only.** New suggestions go out in one
//!   `POST /pulls/{n}/reviews` whose event is always [`REVIEW_EVENT`]
//!   (`COMMENT`): the review never approves and never requests changes; the
//!   required check is what blocks.
//! - **At most [`MAX_SUGGESTIONS`] per pull request**, the blocking findings
//!   first; the rest are counted in the job summary.
//! - **Never twice.** Each comment carries a hidden marker with a key (path,
//!   kind, rule and occurrence, not the line, which moves). A re-run lists
//!   the pull request's review comments and takes as its own only those with
//!   the marker *and* written by the token's identity (a planted marker is
//!   ignored): the same suggestion at the same place is left alone, a
//!   changed one at the same place is edited, one whose place moved (or
//!   that GitHub marks outdated) is deleted and posted again, and one whose
//!   finding is gone is deleted. A suggestion someone answered is never
//!   deleted (that would orphan the conversation): it is edited into a
//!   short "no longer applies" note and left alone from then on.
//! - **Lines outside the diff.** GitHub refuses a whole review with 422 when
//!   one of its comments is not on a line of the diff. Fixes are computed on
//!   changed lines (or the line above a deletion, which is diff context), so
//!   this only happens when GitHub's diff and retrygate's disagree, or the
//!   head moved. Then each comment is posted on its own
//!   (`POST /pulls/{n}/comments`), and a 422 on one is a skip that the job
//!   summary lists; the others still land.
//! - **Only from a job that runs no pull-request code**: this is called from
//!   [`super::publish`], which only the `full` and `publish` modes reach
//!   (the write-token jobs; see [`super::action`]); `compute` publishes
//!   nothing.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::client::{Api, ApiError, PER_PAGE};
use crate::finding::Finding;
use crate::text::one_line;

/// Suggestions one pull request gets at most: past that, a wall of review
/// comments hides the conversation it is meant to help.
pub const MAX_SUGGESTIONS: usize = 20;

/// The review's event. `APPROVE` or `REQUEST_CHANGES` would make retrygate
/// a reviewer; it only comments.
pub(crate) const REVIEW_EVENT: &str = "COMMENT";

/// Opens every suggestion comment's body; the key follows.
pub const MARKER_PREFIX: &str = "<!-- retrygate:suggestion key=";

/// Publish time kept free for everything else: suggestions come last, and
/// their writes (a second apart, as GitHub asks) stop this long before the
/// publish deadline, so they can never make the verdict's publish run out of
/// time. What was not done is counted and done by the next run.
pub(crate) const RESERVE: std::time::Duration = std::time::Duration::from_secs(5);

/// A review comment may hold at most this many characters (as an issue
/// comment); a suggestion longer than that is not offered.
pub(crate) const MAX_BODY_CHARS: usize = 65_536;

/// One suggestion, ready to post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Suggestion {
    pub(crate) key: String,
    pub(crate) path: String,
    /// First head line replaced.
    pub(crate) start_line: u32,
    /// Last head line replaced (GitHub's `line`).
    pub(crate) line: u32,
    pub(crate) body: String,
}

/// One of this tool's review comments, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Existing {
    pub(crate) id: u64,
    pub(crate) key: String,
    pub(crate) path: String,
    /// `None` when GitHub marks the comment outdated.
    pub(crate) line: Option<u32>,
    pub(crate) start_line: Option<u32>,
    pub(crate) body: String,
    /// Someone answered it: it is closed with a note, never deleted.
    pub(crate) replied: bool,
    /// Already closed that way.
    pub(crate) resolved: bool,
}

/// The body a suggestion that someone answered gets once its finding is
/// gone or it moved: the thread stays, the marker says it is closed.
pub(crate) fn resolved_body(key: &str) -> String {
    format!("{MARKER_PREFIX}{key} resolved -->\n~~retrygate suggestion~~: this no longer applies (the finding is gone or moved; see the newer suggestion, if any).\n")
}

/// What to do, decided from what is wanted and what is there.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) unchanged: Vec<u64>,
    pub(crate) update: Vec<(u64, String)>,
    pub(crate) delete: Vec<u64>,
    pub(crate) post: Vec<Suggestion>,
    /// Fixes beyond [`MAX_SUGGESTIONS`].
    pub(crate) left_out: usize,
}

/// What happened, for the job summary.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ReviewOutcome {
    pub(crate) posted: usize,
    pub(crate) updated: usize,
    pub(crate) deleted: usize,
    pub(crate) unchanged: usize,
    pub(crate) left_out: usize,
    /// Suggestions GitHub refused with 422 (`path:line: message`).
    pub(crate) skipped: Vec<String>,
    /// Writes not made because the publish deadline drew near.
    pub(crate) unfinished: usize,
}

impl ReviewOutcome {
    /// One line for the "Published" section of the job summary.
    pub(crate) fn summary_line(&self) -> String {
        let mut s = format!(
            "- one-click fixes: {} posted, {} updated, {} deleted, {} unchanged",
            self.posted, self.updated, self.deleted, self.unchanged
        );
        if self.left_out > 0 {
            s.push_str(&format!(", {} left out (at most {MAX_SUGGESTIONS} per pull request)", self.left_out));
        }
        if self.unfinished > 0 {
            s.push_str(&format!(
                "; {} changes not made before the publish deadline (the next run makes them)",
                self.unfinished
            ));
        }
        if !self.skipped.is_empty() {
            s.push_str(&format!(
                "; **{} refused by GitHub** (line outside the diff): {}",
                self.skipped.len(),
                self.skipped.join("; ")
            ));
        }
        s.push('\n');
        s
    }
}

/// The stable key of a finding's suggestion: path, kind, rule, the text it
/// puts back (the base's, which a push to the pull request does not change)
/// and which occurrence of all those it is (in line order), hashed. Not the
/// line, which moves when lines above it are added.
fn key(path: &str, kind: &str, rule: &str, replacement: &str, occurrence: usize) -> String {
    let mut h = Sha256::new();
    for part in [path, kind, rule, replacement, &occurrence.to_string()] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex::encode(&h.finalize()[..8])
}

/// Markdown text from the finding (which quotes pull-request code): on one
/// line; outside its code spans, Markdown and HTML characters escaped and
/// @-mentions broken (they would notify someone); inside them, as written
/// (GitHub renders neither there). Unbalanced backticks are escaped too.
fn escape(s: &str) -> String {
    let s = one_line(s);
    let balanced = s.matches('`').count() % 2 == 0;
    let mut out = String::with_capacity(s.len() + 8);
    let mut in_code = false;
    for c in s.chars() {
        match c {
            '`' if balanced => {
                in_code = !in_code;
                out.push(c);
            }
            _ if in_code => out.push(c),
            '@' => out.push_str("@\u{2060}"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' | '!' | '&' | '$' | '{'
            | '}' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The suggestion comment's body for `f`.
pub(crate) fn body(key: &str, f: &Finding) -> Option<String> {
    let fix = f.fix.as_ref()?;
    // A fence longer than any run of backticks in the code keeps it closed.
    let longest = fix.replacement.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let b = format!(
        "{MARKER_PREFIX}{key} -->\n**retrygate** · `{}` · {}\n\n{}\n\n{fence}suggestion\n{}\n{fence}\n",
        f.kind.id(),
        escape(&fix.description),
        escape(&f.message),
        fix.replacement
    );
    (b.chars().count() <= MAX_BODY_CHARS).then_some(b)
}

/// The suggestions `findings` make: blocking findings first, then in
/// report order, at most [`MAX_SUGGESTIONS`]; and how many were left out.
pub(crate) fn suggestions(findings: &[Finding]) -> (Vec<Suggestion>, usize) {
    let mut with: Vec<usize> = (0..findings.len()).filter(|&i| findings[i].fix.is_some()).collect();
    // Occurrences count in line order, whatever the cap keeps.
    with.sort_by(|&a, &b| findings[a].sort_key().cmp(&findings[b].sort_key()));
    let mut seen: HashMap<(&str, &str, &str, &str), usize> = HashMap::new();
    let mut keys: HashMap<usize, String> = HashMap::new();
    for &i in &with {
        let f = &findings[i];
        let Some(fix) = &f.fix else { continue };
        let n = seen
            .entry((f.path.as_str(), f.kind.id(), f.rule.as_str(), fix.replacement.as_str()))
            .or_default();
        keys.insert(i, key(&f.path, f.kind.id(), &f.rule, &fix.replacement, *n));
        *n += 1;
    }
    with.sort_by(|&a, &b| findings[b].severity.cmp(&findings[a].severity));
    let mut by_place: HashSet<(&str, u32)> = HashSet::new();
    let (mut out, mut left_out) = (Vec::new(), 0);
    for i in with {
        let f = &findings[i];
        let (Some(fix), Some(k)) = (&f.fix, keys.get(&i)) else { continue };
        // Two findings with the same edit on the same lines: one suggestion.
        if !by_place.insert((f.path.as_str(), fix.line)) {
            continue;
        }
        if out.len() == MAX_SUGGESTIONS {
            left_out += 1;
            continue;
        }
        let Some(b) = body(k, f) else { continue };
        out.push(Suggestion {
            key: k.clone(),
            path: f.path.clone(),
            start_line: fix.line,
            line: fix.end_line.max(fix.line),
            body: b,
        });
    }
    (out, left_out)
}

/// This tool's suggestion comments among `comments`: the marker *and* the
/// author `me` (logins compare case-insensitively).
pub(crate) fn mine(comments: &[Value], me: &str) -> Vec<Existing> {
    let replied: HashSet<u64> =
        comments.iter().filter_map(|c| c.get("in_reply_to_id").and_then(Value::as_u64)).collect();
    comments
        .iter()
        .filter(|c| {
            c.pointer("/user/login").and_then(Value::as_str).is_some_and(|l| l.eq_ignore_ascii_case(me))
        })
        .filter_map(|c| {
            let body = c.get("body").and_then(Value::as_str)?;
            let rest = body.strip_prefix(MARKER_PREFIX)?;
            let key = rest.split_once(" -->")?.0;
            let (key, resolved) = match key.strip_suffix(" resolved") {
                Some(k) => (k.to_string(), true),
                None => (key.to_string(), false),
            };
            let num = |k: &str| c.get(k).and_then(Value::as_u64).map(|n| n as u32);
            let id = c.get("id").and_then(Value::as_u64)?;
            Some(Existing {
                id,
                key,
                replied: replied.contains(&id),
                resolved,
                path: c.get("path").and_then(Value::as_str).unwrap_or("").to_string(),
                line: num("line"),
                start_line: num("start_line"),
                body: body.to_string(),
            })
        })
        .collect()
}

/// Decides what to post, edit and delete (pure).
pub(crate) fn plan(want: Vec<Suggestion>, left_out: usize, have: &[Existing]) -> Plan {
    let mut p = Plan { left_out, ..Plan::default() };
    let mut by_key: HashMap<&str, Vec<&Existing>> = HashMap::new();
    let have: Vec<&Existing> = have.iter().filter(|e| !e.resolved).collect();
    for &e in &have {
        by_key.entry(e.key.as_str()).or_default().push(e);
    }
    let mut used: HashSet<u64> = HashSet::new();
    for s in want {
        let found = by_key.get(s.key.as_str()).and_then(|v| v.first().copied());
        match found {
            Some(e) if same_place(e, &s) => {
                used.insert(e.id);
                if e.body == s.body {
                    p.unchanged.push(e.id);
                } else {
                    p.update.push((e.id, s.body));
                }
            }
            // Moved or outdated: a comment cannot be re-anchored, only replaced.
            _ => p.post.push(s),
        }
    }
    for e in have.into_iter().filter(|e| !used.contains(&e.id)) {
        if e.replied {
            p.update.push((e.id, resolved_body(&e.key)));
        } else {
            p.delete.push(e.id);
        }
    }
    p
}

fn same_place(e: &Existing, s: &Suggestion) -> bool {
    let start = (s.start_line != s.line).then_some(s.start_line);
    e.path == s.path && e.line == Some(s.line) && e.start_line.filter(|&l| Some(l) != e.line) == start
}

/// The review comment fields of a suggestion on the head (`side: RIGHT`);
/// `start_line` only for several lines, as GitHub refuses a start equal to
/// the end.
fn comment_fields(s: &Suggestion) -> Value {
    let mut c = json!({ "path": s.path, "line": s.line, "side": "RIGHT", "body": s.body });
    if s.start_line < s.line {
        c["start_line"] = json!(s.start_line);
        c["start_side"] = json!("RIGHT");
    }
    c
}

/// The review's own body: says what the comments are, once.
pub(crate) fn review_body(n: usize) -> String {
    format!(
        "**retrygate**: {} that put back what the base branch had. Apply one with *Commit suggestion*, or all with *Add suggestion to batch*.",
        if n == 1 { "one one-click fix".to_string() } else { format!("{n} one-click fixes") }
    )
}

/// Sends one write and reads the answer's status and body.
async fn send(
    api: &Api,
    method: &str,
    what: &str,
    route: &str,
    body: Option<&Value>,
) -> Result<Value, ApiError> {
    let _paced = api.pace_write().await;
    let crab = api.crab();
    let request = async {
        let resp = match method {
            "POST" => crab._post(route, body).await,
            "PATCH" => crab._patch(route, body).await,
            _ => crab._delete(route, body).await,
        }
        .map_err(|e| ApiError::NoAnswer { what: what.to_string(), detail: e.to_string() })?;
        let status = resp.status().as_u16();
        let text = crab
            .body_to_string(resp)
            .await
            .map_err(|e| ApiError::NoAnswer { what: what.to_string(), detail: e.to_string() })?;
        Ok::<_, ApiError>((status, text))
    };
    let left = api.publish_left().saturating_sub(RESERVE);
    if left.is_zero() {
        return Err(out_of_time(api, what));
    }
    let (status, text) = tokio::time::timeout(left, request).await.map_err(|_| out_of_time(api, what))??;
    if !(200..300).contains(&status) {
        return Err(ApiError::Status { what: what.to_string(), status, message: error_text(&text) });
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn out_of_time(api: &Api, what: &str) -> ApiError {
    ApiError::Deadline {
        what: what.to_string(),
        which: super::client::Deadline::Publish,
        after: api.publish_deadline(),
    }
}

fn is_out_of_time(e: &ApiError) -> bool {
    matches!(e, ApiError::Deadline { .. })
}

/// GitHub's 422 says why in `errors`; the message alone is "Unprocessable Entity".
fn error_text(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let message = v.get("message").and_then(Value::as_str).unwrap_or("");
    let errors: Vec<String> = v
        .get("errors")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string)).collect())
        .unwrap_or_default();
    match (message, errors.is_empty()) {
        ("", true) => body.chars().take(200).collect(),
        (m, true) => m.to_string(),
        (m, false) => format!("{m}: {}", errors.join("; ")),
    }
}

/// Posts, edits and deletes this tool's suggestion comments on pull request
/// `pr` at `head_sha` so that they match `findings`, as `me`.
pub(crate) async fn publish_suggestions(
    api: &Api,
    pr: u64,
    head_sha: &str,
    me: &str,
    findings: &[Finding],
) -> Result<ReviewOutcome, ApiError> {
    let route = api.repo_route(&format!("/pulls/{pr}/comments?per_page={PER_PAGE}"));
    let listed = api.get_all("listing the pull request's review comments", &route, None).await?;
    let (want, left_out) = suggestions(findings);
    let p = plan(want, left_out, &mine(&listed, me));
    let mut out =
        ReviewOutcome { left_out: p.left_out, unchanged: p.unchanged.len(), ..ReviewOutcome::default() };
    let mut todo = p.delete.len() + p.update.len() + p.post.len();
    for id in &p.delete {
        let r = api.repo_route(&format!("/pulls/comments/{id}"));
        match send(api, "DELETE", "deleting a stale suggestion", &r, None).await {
            Ok(_) => out.deleted += 1,
            // Already gone (deleted by a person, or by a concurrent run).
            Err(e) if e.status() == Some(404) => out.deleted += 1,
            Err(e) if is_out_of_time(&e) => {
                out.unfinished = todo;
                return Ok(out);
            }
            Err(e) => return Err(e),
        }
        todo -= 1;
    }
    for (id, body) in &p.update {
        let r = api.repo_route(&format!("/pulls/comments/{id}"));
        match send(api, "PATCH", "editing a suggestion", &r, Some(&json!({ "body": body }))).await {
            Ok(_) => out.updated += 1,
            Err(e) if is_out_of_time(&e) => {
                out.unfinished = todo;
                return Ok(out);
            }
            Err(e) => return Err(e),
        }
        todo -= 1;
    }
    if p.post.is_empty() {
        return Ok(out);
    }
    let review = json!({
        "commit_id": head_sha,
        "event": REVIEW_EVENT,
        "body": review_body(p.post.len()),
        "comments": p.post.iter().map(comment_fields).collect::<Vec<_>>(),
    });
    let r = api.repo_route(&format!("/pulls/{pr}/reviews"));
    match send(api, "POST", "posting the one-click fixes", &r, Some(&review)).await {
        Ok(_) => {
            out.posted += p.post.len();
            return Ok(out);
        }
        Err(e) if e.status() == Some(422) => {
            tracing::warn!("{e}; posting the suggestions one at a time");
        }
        Err(e) if is_out_of_time(&e) => {
            out.unfinished = todo;
            return Ok(out);
        }
        Err(e) => return Err(e),
    }
    // One bad line refused the whole review: the rest go one by one.
    let r = api.repo_route(&format!("/pulls/{pr}/comments"));
    for s in &p.post {
        let mut c = comment_fields(s);
        c["commit_id"] = json!(head_sha);
        match send(api, "POST", "posting a one-click fix", &r, Some(&c)).await {
            Ok(_) => out.posted += 1,
            Err(e) if e.status() == Some(422) => {
                tracing::warn!("{}:{}: {e}; skipped", s.path, s.line);
                out.skipped.push(format!("{}:{}: {}", s.path, s.line, one_line(&e.to_string())));
            }
            Err(e) if is_out_of_time(&e) => {
                out.unfinished = todo;
                return Ok(out);
            }
            Err(e) => return Err(e),
        }
        todo -= 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Fix, Kind, Severity};

    fn fixed(path: &str, line: u32, replacement: &str) -> Finding {
        Finding::new(Kind::RetryCountRaised, "rust/backon-attempts", path, line)
            .message("retries raised from 2 to 6 by @someone <b>")
            .fix(Fix {
                description: "put back the base's count".into(),
                line,
                end_line: line,
                replacement: replacement.into(),
            })
    }

    #[test]
    fn bodies_carry_the_marker_a_suggestion_and_no_mentions() {
        let (s, left) = suggestions(&[fixed("src/a.rs", 3, "    .with_max_times(2)")]);
        assert_eq!(left, 0);
        let b = &s[0].body;
        assert!(b.starts_with(MARKER_PREFIX), "{b}");
        assert!(b.contains("```suggestion\n    .with_max_times(2)\n```\n"), "{b}");
        assert!(!b.contains("@someone") && b.contains("\\<b\\>"), "{b}");
        let code = fixed("src/a.rs", 3, "let s = \"```\";");
        let (s, _) = suggestions(&[code]);
        assert!(s[0].body.contains("````suggestion\n"), "a longer fence: {}", s[0].body);
    }

    #[test]
    fn code_spans_stay_code_and_the_rest_is_escaped() {
        assert_eq!(
            escape("raised (`for a in 0..=MAX<T>`) by *x*"),
            "raised (`for a in 0..=MAX<T>`) by \\*x\\*"
        );
        assert_eq!(escape("odd ` tick"), "odd \\` tick");
        assert_eq!(escape("`@team` and @team"), "`@team` and @\u{2060}team");
    }

    #[test]
    fn blocking_first_and_capped() {
        let mut v: Vec<Finding> =
            (1..=25).map(|i| fixed("src/a.rs", i, "x").severity(Severity::Warning)).collect();
        v.push(fixed("src/z.rs", 99, "y"));
        let (s, left) = suggestions(&v);
        assert_eq!(s.len(), MAX_SUGGESTIONS);
        assert_eq!(left, 6);
        assert_eq!(s[0].path, "src/z.rs", "the blocking one first");
        // Keys stay the same whatever the cap keeps, and whatever went before.
        let (again, _) = suggestions(&v[..3]);
        assert_eq!(again[0].key, s[1].key);
        let (later, _) = suggestions(&[fixed("src/a.rs", 7, "keep"), fixed("src/a.rs", 9, "other")]);
        let (alone, _) = suggestions(&[fixed("src/a.rs", 9, "other")]);
        assert_eq!(later[1].key, alone[0].key, "a fixed finding above does not re-key the rest");
    }

    #[test]
    fn plan_keeps_edits_replaces_and_deletes() {
        let (want, _) = suggestions(&[fixed("src/a.rs", 3, "a"), fixed("src/a.rs", 9, "b")]);
        let existing = |id, s: &Suggestion, line, body: &str| Existing {
            id,
            key: s.key.clone(),
            path: s.path.clone(),
            line,
            start_line: None,
            body: body.to_string(),
            replied: false,
            resolved: false,
        };
        let have = vec![
            existing(1, &want[0], Some(3), &want[0].body),
            existing(2, &want[1], Some(9), "old"),
            Existing {
                id: 3,
                key: "gone".into(),
                path: "src/b.rs".into(),
                line: Some(1),
                start_line: None,
                body: String::new(),
                replied: false,
                resolved: false,
            },
        ];
        let p = plan(want.clone(), 0, &have);
        assert_eq!(p.unchanged, vec![1]);
        assert_eq!(p.update, vec![(2, want[1].body.clone())]);
        assert_eq!(p.delete, vec![3]);
        assert!(p.post.is_empty());
        // Outdated (line null) or moved: replaced.
        let have =
            vec![existing(1, &want[0], None, &want[0].body), existing(2, &want[1], Some(10), &want[1].body)];
        let p = plan(want.clone(), 0, &have);
        assert_eq!(p.post.len(), 2);
        assert_eq!(p.delete, vec![1, 2]);
        // Answered: closed with a note, and left alone once closed.
        let mut answered = existing(4, &want[0], Some(99), &want[0].body);
        answered.replied = true;
        let p = plan(Vec::new(), 0, std::slice::from_ref(&answered));
        assert_eq!(p.update, vec![(4, resolved_body(&want[0].key))]);
        assert!(p.delete.is_empty());
        answered.resolved = true;
        let p = plan(want.clone(), 0, &[answered]);
        assert_eq!(p.post.len(), 2, "a closed one is not the suggestion any more");
        assert!(p.update.is_empty() && p.delete.is_empty());
    }

    #[test]
    fn only_my_marked_comments_are_mine() {
        let body = format!("{MARKER_PREFIX}abc -->\nx");
        let comments = vec![
            json!({"id": 1, "user": {"login": "mallory"}, "body": body, "path": "a", "line": 1}),
            json!({"id": 2, "user": {"login": "github-actions[bot]"}, "body": "plain", "path": "a", "line": 1}),
            json!({"id": 3, "user": {"login": "GitHub-Actions[bot]"}, "body": body, "path": "a", "line": null}),
        ];
        let m = mine(&comments, "github-actions[bot]");
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].id, m[0].key.as_str(), m[0].line), (3, "abc", None));
        let reply = json!({"id": 4, "user": {"login": "octo"}, "body": "why?", "in_reply_to_id": 3});
        let closed = json!({"id": 5, "user": {"login": "github-actions[bot]"}, "body": resolved_body("k")});
        let m = mine(&[comments[2].clone(), reply, closed], "github-actions[bot]");
        assert!(m[0].replied && !m[0].resolved);
        assert!(m[1].resolved && m[1].key == "k");
    }

    #[test]
    fn the_review_only_comments() {
        assert_eq!(REVIEW_EVENT, "COMMENT");
        let (s, _) = suggestions(&[fixed("src/a.rs", 3, "a\nb")]);
        let c = comment_fields(&Suggestion { start_line: 3, line: 4, ..s[0].clone() });
        assert_eq!(
            (c["start_line"].as_u64(), c["line"].as_u64(), c["side"].as_str()),
            (Some(3), Some(4), Some("RIGHT"))
        );
        assert!(comment_fields(&s[0]).get("start_line").is_none(), "no start_line for one line");
    }

    #[test]
    fn a_422_reads_with_its_reason() {
        let body = r#"{"message":"Unprocessable Entity","errors":["Pull request review thread line must be part of the diff"],"status":"422"}"#;
        assert_eq!(
            error_text(body),
            "Unprocessable Entity: Pull request review thread line must be part of the diff"
        );
    }
}
