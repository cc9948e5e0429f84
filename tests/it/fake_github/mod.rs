//! A stateful fake of the parts of the GitHub REST and GraphQL APIs that
//! `retrygate github` uses, on a loopback port (hyper on tokio).
//!
//! It answers with GitHub's shapes (objects built from the real payloads in
//! `tests/fixtures/github/`) and keeps octocrab's quirks honest: an issue
//! comment is edited by POST to its URL (octocrab's `update_comment`), a
//! trailing `?` on a URL is tolerated, list pages carry absolute `Link`
//! headers. Tokens decide identity and rights: a read-only token gets 403
//! "Resource not accessible by integration" on every write, the Actions
//! token gets 403 on `GET /user`, a personal token may not create check runs.
//! Faults can be injected on a chosen request (a status before or after the
//! write is applied, a 429 with `retry-after`), and every request is logged.
//!
//! Pull-request review comments behave as on github.com: a review (or a
//! single comment) whose `line`/`start_line` is not on the right side of a
//! hunk of the pull request's diff (set with [`FakeGithub::set_diff`]) is
//! refused with 422 and GitHub's message, and a refused review posts none of
//! its comments; only a comment's author may edit or delete it; a comment
//! made outdated by a push ([`FakeGithub::outdate`]) lists with `line: null`.
//!
//! Actions artifacts behave as on github.com: the list is filtered by
//! `name` and ordered newest first, each entry naming its `workflow_run`;
//! `GET …/artifacts/{id}/zip` answers `302` to a signed URL on another path
//! (`/_blob/…`) that serves the zip without a token and refuses a request
//! that carries one (a token must never travel to the storage host), or
//! `410` once the artifact has expired.

#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use serde_json::{json, Value};

pub(crate) const OWNER_REPO: &str = "Codertocat/Hello-World";

/// Who a token is and what it may do.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub login: String,
    /// `GET /user` answers (a personal token) or is refused (Actions, Apps).
    pub user_endpoint: bool,
    /// Every write is refused (a fork PR's token).
    pub read_only: bool,
    /// Check runs may be created (GitHub Apps, incl. Actions' token) or not
    /// (a personal token).
    pub can_create_checks: bool,
}

/// Tokens the tests use.
pub(crate) const ACTIONS_TOKEN: &str = "ghs_actions";
pub(crate) const READ_ONLY_TOKEN: &str = "ghs_readonly";
pub(crate) const PERSONAL_TOKEN: &str = "ghp_personal";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FaultKind {
    /// Answer this status without applying the request.
    Before(u16),
    /// Apply the request, then answer this status (a gateway that timed out
    /// after the write landed).
    After(u16),
    /// Answer 429 with `retry-after: N` seconds.
    RateLimit(u32),
    /// A proxy's answer: 200 with an HTML page; the request is applied
    /// first when `true`.
    Html(bool),
    /// A slow write: the request is applied `apply_ms` after it arrived and
    /// answered `answer_ms` after it arrived (a client with a shorter
    /// deadline gives up before, and the write lands after it did).
    Late { apply_ms: u64, answer_ms: u64 },
}

#[derive(Debug, Clone)]
pub(crate) struct Fault {
    pub method: String,
    /// The path (without query) must contain this.
    pub path_contains: String,
    /// Matching requests to let through before failing one.
    pub skip: usize,
    pub kind: FaultKind,
    seen: usize,
    used: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Logged {
    /// Whether the request carried an `Authorization` header.
    pub authorized: bool,
    pub method: String,
    pub path: String,
    pub query: String,
    pub status: u16,
    pub at: Instant,
    pub body: Value,
}

impl Logged {
    /// The record of a request answered now with `status`.
    fn now(auth: &str, method: String, path: String, query: String, status: u16, body: Value) -> Logged {
        Logged { authorized: !auth.is_empty(), method, path, query, status, at: Instant::now(), body }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct CheckRun {
    pub id: u64,
    pub name: String,
    pub external_id: Option<String>,
    pub head_sha: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub annotations: Vec<Value>,
}

#[derive(Debug, Clone)]
pub(crate) struct Comment {
    pub id: u64,
    pub issue: u64,
    pub login: String,
    pub body: String,
}

/// A pull-request review comment.
#[derive(Debug, Clone)]
pub(crate) struct ReviewComment {
    pub id: u64,
    pub pr: u64,
    pub review_id: u64,
    pub login: String,
    pub body: String,
    pub path: String,
    pub commit_id: String,
    /// `None` once outdated.
    pub line: Option<u64>,
    pub original_line: u64,
    pub start_line: Option<u64>,
    pub side: String,
    /// The comment this one answers, in its thread.
    pub in_reply_to: Option<u64>,
}

/// A submitted pull-request review.
#[derive(Debug, Clone)]
pub(crate) struct Review {
    pub id: u64,
    pub pr: u64,
    pub login: String,
    pub state: String,
    pub body: String,
    pub commit_id: String,
}

/// An Actions artifact and the zip it serves.
#[derive(Debug, Clone)]
pub(crate) struct Artifact {
    pub id: u64,
    pub name: String,
    pub run_id: u64,
    pub head_sha: String,
    pub created_at: String,
    pub expired: bool,
    /// Expired since it was listed: the list says `expired: false`, the
    /// download answers 410.
    pub gone: bool,
    /// What the list says; `None` = the zip's real length.
    pub size_in_bytes: Option<u64>,
    pub zip: Vec<u8>,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub artifacts: Vec<Artifact>,
    pub tokens: HashMap<String, Token>,
    pub pulls: HashMap<u64, Value>,
    /// login -> (permission, role_name)
    pub permissions: HashMap<String, (String, String)>,
    pub check_runs: Vec<CheckRun>,
    pub statuses: Vec<Value>,
    pub comments: Vec<Comment>,
    pub review_comments: Vec<ReviewComment>,
    pub reviews: Vec<Review>,
    /// (pull request, path) -> head-side line ranges of the diff's hunks.
    pub diffs: HashMap<(u64, String), Vec<(u64, u64)>>,
    pub graphql: Vec<Value>,
    /// When set, GraphQL answers with this error message.
    pub graphql_error: Option<String>,
    pub faults: Vec<Fault>,
    pub log: Vec<Logged>,
    /// Items per page at most, whatever `per_page` asks (forces pagination).
    pub page_cap: usize,
    /// Pull requests the list of a commit's pull requests leaves out, as
    /// GitHub's does for a commit already on the default branch (it names
    /// only the pull request that merged it).
    pub commit_pulls_hidden: Vec<u64>,
    next_id: u64,
    pub port: u16,
}

/// The fake, serving until dropped.
pub(crate) struct FakeGithub {
    pub url: String,
    pub state: Arc<Mutex<State>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/github/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A user object in GitHub's shape, from the payload fixtures.
pub(crate) fn user(login: &str) -> Value {
    let mut u = fixture("pull_request__opened.payload.json")["sender"].clone();
    u["login"] = json!(login);
    u["type"] = json!(if login.ends_with("[bot]") { "Bot" } else { "User" });
    u
}

impl FakeGithub {
    pub(crate) fn start() -> FakeGithub {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let port = std_listener.local_addr().expect("addr").port();
        let mut st = State { port, page_cap: 100, next_id: 1000, ..State::default() };
        for (t, login, user_endpoint, read_only, checks) in [
            (ACTIONS_TOKEN, "github-actions[bot]", false, false, true),
            (READ_ONLY_TOKEN, "github-actions[bot]", false, true, true),
            (PERSONAL_TOKEN, "octo-maintainer", true, false, false),
        ] {
            st.tokens.insert(
                t.to_string(),
                Token { login: login.into(), user_endpoint, read_only, can_create_checks: checks },
            );
        }
        let state = Arc::new(Mutex::new(st));
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let shared = state.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).expect("listener");
                loop {
                    tokio::select! {
                        _ = &mut rx => break,
                        accepted = listener.accept() => {
                            let Ok((stream, _)) = accepted else { continue };
                            let state = shared.clone();
                            tokio::spawn(async move {
                                let svc = hyper::service::service_fn(move |req| handle(state.clone(), req));
                                let _ = hyper::server::conn::http1::Builder::new()
                                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                                    .await;
                            });
                        }
                    }
                }
            });
        });
        FakeGithub {
            url: format!("http://127.0.0.1:{port}"),
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().expect("fake state"))
    }

    /// Adds pull request `number` from the `pull_request.opened` fixture,
    /// with the given head and base SHAs.
    pub(crate) fn add_pull(&self, number: u64, head: &str, base: &str) -> Value {
        let mut pr = fixture("pull_request__opened.payload.json")["pull_request"].clone();
        pr["number"] = json!(number);
        pr["head"]["sha"] = json!(head);
        pr["base"]["sha"] = json!(base);
        self.with(|s| s.pulls.insert(number, pr.clone()));
        pr
    }

    pub(crate) fn set_permission(&self, login: &str, permission: &str, role: &str) {
        self.with(|s| s.permissions.insert(login.to_string(), (permission.to_string(), role.to_string())));
    }

    pub(crate) fn fault(&self, method: &str, path_contains: &str, skip: usize, kind: FaultKind) {
        self.with(|s| {
            s.faults.push(Fault {
                method: method.into(),
                path_contains: path_contains.into(),
                skip,
                kind,
                seen: 0,
                used: false,
            })
        });
    }

    /// A check run the runner made for a job, as GitHub Actions does.
    pub(crate) fn add_job_check_run(&self, name: &str, head_sha: &str) -> u64 {
        self.with(|s| {
            s.next_id += 1;
            let id = s.next_id;
            s.check_runs.push(CheckRun {
                id,
                name: name.into(),
                external_id: Some("d3e3b6ad-fb11-5de5-1243-51ac1bbad548".into()),
                head_sha: head_sha.into(),
                status: "in_progress".into(),
                conclusion: None,
                title: None,
                summary: None,
                text: None,
                annotations: Vec::new(),
            });
            id
        })
    }

    pub(crate) fn add_comment(&self, issue: u64, login: &str, body: &str) -> u64 {
        self.with(|s| {
            s.next_id += 1;
            let id = s.next_id;
            s.comments.push(Comment { id, issue, login: login.into(), body: body.into() });
            id
        })
    }

    /// Adds an artifact uploaded by workflow run `run_id` on `head_sha`,
    /// created at `created_at` (ISO 8601); returns its id.
    pub(crate) fn add_artifact(
        &self,
        name: &str,
        run_id: u64,
        head_sha: &str,
        created_at: &str,
        zip: Vec<u8>,
    ) -> u64 {
        self.with(|s| {
            s.next_id += 1;
            let id = s.next_id;
            s.artifacts.push(Artifact {
                id,
                name: name.into(),
                run_id,
                head_sha: head_sha.into(),
                created_at: created_at.into(),
                expired: false,
                gone: false,
                size_in_bytes: None,
                zip,
            });
            id
        })
    }

    pub(crate) fn log(&self) -> Vec<Logged> {
        self.with(|s| s.log.clone())
    }

    /// Requests whose method is `method` and whose path contains `path`.
    pub(crate) fn count(&self, method: &str, path: &str) -> usize {
        self.log().iter().filter(|l| l.method == method && l.path.contains(path)).count()
    }

    /// The head-side line ranges (inclusive) of `path`'s hunks in pull
    /// request `pr`'s diff: where review comments may go.
    pub(crate) fn set_diff(&self, pr: u64, path: &str, hunks: &[(u64, u64)]) {
        self.with(|s| s.diffs.insert((pr, path.to_string()), hunks.to_vec()));
    }

    /// Marks review comment `id` outdated, as a push that changed its lines does.
    pub(crate) fn outdate(&self, id: u64) {
        self.with(|s| s.review_comments.iter_mut().filter(|c| c.id == id).for_each(|c| c.line = None));
    }

    pub(crate) fn review_comments(&self) -> Vec<ReviewComment> {
        self.with(|s| s.review_comments.clone())
    }

    pub(crate) fn reviews(&self) -> Vec<Review> {
        self.with(|s| s.reviews.clone())
    }

    /// A review comment written by someone else (or planted with our marker).
    pub(crate) fn add_review_comment(&self, pr: u64, login: &str, path: &str, line: u64, body: &str) -> u64 {
        self.with(|s| {
            s.next_id += 1;
            let id = s.next_id;
            s.review_comments.push(ReviewComment {
                id,
                pr,
                review_id: 0,
                login: login.into(),
                body: body.into(),
                path: path.into(),
                commit_id: String::new(),
                line: Some(line),
                original_line: line,
                start_line: None,
                side: "RIGHT".into(),
                in_reply_to: None,
            });
            id
        })
    }

    /// A reply by `login` in the thread of review comment `to`.
    pub(crate) fn reply_to(&self, to: u64, login: &str, body: &str) -> u64 {
        let (pr, path, line) = self.with(|s| {
            let c = s.review_comments.iter().find(|c| c.id == to).expect("comment replied to");
            (c.pr, c.path.clone(), c.original_line)
        });
        let id = self.add_review_comment(pr, login, &path, line, body);
        self.with(|s| {
            s.review_comments.iter_mut().filter(|c| c.id == id).for_each(|c| c.in_reply_to = Some(to))
        });
        id
    }

    pub(crate) fn comments(&self) -> Vec<Comment> {
        self.with(|s| s.comments.clone())
    }

    pub(crate) fn check_runs(&self) -> Vec<CheckRun> {
        self.with(|s| s.check_runs.clone())
    }
}

impl Drop for FakeGithub {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn reply(status: u16, body: Value) -> (u16, Value, Vec<(String, String)>) {
    (status, body, Vec::new())
}

fn not_found() -> (u16, Value, Vec<(String, String)>) {
    reply(404, json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}))
}

fn forbidden() -> (u16, Value, Vec<(String, String)>) {
    reply(
        403,
        json!({"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest"}),
    )
}

async fn handle(
    state: Arc<Mutex<State>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().as_str().to_string();
    let path = req.uri().path().trim_end_matches('?').to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_start_matches("Bearer ").trim_start_matches("token ").to_string())
        .unwrap_or_default();
    let bytes = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    match serve(&state, &method, &path, &query, &auth, &body) {
        Ok(resp) => Ok(resp),
        Err((apply_ms, answer_ms)) => {
            // Applied on a task of its own: a client that gave up and closed
            // the connection does not stop the write from landing.
            let shared = state.clone();
            let applied = tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(apply_ms)).await;
                let mut st = shared.lock().expect("fake state");
                let (status, out, _) = route(&mut st, &method, &path, &query, &auth, &body);
                st.log.push(Logged::now(&auth, method, path, query, status, body));
                (status, out)
            });
            tokio::time::sleep(std::time::Duration::from_millis(answer_ms)).await;
            let (status, out) = applied.await.expect("the late write");
            let resp =
                Response::builder().status(status).header("content-type", "application/json; charset=utf-8");
            Ok(resp.body(Full::new(Bytes::from(out.to_string()))).expect("response"))
        }
    }
}

/// Answers one request, or says it is a [`FaultKind::Late`] one: applied
/// after `.0` ms and answered after `.1` ms, which [`handle`] does without
/// holding the state.
fn serve(
    state: &Arc<Mutex<State>>,
    method: &str,
    path: &str,
    query: &str,
    auth: &str,
    body: &Value,
) -> Result<Response<Full<Bytes>>, (u64, u64)> {
    let (method, path, query, auth, body) =
        (method.to_string(), path.to_string(), query.to_string(), auth.to_string(), body.clone());
    let mut st = state.lock().expect("fake state");
    // The artifact storage: a signed URL, no token (and none accepted).
    if let Some(id) = path.strip_prefix("/_blob/artifacts/") {
        let found = st.artifacts.iter().find(|a| a.id.to_string() == id).map(|a| a.zip.clone());
        let (status, bytes) = match found {
            _ if !auth.is_empty() => (
                400,
                Bytes::from_static(
                    b"InvalidAuthenticationInfo: the URL is signed; send no Authorization header",
                ),
            ),
            _ if !query.contains("sig=") => (403, Bytes::from_static(b"AuthenticationFailed")),
            Some(zip) => (200, Bytes::from(zip)),
            None => (404, Bytes::from_static(b"BlobNotFound")),
        };
        st.log.push(Logged::now(&auth, method, path, query, status, Value::Null));
        let resp = Response::builder().status(status).header("content-type", "application/zip");
        return Ok(resp.body(Full::new(bytes)).expect("response"));
    }
    // Injected faults.
    let mut fault = None;
    for f in st.faults.iter_mut() {
        if !f.used && f.method == method && path.contains(&f.path_contains) {
            if f.seen == f.skip {
                f.used = true;
                fault = Some(f.kind);
                break;
            }
            f.seen += 1;
        }
    }
    if let Some(FaultKind::Late { apply_ms, answer_ms }) = fault {
        return Err((apply_ms, answer_ms));
    }
    if let Some(FaultKind::Html(apply)) = fault {
        let status = if apply { route(&mut st, &method, &path, &query, &auth, &body).0 } else { 0 };
        st.log.push(Logged::now(&auth, method, path, query, status, body));
        drop(st);
        let resp = Response::builder().status(200).header("content-type", "text/html");
        return Ok(resp
            .body(Full::new(Bytes::from_static(
                b"<html><body><h1>Unicorn!</h1>This page is taking too long to load.</body></html>",
            )))
            .expect("response"));
    }
    let (status, out, headers) = match fault {
        Some(FaultKind::Before(code)) => reply(code, json!({"message": "Bad Gateway (injected)"})),
        Some(FaultKind::RateLimit(secs)) => (
            429,
            json!({"message": "You have exceeded a secondary rate limit (injected)"}),
            vec![("retry-after".to_string(), secs.to_string())],
        ),
        Some(FaultKind::After(code)) => {
            let _ = route(&mut st, &method, &path, &query, &auth, &body);
            reply(code, json!({"message": "Bad Gateway (injected after applying)"}))
        }
        None | Some(FaultKind::Html(_) | FaultKind::Late { .. }) => {
            route(&mut st, &method, &path, &query, &auth, &body)
        }
    };
    st.log.push(Logged::now(&auth, method, path, query, status, body));
    drop(st);
    let mut resp =
        Response::builder().status(status).header("content-type", "application/json; charset=utf-8");
    for (k, v) in headers {
        resp = resp.header(k, v);
    }
    let text = if out.is_null() { String::new() } else { out.to_string() };
    Ok(resp.body(Full::new(Bytes::from(text))).expect("response"))
}

fn query_param(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v.to_string()))
}

/// One page of `items`, with an absolute `Link` to the next.
fn paginate(st: &State, path: &str, query: &str, items: Vec<Value>) -> (Vec<Value>, Vec<(String, String)>) {
    let per_page = query_param(query, "per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30usize)
        .min(st.page_cap)
        .max(1);
    let page = query_param(query, "page").and_then(|v| v.parse().ok()).unwrap_or(1usize).max(1);
    let start = (page - 1) * per_page;
    let slice: Vec<Value> = items.iter().skip(start).take(per_page).cloned().collect();
    let mut headers = Vec::new();
    if start + per_page < items.len() {
        let rest: Vec<&str> =
            query.split('&').filter(|kv| !kv.starts_with("page=") && !kv.is_empty()).collect();
        let mut q = rest.join("&");
        if !q.is_empty() {
            q.push('&');
        }
        headers.push((
            "link".to_string(),
            format!("<http://127.0.0.1:{}{path}?{q}page={}>; rel=\"next\"", st.port, page + 1),
        ));
    }
    (slice, headers)
}

fn check_run_json(st: &State, run: &CheckRun) -> Value {
    let mut v = fixture("commit_check_runs.json")["check_runs"][0].clone();
    v["id"] = json!(run.id);
    v["name"] = json!(run.name);
    v["external_id"] = json!(run.external_id);
    v["head_sha"] = json!(run.head_sha);
    v["status"] = json!(run.status);
    v["conclusion"] = json!(run.conclusion);
    v["url"] = json!(format!("http://127.0.0.1:{}/repos/{OWNER_REPO}/check-runs/{}", st.port, run.id));
    v["output"] = json!({
        "title": run.title, "summary": run.summary, "text": run.text,
        "annotations_count": run.annotations.len(),
        "annotations_url": format!("http://127.0.0.1:{}/repos/{OWNER_REPO}/check-runs/{}/annotations", st.port, run.id),
    });
    v["pull_requests"] = json!([]);
    v
}

fn artifact_json(st: &State, a: &Artifact) -> Value {
    let mut v = fixture("repository_artifacts.json")["artifacts"][0].clone();
    let api = format!("http://127.0.0.1:{}/repos/{OWNER_REPO}/actions/artifacts/{}", st.port, a.id);
    v["id"] = json!(a.id);
    v["name"] = json!(a.name);
    v["size_in_bytes"] = json!(a.size_in_bytes.unwrap_or(a.zip.len() as u64));
    v["url"] = json!(api);
    v["archive_download_url"] = json!(format!("{api}/zip"));
    v["expired"] = json!(a.expired);
    v["created_at"] = json!(a.created_at);
    v["updated_at"] = json!(a.created_at);
    v["expires_at"] = json!(if a.expired { "2026-11-01T00:00:00Z" } else { "2027-02-27T00:00:00Z" });
    v["workflow_run"]["id"] = json!(a.run_id);
    v["workflow_run"]["head_sha"] = json!(a.head_sha);
    v
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(x) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(x);
                i += 3;
                continue;
            }
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn comment_json(st: &State, c: &Comment) -> Value {
    let mut v = fixture("issue_comment__created.payload.json")["comment"].clone();
    v["id"] = json!(c.id);
    v["body"] = json!(c.body);
    v["user"] = user(&c.login);
    v["url"] = json!(format!("http://127.0.0.1:{}/repos/{OWNER_REPO}/issues/comments/{}", st.port, c.id));
    v["issue_url"] = json!(format!("http://127.0.0.1:{}/repos/{OWNER_REPO}/issues/{}", st.port, c.issue));
    v
}

fn review_comment_json(st: &State, c: &ReviewComment) -> Value {
    let api = format!("http://127.0.0.1:{}/repos/{OWNER_REPO}", st.port);
    json!({
        "url": format!("{api}/pulls/comments/{}", c.id),
        "pull_request_review_id": c.review_id,
        "id": c.id,
        "node_id": format!("PRRC_fake{}", c.id),
        "diff_hunk": "@@ -1,3 +1,3 @@",
        "path": c.path,
        "commit_id": c.commit_id,
        "original_commit_id": c.commit_id,
        "user": user(&c.login),
        "body": c.body,
        "created_at": "2026-11-30T12:00:00Z",
        "updated_at": "2026-11-30T12:00:00Z",
        "html_url": format!("https://github.com/{OWNER_REPO}/pull/{}#discussion_r{}", c.pr, c.id),
        "pull_request_url": format!("{api}/pulls/{}", c.pr),
        "author_association": "NONE",
        "start_line": c.start_line,
        "original_start_line": c.start_line,
        "start_side": c.start_line.map(|_| "RIGHT"),
        "line": c.line,
        "original_line": c.original_line,
        "side": c.side,
        "subject_type": "line",
        "in_reply_to_id": c.in_reply_to,
    })
}

/// GitHub's 422 for a review thread off the diff.
fn outside_diff(documentation: &str) -> (u16, Value, Vec<(String, String)>) {
    reply(
        422,
        json!({
            "message": "Unprocessable Entity",
            "errors": ["Pull request review thread line must be part of the diff"],
            "documentation_url": documentation,
            "status": "422",
        }),
    )
}

/// Whether a comment's `line` (and `start_line`, in the same hunk) lies in
/// the diff of `pr` on the head side.
fn on_diff(st: &State, pr: u64, c: &Value) -> bool {
    let Some(hunks) = c["path"].as_str().and_then(|p| st.diffs.get(&(pr, p.to_string()))) else {
        return false;
    };
    let Some(line) = c["line"].as_u64() else { return false };
    let start = c["start_line"].as_u64().unwrap_or(line);
    c["side"].as_str().unwrap_or("RIGHT") == "RIGHT"
        && start <= line
        && hunks.iter().any(|&(a, b)| a <= start && line <= b)
}

fn new_review_comment(
    st: &mut State,
    pr: u64,
    review_id: u64,
    login: &str,
    commit: &str,
    c: &Value,
) -> ReviewComment {
    st.next_id += 1;
    let line = c["line"].as_u64();
    ReviewComment {
        id: st.next_id,
        pr,
        review_id,
        login: login.to_string(),
        body: c["body"].as_str().unwrap_or("").to_string(),
        path: c["path"].as_str().unwrap_or("").to_string(),
        commit_id: commit.to_string(),
        line,
        original_line: line.unwrap_or(0),
        start_line: c["start_line"].as_u64(),
        side: c["side"].as_str().unwrap_or("RIGHT").to_string(),
        in_reply_to: None,
    }
}

fn apply_output(run: &mut CheckRun, body: &Value) {
    if let Some(o) = body.get("output") {
        run.title = o.get("title").and_then(Value::as_str).map(str::to_string).or(run.title.take());
        run.summary = o.get("summary").and_then(Value::as_str).map(str::to_string).or(run.summary.take());
        run.text = o.get("text").and_then(Value::as_str).map(str::to_string).or(run.text.take());
        if let Some(a) = o.get("annotations").and_then(Value::as_array) {
            assert!(a.len() <= 50, "GitHub refuses more than 50 annotations per request, got {}", a.len());
            run.annotations.extend(a.iter().cloned());
        }
    }
    if let Some(c) = body.get("conclusion").and_then(Value::as_str) {
        assert_ne!(c, "neutral", "a gate must never report neutral");
        run.conclusion = Some(c.to_string());
    }
    if let Some(s) = body.get("status").and_then(Value::as_str) {
        run.status = s.to_string();
    }
    if let Some(e) = body.get("external_id").and_then(Value::as_str) {
        run.external_id = Some(e.to_string());
    }
}

fn route(
    st: &mut State,
    method: &str,
    path: &str,
    query: &str,
    auth: &str,
    body: &Value,
) -> (u16, Value, Vec<(String, String)>) {
    let Some(token) = st.tokens.get(auth).cloned() else {
        return reply(401, json!({"message": "Bad credentials"}));
    };
    if method != "GET" && token.read_only {
        return forbidden();
    }
    if path == "/user" && method == "GET" {
        return if token.user_endpoint { reply(200, user(&token.login)) } else { forbidden() };
    }
    if path == "/graphql" && method == "POST" {
        st.graphql.push(body.clone());
        return match &st.graphql_error {
            Some(m) => reply(200, json!({"data": null, "errors": [{"message": m, "type": "FORBIDDEN"}]})),
            None => {
                reply(200, json!({"data": {"disablePullRequestAutoMerge": {"pullRequest": {"number": 2}}}}))
            }
        };
    }
    let prefix = format!("/repos/{OWNER_REPO}/");
    let Some(rest) = path.strip_prefix(&prefix) else { return not_found() };
    let parts: Vec<&str> = rest.split('/').collect();
    match (method, parts.as_slice()) {
        ("GET", ["pulls", n]) => match n.parse::<u64>().ok().and_then(|n| st.pulls.get(&n)) {
            Some(pr) => reply(200, pr.clone()),
            None => not_found(),
        },
        ("GET", ["collaborators", login, "permission"]) => {
            let login = login.replace("%5B", "[").replace("%5D", "]");
            let (permission, role) =
                st.permissions.get(&login).cloned().unwrap_or(("none".into(), "none".into()));
            reply(200, json!({"permission": permission, "role_name": role, "user": user(&login)}))
        }
        // Pull requests associated with a commit: open ones whose branch
        // holds it (here: whose head it is), any state.
        ("GET", ["commits", sha, "pulls"]) => {
            let mut all: Vec<Value> = st
                .pulls
                .values()
                .filter(|p| p["head"]["sha"].as_str() == Some(*sha))
                .filter(|p| p["number"].as_u64().is_none_or(|n| !st.commit_pulls_hidden.contains(&n)))
                .cloned()
                .collect();
            all.sort_by_key(|p| p["number"].as_u64());
            let (page, headers) = paginate(st, path, query, all);
            (200, Value::Array(page), headers)
        }
        // Newest first, as GitHub lists them.
        ("GET", ["commits", sha, "statuses"]) => {
            let all: Vec<Value> = st
                .statuses
                .iter()
                .rev()
                .filter(|v| v["url"].as_str().is_some_and(|u| u.ends_with(&format!("/statuses/{sha}"))))
                .cloned()
                .collect();
            let (page, headers) = paginate(st, path, query, all);
            (200, Value::Array(page), headers)
        }
        ("GET", ["commits", sha, "check-runs"]) => {
            let name = query_param(query, "check_name");
            let runs: Vec<Value> = st
                .check_runs
                .iter()
                .filter(|r| r.head_sha == *sha && name.as_deref().is_none_or(|n| n == r.name))
                .map(|r| check_run_json(st, r))
                .collect();
            let total = runs.len();
            let (page, headers) = paginate(st, path, query, runs);
            (200, json!({"total_count": total, "check_runs": page}), headers)
        }
        ("POST", ["check-runs"]) => {
            if !token.can_create_checks {
                return forbidden();
            }
            st.next_id += 1;
            let mut run = CheckRun {
                id: st.next_id,
                name: body["name"].as_str().unwrap_or("").to_string(),
                external_id: body["external_id"].as_str().map(str::to_string),
                head_sha: body["head_sha"].as_str().unwrap_or("").to_string(),
                status: "queued".into(),
                conclusion: None,
                title: None,
                summary: None,
                text: None,
                annotations: Vec::new(),
            };
            apply_output(&mut run, body);
            let out = check_run_json(st, &run);
            st.check_runs.push(run);
            reply(201, out)
        }
        ("PATCH", ["check-runs", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let Some(i) = st.check_runs.iter().position(|r| r.id == id) else { return not_found() };
            let mut run = st.check_runs[i].clone();
            apply_output(&mut run, body);
            st.check_runs[i] = run.clone();
            reply(200, check_run_json(st, &run))
        }
        ("POST", ["statuses", sha]) => {
            st.next_id += 1;
            let v = json!({
                "url": format!("http://127.0.0.1:{}/repos/{OWNER_REPO}/statuses/{sha}", st.port),
                "id": st.next_id, "node_id": "MDY6U3RhdHVzMQ==", "state": body["state"],
                "description": body["description"], "target_url": body["target_url"], "context": body["context"],
                "created_at": "2026-11-29T12:00:00Z", "updated_at": "2026-11-29T12:00:00Z", "creator": user(&token.login),
            });
            st.statuses.push(v.clone());
            reply(201, v)
        }
        ("GET", ["actions", "artifacts"]) => {
            let name = query_param(query, "name").map(|n| percent_decode(&n));
            let mut all: Vec<&Artifact> =
                st.artifacts.iter().filter(|a| name.as_deref().is_none_or(|n| n == a.name)).collect();
            all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
            let items: Vec<Value> = all.iter().map(|a| artifact_json(st, a)).collect();
            let total = items.len();
            let (page, headers) = paginate(st, path, query, items);
            (200, json!({"total_count": total, "artifacts": page}), headers)
        }
        ("GET", ["actions", "artifacts", id, "zip"]) => {
            match st.artifacts.iter().find(|a| a.id.to_string() == *id) {
                None => not_found(),
                Some(a) if a.expired || a.gone => reply(
                    410,
                    json!({"message": "Artifact has expired", "documentation_url": "https://docs.github.com/rest/actions/artifacts#download-an-artifact"}),
                ),
                Some(a) => (
                    302,
                    Value::Null,
                    vec![(
                        "location".to_string(),
                        format!(
                            "http://127.0.0.1:{}/_blob/artifacts/{}?sig=fake-signature&se=60",
                            st.port, a.id
                        ),
                    )],
                ),
            }
        }
        ("GET", ["issues", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let all: Vec<Value> =
                st.comments.iter().filter(|c| c.issue == n).map(|c| comment_json(st, c)).collect();
            let (page, headers) = paginate(st, path, query, all);
            (200, Value::Array(page), headers)
        }
        ("POST", ["issues", n, "comments"]) => {
            st.next_id += 1;
            let c = Comment {
                id: st.next_id,
                issue: n.parse().unwrap_or(0),
                login: token.login.clone(),
                body: body["body"].as_str().unwrap_or("").to_string(),
            };
            let out = comment_json(st, &c);
            st.comments.push(c);
            reply(201, out)
        }
        // octocrab's update_comment sends POST; GitHub's documented verb is PATCH.
        ("POST" | "PATCH", ["issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let Some(i) = st.comments.iter().position(|c| c.id == id) else { return not_found() };
            if !st.comments[i].login.eq_ignore_ascii_case(&token.login) {
                return forbidden();
            }
            st.comments[i].body = body["body"].as_str().unwrap_or("").to_string();
            let c = st.comments[i].clone();
            reply(200, comment_json(st, &c))
        }
        ("GET", ["pulls", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            let all: Vec<Value> =
                st.review_comments.iter().filter(|c| c.pr == n).map(|c| review_comment_json(st, c)).collect();
            let (page, headers) = paginate(st, path, query, all);
            (200, Value::Array(page), headers)
        }
        ("POST", ["pulls", n, "reviews"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            if !st.pulls.contains_key(&n) {
                return not_found();
            }
            let event = body["event"].as_str().unwrap_or("");
            assert!(
                ["COMMENT", "APPROVE", "REQUEST_CHANGES"].contains(&event),
                "a review is submitted with an event (a review without one stays pending): {body}"
            );
            let comments = body["comments"].as_array().cloned().unwrap_or_default();
            if comments.iter().any(|c| !on_diff(st, n, c)) {
                return outside_diff(
                    "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
                );
            }
            st.next_id += 1;
            let commit = body["commit_id"].as_str().unwrap_or("").to_string();
            let review = Review {
                id: st.next_id,
                pr: n,
                login: token.login.clone(),
                state: match event {
                    "APPROVE" => "APPROVED",
                    "REQUEST_CHANGES" => "CHANGES_REQUESTED",
                    _ => "COMMENTED",
                }
                .into(),
                body: body["body"].as_str().unwrap_or("").to_string(),
                commit_id: commit.clone(),
            };
            for c in &comments {
                let rc = new_review_comment(st, n, review.id, &token.login, &commit, c);
                st.review_comments.push(rc);
            }
            let out = json!({
                "id": review.id, "node_id": format!("PRR_fake{}", review.id), "user": user(&review.login),
                "body": review.body, "state": review.state, "commit_id": review.commit_id,
                "html_url": format!("https://github.com/{OWNER_REPO}/pull/{n}#pullrequestreview-{}", review.id),
                "pull_request_url": format!("http://127.0.0.1:{}/repos/{OWNER_REPO}/pulls/{n}", st.port),
                "author_association": "NONE", "submitted_at": "2026-11-30T12:00:00Z",
            });
            st.reviews.push(review);
            reply(200, out)
        }
        ("POST", ["pulls", n, "comments"]) => {
            let n: u64 = n.parse().unwrap_or(0);
            if !st.pulls.contains_key(&n) {
                return not_found();
            }
            if !on_diff(st, n, body) {
                return outside_diff(
                    "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request",
                );
            }
            // GitHub wraps a lone comment in a review of its own.
            st.next_id += 1;
            let review_id = st.next_id;
            let commit = body["commit_id"].as_str().unwrap_or("").to_string();
            st.reviews.push(Review {
                id: review_id,
                pr: n,
                login: token.login.clone(),
                state: "COMMENTED".into(),
                body: String::new(),
                commit_id: commit.clone(),
            });
            let rc = new_review_comment(st, n, review_id, &token.login, &commit, body);
            let out = review_comment_json(st, &rc);
            st.review_comments.push(rc);
            reply(201, out)
        }
        ("PATCH" | "DELETE", ["pulls", "comments", id]) => {
            let id: u64 = id.parse().unwrap_or(0);
            let Some(i) = st.review_comments.iter().position(|c| c.id == id) else { return not_found() };
            if !st.review_comments[i].login.eq_ignore_ascii_case(&token.login) {
                return forbidden();
            }
            if method == "DELETE" {
                st.review_comments.remove(i);
                return reply(204, Value::Null);
            }
            st.review_comments[i].body = body["body"].as_str().unwrap_or("").to_string();
            let c = st.review_comments[i].clone();
            reply(200, review_comment_json(st, &c))
        }
        _ => not_found(),
    }
}
