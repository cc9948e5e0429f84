//! Benchmark of the 429 replay (run with `cargo bench --bench replay`, or
//! `scripts/bench-replay.sh`; not part of `cargo test`).
//!
//! Prints, from one run:
//! 1. the replay server's added latency per request under 200 concurrent
//!    keep-alive clients: round-trip median and p99 against the replay
//!    server minus the same against a bare tokio TCP server that answers a
//!    canned 200 without parsing (the baseline, measured in the same run);
//! 2. the wall time of the `default` replay (8 clients that honour
//!    Retry-After exactly, no jitter) against the 3 x 1 s the scenario's
//!    waits demand, and the same for the reference client (jitter on top).
//!
//! Goals (issue 5): added median latency under 1 ms; replay wall time within
//! 1 s of the demanded waits.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark is a test program: a failure stops it with its location"
)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use retrygate::replay::scenario::Scenario;
use retrygate::replay::{run_replay, ReplayOptions};
use retrygate::testing::replay::ServerHandle;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const CLIENTS: usize = 200;
const REQUESTS_PER_CLIENT: usize = 50;
const CANNED: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 3\r\n\r\nok\n";

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        latency().await;
        wall_time().await;
    });
}

async fn latency() {
    let scenario = Scenario::parse("responses: [{status: 200}]\nbudget: 100000\n", "bench").unwrap();
    let server = ServerHandle::start(scenario, CLIENTS).await.unwrap();
    let baseline = start_baseline().await;

    // Warm both up, then alternate so neither gets a quieter machine.
    let _ = load(baseline, 5).await;
    let _ = load(server.addr(), 5).await;
    let mut base = load(baseline, REQUESTS_PER_CLIENT).await;
    let mut replay = load(server.addr(), REQUESTS_PER_CLIENT).await;
    base.extend(load(baseline, REQUESTS_PER_CLIENT).await);
    replay.extend(load(server.addr(), REQUESTS_PER_CLIENT).await);

    let (b50, b99) = (pct(&mut base, 50.0), pct(&mut base, 99.0));
    let (r50, r99) = (pct(&mut replay, 50.0), pct(&mut replay, 99.0));
    println!("server latency, {CLIENTS} concurrent keep-alive clients, {} requests each side:", replay.len());
    println!("  baseline (bare tokio, canned 200): median {b50:.3} ms, p99 {b99:.3} ms");
    println!("  replay server (hyper + journal):   median {r50:.3} ms, p99 {r99:.3} ms");
    println!("  added by the replay server:        median {:.3} ms, p99 {:.3} ms", r50 - b50, r99 - b99);
    println!("  journal entries recorded: {}", server.journal().entries.len());
    let row = serde_json::json!({
        "figure": format!("added round trip, {CLIENTS} keep-alive clients, median / p99"),
        "value": format!("{:.2} / {:.2} ms", r50 - b50, r99 - b99),
        "baseline": format!("bare tokio server {b50:.2} / {b99:.2} ms"),
        "goal": "median under 1 ms",
    });
    println!("figure: {row}");
}

async fn wall_time() {
    let bin = env!("CARGO_BIN_EXE_retrygate");
    for profile in ["compliant", "reference"] {
        let cmd = vec![bin.to_string(), "replay-client".into(), "--profile".into(), profile.into()];
        let opts = ReplayOptions::new("default", 8, cmd);
        let started = Instant::now();
        let report = run_replay(&opts).await.unwrap();
        let total = started.elapsed();
        println!(
            "default replay, 8 x {profile}: wall {:.0} ms from release (whole run incl. server start and judge {:.0} ms) \
             for {} ms of demanded waits: {:+.0} ms over; verdict {:?}",
            report.wall_ms,
            total.as_secs_f64() * 1000.0,
            report.demanded_wait_ms,
            report.wall_ms - report.demanded_wait_ms as f64,
            report.verdict
        );
        let row = serde_json::json!({
            "figure": format!("`default` scenario, 8 `{profile}` clients: wall time"),
            "value": format!("{:.0} ms", report.wall_ms),
            "baseline": format!("{} ms of demanded waits", report.demanded_wait_ms),
            "ratio": format!("{:.3}", report.wall_ms / report.demanded_wait_ms.max(1) as f64),
            "goal": if profile == "compliant" {
                "within 50 ms of the demanded waits"
            } else {
                "none: this client adds its own jitter on top of each Retry-After"
            },
        });
        println!("figure: {row}");
    }
}

/// A server that answers every request with [`CANNED`] without parsing it.
async fn start_baseline() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else { continue };
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut have = Vec::new();
                loop {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => have.extend_from_slice(&buf[..n]),
                    }
                    while let Some(end) = find(&have, b"\r\n\r\n") {
                        have.drain(..end + 4);
                        if s.write_all(CANNED).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// `CLIENTS` connections, each sending `n` sequential GETs; returns every round trip in ms.
async fn load(addr: SocketAddr, n: usize) -> Vec<f64> {
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|i| {
            tokio::spawn(async move {
                let mut s = TcpStream::connect(addr).await.unwrap();
                s.set_nodelay(true).unwrap();
                let req = format!("GET /c/{i}/x HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: bench\r\n\r\n");
                let mut rtts = Vec::with_capacity(n);
                let mut buf = vec![0u8; 4096];
                for _ in 0..n {
                    let t = Instant::now();
                    s.write_all(req.as_bytes()).await.unwrap();
                    read_response(&mut s, &mut buf).await;
                    rtts.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                rtts
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all
}

/// Reads one response with a content-length body.
async fn read_response(s: &mut TcpStream, buf: &mut [u8]) {
    let mut have = Vec::new();
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(buf)).await.unwrap().unwrap();
        assert!(n > 0, "server closed the connection");
        have.extend_from_slice(&buf[..n]);
        if let Some(end) = find(&have, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&have[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
                .unwrap_or(0);
            if have.len() >= end + 4 + len {
                return;
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn pct(xs: &mut [f64], p: f64) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let i = ((p / 100.0) * (xs.len() - 1) as f64).round() as usize;
    xs[i]
}
