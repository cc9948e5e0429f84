//! End-to-end tests of `retrygate check` through the binary, on real git
//! repositories in temp dirs: each block reason and what lifts it, advisory
//! mode, the config read from the base, sign-off, agent detection by each
//! fact, and bad input that must end in exit 2 or a block, never a pass.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::Repo;
use retrygate::ledger::append::{append, NewRecord};
use retrygate::ledger::pyjson::Value as PyValue;
use serde_json::Value;
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

/// A scenario that a good client passes in milliseconds: one 429 without
/// Retry-After, then 200.
const FAST_SCENARIO: &str =
    "description: one 429, then 200\nresponses:\n  - status: 429\n  - status: 200\nbudget: 3\n";

/// Base config for most tests: the fast scenario, one client.
const CONFIG: &str = "replay: { scenario: .github/replay-fast.yml, clients: 1 }\n";

/// A file with HTTP-client code but no retry regression.
const HTTP_FILE: &str = "pub fn get(c: &reqwest::blocking::Client) -> reqwest::Result<String> {\n    c.get(\"https://shop.example/cart\").send()?.text()\n}\n";

struct Run {
    code: Option<i32>,
    json: Value,
    stderr: String,
}

fn run(repo: &Repo, args: &[&str]) -> Output {
    run_env(repo, args, &[])
}

fn run_env(repo: &Repo, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(BIN)
        .args(["check", "--repo"])
        .arg(repo.path())
        .args(["--base", "main"])
        .args(args)
        .env("RETRYGATE_TEST_BIN", BIN)
        .env_remove("GITHUB_SERVER_URL")
        .env_remove("GITHUB_REPOSITORY")
        .envs(env.iter().copied())
        .output()
        .expect("run retrygate")
}

fn check(repo: &Repo, args: &[&str]) -> Run {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let out = run(repo, &all);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}\nstderr: {stderr}", String::from_utf8_lossy(&out.stdout))
    });
    Run { code: out.status.code(), json, stderr }
}

/// `check` that must fail to decide: exit 2 and the stderr.
fn check_error(repo: &Repo, args: &[&str]) -> String {
    let out = run(repo, args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit 2; stdout {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty(), "no verdict may be printed when none was reached");
    stderr
}

fn codes(json: &Value) -> Vec<String> {
    json["reasons"].as_array().unwrap().iter().map(|r| r["code"].as_str().unwrap().to_string()).collect()
}

fn rules(json: &Value) -> Vec<String> {
    json["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect()
}

/// `main` with the pre-incident client, README and the config; then the
/// branch `name` checked out.
fn repo_with(config: Option<&str>, branch: &str) -> Repo {
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    repo.write("README.txt", "shop\n");
    repo.write(".github/replay-fast.yml", FAST_SCENARIO);
    if let Some(c) = config {
        repo.write(".github/retrygate.yml", c);
    }
    repo.commit("base");
    repo.branch(branch);
    repo
}

fn sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Appends an edit record of `path` with `content` to the ledger at `ledger`.
fn record_edit(ledger: &Path, path: &str, content: &str) {
    let payload = PyValue::Object(vec![("path".into(), PyValue::Str(path.into()))]);
    append(ledger, NewRecord { tool: "edit".into(), payload, sha256: Some(Some(sha256(content))) }).unwrap();
}

/// Writes `path` and a ledger explaining it, and commits both.
fn edit_with_ledger(repo: &Repo, path: &str, content: &str) -> String {
    repo.write(path, content);
    record_edit(&repo.join(".tool_ledger.jsonl"), path, content);
    repo.commit("edit, recorded")
}

/// Runs `retrygate replay` with the built-in `profile` client and writes the
/// report to a file in `dir`.
fn replay_report(repo: &Repo, profile: &str, scenario: &str, clients: &str, commit: Option<&str>) -> PathBuf {
    let out_path = repo.path().parent().unwrap().join(format!(
        "{}-{profile}-{}.json",
        repo.path().file_name().unwrap().to_string_lossy(),
        commit.map_or("head", |c| &c[..7])
    ));
    let mut cmd = Command::new(BIN);
    cmd.current_dir(repo.path()).args([
        "replay",
        "--scenario",
        scenario,
        "--clients",
        clients,
        "--format",
        "json",
    ]);
    cmd.arg("--report").arg(&out_path);
    if let Some(c) = commit {
        cmd.args(["--commit", c]);
    }
    cmd.args(["--", BIN, "replay-client", "--profile", profile]);
    let out = cmd.output().expect("run retrygate replay");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "replay errored: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out_path
}

// ---------------------------------------------------------------- findings

#[test]
fn blocking_findings_block_and_a_sign_off_on_the_head_lifts_them() {
    let repo = repo_with(None, "feature");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    let head = repo.commit("faster");
    let r = check(&repo, &["--head", "feature", "--human"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(r.json["verdict"], "block");
    assert_eq!(codes(&r.json), ["blocking-findings"]);
    assert!(r.json["reasons"][0]["fix"].as_str().unwrap().contains("retrygate explain"));
    assert_eq!(r.json["evidence"]["ledger"], Value::Null, "a person's PR owes no ledger");
    assert_eq!(r.json["evidence"]["replay"], Value::Null);
    assert_eq!(r.json["facts"]["head"], head.as_str());
    assert_eq!(r.json["facts"]["agent"]["is_agent"], false);

    let signed =
        check(&repo, &["--head", "feature", "--human", "--sign-off", &head, "--signed-off-by", "maint"]);
    assert_eq!(signed.code, Some(0), "{}", signed.stderr);
    assert_eq!(signed.json["verdict"], "pass");
    assert_eq!(signed.json["sign_off"]["accepted"], true);
    assert_eq!(signed.json["sign_off"]["by"], "maint");
    assert_eq!(codes(&signed.json), ["blocking-findings"], "the lifted reasons stay visible");
}

#[test]
fn scan_fields_are_shaped_exactly_as_retrygate_scan_prints_them() {
    let repo = repo_with(None, "feature");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    repo.commit("faster");
    let r = check(&repo, &["--head", "feature", "--human"]);
    let out = Command::new(BIN)
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", "feature", "--format", "json"])
        .output()
        .unwrap();
    let scan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.json["findings"], scan["findings"]);
    assert_eq!(r.json["notes"], scan["notes"]);
    assert_eq!(r.json["verdict"], scan["verdict"]);
}

#[test]
fn a_sign_off_for_another_sha_is_rejected_naming_the_current_head() {
    let repo = repo_with(None, "feature");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    let old = repo.commit("faster");
    repo.write("README.txt", "shop, faster\n");
    let head = repo.commit("docs");
    let r = check(&repo, &["--head", "feature", "--human", "--sign-off", &old]);
    assert_eq!(r.code, Some(1), "a sign-off for the previous push does not lift the block");
    assert_eq!(r.json["sign_off"]["accepted"], false);
    let msg = r.json["sign_off"]["message"].as_str().unwrap();
    assert!(msg.contains(&format!("the current head is {head}")), "{msg}");
    assert!(r.stderr.contains(&format!("sign-off rejected: sign-off names `{old}`")), "{}", r.stderr);
    assert!(codes(&r.json).contains(&"sign-off-rejected".to_string()));
    // A prefix of the head is refused, with the full SHA to copy.
    let short = check(&repo, &["--head", "feature", "--human", "--sign-off", &head[..7]]);
    assert_eq!(short.code, Some(1));
    let msg = short.json["sign_off"]["message"].as_str().unwrap();
    assert!(
        msg.contains("a prefix of the head") && msg.ends_with(&format!("sign off with `{head}`")),
        "{msg}"
    );
}

// --------------------------------------------------------------- the ledger

#[test]
fn an_agent_pr_without_a_ledger_is_blocked_until_it_carries_one() {
    let repo = repo_with(Some(CONFIG), "codex/helper");
    repo.write("src/util.rs", "pub fn add(a: u32, b: u32) -> u32 { a + b }\n");
    repo.commit("helper");
    let r = check(&repo, &["--head", "codex/helper"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(codes(&r.json), ["ledger-missing"]);
    assert!(r.json["reasons"][0]["message"]
        .as_str()
        .unwrap()
        .starts_with("no tool-call ledger was found in the 3 places"));
    assert_eq!(r.json["evidence"]["ledger"]["present"], false);
    assert_eq!(r.json["evidence"]["replay"]["status"], "not-required", "no retry or HTTP code was touched");

    edit_with_ledger(&repo, "src/util.rs", "pub fn add(a: u32, b: u32) -> u32 { a.saturating_add(b) }\n");
    let r = check(&repo, &["--head", "codex/helper"]);
    assert_eq!(r.code, Some(0), "{:?}", r.json["reasons"]);
    assert_eq!(r.json["evidence"]["ledger"]["valid"], true);
    assert_eq!(r.json["evidence"]["ledger"]["coverage"]["explained"], 1);
}

#[test]
fn a_ledger_for_another_pull_request_is_invalid_and_blocks() {
    let repo = repo_with(Some(CONFIG), "codex/helper");
    let ledger = repo
        .path()
        .parent()
        .unwrap()
        .join(format!("{}-other.jsonl", repo.path().file_name().unwrap().to_string_lossy()));
    record_edit(&ledger, "src/other_feature.rs", "fn x() {}\n");
    repo.write("src/util.rs", "pub fn one() -> u32 { 1 }\n");
    repo.commit("helper");
    let r = check(&repo, &["--head", "codex/helper", "--ledger", ledger.to_str().unwrap()]);
    assert_eq!(r.code, Some(1));
    assert_eq!(codes(&r.json), ["ledger-invalid"]);
    let msg = r.json["reasons"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("src/util.rs changed in the pull request, but no ledger record explains it"),
        "{msg}"
    );
    assert_eq!(r.json["evidence"]["ledger"]["coverage"]["not_landed"][0], "src/other_feature.rs");
}

#[test]
fn an_unreadable_ledger_is_an_internal_error_not_a_pass() {
    let repo = repo_with(Some(CONFIG), "codex/helper");
    repo.write("src/util.rs", "pub fn one() -> u32 { 1 }\n");
    repo.commit("helper");
    let dir = tempfile::tempdir().unwrap();
    let err = check_error(&repo, &["--head", "codex/helper", "--ledger", dir.path().to_str().unwrap()]);
    assert!(err.contains("cannot read the ledger") && err.contains("it is a directory"), "{err}");
}

// --------------------------------------------------------------- the replay

#[test]
fn retry_code_needs_a_replay_and_a_passing_report_for_the_head_lifts_it() {
    let repo = repo_with(Some(CONFIG), "codex/http");
    let head = edit_with_ledger(&repo, "src/http.rs", HTTP_FILE);
    let r = check(&repo, &["--head", "codex/http"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(codes(&r.json), ["replay-missing"]);
    assert_eq!(r.json["evidence"]["replay"]["status"], "missing");

    let report = replay_report(&repo, "reference", ".github/replay-fast.yml", "1", None);
    let r = check(&repo, &["--head", "codex/http", "--replay-report", report.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{:?}", r.json["reasons"]);
    assert_eq!(r.json["evidence"]["replay"]["status"], "pass");
    assert_eq!(r.json["evidence"]["replay"]["commit"], head.as_str());

    let md = run(
        &repo,
        &["--head", "codex/http", "--replay-report", report.to_str().unwrap(), "--format", "markdown"],
    );
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("### ✅ retrygate: passing"), "{md}");
    assert!(md.contains("##### 429 replay: ✅ pass"), "the replay timeline is in the comment: {md}");
}

/// Issue 24: a replay counts as evidence only if it exercised a retry. A
/// client that never re-sends an unkeyed POST gives up at its first 429: its
/// replay passes every check, and the gate still blocks (`replay-no-retry`),
/// saying so plainly in the comment and what giving up means. A client that
/// retried correctly passes.
#[test]
fn a_replay_in_which_no_client_retried_blocks_and_the_comment_says_why() {
    let repo = repo_with(Some("replay: { scenario: default, clients: 4 }\n"), "codex/http");
    edit_with_ledger(&repo, "src/http.rs", HTTP_FILE);
    let out_path = repo.path().parent().unwrap().join("gave-up.json");
    let out = Command::new(BIN)
        .current_dir(repo.path())
        .args(["replay", "--scenario", "default", "--clients", "4", "--format", "json", "--report"])
        .arg(&out_path)
        .args([
            "--",
            BIN,
            "replay-client",
            "--profile",
            "reference",
            "--method",
            "POST",
            "--no-idempotency-key",
        ])
        .output()
        .unwrap();
    // The replay itself passes: giving up is safe for the dependency.
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report = out_path.to_str().unwrap();
    let r = check(&repo, &["--head", "codex/http", "--replay-report", report]);
    assert_eq!(r.code, Some(1), "{}", r.json);
    assert_eq!(codes(&r.json), ["replay-no-retry"]);
    assert_eq!(r.json["evidence"]["replay"]["status"], "no-retry");
    assert_eq!(
        r.json["reasons"][0]["message"],
        "no client retried in the 429 replay, so the retry code this change touches never ran and the replay shows nothing about it"
    );
    assert!(
        r.json["reasons"][0]["fix"]
            .as_str()
            .unwrap()
            .starts_with("make `replay.command` run the changed retry code against `$RETRYGATE_URL`"),
        "{}",
        r.json["reasons"][0]
    );
    let md = run(&repo, &["--head", "codex/http", "--replay-report", report, "--format", "markdown"]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("### ❌ retrygate: blocked"), "{md}");
    assert!(md.contains("#### 429 replay: ⛔ no client retried"), "{md}");
    assert!(
        md.contains("> **No client retried**: all 4 clients stopped at the first failed answer. A client that gives up did not storm the dependency, but the retry code under review never ran, so this replay shows nothing about it"),
        "{md}"
    );
    assert_eq!(md.matches("No client retried").count(), 1, "said once:\n{md}");
    // A client that retried correctly carries no such line and passes.
    let retried = replay_report(&repo, "reference", "default", "4", None);
    let r = check(&repo, &["--head", "codex/http", "--replay-report", retried.to_str().unwrap()]);
    assert_eq!(
        (r.code, r.json["evidence"]["replay"]["status"].as_str()),
        (Some(0), Some("pass")),
        "{}",
        r.json
    );
    let md = run(
        &repo,
        &["--head", "codex/http", "--replay-report", retried.to_str().unwrap(), "--format", "markdown"],
    );
    assert!(!String::from_utf8_lossy(&md.stdout).contains("No client retried"));
}

#[test]
fn a_failing_replay_blocks_with_the_timeline_in_the_comment() {
    let repo = repo_with(Some("replay: { scenario: default, clients: 4 }\n"), "codex/http");
    edit_with_ledger(&repo, "src/http.rs", HTTP_FILE);
    let report = replay_report(&repo, "storm", "default", "4", None);
    let r = check(&repo, &["--head", "codex/http", "--replay-report", report.to_str().unwrap()]);
    assert_eq!(r.code, Some(1));
    assert_eq!(codes(&r.json), ["replay-failed"]);
    let msg = r.json["reasons"][0]["message"].as_str().unwrap();
    assert!(msg.contains("retry-after-honored"), "{msg}");
    let out = run(
        &repo,
        &["--head", "codex/http", "--replay-report", report.to_str().unwrap(), "--format", "markdown"],
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.starts_with("### ❌ retrygate: blocked"), "{md}");
    assert!(md.contains("| `retry-after-honored` | ❌ fail |"), "{md}");
    assert!(md.contains("<details><summary>client 0"), "{md}");
    assert!(md.contains("#### Sign-off"), "{md}");
}

#[test]
fn a_report_for_another_commit_a_tampered_report_and_garbage_are_rejected() {
    let repo = repo_with(Some("replay: { scenario: default, clients: 4 }\n"), "codex/http");
    let base = repo.rev("main");
    let head = edit_with_ledger(&repo, "src/http.rs", HTTP_FILE);

    let foreign = replay_report(&repo, "storm", "default", "4", Some(&base));
    let r = check(&repo, &["--head", "codex/http", "--replay-report", foreign.to_str().unwrap()]);
    assert_eq!((r.code, codes(&r.json)), (Some(1), vec!["replay-rejected".to_string()]));
    let msg = r.json["reasons"][0]["message"].as_str().unwrap();
    assert!(msg.contains(&format!("run on commit {base}, not on the head {head}")), "{msg}");

    // The storm's report with its verdict flipped.
    let storm = replay_report(&repo, "storm", "default", "4", None);
    let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&storm).unwrap()).unwrap();
    assert_eq!(json["verdict"], "fail");
    json["verdict"] = "pass".into();
    let tampered = storm.with_extension("tampered.json");
    std::fs::write(&tampered, serde_json::to_string(&json).unwrap()).unwrap();
    let r = check(&repo, &["--head", "codex/http", "--replay-report", tampered.to_str().unwrap()]);
    assert_eq!((r.code, codes(&r.json)), (Some(1), vec!["replay-rejected".to_string()]));
    let msg = r.json["reasons"][0]["message"].as_str().unwrap();
    assert!(msg.contains("the verdict says pass, but check") && msg.contains("edited"), "{msg}");

    // Checks, reasons and verdict all rewritten to pass: the timeline still
    // shows requests that broke `retry-after-honored`.
    for c in json["checks"].as_array_mut().unwrap() {
        c["status"] = "pass".into();
    }
    json["reasons"] = serde_json::json!([]);
    std::fs::write(&tampered, serde_json::to_string(&json).unwrap()).unwrap();
    let r = check(&repo, &["--head", "codex/http", "--replay-report", tampered.to_str().unwrap()]);
    assert_eq!(codes(&r.json), ["replay-rejected"]);
    let msg = r.json["reasons"][0]["message"].as_str().unwrap();
    assert!(msg.contains("broke `retry-after-honored`, yet that check says pass"), "{msg}");

    // ...and with every `broke` mark wiped too: the gaps themselves still
    // show retries sooner than Retry-After asked.
    for t in json["timeline"].as_array_mut().unwrap() {
        for q in t["requests"].as_array_mut().unwrap() {
            q["broke"] = serde_json::json!([]);
        }
    }
    std::fs::write(&tampered, serde_json::to_string(&json).unwrap()).unwrap();
    let r = check(&repo, &["--head", "codex/http", "--replay-report", tampered.to_str().unwrap()]);
    assert_eq!(codes(&r.json), ["replay-rejected"]);
    let msg = r.json["reasons"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("a retry came before its Retry-After, yet `retry-after-honored` says pass"),
        "{msg}"
    );

    // Another scenario than the base config demands.
    let other = replay_report(&repo, "reference", ".github/replay-fast.yml", "1", None);
    let r = check(&repo, &["--head", "codex/http", "--replay-report", other.to_str().unwrap()]);
    assert_eq!(codes(&r.json), ["replay-rejected"]);
    assert!(r.json["reasons"][0]["message"].as_str().unwrap().contains("base config demands `default`"));

    std::fs::write(&tampered, "{\"verdict\": \"pass\"}").unwrap();
    let r = check(&repo, &["--head", "codex/http", "--replay-report", tampered.to_str().unwrap()]);
    assert_eq!((r.code, codes(&r.json)), (Some(1), vec!["replay-rejected".to_string()]));
    assert!(r.json["reasons"][0]["message"].as_str().unwrap().contains("not a retrygate replay report"));

    let r = check(&repo, &["--head", "codex/http", "--replay-report", "/nonexistent/report.json"]);
    assert_eq!(codes(&r.json), ["replay-rejected"]);
}

#[test]
fn the_gate_runs_replay_command_from_the_base_config_on_the_checked_out_head() {
    let config = |profile: &str, scenario: &str, clients: u32| {
        format!(
            "replay: {{ command: '\"$RETRYGATE_TEST_BIN\" replay-client --profile {profile}', scenario: {scenario}, clients: {clients} }}\n"
        )
    };
    let repo = repo_with(Some(&config("reference", ".github/replay-fast.yml", 1)), "codex/http");
    let head = edit_with_ledger(&repo, "src/http.rs", HTTP_FILE);
    let r = check(&repo, &["--head", "codex/http"]);
    assert_eq!(r.code, Some(0), "{:?}", r.json["reasons"]);
    assert_eq!(r.json["evidence"]["replay"]["status"], "pass");
    assert_eq!(r.json["evidence"]["replay"]["commit"], head.as_str());
    assert!(r.json["evidence"]["replay"]["source"].as_str().unwrap().starts_with("replay.command: "));

    // With the head not checked out, the code on disk is not the head's.
    repo.checkout("main");
    let r = check(&repo, &["--head", "codex/http"]);
    assert_eq!(codes(&r.json), ["replay-not-run"]);
    assert!(
        r.json["reasons"][0]["message"].as_str().unwrap().contains("not the head"),
        "{:?}",
        r.json["reasons"]
    );

    // The storm ignores Retry-After (the storm is quick: 10 ms between tries).
    let storm = repo_with(Some(&config("storm", "default", 4)), "codex/http");
    edit_with_ledger(&storm, "src/http.rs", HTTP_FILE);
    let r = check(&storm, &["--head", "codex/http"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(codes(&r.json), ["replay-failed"]);
}

#[test]
fn the_gates_own_replay_runs_the_base_beside_the_head_and_blocks_a_raise_only_the_comparison_sees() {
    // curl honours `Retry-After: 1`: under `default` (three 429s, then 200)
    // a curl --retry of 3 and one of 9 both recover after 4 attempts and pass every
    // check. Only the comparison's run to the caps shows 3 against 10.
    // The command (part of the gate) stays; the setting its client reads is
    // the project's code, which the pull request changes, under a name the
    // scan does not read as a retry setting: the replay alone can see it.
    let tuning = |n: u32| format!("K={n}\n");
    let setup = |head_client: &str| {
        let repo = Repo::new();
        repo.write("src/checkout.rs", common::BEFORE);
        repo.write(
            "replay.sh",
            ". src/tuning.sh\nexec curl -sS -o - --retry \"$K\" \"$RETRYGATE_URL/orders\"\n",
        );
        repo.write("src/tuning.sh", tuning(3));
        repo.write(
            ".github/retrygate.yml",
            "replay: { command: 'sh replay.sh', scenario: default, clients: 4 }\n",
        );
        repo.commit("base");
        repo.branch("codex/http");
        repo.write("src/tuning.sh", head_client);
        record_edit(&repo.join(".tool_ledger.jsonl"), "src/tuning.sh", head_client);
        edit_with_ledger(&repo, "src/http.rs", HTTP_FILE);
        repo
    };
    let raised = setup(&tuning(9));
    let r = check(&raised, &["--head", "codex/http"]);
    assert_eq!(
        (r.code, codes(&r.json)),
        (Some(1), vec!["replay-failed".to_string()]),
        "{:?}",
        r.json["reasons"]
    );
    let reasons = r.json["evidence"]["replay"]["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert_eq!(
        reasons[0],
        "retry-count-raised (seen in the replay, [to-the-cap]): GET /orders: 4 attempts per request at the base, 10 at the head"
    );
    // The comment shows both sides of the storm.
    let out = run(&raised, &["--head", "codex/http", "--format", "markdown"]);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("Compared with the base"), "{md}");
    assert!(md.contains("**Base**") && md.contains("**Head**"), "{md}");

    let unchanged = setup(&format!("# same retries, reworded\n{}", tuning(3)));
    let r = check(&unchanged, &["--head", "codex/http"]);
    assert_eq!(r.code, Some(0), "{:?}", r.json["reasons"]);
    assert_eq!(r.json["evidence"]["replay"]["status"], "pass");
}

// ------------------------------------------------------------------ policy

#[test]
fn a_head_side_config_that_disables_everything_is_ignored_and_flagged() {
    let repo = repo_with(Some(CONFIG), "codex/relax");
    let base_sha = repo.rev("main");
    repo.write(
        ".github/retrygate.yml",
        "mode: advisory\nrequire: { ledger: false, replay: false }\nprotected_paths: []\nagents: { logins: [], branch_prefixes: [], labels: [], trailers: [] }\n",
    );
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    let head = repo.commit("relax the gate");
    let r = check(&repo, &["--head", "codex/relax"]);
    assert_eq!(r.code, Some(1), "the base's enforce mode still holds");
    let c = codes(&r.json);
    for want in ["gate-config-changed", "blocking-findings", "ledger-missing", "replay-missing"] {
        assert!(c.contains(&want.to_string()), "{want} missing from {c:?}");
    }
    assert_eq!(r.json["facts"]["config_source"], format!("{}:.github/retrygate.yml", &base_sha[..7]));
    assert_eq!(r.json["facts"]["mode"], "enforce");
    assert_eq!(r.json["facts"]["agent"]["is_agent"], true, "the head's empty agent lists are ignored");
    assert!(rules(&r.json).contains(&"policy/gate-config-changed".to_string()));

    let signed = check(&repo, &["--head", "codex/relax", "--sign-off", &head]);
    assert_eq!(signed.code, Some(0));
}

#[test]
fn editing_a_workflow_that_runs_retrygate_or_a_rule_folder_is_a_gate_change() {
    let repo = repo_with(None, "feature");
    repo.write(
        ".github/workflows/gate.yml",
        "jobs:\n  gate:\n    steps:\n      - run: retrygate check --base main\n",
    );
    repo.write(".github/workflows/lint.yml", "jobs: {}\n");
    repo.commit("workflows");
    let base = repo.commit("empty");
    repo.git(&["branch", "-f", "main", &base]);
    repo.write(".github/workflows/gate.yml", "jobs:\n  gate:\n    steps:\n      - run: echo skipped\n");
    repo.commit("skip the gate");
    let r = check(&repo, &["--head", "feature", "--human"]);
    assert_eq!(codes(&r.json), ["gate-config-changed"]);
    assert!(r.json["reasons"][0]["message"].as_str().unwrap().contains(".github/workflows/gate.yml"));

    repo.checkout("main");
    repo.branch("lint");
    repo.write(".github/workflows/lint.yml", "permissions: {contents: read}\njobs: { lint: {} }\n");
    repo.commit("lint only");
    let r = check(&repo, &["--head", "lint", "--human"]);
    assert_eq!(
        (r.code, codes(&r.json).len()),
        (Some(0), 0),
        "a read-only workflow without retrygate is not the gate"
    );

    // A workflow whose token may write check runs could forge the gate's check.
    repo.write(".github/workflows/lint.yml", "jobs: { lint: {} }\n");
    repo.commit("lint with the default token");
    let r = check(&repo, &["--head", "lint", "--human"]);
    assert_eq!(codes(&r.json), ["gate-config-changed"]);
    assert!(r.json["reasons"][0]["message"].as_str().unwrap().contains(".github/workflows/lint.yml"));
}

const LOCAL_RULE: &str = r#"rules:
  - id: local/sleep-one
    kind: retry-without-jitter
    severity: error
    languages: [python]
    message: "fixed one-second sleep between retries"
    pattern: 'time\.sleep\(1\)'
    when: added
    docs:
      what: 'A retry loop sleeps a fixed second.'
      why: 'Clients that failed together retry together.'
      example: 'time.sleep(1)'
      use_instead: 'time.sleep(random.uniform(0, 2 ** attempt))'
"#;

const PY_RETRY: &str = "import time\n\ndef fetch(get):\n    for attempt in range(3):\n        try:\n            return get()\n        except IOError:\n            time.sleep(1)\n";

#[test]
fn rule_folders_are_read_from_the_base_and_edits_to_them_are_flagged() {
    let repo = repo_with(Some("rules: { extra: [.github/retrygate-rules/] }\n"), "unused");
    repo.checkout("main");
    repo.write(".github/retrygate-rules/local.yml", LOCAL_RULE);
    repo.commit("local rules");
    repo.branch("feature");
    repo.write("app.py", PY_RETRY);
    repo.commit("retry");
    let r = check(&repo, &["--head", "feature", "--human"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        rules(&r.json).contains(&"local/sleep-one".to_string()),
        "the base's rule ran: {:?}",
        rules(&r.json)
    );

    // Dropping the rule in the PR does not switch it off, and is flagged.
    repo.write(".github/retrygate-rules/local.yml", "rules: []\n");
    repo.commit("drop the rule");
    let r = check(&repo, &["--head", "feature", "--human"]);
    assert_eq!(codes(&r.json), ["gate-config-changed", "blocking-findings"], "{}", r.stderr);
    assert!(r.json["reasons"][0]["message"].as_str().unwrap().contains(".github/retrygate-rules/local.yml"));
    assert!(rules(&r.json).contains(&"local/sleep-one".to_string()));

    // A folder the base names but does not have is a config error.
    let broken = repo_with(Some("rules: { extra: [no-such-dir/] }\n"), "feature");
    broken.write("src/a.rs", "fn a() {}\n");
    broken.commit("a");
    let err = check_error(&broken, &["--head", "feature"]);
    assert!(err.contains("rules.extra names no-such-dir/"), "{err}");
}

#[test]
fn protected_paths_block_agent_prs_only() {
    let repo = repo_with(
        Some("protected_paths: [\"app/\"]\nrequire: { ledger: false, replay: false }\n"),
        "codex/pay",
    );
    repo.write("app/pay.rs", "pub fn pay() {}\n");
    repo.commit("pay");
    let r = check(&repo, &["--head", "codex/pay"]);
    assert_eq!(codes(&r.json), ["protected-path"]);
    assert!(r.json["reasons"][0]["message"].as_str().unwrap().contains("`app/pay.rs`"));
    let person = check(&repo, &["--head", "codex/pay", "--human"]);
    assert_eq!((person.code, codes(&person.json).len()), (Some(0), 0));
    let head = repo.head();
    assert_eq!(check(&repo, &["--head", "codex/pay", "--sign-off", &head]).code, Some(0));
}

#[test]
fn limits_max_attempts_flags_any_head_policy_above_it() {
    let repo = repo_with(Some("limits: { max_attempts: 3 }\n"), "feature");
    // Five attempts on a brand-new retry: not a raise, but over the limit.
    repo.write(
        "src/fetch.rs",
        "use backon::{ExponentialBuilder, Retryable};\nasync fn f(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    (|| async { c.get(\"https://x\").send().await })\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times(4))\n        .await\n}\n",
    );
    repo.commit("fetch");
    let r = check(&repo, &["--head", "feature", "--human"]);
    assert_eq!(r.code, Some(1));
    let f =
        r.json["findings"].as_array().unwrap().iter().find(|f| f["rule"] == "policy/max-attempts").unwrap();
    assert_eq!(f["message"], "backon retry policy allows 5 attempts, over limits.max_attempts 3");
    assert_eq!(f["path"], "src/fetch.rs");

    let ok = repo_with(Some("limits: { max_attempts: 5 }\n"), "feature");
    ok.write("src/fetch.rs", std::fs::read_to_string(repo.join("src/fetch.rs")).unwrap());
    ok.commit("fetch");
    let r = check(&ok, &["--head", "feature", "--human"]);
    assert!(!rules(&r.json).contains(&"policy/max-attempts".to_string()), "{:?}", rules(&r.json));
}

#[test]
fn advisory_mode_reports_everything_and_never_blocks() {
    let repo = repo_with(Some("mode: advisory\n"), "codex/faster");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    repo.commit("faster");
    let r = check(&repo, &["--head", "codex/faster"]);
    assert_eq!(r.code, Some(0));
    assert_eq!(r.json["verdict"], "pass");
    assert_eq!(codes(&r.json), ["blocking-findings", "ledger-missing", "replay-missing"]);
    let out = run(&repo, &["--head", "codex/faster", "--format", "markdown"]);
    assert!(String::from_utf8_lossy(&out.stdout)
        .starts_with("### ⚠️ retrygate: passing (advisory mode, would block)"));
    let text = run(&repo, &["--head", "codex/faster", "--format", "text"]);
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(t.starts_with("retrygate check: PASS (advisory mode: would block)"), "{t}");
    assert!(!t.contains("no blocking findings"), "the text must not claim nothing blocks: {t}");
}

// --------------------------------------------------------- agent detection

#[test]
fn each_fact_alone_makes_an_agent_pr_and_the_verdict_names_it() {
    let check_agent = |repo: &Repo, head: &str, args: &[&str]| -> Value {
        let mut all = vec!["--head", head];
        all.extend_from_slice(args);
        check(repo, &all).json["facts"]["agent"].clone()
    };
    let repo = repo_with(None, "feature");
    repo.write("src/util.rs", "pub fn one() -> u32 { 1 }\n");
    repo.commit("util");

    let none = check_agent(&repo, "feature", &["--author", "alice", "--label", "bug"]);
    assert_eq!(none, serde_json::json!({"is_agent": false, "because": []}));
    let login = check_agent(&repo, "feature", &["--author", "devin-ai-integration[bot]"]);
    assert_eq!(login["because"][0], "author `devin-ai-integration[bot]` matches agents.logins `*[bot]`");
    let label = check_agent(&repo, "feature", &["--label", "agent"]);
    assert_eq!(label["because"][0], "label `agent` is in agents.labels (`agent`)");
    let forced = check_agent(&repo, "feature", &["--agent"]);
    assert_eq!(forced["because"][0], "--agent was given");

    repo.branch("cursor/tidy");
    let branch = check_agent(&repo, "cursor/tidy", &[]);
    assert_eq!(
        branch["because"][0],
        "head branch `cursor/tidy` starts with agents.branch_prefixes `cursor/`"
    );
    let explicit = check_agent(&repo, "HEAD", &["--head-branch", "devin/x"]);
    assert!(explicit["because"][0].as_str().unwrap().contains("`devin/x`"));
    let human = check_agent(&repo, "cursor/tidy", &["--human"]);
    assert_eq!(human["is_agent"], false);

    repo.checkout("feature");
    repo.write("src/two.rs", "pub fn two() -> u32 { 2 }\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "two\n\nCo-authored-by: Cursor Agent <cursoragent@cursor.com>"]);
    let trailer = check_agent(&repo, "feature", &[]);
    assert_eq!(trailer["is_agent"], true);
    assert!(
        trailer["because"][0]
            .as_str()
            .unwrap()
            .contains("`Co-authored-by: Cursor Agent <cursoragent@cursor.com>`"),
        "{trailer}"
    );
}

// -------------------------------------------------------------- bad config

fn bad_config(text: &[u8]) -> String {
    let repo = Repo::new();
    repo.write("README.txt", "x\n");
    repo.write(".github/retrygate.yml", text);
    repo.commit("base");
    repo.branch("feature");
    repo.write("src/a.rs", "fn a() {}\n");
    repo.commit("a");
    check_error(&repo, &["--head", "feature"])
}

#[test]
fn bad_base_configs_are_exit_2_naming_the_file_line_and_key() {
    let err = bad_config(b"mode: enforce\nrequire:\n  ledgr: true\n");
    assert!(err.contains(":.github/retrygate.yml:3: ") && err.contains("unknown field `ledgr`"), "{err}");
    assert!(err.contains("fix it there"), "says the base is where to fix it: {err}");

    let err = bad_config(b"limits:\n  max_attempts: lots\n");
    assert!(err.contains(".github/retrygate.yml:2: ") && err.contains("limits.max_attempts"), "{err}");

    let err = bad_config(b"mode: [unclosed\n");
    assert!(err.contains(".github/retrygate.yml:"), "{err}");

    let mut bomb =
        String::from("a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for i in 1..10 {
        let p = i - 1;
        bomb.push_str(&format!("a{i}: &a{i} [*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p}]\n"));
    }
    bomb.push_str("protected_paths: *a9\n");
    let err = bad_config(bomb.as_bytes());
    assert!(err.contains(".github/retrygate.yml:1: unknown field `a0`"), "{err}");

    let err = bad_config(b"replay: { scenario: no-such-scenario }\n");
    assert!(
        err.contains(".github/retrygate.yml: replay.scenario: ") && err.contains("no-such-scenario"),
        "{err}"
    );

    let err = bad_config(b"\xff\xfe mode: enforce\n");
    assert!(err.contains("not UTF-8"), "{err}");
}

#[test]
fn a_100_mb_config_is_refused_unread() {
    let big = vec![b' '; 100 << 20];
    let err = bad_config(&big);
    assert!(err.contains("the file is 104857600 bytes, over the 1024 KiB limit"), "{err}");
}

// ------------------------------------------------------------------ formats

#[test]
fn every_format_renders_the_same_verdict() {
    let repo = repo_with(None, "codex/faster");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    repo.commit("faster");
    let text = run(&repo, &["--head", "codex/faster", "--format", "text"]);
    assert_eq!(text.status.code(), Some(1));
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(t.starts_with("retrygate check: BLOCK (agent pull request: head branch `codex/faster`"), "{t}");
    assert!(t.contains("  ledger-missing: no tool-call ledger was found") && t.contains("    fix: "), "{t}");
    assert!(t.ends_with("\nretrygate: BLOCK: blocking-findings, ledger-missing, replay-missing\n"), "{t}");
    assert_eq!(t.matches("retrygate: BLOCK").count(), 1, "one closing verdict line: {t}");

    let gh = run(&repo, &["--head", "codex/faster", "--format", "github"]);
    let g = String::from_utf8_lossy(&gh.stdout);
    assert!(g.contains("::error title=retrygate ledger-missing::"), "{g}");
    assert!(g.contains("::error file=src/checkout.rs"), "{g}");
    assert!(g.ends_with("retrygate: BLOCK: blocking-findings, ledger-missing, replay-missing\n"), "{g}");

    let sarif = run(&repo, &["--head", "codex/faster", "--format", "sarif"]);
    let s: Value = serde_json::from_slice(&sarif.stdout).unwrap();
    assert_eq!(s["version"], "2.1.0");
    assert_eq!(sarif.status.code(), Some(1));

    let md = run(&repo, &["--head", "codex/faster", "--format", "markdown"]);
    let m = String::from_utf8_lossy(&md.stdout);
    assert!(m.starts_with("### ❌ retrygate: blocked\n"), "{m}");
    for part in [
        "**ledger-missing**",
        "#### Findings",
        "#### Tool-call ledger",
        "#### 429 replay: ⛔ missing",
        "#### Sign-off",
    ] {
        assert!(m.contains(part), "{part} missing: {m}");
    }
    assert!(m.contains("| `src/checkout.rs:17` |"), "no links without a link base: {m}");
    let head = repo.head();
    let linked = run_env(
        &repo,
        &["--head", "codex/faster", "--format", "markdown"],
        &[("GITHUB_SERVER_URL", "https://github.com"), ("GITHUB_REPOSITORY", "acme/shop")],
    );
    let l = String::from_utf8_lossy(&linked.stdout);
    let want =
        format!("[`src/checkout.rs:17`](https://github.com/acme/shop/blob/{head}/src/checkout.rs#L17)");
    assert!(l.contains(&want), "{l}");
}

#[test]
fn usage_errors_are_exit_2() {
    let repo = repo_with(None, "feature");
    let err = check_error(&repo, &["--head", "no-such-branch"]);
    assert!(err.contains("unknown revision 'no-such-branch'"), "{err}");
    let out = run(&repo, &["--agent", "--human"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn rules_disable_drops_a_rule_and_an_unparsable_file_blocks_as_incomplete() {
    let repo = repo_with(Some("rules: { disable: [rust/loop-attempts, rust/client-timeout] }\n"), "feature");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    repo.commit("faster");
    let r = check(&repo, &["--head", "feature", "--human"]);
    let found = rules(&r.json);
    assert!(!found.contains(&"rust/loop-attempts".to_string()), "{found:?}");
    assert!(!found.contains(&"rust/client-timeout".to_string()), "{found:?}");
    assert!(found.contains(&"rust/loop-methods".to_string()), "other rules still run: {found:?}");

    let broken = repo_with(None, "feature");
    broken.write("src/checkout.rs", "fn retry( {\n");
    broken.commit("broken");
    let r = check(&broken, &["--head", "feature", "--human"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(codes(&r.json), ["scan-incomplete"]);
    assert_eq!(r.json["notes"][0]["blocking"], true);
}

#[test]
fn an_uncommitted_ledger_is_read_from_the_top_of_the_working_tree_even_from_a_subdirectory() {
    let repo = repo_with(Some(CONFIG), "codex/helper");
    let content = "pub fn add(a: u32, b: u32) -> u32 { a + b }\n";
    repo.write("src/util.rs", content);
    repo.commit("helper");
    // Where CI puts a downloaded ledger artifact: the working tree, uncommitted.
    record_edit(&repo.join(".tool_ledger.jsonl"), "src/util.rs", content);
    let out = Command::new(BIN)
        .args(["check", "--repo"])
        .arg(repo.join("src"))
        .args(["--base", "main", "--head", "codex/helper", "--format", "json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert_eq!(json["evidence"]["ledger"]["valid"], true);
}

#[test]
fn a_remote_tracking_head_names_its_branch_for_agent_detection() {
    let origin = repo_with(None, "claude/fix");
    origin.write("src/util.rs", "pub fn one() -> u32 { 1 }\n");
    origin.commit("fix");
    let clone = Repo::clone_from(&origin, &[]);
    clone.git(&["branch", "-f", "main", "origin/main"]);
    let r = check(&clone, &["--head", "origin/claude/fix"]);
    assert_eq!(r.json["facts"]["head_branch"], "claude/fix");
    assert_eq!(r.json["facts"]["agent"]["is_agent"], true, "{}", r.json["facts"]);
}
