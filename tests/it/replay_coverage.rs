//! Coverage (docs/replay.md, "Coverage"): the gate names each operation
//! whose retry the change touched that the replay never called, and
//! `replay.require_coverage: true` makes that a blocking reason on an
//! agent's pull request. Real git repositories in temp dirs, real replays
//! with the built-in `reference` client, `retrygate check` through the
//! binary.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::Repo;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

/// One 429 without Retry-After, then 200: a good client retries once, at once.
const FAST_SCENARIO: &str =
    "description: one 429, then 200\nresponses:\n  - status: 429\n  - status: 200\nbudget: 3\n";

/// The refund client at the base: three attempts, jittered backoff, one
/// Idempotency-Key per refund (so the only finding is the raised count).
const REFUNDS: &str = r#"//! Refunds, retried with one Idempotency-Key per refund.

use std::thread::sleep;
use std::time::Duration;

const MAX_RETRIES: u32 = 2;

pub fn refund(c: &reqwest::blocking::Client, key: &str) -> reqwest::Result<reqwest::blocking::Response> {
    for attempt in 0..=MAX_RETRIES {
        match c.post("https://pay.example/refunds").header("Idempotency-Key", key).send() {
            Ok(r) => return Ok(r),
            Err(e) if attempt == MAX_RETRIES => return Err(e),
            Err(_) => sleep(Duration::from_millis(100 * 2u64.pow(attempt) + fastrand::u64(0..100))),
        }
    }
    unreachable!("the loop returns on its last attempt")
}
"#;

/// A new retry loop without jitter around a keyed POST: only a warning
/// (`retry-without-jitter`), so nothing but coverage can block it.
const PAYOUTS: &str = r#"use std::thread::sleep;
use std::time::Duration;

pub fn payout(c: &reqwest::blocking::Client, key: &str) -> reqwest::Result<reqwest::blocking::Response> {
    for attempt in 0..3 {
        match c.post("https://pay.example/payouts").header("Idempotency-Key", key).send() {
            Ok(r) => return Ok(r),
            Err(e) if attempt == 2 => return Err(e),
            Err(_) => sleep(Duration::from_millis(200)),
        }
    }
    unreachable!("the loop returns on its last attempt")
}
"#;

/// `main` with the refund client, the fast scenario and a config that
/// demands a replay of agents (no ledger, to keep the replay in focus),
/// with `extra` appended to its `replay:` map; then the agent's branch
/// `codex/refunds` checked out.
fn repo(extra: &str) -> Repo {
    repo_with(extra, "src/refunds.rs", REFUNDS)
}

/// [`repo`] with `path` holding `text` at the base instead of the refunds.
fn repo_with(extra: &str, path: &str, text: &str) -> Repo {
    let repo = Repo::new();
    repo.write(path, text);
    repo.write(".github/replay-fast.yml", FAST_SCENARIO);
    repo.write(
        ".github/retrygate.yml",
        format!("require: {{ ledger: false }}\nreplay: {{ scenario: .github/replay-fast.yml, clients: 1{extra} }}\n"),
    );
    repo.commit("base");
    repo.branch("codex/refunds");
    repo
}

/// The agent's change: the refund loop's retries raised from 2 to 5.
fn raise_refund_retries(repo: &Repo) {
    repo.write("src/refunds.rs", REFUNDS.replace("MAX_RETRIES: u32 = 2", "MAX_RETRIES: u32 = 5"));
    repo.commit("retry refunds harder");
}

/// `retrygate replay` of the head with the `reference` client sending
/// `method path`; returns the report's path (beside the repository).
fn replay(repo: &Repo, method: &str, path: &str) -> PathBuf {
    let report = repo.path().parent().unwrap().join(format!(
        "{}-{}.json",
        repo.path().file_name().unwrap().to_string_lossy(),
        method.to_lowercase()
    ));
    let out = Command::new(BIN)
        .current_dir(repo.path())
        .args(["replay", "--scenario", ".github/replay-fast.yml", "--clients", "1", "--format", "json"])
        .arg("--report")
        .arg(&report)
        .args(["--", BIN, "replay-client", "--profile", "reference", "--method", method, "--path", path])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "the replay passes: {}", String::from_utf8_lossy(&out.stderr));
    report
}

fn check(repo: &Repo, report: &Path, format: &str) -> Output {
    Command::new(BIN)
        .args(["check", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", "codex/refunds", "--format", format, "--replay-report"])
        .arg(report)
        .env_remove("GITHUB_SERVER_URL")
        .env_remove("GITHUB_REPOSITORY")
        .output()
        .unwrap()
}

fn json(repo: &Repo, report: &Path) -> (Option<i32>, Value) {
    let out = check(repo, report, "json");
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr));
    });
    (out.status.code(), v)
}

fn codes(v: &Value) -> Vec<&str> {
    v["reasons"].as_array().unwrap().iter().map(|r| r["code"].as_str().unwrap()).collect()
}

fn markdown(repo: &Repo, report: &Path) -> String {
    String::from_utf8(check(repo, report, "markdown").stdout).unwrap()
}

const NEVER_CALLED: &str =
    "the replay never called POST /refunds (src/refunds.rs:9), whose retry this change raised";

#[test]
fn the_comment_names_a_changed_operation_the_replay_never_called() {
    let repo = repo("");
    raise_refund_retries(&repo);
    // The harness replays the cart read only.
    let report = replay(&repo, "GET", "/cart");
    let (code, v) = json(&repo, &report);
    assert_eq!(code, Some(1));
    // Off by default: the raised retry blocks, the missing coverage does not.
    assert_eq!(codes(&v), ["blocking-findings"]);
    let coverage = &v["evidence"]["replay"]["coverage"];
    assert_eq!(coverage["required"], false);
    assert_eq!(coverage["called"], serde_json::json!(["GET /cart"]));
    assert_eq!(coverage["changed"][0]["operation"], "POST /refunds");
    assert_eq!(coverage["changed"][0]["locations"], serde_json::json!(["src/refunds.rs:9"]));
    assert_eq!(coverage["changed"][0]["exercised"], false);
    // The comment says it plainly, and so does the terminal.
    let md = markdown(&repo, &report);
    assert!(md.contains(&format!("- ⚠️ {NEVER_CALLED}")), "{md}");
    assert!(md.contains("The replay called GET /cart."), "{md}");
    let text = String::from_utf8(check(&repo, &report, "text").stdout).unwrap();
    assert!(text.contains(&format!("coverage: {NEVER_CALLED}")), "{text}");
}

#[test]
fn no_line_names_an_operation_the_replay_called() {
    let repo = repo("");
    raise_refund_retries(&repo);
    // The reference client POSTs with one Idempotency-Key and retries it.
    let report = replay(&repo, "POST", "/refunds");
    let (_, v) = json(&repo, &report);
    assert_eq!(v["evidence"]["replay"]["status"], "pass");
    assert_eq!(v["evidence"]["replay"]["coverage"]["changed"][0]["exercised"], true);
    let md = markdown(&repo, &report);
    assert!(!md.contains("never called"), "{md}");
    assert!(
        md.contains(
            "- ✅ the replay called POST /refunds (src/refunds.rs:9), whose retry this change raised"
        ),
        "{md}"
    );
}

#[test]
fn require_coverage_blocks_an_unexercised_operation_and_off_it_does_not() {
    // A new loop without jitter is a warning only: with coverage off the
    // pull request passes, with it on the unexercised payout blocks it.
    for (extra, want_code, want) in [
        ("", Some(0), vec![]),
        (", require_coverage: false", Some(0), vec![]),
        (", require_coverage: true", Some(1), vec!["replay-coverage"]),
    ] {
        let repo = repo(extra);
        repo.write("src/payouts.rs", PAYOUTS);
        repo.commit("add payouts, retried");
        let report = replay(&repo, "GET", "/cart");
        let (code, v) = json(&repo, &report);
        assert_eq!((code, codes(&v)), (want_code, want.clone()), "{extra}: {:#}", v["reasons"]);
        let line = "the replay never called POST /payouts (src/payouts.rs:5), whose retry this change added without jitter";
        let md = markdown(&repo, &report);
        if want.is_empty() {
            assert!(md.contains(&format!("- ⚠️ {line}")), "{extra}: the line is shown either way: {md}");
        } else {
            assert_eq!(
                v["reasons"][0]["message"],
                "the replay never called 1 operation whose retry this change touched: POST /payouts (src/payouts.rs:5)"
            );
            assert!(md.contains(&format!("- ⛔ {line}")), "{md}");
            assert!(md.contains("**replay-coverage**"), "{md}");
        }
    }
}

#[test]
fn a_changed_retry_without_a_named_operation_is_listed_by_its_place_and_does_not_block() {
    // A retry policy built apart from any request: the scan finds its
    // jitter removed, but nothing there names the operation it will retry.
    let jittered = "pub fn policy() -> backon::ExponentialBuilder {\n    backon::ExponentialBuilder::default().with_jitter().with_max_times(3)\n}\n";
    let repo = repo_with(", require_coverage: true", "src/policy.rs", jittered);
    repo.write(
        "src/policy.rs",
        "pub fn policy() -> backon::ExponentialBuilder {\n    backon::ExponentialBuilder::default().with_max_times(3)\n}\n",
    );
    repo.commit("drop the jitter");
    let report = replay(&repo, "GET", "/cart");
    let (_, v) = json(&repo, &report);
    assert!(!codes(&v).contains(&"replay-coverage"), "{:#}", v["reasons"]);
    let md = markdown(&repo, &report);
    assert!(
        md.contains("- ❔ an operation the replay could not be matched to (src/policy.rs:2), whose retry this change stripped of jitter: the scan names no HTTP method and URL path there"),
        "{md}"
    );
}

#[test]
fn require_coverage_must_be_a_boolean() {
    let repo = repo(", require_coverage: \"yes\"");
    raise_refund_retries(&repo);
    let out = Command::new(BIN)
        .args(["check", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", "codex/refunds"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(".github/retrygate.yml:2: replay.require_coverage: invalid type: string \"yes\", expected a boolean"),
        "{stderr}"
    );
}

#[test]
fn a_report_whose_called_operations_were_edited_is_rejected() {
    let repo = repo(", require_coverage: true");
    raise_refund_retries(&repo);
    let report = replay(&repo, "GET", "/cart");
    // Claim the refunds were replayed: the timelines say otherwise.
    let mut r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    r["exercised"] = serde_json::json!([{"operation": "POST /refunds", "requests": 2, "retries": 1}]);
    std::fs::write(&report, r.to_string()).unwrap();
    let (code, v) = json(&repo, &report);
    assert_eq!(code, Some(1));
    assert!(codes(&v).contains(&"replay-rejected"), "{:#}", v["reasons"]);
    assert!(
        v["evidence"]["replay"]["problems"][0]
            .as_str()
            .unwrap()
            .contains("`exercised` operations do not follow"),
        "{:#}",
        v["evidence"]["replay"]
    );
    // A rejected report says nothing about coverage.
    assert_eq!(v["evidence"]["replay"]["coverage"], Value::Null);
}
