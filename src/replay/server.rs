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
use super::scenario::Scenario;

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

/// What one request gets, decided under the lock.
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

async fn handle(
    shared: Arc<Shared>,
    fd: RawFd,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Dropped> {
    let at_ms = shared.start.elapsed().as_secs_f64() * 1000.0;
    let method = req.method().as_str().to_string();
    let path = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    let idempotency_key = header(&req, "idempotency-key");
    let user_agent = header(&req, "user-agent");
    let client = client_of(req.uri().path(), shared.clients);
    let _guard = PanicGuard { shared: shared.clone(), what: format!("{method} {path}") };
    // The only way to make the handler panic on purpose, to test the guard.
    #[cfg(test)]
    if path.ends_with("/retrygate-test-panic") {
        panic!("a panic the tests asked for");
    }

    // The body names a write operation; read it (bounded) before deciding.
    let body =
        Limited::new(req.into_body(), MAX_BODY).collect().await.map(|b| b.to_bytes()).unwrap_or_default();

    // Choose the answer and write the journal entry under one lock, so the
    // n-th entry of a client is the one that got the n-th answer.
    let d = {
        let mut state = shared.lock();
        let seq = state.journal.entries.len();
        let mut d = Decision {
            seq,
            status: 404,
            retry_after: None,
            delay_ms: 0,
            body: None,
            content_type: None,
            headers: Vec::new(),
            drop: None,
            attempt: 0,
        };
        let mut write = None;
        if let Some(i) = client {
            let attempt = state.attempts[i];
            state.attempts[i] += 1;
            d.attempt = attempt;
            let planned = shared.scenario.response_for(attempt);
            d.retry_after = match (planned.retry_after, planned.retry_after_date) {
                (Some(s), _) => Some(s.to_string()),
                (None, Some(date)) => {
                    let now = shared.anchor + shared.start.elapsed();
                    Some(retry_after::date_ahead(now, date.ahead_s, date.format))
                }
                (None, None) => None,
            };
            d.status = planned.status;
            d.delay_ms = planned.delay_ms;
            d.body = planned.body.map(str::to_string);
            d.content_type = planned.content_type.map(str::to_string);
            d.headers = planned
                .headers
                .map(|h| h.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default();
            d.drop = planned.drop;
            if is_write(&method) {
                let op = operation(&method, &path, idempotency_key.as_deref(), &body);
                let slot = (i, op.clone());
                let effect = match state.writes.get(&slot) {
                    // A well-behaved API: the key was applied, answer what it got.
                    Some(stored) if idempotency_key.is_some() => {
                        let stored = stored.clone();
                        d.status = stored.status;
                        d.body = stored.body;
                        d.content_type = stored.content_type;
                        d.retry_after = None;
                        d.delay_ms = 0;
                        d.drop = None;
                        d.headers = vec![("idempotent-replayed".into(), "true".into())];
                        WriteEffect::Deduplicated
                    }
                    _ if planned.apply => {
                        // What the client would have been told had the answer
                        // arrived: the planned 2xx, or a created/ok for a write
                        // applied behind a 502 or a lost answer.
                        let status = if (200..300).contains(&planned.status) {
                            planned.status
                        } else if method.eq_ignore_ascii_case("POST") {
                            201
                        } else {
                            200
                        };
                        let stored = Stored {
                            status,
                            body: planned.body.map(str::to_string),
                            content_type: planned.content_type.map(str::to_string),
                        };
                        state.writes.insert(slot, stored);
                        WriteEffect::Applied
                    }
                    _ => WriteEffect::NotApplied,
                };
                write = Some(WriteRecord { operation: op, effect });
            }
        }
        state.journal.entries.push(Entry {
            seq,
            client,
            at_ms,
            method: method.clone(),
            path: path.clone(),
            idempotency_key,
            user_agent,
            status: d.status,
            retry_after: d.retry_after.clone(),
            delay_ms: d.delay_ms,
            answered_ms: None,
            write,
            lost: d.drop,
        });
        d
    };

    if d.delay_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(d.delay_ms)).await;
    }
    let answered_ms = shared.start.elapsed().as_secs_f64() * 1000.0;
    if let Some(entry) = shared.lock().journal.entries.get_mut(d.seq) {
        entry.answered_ms = Some(answered_ms);
    }
    match d.drop {
        Some(Loss::Reset) => {
            // SO_LINGER 0: closing the socket sends RST, not FIN.
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
            return Err(Dropped);
        }
        Some(Loss::Close) => return Err(Dropped),
        None => {}
    }

    let code = StatusCode::from_u16(d.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let (text, content_type) = match client {
        Some(i) => {
            let (default_text, default_type) = default_body(code, i, d.attempt + 1);
            match (d.body, d.content_type) {
                (Some(b), Some(t)) => (b, t),
                (Some(b), None) => (b, "text/plain; charset=utf-8".to_string()),
                (None, Some(t)) => (default_text, t),
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
    let response = builder.body(Full::new(Bytes::from(text))).unwrap_or_else(|_| {
        let mut r = Response::new(Full::new(Bytes::from_static(b"internal error\n")));
        *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        r
    });
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::journal::{Loss, WriteEffect};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
