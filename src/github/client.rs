//! The connection to the GitHub API: an octocrab client with its retry layer
//! compiled out, reads retried here by [`super::retry`], writes sent once.
//!
//! Reads go through [`Api::get`] and [`Api::get_all`] as raw requests, so the
//! status and the rate-limit headers are seen (octocrab's typed calls drop
//! headers). Writes use octocrab's typed builders where their types match
//! GitHub's answers, and a raw request where they do not; either way a write
//! that fails is reported with [`ApiError::outcome_unknown`] so the caller
//! can list again instead of re-sending.

use std::time::{Duration, Instant, SystemTime};

use octocrab::Octocrab;
use serde_json::Value;

use super::retry::{Backoff, Failure, GiveUp};

/// Where the API is when `GITHUB_API_URL` is not set.
pub(crate) const DEFAULT_API_URL: &str = "https://api.github.com";

/// Items per page for list calls (GitHub's maximum).
pub(crate) const PER_PAGE: u32 = 100;

/// Pages followed per list before giving up: 100 pages of 100 comments
/// is far past any real pull request.
pub(crate) const MAX_PAGES: usize = 100;

/// Least time between two writes: GitHub asks integrations to send
/// content-creating requests one at a time, at least a second apart
/// (secondary rate limits).
pub const MIN_WRITE_INTERVAL: Duration = Duration::from_secs(1);

/// Connect and read timeouts of one request.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// The most one request may take, from sending it to the last byte of the
/// answer: a server that accepts and never answers, or trickles a byte a
/// second, is cut off here (the read timeout alone restarts with every
/// byte). `RETRYGATE_REQUEST_DEADLINE` (seconds) overrides it.
pub(crate) const REQUEST_DEADLINE: Duration = Duration::from_secs(20);

/// The most all of one publish may spend talking to GitHub, counted from its
/// first request: retries, their waits (a `retry-after: 60` that does not fit
/// is not slept through) and every later request. A real publish takes a few
/// seconds. `RETRYGATE_PUBLISH_DEADLINE` (seconds) overrides it.
pub(crate) const PUBLISH_DEADLINE: Duration = Duration::from_secs(50);

/// How long a write whose answer never came (a timeout, a 5xx from a
/// gateway, an unreadable 200) is given to land before retrygate looks for
/// it: a create that lands a moment after its request timed out must be
/// found, not made twice. Also the first step of a write's backoff.
pub(crate) const UNKNOWN_WRITE_SETTLE: Duration = Duration::from_secs(3);

/// Extra time a read-back gets past the publish deadline: when a write's
/// outcome is unknown at the deadline, one look at what landed is what
/// makes the job summary true.
pub(crate) const READ_BACK_GRACE: Duration = Duration::from_secs(10);

/// Attempts of one write that failed in a way that may be retried (a 5xx,
/// no answer, a rate limit), the first included; each after re-reading what
/// landed, within the publish deadline.
pub const MAX_WRITE_ATTEMPTS: u32 = 4;

/// Which deadline ran out, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deadline {
    Request,
    Publish,
}

impl std::fmt::Display for Deadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Deadline::Request => "per-request deadline (RETRYGATE_REQUEST_DEADLINE)",
            Deadline::Publish => "publish deadline (RETRYGATE_PUBLISH_DEADLINE)",
        })
    }
}

/// A failed API call, with enough to decide what to do next.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ApiError {
    /// GitHub answered with an error status.
    #[error("{what}: GitHub answered {status}: {message}")]
    Status { what: String, status: u16, message: String },
    /// No answer (connection, timeout): a write may or may not have landed.
    #[error("{what}: no answer from GitHub ({detail})")]
    NoAnswer { what: String, detail: String },
    /// An answer whose body could not be read as expected.
    #[error("{what}: GitHub's answer could not be read ({detail})")]
    Decode { what: String, detail: String },
    /// A read that kept failing, after the retries it was allowed.
    #[error("{what}: {last}; gave up after {attempts} attempts ({why})")]
    Exhausted { what: String, last: String, attempts: u32, why: String },
    /// No complete answer before a deadline; a write may have landed.
    #[error("{what}: no complete answer within the {which} of {}s; GitHub is unreachable or too slow: re-run the job", .after.as_secs_f64())]
    Deadline { what: String, which: Deadline, after: Duration },
    /// Never sent: the publish deadline had already passed.
    #[error("{what}: not sent, the {} of {}s had passed; re-run the job", Deadline::Publish, .after.as_secs_f64())]
    NotSent { what: String, after: Duration },
}

impl ApiError {
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            ApiError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The token may not do this (a read-only token on a fork PR, a missing
    /// `permissions:` entry): GitHub's "Resource not accessible by integration".
    pub(crate) fn is_forbidden(&self) -> bool {
        match self {
            // GitHub also answers secondary rate limits with 403; those are
            // "not now", not "not allowed".
            ApiError::Status { status: 401 | 403, message, .. } => {
                !message.to_ascii_lowercase().contains("rate limit")
            }
            _ => false,
        }
    }

    /// Whether a failed write may nevertheless have been applied: no answer,
    /// a 5xx (a gateway may time out after the write landed), or a 2xx whose
    /// body was unreadable.
    pub(crate) fn outcome_unknown(&self) -> bool {
        match self {
            ApiError::NoAnswer { .. } | ApiError::Decode { .. } | ApiError::Deadline { .. } => true,
            ApiError::Status { status, .. } => *status >= 500,
            ApiError::Exhausted { .. } | ApiError::NotSent { .. } => false,
        }
    }

    /// Whether a write that failed like this may be sent again (after
    /// re-reading what landed): its outcome is unknown, or GitHub asked to
    /// come back later (a rate limit).
    pub(crate) fn write_retryable(&self) -> bool {
        match self {
            ApiError::Deadline { which: Deadline::Publish, .. } => false,
            ApiError::Status { status: 429, .. } => true,
            ApiError::Status { status: 403, message, .. } => {
                message.to_ascii_lowercase().contains("rate limit")
            }
            e => e.outcome_unknown(),
        }
    }
}

/// One page of a read.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    pub(crate) body: Value,
    /// The absolute URL of the next page (`Link: <..>; rel="next"`).
    pub(crate) next: Option<String>,
}

/// An API client bound to one repository.
#[derive(Debug, Clone)]
pub(crate) struct Api {
    crab: Octocrab,
    pub(crate) owner: String,
    pub(crate) repo: String,
    graphql_url: String,
    max_read_attempts: u32,
    max_total_wait: Duration,
    write_interval: Duration,
    last_write: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
    request_deadline: Duration,
    publish_deadline: Duration,
    /// When the publish started ([`Api::start_publish`]), else the first
    /// request: the deadline counts from there, so computing the verdict
    /// (and the reads before it) does not eat into it.
    first_request: std::sync::Arc<std::sync::Mutex<Option<Instant>>>,
    /// See [`UNKNOWN_WRITE_SETTLE`].
    settle: Duration,
}

/// A deadline from the environment, parsed like every duration flag.
fn deadline_from_env(var: &str, default: Duration) -> anyhow::Result<Duration> {
    match std::env::var(var) {
        Ok(v) => crate::duration::parse_seconds(&v).map_err(|e| anyhow::anyhow!("{var}: {e}")),
        Err(_) => Ok(default),
    }
}

impl Api {
    /// `base_url` is `GITHUB_API_URL` (tests point it at a loopback fake);
    /// `graphql_url` is `GITHUB_GRAPHQL_URL`, which on GitHub Enterprise
    /// Server is not under the REST base.
    pub(crate) fn new(
        base_url: &str,
        graphql_url: Option<&str>,
        token: &str,
        repository: &str,
    ) -> anyhow::Result<Api> {
        let (owner, repo) = repository.split_once('/').filter(|(o, r)| !o.is_empty() && !r.is_empty()).ok_or_else(|| {
            anyhow::anyhow!("GITHUB_REPOSITORY `{repository}` is not `owner/name`; the runner sets it, so run retrygate github inside GitHub Actions or set it")
        })?;
        let base = base_url.trim_end_matches('/');
        let crab = Octocrab::builder()
            .base_uri(base)
            .map_err(|e| {
                anyhow::anyhow!(
                    "GITHUB_API_URL `{base_url}` is not a URL ({e}); set it to e.g. {DEFAULT_API_URL}"
                )
            })?
            .personal_token(token.to_string())
            .set_connect_timeout(Some(CONNECT_TIMEOUT))
            .set_read_timeout(Some(READ_TIMEOUT))
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the GitHub client: {e}"))?;
        Ok(Api {
            crab,
            owner: owner.to_string(),
            repo: repo.to_string(),
            graphql_url: graphql_url.map(str::to_string).unwrap_or_else(|| format!("{base}/graphql")),
            max_read_attempts: super::retry::MAX_READ_ATTEMPTS,
            max_total_wait: super::retry::MAX_TOTAL_WAIT,
            write_interval: MIN_WRITE_INTERVAL,
            last_write: Default::default(),
            request_deadline: deadline_from_env("RETRYGATE_REQUEST_DEADLINE", REQUEST_DEADLINE)?,
            publish_deadline: deadline_from_env("RETRYGATE_PUBLISH_DEADLINE", PUBLISH_DEADLINE)?,
            first_request: Default::default(),
            settle: UNKNOWN_WRITE_SETTLE,
        })
    }

    /// Sets the per-request and publish deadlines (the defaults come from
    /// `RETRYGATE_REQUEST_DEADLINE` and `RETRYGATE_PUBLISH_DEADLINE`).
    pub(crate) fn with_deadlines(mut self, request: Option<Duration>, publish: Option<Duration>) -> Api {
        if let Some(r) = request {
            self.request_deadline = r;
        }
        if let Some(p) = publish {
            self.publish_deadline = p;
        }
        self
    }

    /// Sets [`UNKNOWN_WRITE_SETTLE`].
    pub(crate) fn with_settle(mut self, settle: Duration) -> Api {
        self.settle = settle;
        self
    }

    /// How long an unknown write is given to land before it is looked for.
    pub(crate) fn settle(&self) -> Duration {
        self.settle
    }

    /// Starts the publish deadline now: the publish begins here, whatever
    /// was read before (the pull request, a permission) and however long the
    /// gate took.
    pub(crate) fn start_publish(&self) {
        *self.first_request.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }

    /// Time left before the publish deadline (started by
    /// [`Api::start_publish`], else by the first request or this call).
    pub(crate) fn publish_left(&self) -> Duration {
        let started =
            *self.first_request.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(Instant::now);
        self.publish_deadline.saturating_sub(started.elapsed())
    }

    /// This client for one look at what landed after a write's outcome
    /// became unknown at the deadline: [`READ_BACK_GRACE`] past it.
    pub(crate) fn read_back(&self) -> Api {
        let mut api = self.clone();
        api.publish_deadline += READ_BACK_GRACE;
        api.request_deadline = api.request_deadline.min(READ_BACK_GRACE);
        api
    }

    /// The publish deadline, for messages.
    pub(crate) fn publish_deadline(&self) -> Duration {
        self.publish_deadline
    }

    /// Runs one request (send and read the whole answer) under the
    /// per-request deadline and what is left of the publish deadline.
    pub(crate) async fn bounded<T>(
        &self,
        what: &str,
        request: impl std::future::Future<Output = Result<T, ApiError>>,
    ) -> Result<T, ApiError> {
        let left = self.publish_left();
        let (limit, which) = if left < self.request_deadline {
            (left, Deadline::Publish)
        } else {
            (self.request_deadline, Deadline::Request)
        };
        let after = if which == Deadline::Publish { self.publish_deadline } else { limit };
        if limit.is_zero() {
            return Err(ApiError::NotSent { what: what.to_string(), after: self.publish_deadline });
        }
        tokio::time::timeout(limit, request)
            .await
            .unwrap_or_else(|_| Err(ApiError::Deadline { what: what.to_string(), which, after }))
    }

    /// Sets the least time between writes (default [`MIN_WRITE_INTERVAL`]).
    pub(crate) fn with_write_interval(mut self, interval: Duration) -> Api {
        self.write_interval = interval;
        self
    }

    /// Waits until the next write may be sent: at least the write interval
    /// after the previous write *finished*. Every write calls this first and
    /// keeps the returned guard until its answer is in (`let _paced = ...`):
    /// counting from the end, not the start, keeps the gap GitHub asks for
    /// at the server even when the previous request was slow to arrive.
    pub(crate) async fn pace_write(&self) -> PacedWrite {
        let wait = {
            let last = self.last_write.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let now = std::time::Instant::now();
            last.map_or(Duration::ZERO, |t| (t + self.write_interval).saturating_duration_since(now))
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        PacedWrite { last_write: self.last_write.clone() }
    }

    /// The octocrab client, for typed writes.
    pub(crate) fn crab(&self) -> &Octocrab {
        &self.crab
    }

    /// `/repos/{owner}/{repo}` + `path`.
    pub(crate) fn repo_route(&self, path: &str) -> String {
        format!("/repos/{}/{}{path}", self.owner, self.repo)
    }

    /// GETs `route` (relative, or an absolute `Link` URL), retrying as
    /// [`super::retry`] allows.
    pub(crate) async fn get(&self, what: &str, route: &str) -> Result<Page, ApiError> {
        let mut backoff = Backoff::new(self.max_read_attempts, self.max_total_wait);
        loop {
            let attempt = self.bounded(what, async {
                let resp = self
                    .crab
                    ._get(route)
                    .await
                    .map_err(|e| ApiError::NoAnswer { what: what.to_string(), detail: e.to_string() })?;
                let status = resp.status().as_u16();
                let headers = resp.headers().clone();
                let body = self
                    .crab
                    .body_to_string(resp)
                    .await
                    .map_err(|e| ApiError::NoAnswer { what: what.to_string(), detail: e.to_string() })?;
                Ok((status, headers, body))
            });
            let (failure, last) = match attempt.await {
                Err(e @ (ApiError::Deadline { which: Deadline::Publish, .. } | ApiError::NotSent { .. })) => {
                    return Err(e)
                }
                Ok((status, headers, body)) => {
                    if (200..300).contains(&status) {
                        let body = if body.trim().is_empty() {
                            Value::Null
                        } else {
                            serde_json::from_str(&body).map_err(|e| ApiError::Decode {
                                what: what.to_string(),
                                detail: e.to_string(),
                            })?
                        };
                        let next = headers.get("link").and_then(|v| v.to_str().ok()).and_then(next_link);
                        return Ok(Page { body, next });
                    }
                    let header =
                        |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
                    let failure = Failure {
                        status: Some(status),
                        retry_after: header("retry-after"),
                        ratelimit_remaining: header("x-ratelimit-remaining").and_then(|v| v.parse().ok()),
                        ratelimit_reset: header("x-ratelimit-reset").and_then(|v| v.parse().ok()),
                    };
                    (
                        failure,
                        ApiError::Status { what: what.to_string(), status, message: error_message(&body) },
                    )
                }
                Err(e) => (Failure::default(), e),
            };
            match backoff.next_wait(&failure, SystemTime::now()) {
                Ok(wait) if wait >= self.publish_left() => {
                    return Err(ApiError::Exhausted {
                        what: what.to_string(),
                        last: last.to_string(),
                        attempts: backoff.attempts(),
                        why: format!(
                            "the next wait, {}s, would pass the {} of {}s; re-run the job later",
                            wait.as_secs(),
                            Deadline::Publish,
                            self.publish_deadline.as_secs_f64()
                        ),
                    });
                }
                Ok(wait) => {
                    tracing::info!("{last}; retrying the read in {wait:?}");
                    tokio::time::sleep(wait).await;
                }
                Err(GiveUp::NotRetryable) => return Err(last),
                Err(give_up) => {
                    let why = match give_up {
                        GiveUp::Budget { wanted } => format!(
                            "the next wait, {}s, would pass the {}s budget; re-run the job later",
                            wanted.as_secs(),
                            self.max_total_wait.as_secs()
                        ),
                        _ => "every attempt failed; re-run the job".to_string(),
                    };
                    return Err(ApiError::Exhausted {
                        what: what.to_string(),
                        last: last.to_string(),
                        attempts: backoff.attempts(),
                        why,
                    });
                }
            }
        }
    }

    /// Every page of a list read, following `Link: rel="next"`; each page's
    /// body must be an array, or an object holding one under `key`.
    pub(crate) async fn get_all(
        &self,
        what: &str,
        route: &str,
        key: Option<&str>,
    ) -> Result<Vec<Value>, ApiError> {
        let mut items = Vec::new();
        let mut next = Some(route.to_string());
        let mut pages = 0;
        while let Some(url) = next.take() {
            pages += 1;
            if pages > MAX_PAGES {
                return Err(ApiError::Decode {
                    what: what.to_string(),
                    detail: format!("more than {MAX_PAGES} pages; the list is larger than retrygate reads"),
                });
            }
            let page = self.get(what, &url).await?;
            let list = match key {
                Some(k) => page.body.get(k).cloned(),
                None => Some(page.body),
            };
            match list {
                Some(Value::Array(v)) => items.extend(v),
                _ => {
                    return Err(ApiError::Decode {
                        what: what.to_string(),
                        detail: "expected a list".to_string(),
                    })
                }
            }
            next = page.next;
        }
        Ok(items)
    }

    /// POSTs `body` to the GraphQL endpoint once. GraphQL reports failures
    /// as `errors` in a 200: those come back as [`ApiError::Status`] with the
    /// first message.
    pub(crate) async fn graphql(&self, what: &str, body: &Value) -> Result<Value, ApiError> {
        let _paced = self.pace_write().await;
        let (status, text) = self
            .bounded(what, async {
                let resp = self
                    .crab
                    ._post(self.graphql_url.as_str(), Some(body))
                    .await
                    .map_err(|e| ApiError::NoAnswer { what: what.to_string(), detail: e.to_string() })?;
                let status = resp.status().as_u16();
                let text = self
                    .crab
                    .body_to_string(resp)
                    .await
                    .map_err(|e| ApiError::NoAnswer { what: what.to_string(), detail: e.to_string() })?;
                Ok((status, text))
            })
            .await?;
        if !(200..300).contains(&status) {
            return Err(ApiError::Status { what: what.to_string(), status, message: error_message(&text) });
        }
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| ApiError::Decode { what: what.to_string(), detail: e.to_string() })?;
        if let Some(first) = v.get("errors").and_then(Value::as_array).and_then(|a| a.first()) {
            let message = first.get("message").and_then(Value::as_str).unwrap_or("unknown GraphQL error");
            return Err(ApiError::Status { what: what.to_string(), status, message: message.to_string() });
        }
        Ok(v)
    }
}

/// A write in flight ([`Api::pace_write`]): when dropped, after the write's
/// answer, it records the moment the next write's interval starts from.
#[must_use = "keep the guard until the write has its answer: `let _paced = api.pace_write().await;`"]
pub(crate) struct PacedWrite {
    last_write: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

impl Drop for PacedWrite {
    fn drop(&mut self) {
        let mut last = self.last_write.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *last = Some(std::time::Instant::now());
    }
}

/// Maps an octocrab error from a typed write onto [`ApiError`].
pub(crate) fn write_error(what: &str, e: octocrab::Error) -> ApiError {
    match e {
        octocrab::Error::GitHub { source, .. } => ApiError::Status {
            what: what.to_string(),
            status: source.status_code.as_u16(),
            message: source.message,
        },
        octocrab::Error::Serde { source, .. } => {
            ApiError::Decode { what: what.to_string(), detail: source.to_string() }
        }
        octocrab::Error::Json { source, .. } => {
            ApiError::Decode { what: what.to_string(), detail: source.to_string() }
        }
        other => ApiError::NoAnswer { what: what.to_string(), detail: other.to_string() },
    }
}

/// GitHub's error bodies are `{"message": ..}`; anything else is shown cut.
pub(crate) fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| body.chars().take(200).collect())
}

/// The `rel="next"` URL of a `Link` header.
pub(crate) fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params.split(';').any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        is_next.then(|| url.trim().trim_start_matches('<').trim_end_matches('>').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_link_is_found_among_others() {
        let h = "<https://api.github.com/repositories/1/issues/2/comments?page=1>; rel=\"prev\", <https://api.github.com/repositories/1/issues/2/comments?page=3>; rel=\"next\", <https://api.github.com/repositories/1/issues/2/comments?page=5>; rel=\"last\"";
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/1/issues/2/comments?page=3")
        );
        assert_eq!(next_link("<https://x/?page=1>; rel=\"prev\""), None);
    }

    #[test]
    fn outcome_unknown_only_where_a_write_may_have_landed() {
        let s = |status| ApiError::Status { what: "w".into(), status, message: String::new() };
        assert!(s(502).outcome_unknown());
        assert!(!s(422).outcome_unknown());
        assert!(s(403).is_forbidden() && !s(403).outcome_unknown());
        let limited = ApiError::Status {
            what: "w".into(),
            status: 403,
            message: "You have exceeded a secondary rate limit".into(),
        };
        assert!(!limited.is_forbidden());
        assert!(ApiError::NoAnswer { what: "w".into(), detail: "timeout".into() }.outcome_unknown());
    }

    #[test]
    fn a_repository_that_is_not_owner_slash_name_is_refused() {
        let e = Api::new("http://127.0.0.1:1", None, "t", "just-a-name").unwrap_err();
        assert!(e.to_string().contains("GITHUB_REPOSITORY `just-a-name` is not `owner/name`"), "{e}");
    }
}
