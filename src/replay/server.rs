//! The loopback server that plays a scenario: hyper HTTP/1.1 on tokio, bound
//! to 127.0.0.1 on an ephemeral port.
//!
//! Each client has its own state under `/c/<i>/...`: its n-th request gets
//! the scenario's n-th answer, whatever the path below `/c/<i>` is. Every
//! request is written to the [`Journal`] with its arrival time. The accept
//! backlog is 1024 because a small one (Python's default 5) turns a burst of
//! clients into ~1 s SYN-retry artefacts that look like client waits.
//!
//! POST and PATCH are writes, and the server keeps the ones it applied, as a
//! real API would: each is an *operation*, named by its `Idempotency-Key`
//! when it has one, else by method, path and a digest of its body. A key
//! already applied is answered from the stored result and not applied again;
//! an unkeyed repeat is applied again (the duplicate `no-duplicate-write`
//! looks for). An answer can also be lost after the write took effect
//! (`drop: close` / `drop: reset`), which is how a client learns nothing.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use sha2::{Digest, Sha256};
use tokio::net::TcpSocket;
use tokio::task::JoinHandle;

use super::journal::{Entry, Journal, Loss, Malformed, WriteEffect, WriteRecord};
use super::retry_after;
use super::scenario::{PlannedResponse, Scenario};

/// Listen backlog; see the module docs.
const BACKLOG: u32 = 1024;
/// Request bodies are read (for the write digest, and so keep-alive works)
/// but never kept; cap them.
const MAX_BODY: usize = 1 << 20;

struct Shared {
    scenario: Scenario,
    clients: usize,
    start: Instant,
    anchor: SystemTime,
    state: Mutex<State>,
}

/// The answer an applied write is remembered by, for a repeat of its key.
#[derive(Debug, Clone)]
struct Stored {
    status: u16,
    body: Option<String>,
    content_type: Option<String>,
}

#[derive(Default)]
struct State {
    attempts: Vec<usize>,
    journal: Journal,
    /// Applied writes by (client, operation).
    writes: HashMap<(usize, String), Stored>,
}

/// A running server. Dropping it stops accepting connections.
pub struct ServerHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

/// The service's error: the answer is deliberately not sent (`drop`).
#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("answer dropped by the scenario")
    }
}

impl std::error::Error for Dropped {}

impl ServerHandle {
    /// Binds 127.0.0.1:0 and starts serving `scenario` to `clients` clients.
    /// Must be called inside a tokio runtime.
    pub async fn start(scenario: Scenario, clients: usize) -> anyhow::Result<ServerHandle> {
        let socket = TcpSocket::new_v4().context("cannot create the replay server's socket")?;
        socket.set_reuseaddr(true).context("cannot set SO_REUSEADDR on the replay socket")?;
        socket
            .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .context("cannot bind the replay server to 127.0.0.1")?;
        let listener = socket.listen(BACKLOG).context("cannot listen on the replay socket")?;
        let addr = listener.local_addr().context("cannot read the replay server's port")?;
        let anchor = SystemTime::now();
        let start = Instant::now();
        let anchor_unix_ms = anchor.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
        let shared = Arc::new(Shared {
            scenario,
            clients,
            start,
            anchor,
            state: Mutex::new(State {
                attempts: vec![0; clients],
                journal: Journal { anchor_unix_ms, ..Journal::default() },
                writes: HashMap::new(),
            }),
        });
        let accept_shared = shared.clone();
        let accept = tokio::spawn(async move {
            loop {
                let stream = match listener.accept().await {
                    Ok((stream, _)) => stream,
                    // e.g. EMFILE: keep serving the connections we have.
                    Err(e) => {
                        tracing::warn!("replay server: accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let fd = stream.as_raw_fd();
                let conn_shared = accept_shared.clone();
                tokio::spawn(async move {
                    let svc_shared = conn_shared.clone();
                    let svc = service_fn(move |req| handle(svc_shared.clone(), fd, req));
                    let result = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                    if let Err(e) = result {
                        // hyper has already answered 400 to unparsable bytes.
                        if e.is_parse() || e.is_parse_too_large() {
                            conn_shared.record_malformed(e.to_string());
                        }
                    }
                });
            }
        });
        Ok(ServerHandle { addr, shared, accept })
    }

    /// The bound address, 127.0.0.1 and the ephemeral port.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/c/<i>`, the `RETRYGATE_URL` of client `i`.
    pub(crate) fn client_url(&self, i: usize) -> String {
        format!("http://{}/c/{i}", self.addr)
    }

    /// A copy of the journal so far.
    pub fn journal(&self) -> Journal {
        self.shared.lock().journal.clone()
    }

    /// Milliseconds since the server started (the journal's clock).
    pub(crate) fn now_ms(&self) -> f64 {
        self.shared.start.elapsed().as_secs_f64() * 1000.0
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a handler panicked mid-push; the journal
        // is still a list of whole entries, and the panic itself is recorded
        // by the handler's guard.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record_malformed(&self, error: String) {
        let at_ms = self.start.elapsed().as_secs_f64() * 1000.0;
        self.lock().journal.malformed.push(Malformed { at_ms, error });
    }
}

/// Records a panic of the request handler in the journal when dropped while
/// unwinding: a request the server could not answer must fail the replay,
/// never vanish from it.
struct PanicGuard {
    shared: Arc<Shared>,
    what: String,
}

impl Drop for PanicGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let what = std::mem::take(&mut self.what);
            self.shared.lock().journal.server_errors.push(format!(
                "the replay server's request handler panicked while answering {what}; this is a bug in retrygate, please report it"
            ));
        }
    }
}

/// `/c/<i>` or `/c/<i>/...` with `i < clients`.
fn client_of(path: &str, clients: usize) -> Option<usize> {
    let rest = path.strip_prefix("/c/")?;
    let id = rest.split('/').next()?;
    let i: usize = id.parse().ok()?;
    (i < clients).then_some(i)
}

fn header(req: &Request<Incoming>, name: &str) -> Option<String> {
    req.headers().get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

fn is_write(method: &str) -> bool {
    method.eq_ignore_ascii_case("POST") || method.eq_ignore_ascii_case("PATCH")
}

/// The operation a write request names: its key, else what it does.
fn operation(method: &str, path: &str, key: Option<&str>, body: &[u8]) -> String {
    match key {
        Some(k) => format!("key:{k}"),
        None => format!("digest:{method} {path} {}", hex::encode(Sha256::digest(body))),
    }
}

/// The default body of an answer: a small JSON object for a 2xx, so a client
/// that parses its success body finds JSON; a line of text otherwise.
fn default_body(status: StatusCode, client: usize, attempt: usize) -> (String, &'static str) {
    if status.is_success() {
        (
            format!(
                "{{\"ok\":true,\"status\":{},\"client\":{client},\"attempt\":{attempt}}}\n",
                status.as_u16()
            ),
            "application/json",
        )
    } else {
        (
            format!("{} {} (retrygate replay)\n", status.as_u16(), status.canonical_reason().unwrap_or("")),
            "text/plain; charset=utf-8",
        )
    }
}

/// What a request is, read from its head before anything is decided.
struct Arrival {
    at_ms: f64,
    method: String,
    /// Path and query as sent; `/` when the request line has neither.
    path: String,
    idempotency_key: Option<String>,
    user_agent: Option<String>,
    /// The client the path names (`/c/<i>/...`); `None` for any other path.
    client: Option<usize>,
}

impl Arrival {
    fn read(req: &Request<Incoming>, at_ms: f64, clients: usize) -> Arrival {
        Arrival {
            at_ms,
            method: req.method().as_str().to_string(),
            path: req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into()),
            idempotency_key: header(req, "idempotency-key"),
            user_agent: header(req, "user-agent"),
            client: client_of(req.uri().path(), clients),
        }
    }
}

/// What one request gets, decided under the lock.
#[derive(Debug)]
struct Decision {
    seq: usize,
    status: u16,
    retry_after: Option<String>,
    delay_ms: u64,
    body: Option<String>,
    content_type: Option<String>,
    headers: Vec<(String, String)>,
    drop: Option<Loss>,
    attempt: usize,
}

impl Decision {
    /// The answer to a path outside `/c/<i>/`: 404, at once.
    fn not_found(seq: usize) -> Decision {
        Decision {
            seq,
            status: 404,
            retry_after: None,
            delay_ms: 0,
            body: None,
            content_type: None,
            headers: Vec::new(),
            drop: None,
            attempt: 0,
        }
    }

    /// The scenario's answer to a client's `attempt`-th request; a
    /// `Retry-After` date is written ahead of `now`.
    fn planned(seq: usize, attempt: usize, planned: &PlannedResponse<'_>, now: SystemTime) -> Decision {
        Decision {
            seq,
            status: planned.status,
            retry_after: match (planned.retry_after, planned.retry_after_date) {
                (Some(s), _) => Some(s.to_string()),
                (None, Some(date)) => Some(retry_after::date_ahead(now, date.ahead_s, date.format)),
                (None, None) => None,
            },
            delay_ms: planned.delay_ms,
            body: planned.body.map(str::to_string),
            content_type: planned.content_type.map(str::to_string),
            headers: planned
                .headers
                .map(|h| h.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            drop: planned.drop,
            attempt,
        }
    }

    /// The answer stored for a key already applied, given again at once, as
    /// a well-behaved API answers a repeated key.
    fn replay_stored(&mut self, stored: Stored) {
        self.status = stored.status;
        self.body = stored.body;
        self.content_type = stored.content_type;
        self.retry_after = None;
        self.delay_ms = 0;
        self.drop = None;
        self.headers = vec![("idempotent-replayed".into(), "true".into())];
    }
}

/// What a write did to the server's store, and the stored answer to give
/// instead of the planned one (a repeated key).
struct WriteOutcome {
    record: WriteRecord,
    replayed: Option<Stored>,
}

impl State {
    /// The 0-based number of this request among client `i`'s requests.
    fn next_attempt(&mut self, i: usize) -> usize {
        let attempt = self.attempts[i];
        self.attempts[i] += 1;
        attempt
    }

    /// Write accounting for a POST or PATCH of client `i` that the scenario
    /// answers with `planned`: a key already applied is deduplicated, a
    /// write the answer applies is stored (so a repeat of its key is
    /// answered from it), anything else is not applied.
    fn account_write(
        &mut self,
        i: usize,
        arrival: &Arrival,
        body: &[u8],
        planned: &PlannedResponse<'_>,
    ) -> WriteOutcome {
        let key = arrival.idempotency_key.as_deref();
        let op = operation(&arrival.method, &arrival.path, key, body);
        let slot = (i, op.clone());
        let record = |effect| WriteRecord { operation: op.clone(), effect };
        match self.writes.get(&slot) {
            Some(stored) if key.is_some() => {
                WriteOutcome { record: record(WriteEffect::Deduplicated), replayed: Some(stored.clone()) }
            }
            _ if planned.apply => {
                // What the client would have been told had the answer
                // arrived: the planned 2xx, or a created/ok for a write
                // applied behind a 502 or a lost answer.
                let status = if (200..300).contains(&planned.status) {
                    planned.status
                } else if arrival.method.eq_ignore_ascii_case("POST") {
                    201
                } else {
                    200
                };
                let stored = Stored {
                    status,
                    body: planned.body.map(str::to_string),
                    content_type: planned.content_type.map(str::to_string),
                };
                self.writes.insert(slot, stored);
                WriteOutcome { record: record(WriteEffect::Applied), replayed: None }
            }
            _ => WriteOutcome { record: record(WriteEffect::NotApplied), replayed: None },
        }
    }
}

impl Shared {
    /// The scenario's clock as a wall-clock time, for `Retry-After` dates.
    fn wall_now(&self) -> SystemTime {
        self.anchor + self.start.elapsed()
    }

    /// Chooses the answer and writes the journal entry under one lock, so
    /// the n-th entry of a client is the one that got the n-th answer.
    fn decide_and_journal(&self, arrival: Arrival, body: &[u8]) -> Decision {
        let mut state = self.lock();
        let seq = state.journal.entries.len();
        let mut decision = Decision::not_found(seq);
        let mut write = None;
        if let Some(i) = arrival.client {
            let attempt = state.next_attempt(i);
            let planned = self.scenario.response_for(attempt);
            decision = Decision::planned(seq, attempt, &planned, self.wall_now());
            if is_write(&arrival.method) {
                let outcome = state.account_write(i, &arrival, body, &planned);
                if let Some(stored) = outcome.replayed {
                    decision.replay_stored(stored);
                }
                write = Some(outcome.record);
            }
        }
        state.journal.entries.push(Entry {
            seq,
            client: arrival.client,
            at_ms: arrival.at_ms,
            method: arrival.method,
            path: arrival.path,
            idempotency_key: arrival.idempotency_key,
            user_agent: arrival.user_agent,
            status: decision.status,
            retry_after: decision.retry_after.clone(),
            delay_ms: decision.delay_ms,
            answered_ms: None,
            write,
            lost: decision.drop,
        });
        decision
    }

    /// Records when the answer to journal entry `seq` left (after its delay).
    fn mark_answered(&self, seq: usize) {
        let answered_ms = self.start.elapsed().as_secs_f64() * 1000.0;
        if let Some(entry) = self.lock().journal.entries.get_mut(seq) {
            entry.answered_ms = Some(answered_ms);
        }
    }
}

/// Loses the answer the way the scenario asks: a reset sets `SO_LINGER` 0
/// on the connection so that closing it sends RST, not FIN; a close just
/// closes. Either way the service returns [`Dropped`] and hyper closes.
fn lose_answer(fd: RawFd, loss: Loss) -> Dropped {
    if loss == Loss::Reset {
        let linger = libc::linger { l_onoff: 1, l_linger: 0 };
        // SAFETY: `fd` is the connection's socket, open for as long as
        // this request is being served; setsockopt only reads `linger`.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                &linger as *const libc::linger as *const libc::c_void,
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            );
        }
    }
    Dropped
}

/// The HTTP answer for a decision: the scenario's body and content type, or
/// the defaults ([`default_body`]); a 404 that says where clients live.
fn response(d: &Decision, client: Option<usize>) -> Response<Full<Bytes>> {
    let code = StatusCode::from_u16(d.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let (text, content_type) = match client {
        Some(i) => {
            let (default_text, default_type) = default_body(code, i, d.attempt + 1);
            match (&d.body, &d.content_type) {
                (Some(b), Some(t)) => (b.clone(), t.clone()),
                (Some(b), None) => (b.clone(), "text/plain; charset=utf-8".to_string()),
                (None, Some(t)) => (default_text, t.clone()),
                (None, None) => (default_text, default_type.to_string()),
            }
        }
        None => (
            "not found: this server answers under /c/<client>/ (use $RETRYGATE_URL)\n".to_string(),
            "text/plain; charset=utf-8".to_string(),
        ),
    };
    let mut builder = Response::builder().status(code).header("content-type", content_type);
    if let Some(ra) = &d.retry_after {
        builder = builder.header("retry-after", ra.as_str());
    }
    for (k, v) in &d.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    builder.body(Full::new(Bytes::from(text))).unwrap_or_else(|_| {
        let mut r = Response::new(Full::new(Bytes::from_static(b"internal error\n")));
        *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        r
    })
}

/// One request, in order: read its head, read its body (bounded), decide
/// the answer and journal it, hold the answer for the scenario's delay,
/// then lose it or send it.
async fn handle(
    shared: Arc<Shared>,
    fd: RawFd,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Dropped> {
    let at_ms = shared.start.elapsed().as_secs_f64() * 1000.0;
    let arrival = Arrival::read(&req, at_ms, shared.clients);
    let client = arrival.client;
    let _guard = PanicGuard { shared: shared.clone(), what: format!("{} {}", arrival.method, arrival.path) };
    // The only way to make the handler panic on purpose, to test the guard.
    #[cfg(test)]
    if arrival.path.ends_with("/retrygate-test-panic") {
        panic!("a panic the tests asked for");
    }
    // The body names a write operation; read it (bounded) before deciding.
    let body =
        Limited::new(req.into_body(), MAX_BODY).collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let decision = shared.decide_and_journal(arrival, &body);
    if decision.delay_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(decision.delay_ms)).await;
    }
    shared.mark_answered(decision.seq);
    if let Some(loss) = decision.drop {
        return Err(lose_answer(fd, loss));
    }
    Ok(response(&decision, client))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::journal::{Loss, WriteEffect};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn arrival(method: &str, path: &str, key: Option<&str>, client: Option<usize>) -> Arrival {
        Arrival {
            at_ms: 0.0,
            method: method.into(),
            path: path.into(),
            idempotency_key: key.map(str::to_string),
            user_agent: None,
            client,
        }
    }

    fn planned(status: u16, apply: bool) -> PlannedResponse<'static> {
        PlannedResponse {
            status,
            retry_after: None,
            retry_after_date: None,
            delay_ms: 0,
            body: None,
            content_type: None,
            headers: None,
            apply,
            drop: None,
        }
    }

    fn state(clients: usize) -> State {
        State { attempts: vec![0; clients], ..State::default() }
    }

    #[test]
    fn each_client_counts_its_own_attempts() {
        let mut s = state(2);
        assert_eq!([s.next_attempt(0), s.next_attempt(0), s.next_attempt(1)], [0, 1, 0]);
    }

    #[test]
    fn a_write_applied_behind_an_error_is_stored_as_the_success_it_would_have_been() {
        let mut s = state(1);
        let post = arrival("POST", "/c/0/orders", Some("k1"), Some(0));
        let first = s.account_write(0, &post, b"item=1", &planned(502, true));
        assert_eq!(first.record.effect, WriteEffect::Applied);
        assert!(first.replayed.is_none());
        assert_eq!(first.record.operation, "key:k1");
        // The repeat of the key gets the stored 201, not the scenario's answer.
        let again = s.account_write(0, &post, b"item=1", &planned(429, false));
        assert_eq!(again.record.effect, WriteEffect::Deduplicated);
        assert_eq!(again.replayed.map(|r| r.status), Some(201));
        // A PATCH applied behind an error would have been a 200.
        let patch = arrival("PATCH", "/c/0/orders/1", Some("k2"), Some(0));
        s.account_write(0, &patch, b"", &planned(503, true));
        assert_eq!(
            s.account_write(0, &patch, b"", &planned(200, true)).replayed.map(|r| r.status),
            Some(200)
        );
    }

    #[test]
    fn a_write_not_applied_is_not_stored_and_an_unkeyed_repeat_is_applied_again() {
        let mut s = state(1);
        let keyed = arrival("POST", "/c/0/orders", Some("k1"), Some(0));
        let refused = s.account_write(0, &keyed, b"x", &planned(429, false));
        assert_eq!(refused.record.effect, WriteEffect::NotApplied);
        // The refusal stored nothing: the key's next attempt is applied.
        assert_eq!(s.account_write(0, &keyed, b"x", &planned(201, true)).record.effect, WriteEffect::Applied);
        let unkeyed = arrival("POST", "/c/0/orders", None, Some(0));
        let effects: Vec<WriteEffect> =
            (0..2).map(|_| s.account_write(0, &unkeyed, b"x", &planned(201, true)).record.effect).collect();
        assert_eq!(effects, [WriteEffect::Applied, WriteEffect::Applied]);
    }

    #[test]
    fn a_replayed_key_is_answered_at_once_and_marked() {
        let mut p = planned(429, false);
        p.retry_after = Some(3);
        p.delay_ms = 500;
        p.drop = Some(Loss::Reset);
        let mut d = Decision::planned(7, 2, &p, SystemTime::UNIX_EPOCH);
        assert_eq!((d.seq, d.attempt, d.status, d.retry_after.as_deref()), (7, 2, 429, Some("3")));
        d.replay_stored(Stored { status: 201, body: Some("{}".into()), content_type: None });
        assert_eq!((d.status, d.delay_ms, d.drop, d.retry_after), (201, 0, None, None));
        assert_eq!(d.headers, [("idempotent-replayed".to_string(), "true".to_string())]);
    }

    #[test]
    fn a_retry_after_date_is_written_ahead_of_the_clock() {
        let date = crate::replay::scenario::RetryAfterDate { ahead_s: 60, format: Default::default() };
        let mut p = planned(503, false);
        p.retry_after_date = Some(&date);
        let d = Decision::planned(0, 0, &p, SystemTime::UNIX_EPOCH);
        assert_eq!(d.retry_after.as_deref(), Some("Thu, 01 Jan 1970 00:01:00 GMT"));
    }

    #[test]
    fn the_response_uses_the_scenarios_body_or_the_defaults() {
        let body = |r: Response<Full<Bytes>>| {
            let ct = r.headers()["content-type"].to_str().unwrap().to_string();
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let bytes = rt.block_on(r.into_body().collect()).unwrap().to_bytes();
            (ct, String::from_utf8(bytes.to_vec()).unwrap())
        };
        let lost = body(response(&Decision::not_found(0), None));
        assert_eq!(lost.1, "not found: this server answers under /c/<client>/ (use $RETRYGATE_URL)\n");
        let ok = Decision::planned(0, 0, &planned(200, true), SystemTime::UNIX_EPOCH);
        assert_eq!(
            body(response(&ok, Some(3))),
            ("application/json".into(), "{\"ok\":true,\"status\":200,\"client\":3,\"attempt\":1}\n".into())
        );
        let mut p = planned(429, false);
        p.body = Some("slow down");
        let r = response(&Decision::planned(0, 0, &p, SystemTime::UNIX_EPOCH), Some(0));
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(body(r), ("text/plain; charset=utf-8".into(), "slow down".into()));
    }

    /// Sends one request with `Connection: close`; returns the raw response.
    async fn send(addr: SocketAddr, head: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(format!("{head}\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn serves_each_client_its_own_sequence_and_journals_every_request() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let text = "responses: [{status: 429, retry_after: 1}, {status: 200}]\nbudget: 3\n";
            let server = ServerHandle::start(Scenario::parse(text, "t").unwrap(), 2).await.unwrap();
            let a = server.addr();
            let r =
                send(a, "POST /c/0/orders HTTP/1.1\r\nIdempotency-Key: \"k1\"\r\nContent-Length: 0").await;
            assert!(r.starts_with("HTTP/1.1 429 Too Many Requests\r\n"), "{r}");
            assert!(r.to_ascii_lowercase().contains("retry-after: 1\r\n"), "{r}");
            assert!(send(a, "GET /c/1 HTTP/1.1\r\nUser-Agent: ua/1").await.starts_with("HTTP/1.1 429"));
            assert!(send(a, "GET /c/0/orders?x=1 HTTP/1.1").await.starts_with("HTTP/1.1 200"));
            assert!(send(a, "GET /c/0/orders HTTP/1.1").await.starts_with("HTTP/1.1 200"));
            let stray = send(a, "GET /c/2/x HTTP/1.1").await;
            assert!(stray.starts_with("HTTP/1.1 404") && stray.contains("$RETRYGATE_URL"), "{stray}");

            let j = server.journal();
            let got: Vec<(Option<usize>, &str, &str, u16)> =
                j.entries.iter().map(|e| (e.client, e.method.as_str(), e.path.as_str(), e.status)).collect();
            assert_eq!(
                got,
                [
                    (Some(0), "POST", "/c/0/orders", 429),
                    (Some(1), "GET", "/c/1", 429),
                    (Some(0), "GET", "/c/0/orders?x=1", 200),
                    (Some(0), "GET", "/c/0/orders", 200),
                    (None, "GET", "/c/2/x", 404),
                ]
            );
            assert_eq!(j.entries[0].idempotency_key.as_deref(), Some("\"k1\""));
            assert_eq!(j.entries[0].retry_after.as_deref(), Some("1"));
            assert_eq!(j.entries[1].user_agent.as_deref(), Some("ua/1"));
            assert!(j.entries.windows(2).all(|w| w[0].at_ms <= w[1].at_ms && w[0].seq + 1 == w[1].seq));
            assert!(j.entries.iter().all(|e| e.answered_ms.is_some_and(|a| a >= e.at_ms)));
        });
    }

    #[test]
    fn date_form_is_served_ahead_and_garbage_gets_400() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let text =
                "responses: [{status: 503, retry_after_date: {ahead_s: 2, format: asctime}}]\nbudget: 1\n";
            let server = ServerHandle::start(Scenario::parse(text, "t").unwrap(), 1).await.unwrap();
            let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
            assert!(send(server.addr(), "GET /c/0 HTTP/1.1").await.starts_with("HTTP/1.1 503"));
            let bad = send(server.addr(), "\u{1}\u{2} not http").await;
            assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
            let j = server.journal();
            let served = j.entries[0].retry_after.clone().unwrap();
            assert!(!served.contains("GMT"), "asctime has no zone: {served}");
            match retry_after::parse(&served) {
                Some(retry_after::RetryAfter::Until { unix_ms }) => {
                    assert!(unix_ms >= before + 2000 && unix_ms <= before + 4000, "{served}")
                }
                other => panic!("{served} parsed as {other:?}"),
            }
            // The connection task records the parse error after answering.
            for _ in 0..100 {
                if !server.journal().malformed.is_empty() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            assert_eq!(server.journal().malformed.len(), 1);
            assert_eq!(server.journal().entries.len(), 1, "garbage is not a request");
        });
    }

    /// Sends one request with a body; returns the raw response, or the
    /// read error when the connection was reset.
    async fn send_body(addr: SocketAddr, head: &str, body: &str) -> std::io::Result<String> {
        let mut s = tokio::net::TcpStream::connect(addr).await?;
        s.write_all(
            format!("{head}\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len())
                .as_bytes(),
        )
        .await?;
        let mut out = Vec::new();
        s.read_to_end(&mut out).await?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn a_2xx_is_json_and_a_scenario_sets_body_type_and_headers() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let text = "responses:\n  - status: 200\n  - status: 200\n    body: '<ok/>'\n    content_type: application/xml\n    headers: {Location: /orders/7, X-Request-Id: abc}\nbudget: 3\n";
            let server = ServerHandle::start(Scenario::parse(text, "t").unwrap(), 1).await.unwrap();
            let r = send(server.addr(), "GET /c/0 HTTP/1.1").await;
            assert!(r.contains("content-type: application/json\r\n"), "{r}");
            let body = r.split("\r\n\r\n").nth(1).unwrap();
            assert_eq!(body, "{\"ok\":true,\"status\":200,\"client\":0,\"attempt\":1}\n");
            let r = send(server.addr(), "GET /c/0 HTTP/1.1").await;
            assert!(r.contains("content-type: application/xml\r\n") && r.ends_with("\r\n\r\n<ok/>"), "{r}");
            assert!(r.contains("location: /orders/7\r\n") && r.contains("x-request-id: abc\r\n"), "{r}");
        });
    }

    #[test]
    fn the_write_store_applies_dedups_keys_and_duplicates_unkeyed_repeats() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let text = "responses: [{status: 502, apply: true}, {status: 201}]\nbudget: 9\n";
            let server = ServerHandle::start(Scenario::parse(text, "t").unwrap(), 2).await.unwrap();
            let a = server.addr();
            // Client 0 re-sends with its key: answered from the stored result.
            let r = send_body(a, "POST /c/0/orders HTTP/1.1\r\nIdempotency-Key: k1", "item=1").await.unwrap();
            assert!(r.starts_with("HTTP/1.1 502"), "{r}");
            let r = send_body(a, "POST /c/0/orders HTTP/1.1\r\nIdempotency-Key: k1", "item=1").await.unwrap();
            assert!(r.starts_with("HTTP/1.1 201") && r.contains("idempotent-replayed: true"), "{r}");
            // Client 1 re-sends the same body without a key: applied twice.
            send_body(a, "POST /c/1/orders HTTP/1.1", "item=1").await.unwrap();
            send_body(a, "POST /c/1/orders HTTP/1.1", "item=1").await.unwrap();
            // A different body is another operation.
            send_body(a, "POST /c/1/orders HTTP/1.1", "item=2").await.unwrap();
            let j = server.journal();
            let effects: Vec<(WriteEffect, bool)> = j
                .entries
                .iter()
                .map(|e| {
                    let w = e.write.as_ref().unwrap();
                    (w.effect, w.operation.starts_with("key:"))
                })
                .collect();
            assert_eq!(
                effects,
                [
                    (WriteEffect::Applied, true),
                    (WriteEffect::Deduplicated, true),
                    (WriteEffect::Applied, false),
                    (WriteEffect::Applied, false),
                    (WriteEffect::Applied, false),
                ]
            );
            let ops: Vec<&str> =
                j.entries.iter().map(|e| e.write.as_ref().unwrap().operation.as_str()).collect();
            assert_eq!(ops[2], ops[3]);
            assert_ne!(ops[3], ops[4]);
            assert!(ops[2].starts_with("digest:POST /c/1/orders "), "{}", ops[2]);
        });
    }

    #[test]
    fn a_dropped_answer_is_a_reset_or_a_close_after_the_write_applied() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let text = "responses: [{status: 201, drop: reset}, {status: 201, delay_ms: 50, drop: close}, {status: 201}]\nbudget: 9\n";
            let server = ServerHandle::start(Scenario::parse(text, "t").unwrap(), 1).await.unwrap();
            let a = server.addr();
            let reset = send_body(a, "POST /c/0/o HTTP/1.1", "x").await;
            assert_eq!(reset.map_err(|e| e.kind()), Err(std::io::ErrorKind::ConnectionReset));
            let closed = send_body(a, "POST /c/0/o HTTP/1.1", "y").await.unwrap();
            assert_eq!(closed, "", "closed without an answer");
            let j = server.journal();
            assert_eq!(j.entries[0].lost, Some(Loss::Reset));
            assert_eq!(j.entries[1].lost, Some(Loss::Close));
            assert!(j.entries.iter().all(|e| e.write.as_ref().unwrap().effect == WriteEffect::Applied));
            assert!(j.malformed.is_empty(), "a dropped answer is not a malformed request");
        });
    }

    #[test]
    fn a_panicking_handler_is_recorded_not_swallowed() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let s = Scenario::parse("responses: [{status: 200}]\nbudget: 2\n", "t").unwrap();
            let server = ServerHandle::start(s, 1).await.unwrap();
            let r = send(server.addr(), "GET /c/0/retrygate-test-panic HTTP/1.1").await;
            assert_eq!(r, "", "no answer after a panic");
            let j = server.journal();
            assert_eq!(j.server_errors.len(), 1, "{j:?}");
            assert!(
                j.server_errors[0]
                    .contains("request handler panicked while answering GET /c/0/retrygate-test-panic"),
                "{j:?}"
            );
            // The next request is served as usual.
            assert!(send(server.addr(), "GET /c/0 HTTP/1.1").await.starts_with("HTTP/1.1 200"));
        });
    }

    #[test]
    fn client_index_comes_from_the_path() {
        assert_eq!(client_of("/c/0", 2), Some(0));
        assert_eq!(client_of("/c/1/orders", 2), Some(1));
        assert_eq!(client_of("/c/2/orders", 2), None);
        assert_eq!(client_of("/c/x", 2), None);
        assert_eq!(client_of("/orders", 2), None);
    }
}
