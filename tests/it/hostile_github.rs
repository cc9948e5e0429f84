//! Issue 15, item 17: `retrygate github` against an API that never answers,
//! trickles a byte a second, or asks to come back in 60 s. Every request
//! and the whole publish have deadlines; the run ends (exit 2: could not
//! publish, so the check fails closed) and says which deadline ran out.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::Repo;
use serde_json::json;

#[derive(Clone, Copy, Debug)]
enum Behaviour {
    /// Reads the request and never answers.
    Silent,
    /// Answers a valid 200, one byte a second.
    Trickle,
    /// Answers every request `429` with `retry-after: 60`.
    RetryAfter60,
}

/// A loopback HTTP server with one misbehaviour; serves until the test ends.
fn serve(behaviour: Behaviour) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream, behaviour));
        }
    });
    url
}

fn answer(mut stream: TcpStream, behaviour: Behaviour) {
    let mut buf = [0u8; 8192];
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = stream.read(&mut buf);
    match behaviour {
        Behaviour::Silent => std::thread::sleep(Duration::from_secs(120)),
        Behaviour::Trickle => {
            let body = "[]";
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            for b in reply.bytes() {
                if stream.write_all(&[b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        Behaviour::RetryAfter60 => {
            let body = r#"{"message":"You have exceeded a secondary rate limit"}"#;
            let reply = format!(
                "HTTP/1.1 429 Too Many Requests\r\nretry-after: 60\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    }
}

fn run_github(api: &str, env: &[(&str, &str)]) -> (Output, Duration) {
    let repo = Repo::new();
    repo.write("src/lib.rs", "fn f() {}\n");
    let base = repo.commit("base");
    repo.branch("feature");
    repo.write("src/lib.rs", "fn g() {}\n");
    let head = repo.commit("change");
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        format!("{}/tests/fixtures/github/pull_request__opened.payload.json", env!("CARGO_MANIFEST_DIR"));
    let mut event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    event["pull_request"]["head"]["sha"] = json!(head);
    event["pull_request"]["base"]["sha"] = json!(base);
    let event_path = dir.path().join("event.json");
    std::fs::write(&event_path, event.to_string()).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retrygate"));
    cmd.arg("github")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event_path)
        .env("GITHUB_REPOSITORY", "octo-org/shop")
        .env("GITHUB_API_URL", api)
        .env("GITHUB_TOKEN", "ghs_test")
        .env("GITHUB_WORKSPACE", repo.path())
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    loop {
        if child.try_wait().unwrap().is_some() {
            return (child.wait_with_output().unwrap(), start.elapsed());
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("still running at 60 s; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

const SHORT: [(&str, &str); 2] = [("RETRYGATE_REQUEST_DEADLINE", "2"), ("RETRYGATE_PUBLISH_DEADLINE", "6")];

#[test]
fn a_server_that_never_answers_hits_the_request_then_the_publish_deadline() {
    let (out, took) = run_github(&serve(Behaviour::Silent), &SHORT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // Which deadline a silent request hits first depends on how much of the
    // publish deadline the gate's own work used up before it; either way the
    // message names it, and the publish deadline ends the job.
    assert!(err.contains("no complete answer within the"), "{err}");
    assert!(err.contains("publish deadline (RETRYGATE_PUBLISH_DEADLINE) of 6s"), "{err}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn a_server_that_trickles_a_byte_a_second_is_cut_off() {
    let (out, took) = run_github(&serve(Behaviour::Trickle), &SHORT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("deadline"), "{err}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn a_retry_after_past_the_publish_deadline_is_not_slept_through() {
    // With the default deadlines: a 60 s wait does not fit in 50 s.
    let (out, took) = run_github(&serve(Behaviour::RetryAfter60), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the next wait, 60s, would pass the publish deadline"), "{err}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn deadlines_from_the_environment_are_checked() {
    let (out, _) = run_github("http://127.0.0.1:9", &[("RETRYGATE_PUBLISH_DEADLINE", "1e20")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("RETRYGATE_PUBLISH_DEADLINE: 1e20 seconds is more than"), "{err}");
}
