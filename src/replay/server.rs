//! The loopback server that plays a scenario: hyper HTTP/1.1 on tokio, bound
//! to 127.0.0.1 on an ephemeral port.
//!
//! Each client has its own state under `/c/<i>/...`: its n-th request gets
//! the scenario's n-th answer, whatever the path below `/c/<i>` is. Every
//! request is written to the [`Journal`] when it arrives. The accept backlog
//! is 1024 because a small one (Python's default 5) turns a burst of clients
//! into ~1 s SYN-retry artefacts that look like client waits.

use std::convert::Infallible;
use std::net::SocketAddr;
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
use tokio::net::TcpSocket;
use tokio::task::JoinHandle;

use super::journal::{Entry, Journal, Malformed};
use super::retry_after;
use super::scenario::Scenario;

/// Listen backlog; see the module docs.
const BACKLOG: u32 = 1024;
/// Request bodies are read (so keep-alive works) but never kept; cap them.
const MAX_BODY: usize = 1 << 20;

struct Shared {
    scenario: Scenario,
    clients: usize,
    start: Instant,
    anchor: SystemTime,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    attempts: Vec<usize>,
    journal: Journal,
}

/// A running server. Dropping it stops accepting connections.
pub struct ServerHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

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
                let conn_shared = accept_shared.clone();
                tokio::spawn(async move {
                    let svc_shared = conn_shared.clone();
                    let svc = service_fn(move |req| handle(svc_shared.clone(), req));
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

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/c/<i>`, the `RETRYGATE_URL` of client `i`.
    pub fn client_url(&self, i: usize) -> String {
        format!("http://{}/c/{i}", self.addr)
    }

    /// A copy of the journal so far.
    pub fn journal(&self) -> Journal {
        self.shared.lock().journal.clone()
    }

    /// Milliseconds since the server started (the journal's clock).
    pub fn now_ms(&self) -> f64 {
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
        // is still a list of whole entries.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record_malformed(&self, error: String) {
        let at_ms = self.start.elapsed().as_secs_f64() * 1000.0;
        self.lock().journal.malformed.push(Malformed { at_ms, error });
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

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let at_ms = shared.start.elapsed().as_secs_f64() * 1000.0;
    let method = req.method().as_str().to_string();
    let path = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    let idempotency_key = header(&req, "idempotency-key");
    let user_agent = header(&req, "user-agent");
    let client = client_of(req.uri().path(), shared.clients);

    // Choose the answer and write the journal entry under one lock, so the
    // n-th entry of a client is the one that got the n-th answer.
    let (status, retry_after) = {
        let mut state = shared.lock();
        let (status, retry_after) = match client {
            Some(i) => {
                let attempt = state.attempts[i];
                state.attempts[i] += 1;
                let planned = shared.scenario.response_for(attempt);
                let ra = match (planned.retry_after, planned.retry_after_date) {
                    (Some(s), _) => Some(s.to_string()),
                    (None, Some(d)) => {
                        let now = shared.anchor + shared.start.elapsed();
                        Some(retry_after::date_ahead(now, d.ahead_s, d.format))
                    }
                    (None, None) => None,
                };
                (planned.status, ra)
            }
            None => (404, None),
        };
        let seq = state.journal.entries.len();
        state.journal.entries.push(Entry {
            seq,
            client,
            at_ms,
            method,
            path,
            idempotency_key,
            user_agent,
            status,
            retry_after: retry_after.clone(),
        });
        (status, retry_after)
    };

    // Read the body so the connection can be reused; its content is not judged.
    let _ = Limited::new(req.into_body(), MAX_BODY).collect().await;

    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let text = match client {
        Some(_) => {
            format!("{} {} (retrygate replay)\n", code.as_u16(), code.canonical_reason().unwrap_or(""))
        }
        None => "not found: this server answers under /c/<client>/ (use $RETRYGATE_URL)\n".to_string(),
    };
    let mut builder = Response::builder().status(code).header("content-type", "text/plain; charset=utf-8");
    if let Some(ra) = &retry_after {
        builder = builder.header("retry-after", ra.as_str());
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

    #[test]
    fn client_index_comes_from_the_path() {
        assert_eq!(client_of("/c/0", 2), Some(0));
        assert_eq!(client_of("/c/1/orders", 2), Some(1));
        assert_eq!(client_of("/c/2/orders", 2), None);
        assert_eq!(client_of("/c/x", 2), None);
        assert_eq!(client_of("/orders", 2), None);
    }
}
