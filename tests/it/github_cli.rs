//! `retrygate github` as the Action runs it: the binary, the runner's
//! environment variables, a real git checkout with the checkout incident's
//! patch, the real scan gate, and the fake GitHub on a loopback port.

use crate::common;
use crate::fake_github;

use std::process::Output;

use common::Repo;
use fake_github::{FakeGithub, ACTIONS_TOKEN, OWNER_REPO, READ_ONLY_TOKEN};
use serde_json::{json, Value};

struct Checkout {
    repo: Repo,
    base: String,
    head: String,
    dir: tempfile::TempDir,
}

/// A checkout with `before` at the base and `after` at the head, and the
/// `pull_request.opened` payload rewritten to those commits.
fn checkout(before: &str, after: &str) -> Checkout {
    let repo = Repo::new();
    repo.write("src/checkout.rs", before);
    let base = repo.commit("base");
    repo.branch("claude/faster");
    repo.write("src/checkout.rs", after);
    let head = repo.commit("the agent's change");
    Checkout { repo, base, head, dir: tempfile::tempdir().unwrap() }
}

fn event(c: &Checkout) -> Value {
    let path =
        format!("{}/tests/fixtures/github/pull_request__opened.payload.json", env!("CARGO_MANIFEST_DIR"));
    let mut ev: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    ev["pull_request"]["head"]["sha"] = json!(c.head);
    ev["pull_request"]["base"]["sha"] = json!(c.base);
    ev
}

fn run(fake: &FakeGithub, c: &Checkout, token: &str, extra: &[&str]) -> Output {
    run_event(fake, c, token, "pull_request", &event(c), extra)
}

fn run_event(
    fake: &FakeGithub,
    c: &Checkout,
    token: &str,
    name: &str,
    payload: &Value,
    extra: &[&str],
) -> Output {
    let event_path = c.dir.path().join("event.json");
    std::fs::write(&event_path, payload.to_string()).unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .arg("github")
        .args(extra)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GITHUB_EVENT_NAME", name)
        .env("GITHUB_EVENT_PATH", &event_path)
        .env("GITHUB_REPOSITORY", OWNER_REPO)
        .env("GITHUB_API_URL", &fake.url)
        .env("GITHUB_TOKEN", token)
        .env("GITHUB_WORKSPACE", c.repo.path())
        .env("GITHUB_STEP_SUMMARY", c.dir.path().join("summary.md"))
        .env("GITHUB_OUTPUT", c.dir.path().join("output.txt"))
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_RUN_ID", "7")
        .output()
        .unwrap()
}

#[test]
fn the_incident_patch_is_blocked_on_the_pull_request() {
    let fake = FakeGithub::start();
    let c = checkout(common::BEFORE, common::AGENT_PATCH);
    let out = run(&fake, &c, ACTIONS_TOKEN, &[]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].head_sha, c.head);
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"));
    let kinds: Vec<&str> = runs[0].annotations.iter().filter_map(|a| a["title"].as_str()).collect();
    assert!(kinds.iter().any(|t| t.starts_with("jitter-removed")), "{kinds:?}");
    let outputs = std::fs::read_to_string(c.dir.path().join("output.txt")).unwrap();
    assert!(outputs.starts_with("verdict=block\nfindings="), "{outputs}");
    let comments = fake.comments();
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.contains("retrygate: blocked"), "{}", comments[0].body);
    // The check run links to the run's page.
    let created =
        fake.log().into_iter().find(|l| l.method == "POST" && l.path.ends_with("/check-runs")).unwrap();
    assert_eq!(created.body["details_url"], "https://github.com/Codertocat/Hello-World/actions/runs/7");
}

#[test]
fn a_read_only_token_prints_annotations_and_never_passes() {
    let fake = FakeGithub::start();
    // A harmless change: the verdict passes, but it cannot be published.
    let c = checkout("fn a() {}\n", "fn a() {}\nfn b() {}\n");
    let out = run(&fake, &c, READ_ONLY_TOKEN, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "stdout: {stdout}");
    assert!(stdout.contains("::error title=retrygate verdict not published::passing"), "{stdout}");
    let summary = std::fs::read_to_string(c.dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("Resource not accessible by integration"), "{summary}");

    // Blocked: the findings reach the log as workflow commands, exit 1.
    let c = checkout(common::BEFORE, common::AGENT_PATCH);
    let out = run(&fake, &c, READ_ONLY_TOKEN, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout.contains("::error file=src/checkout.rs,line="), "{stdout}");
    assert!(fake.check_runs().is_empty() && fake.comments().is_empty());
}

#[test]
fn missing_runner_variables_are_named() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .arg("github")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("GITHUB_EVENT_NAME is not set; retrygate github runs inside GitHub Actions"),
        "{stderr}"
    );
}

#[test]
fn an_agent_pull_request_without_evidence_is_blocked_and_a_maintainer_sign_off_lifts_it() {
    let fake = FakeGithub::start();
    let c = checkout(common::BEFORE, common::AGENT_PATCH);
    let mut ev = event(&c);
    ev["pull_request"]["head"]["ref"] = json!("claude/faster");
    ev["pull_request"]["user"] = fake_github::user("claude[bot]");
    let out = run_event(&fake, &c, ACTIONS_TOKEN, "pull_request", &ev, &[]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let run = &fake.check_runs()[0];
    let title = run.title.clone().unwrap();
    assert!(title.starts_with("blocked: ") && title.contains("blocking-findings"), "{title}");
    println!("agent PR check title: {title}");

    // A maintainer signs off the head by comment.
    let mut pr = ev["pull_request"].clone();
    pr["number"] = json!(5);
    fake.with(|s| s.pulls.insert(5, pr));
    fake.set_permission("maintainer", "write", "write");
    let path = format!(
        "{}/tests/fixtures/github/issue_comment_edited_webhook_event.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut comment: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    comment["action"] = json!("created");
    comment["comment"]["user"] = fake_github::user("maintainer");
    comment["comment"]["body"] = json!(format!("/retrygate sign-off {}", c.head));
    let out = run_event(&fake, &c, ACTIONS_TOKEN, "issue_comment", &comment, &[]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let runs = fake.check_runs();
    let signed = runs.iter().find(|r| r.head_sha == c.head && r.conclusion.as_deref() == Some("success"));
    let signed = signed.unwrap_or_else(|| panic!("no passing check run: {runs:?}"));
    assert_eq!(
        signed.title.as_deref(),
        Some(format!("passing (signed off): by maintainer for {}", &c.head[..7]).as_str())
    );
    let pr5 = fake.comments().into_iter().find(|x| x.issue == 5).unwrap();
    assert!(pr5.body.contains("maintainer"), "{}", pr5.body);
}
