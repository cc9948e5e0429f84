//! Issue 15: hostile input that once crashed, hung, ate memory or passed
//! silently. Each test names the item; each ends in the exit code
//! the issue asks for (0 pass, 1 blocked, 2 could not decide) well within
//! 60 s and 1 GB. The Rust-parser items (1-4) are in `hostile_rust.rs`.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::Repo;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

fn retrygate(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("GITHUB_EVENT_PATH").env_remove("GITHUB_ACTIONS").stdin(Stdio::null());
    cmd
}

/// Runs `cmd`, killing it after `limit`; panics if it had to be killed.
fn run_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start retrygate");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("collect output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collect output");
            panic!("still running after {limit:?}; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}\nstderr: {}", String::from_utf8_lossy(&out.stdout), stderr(out))
    })
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

#[test]
fn item_5_absurd_timeouts_are_usage_errors_not_panics() {
    for (args, want) in [
        (vec!["replay", "--timeout", "1e20", "--", "true"], "'1e20' for '--timeout"),
        (vec!["replay", "--timeout", "1e19", "--", "true"], "more than the 86400 seconds"),
        (vec!["replay", "--timeout", "inf", "--", "true"], "not a finite number"),
        (vec!["replay", "--timeout=-1", "--", "true"], "not a duration"),
        (vec!["check", "--base", "main", "--replay-timeout", "1e20"], "'1e20' for '--replay-timeout"),
        (vec!["check", "--base", "main", "--replay-timeout", "NaN"], "not a finite number"),
    ] {
        let out = run_within(retrygate(&args), Duration::from_secs(20));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
