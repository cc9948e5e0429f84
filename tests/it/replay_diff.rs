//! The differential replay (`retrygate replay --base REV`) end to end: a
//! real git repository in a temporary directory whose client script differs
//! between the base and the head commits, run with real clients (curl,
//! urllib3) through the binary, as the Action's replay step runs it.
//!
//! Waits are kept short: the scenarios are files written here with
//! `Retry-After: 1` (the shortest a real client can be told: delta-seconds
//! are whole seconds) or a held answer of 2 s, and 4 clients.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use retrygate::gate::replay::binding_problems;
use retrygate::replay::{render_markdown, LoadedScenario, ReplayReport};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");
const INSTALL: &str = "run .ci/install-replay-deps.sh to install the replay test clients";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A scratch directory holding `repo/`, a repository with `client.sh` =
/// `base` at the first commit and `head` at the second (checked out); the
/// scenario and the report go beside it, outside the repository.
fn repo(base: &str, head: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = &dir.path().join("repo");
    std::fs::create_dir(d).unwrap();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::write(d.join("client.sh"), base).unwrap();
    std::fs::write(d.join("README"), "base\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "base"]);
    let base_sha = git(d, &["rev-parse", "HEAD"]);
    std::fs::write(d.join("client.sh"), head).unwrap();
    std::fs::write(d.join("README"), "head\n").unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-q", "-m", "head"]);
    let head_sha = git(d, &["rev-parse", "HEAD"]);
    (dir, base_sha, head_sha)
}

/// A scenario file outside the repository (the same for both sides).
fn scenario(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("scenario.yml");
    std::fs::write(&p, text).unwrap();
    p
}

/// `retrygate replay --base REV --scenario FILE --clients 4 --report R -- sh client.sh`
/// in `scratch/repo`; returns the output and the report, if one was written.
fn replay(scratch: &Path, base: &str, scenario: impl AsRef<std::ffi::OsStr>) -> (Output, Option<Value>) {
    let report = scratch.join("report.json");
    let out = Command::new(BIN)
        .current_dir(scratch.join("repo"))
        .args(["replay", "--base", base, "--clients", "4", "--format", "text", "--scenario"])
        .arg(scenario)
        .arg("--report")
        .arg(&report)
        .args(["--", "sh", "client.sh"])
        .output()
        .unwrap();
    let json = std::fs::read_to_string(&report)
        .ok()
        .filter(|t| !t.is_empty())
        .map(|t| serde_json::from_str(&t).unwrap());
    (out, json)
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn curl_available() {
    let ok = Command::new("curl").arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    assert!(ok, "curl is missing: {INSTALL}");
}

/// 429 with `Retry-After: 1` to every request: the attempts a client makes
/// are its attempt cap, and a generous budget lets the absolute checks pass.
const OUTAGE: &str =
    "responses:\n  - status: 429\n    retry_after: 1\nbudget: 20\nchecks:\n  recovered: off\n";

#[test]
fn a_head_that_raises_attempts_from_3_to_10_and_honours_retry_after_is_blocked_with_both_figures() {
    curl_available();
    let curl = |n: u32| format!("curl -sS -o - --retry {n} \"$RETRYGATE_URL/orders\"\n");
    let (dir, base, head) = repo(&curl(2), &curl(9));
    let s = scenario(dir.path(), OUTAGE);
    let (out, report) = replay(dir.path(), &base, &s);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = report.expect("a report");
    assert_eq!(r["verdict"], "fail");
    // Bound to both commits.
    assert_eq!(r["commit"], head.as_str());
    assert_eq!(r["comparison"]["base_commit"], base.as_str());
    assert_eq!(r["comparison"]["head_commit"], head.as_str());
    assert_eq!(r["comparison"]["base"]["commit"], base.as_str());
    // The head passes every absolute check: only the comparison blocks it.
    for c in r["checks"].as_array().unwrap() {
        assert!(!(c["status"] == "fail" && c["level"] == "error"), "{c}");
    }
    let findings = r["comparison"]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["kind"], "retry-count-raised");
    assert_eq!(findings[0]["seen_in"], "replay");
    let msg = "GET /orders: 3 attempts per request at the base, 10 at the head";
    assert_eq!(findings[0]["message"], msg);
    assert_eq!(r["reasons"].as_array().unwrap().len(), 1, "{}", r["reasons"]);
    assert!(text(&out).contains(msg), "{}", text(&out));
    assert!(text(&out).contains("retry-count-raised (seen in the replay)"), "{}", text(&out));
    // The base's worktree is gone.
    assert!(!git(&dir.path().join("repo"), &["worktree", "list"]).contains("retrygate-base-"));
    // The Markdown for the PR comment shows the comparison.
    let parsed = ReplayReport::from_json(&r.to_string()).unwrap();
    let md = render_markdown(&parsed);
    assert!(md.contains("#### Compared with the base") && md.contains(msg), "{md}");
    // The gate accepts the report as it was written, and recomputes the
    // comparison from its two sides: findings edited away are rejected.
    let expected = LoadedScenario::from_text("outage", OUTAGE).unwrap();
    assert_eq!(binding_problems(&parsed, &head, &expected), Vec::<String>::new());
    let mut edited = r.clone();
    edited["comparison"]["findings"] = serde_json::json!([]);
    edited["reasons"] = serde_json::json!([]);
    edited["verdict"] = "pass".into();
    let edited = ReplayReport::from_json(&edited.to_string()).unwrap();
    let problems = binding_problems(&edited, &head, &expected);
    assert!(problems.iter().any(|p| p.contains("do not follow from its two sides")), "{problems:?}");
}

#[test]
fn a_head_equal_to_its_base_passes() {
    let ok = Command::new("python3").args(["-c", "import urllib3"]).output().map(|o| o.status.success());
    assert!(ok.unwrap_or(false), "python3 with urllib3 is missing: {INSTALL}");
    // urllib3 honours Retry-After on a 429 in status_forcelist: 3 attempts on both sides.
    let client = "exec python3 -c '\nimport os, sys, urllib3\nfrom urllib3.util.retry import Retry\n\
                  http = urllib3.PoolManager(retries=Retry(total=2, status_forcelist=[429]))\n\
                  try:\n    http.request(\"GET\", os.environ[\"RETRYGATE_URL\"] + \"/items/42\")\n\
                  except urllib3.exceptions.MaxRetryError:\n    sys.exit(1)\n'\n";
    let (dir, base, _) = repo(client, client);
    let s = scenario(dir.path(), OUTAGE);
    let (out, report) = replay(dir.path(), &base, &s);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report.expect("a report");
    assert_eq!(r["verdict"], "pass");
    assert_eq!(r["comparison"]["findings"], serde_json::json!([]));
    let ops = r["comparison"]["operations"].as_array().unwrap();
    assert_eq!(ops.len(), 1, "{ops:#?}");
    assert_eq!(ops[0]["operation"], "GET /items/{id}");
    assert_eq!(ops[0]["base"]["attempts_max"], 3);
    assert_eq!(ops[0]["head"]["attempts_max"], 3);
    assert!(text(&out).contains("no worse than its base"), "{}", text(&out));
}

#[test]
fn a_head_with_a_lowered_timeout_sends_more_to_a_slow_server() {
    curl_available();
    // The bundled slow-response: every answer held 2 s. The base waits for
    // it; the head gives up after 0.5 s and re-sends while the first answer
    // is still coming (then once more: over the scenario's budget of 2).
    let base_client = "curl -sS -o - --max-time 5 --retry 2 \"$RETRYGATE_URL/items\"\n";
    let head_client = "curl -sS -o - --max-time 0.5 --retry 2 \"$RETRYGATE_URL/items\"\n";
    let (dir, base, _) = repo(base_client, head_client);
    let (out, report) = replay(dir.path(), &base, "slow-response");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = report.expect("a report");
    let findings = r["comparison"]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["kind"], "timeout-lowered");
    assert_eq!(findings[0]["base"], "1");
    // The scenario's own check judges the head too.
    let budget = r["checks"].as_array().unwrap().iter().find(|c| c["check"] == "attempt-budget").unwrap();
    assert_eq!(budget["status"], "fail", "{budget}");
    assert_eq!(r["comparison"]["base"]["verdict"], "pass");
}

#[test]
fn a_base_that_fails_its_own_checks_is_said_and_a_better_head_passes() {
    curl_available();
    // The bundled long-outage (503 forever, no Retry-After, budget 6): the
    // base's storm client makes 7 attempts 10 ms apart; the head's
    // `reference` makes 5 with full jitter. (curl's own backoff has no
    // jitter: 4 curl clients come back in lockstep and fail
    // `desynchronized`, as 12 do; issue 53.)
    let storm = format!("exec {BIN} replay-client --profile storm\n");
    let head_client = format!("exec {BIN} replay-client --profile reference\n");
    let (dir, base, _) = repo(&storm, &head_client);
    let (out, report) = replay(dir.path(), &base, "long-outage");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report.expect("a report");
    assert_eq!(r["verdict"], "pass");
    assert_eq!(r["comparison"]["base"]["verdict"], "fail");
    assert_eq!(r["comparison"]["findings"], serde_json::json!([]));
    assert!(text(&out).contains("itself fails: attempt-budget"), "{}", text(&out));
}

#[test]
fn a_head_that_clamps_a_long_retry_after_to_its_cap_is_caught_and_a_base_that_gives_up_is_not() {
    curl_available();
    // The bundled long-retry-after: one 429 asking for 120 s, then 200. The
    // base's curl gives up (waiting 120 s would pass its --retry-max-time of
    // 10 s); the head caps its wait at 1 s and comes back far too early.
    let base_client = "curl -sS -o - --retry 2 --retry-max-time 10 \"$RETRYGATE_URL/items\"\n";
    let head_client =
        "curl -sS -o /dev/null \"$RETRYGATE_URL/items\"\nsleep 1\ncurl -sS -o - \"$RETRYGATE_URL/items\"\n";
    let (dir, base, _) = repo(base_client, head_client);
    let (out, report) = replay(dir.path(), &base, "long-retry-after");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = report.expect("a report");
    // The base gave up: right here (`recovered` is off), so it passes.
    assert_eq!(r["comparison"]["base"]["verdict"], "pass");
    // The head fails the existing adherence check on its own...
    let honoured =
        r["checks"].as_array().unwrap().iter().find(|c| c["check"] == "retry-after-honored").unwrap();
    assert_eq!(honoured["status"], "fail", "{honoured}");
    // ... and against its base: early retries where the base made none.
    let findings = r["comparison"]["findings"].as_array().unwrap();
    let kinds: Vec<&str> = findings.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["retry-count-raised", "retry-after-ignored"], "{findings:#?}");
    assert_eq!(findings[1]["base"], "0 of 0");
    assert_eq!(findings[1]["head"], "4 of 4");
    // The report lists what the head called, for the gate's coverage line.
    assert_eq!(r["exercised"], serde_json::json!([{"operation": "GET /items", "requests": 8, "retries": 4}]));
}

#[test]
fn a_base_that_cannot_run_is_could_not_decide_with_its_output() {
    curl_available();
    let broken = "echo 'error: the base build failed (missing libfoo)' >&2\nexit 3\n";
    let good = "curl -sS -o - --retry 1 \"$RETRYGATE_URL/orders\"\n";
    let (dir, base, _) = repo(broken, good);
    let s = scenario(dir.path(), OUTAGE);
    let (out, report) = replay(dir.path(), &base, &s);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("could not decide"), "{stderr}");
    assert!(stderr.contains("the base build failed (missing libfoo)"), "{stderr}");
    // The report is written and fails, never passes.
    let r = report.expect("a report");
    assert_eq!(r["verdict"], "fail");
    assert!(r["comparison"]["undecided"].as_str().unwrap().contains("no client of it sent a request"));
}

#[test]
fn a_bad_base_revision_is_a_one_line_error() {
    let (dir, _, _) = repo("true\n", "true\n");
    let s = scenario(dir.path(), OUTAGE);
    let (out, report) = replay(dir.path(), "no-such-branch", &s);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--base no-such-branch") && stderr.contains("fetch"), "{stderr}");
    assert!(report.is_none(), "nothing ran, so no report");
}

#[test]
fn a_head_that_stops_honouring_retry_after_is_retry_after_ignored() {
    let ok = Command::new("python3").args(["-c", "import urllib3"]).output().map(|o| o.status.success());
    assert!(ok.unwrap_or(false), "python3 with urllib3 is missing: {INSTALL}");
    // urllib3 at the base honours Retry-After; the head turns it off and
    // backs off 0.1 s x 2^n instead, on the bundled `default` (429 with
    // Retry-After: 1 three times, then 200).
    let client = |respect: &str| {
        format!(
            "exec python3 -c '\nimport os, sys, urllib3\nfrom urllib3.util.retry import Retry\n\
             r = Retry(total=3, status_forcelist=[429], backoff_factor=0.1, respect_retry_after_header={respect})\n\
             http = urllib3.PoolManager(retries=r)\n\
             try:\n    http.request(\"GET\", os.environ[\"RETRYGATE_URL\"] + \"/items\")\n\
             except urllib3.exceptions.MaxRetryError:\n    sys.exit(1)\n'\n"
        )
    };
    let (dir, base, _) = repo(&client("True"), &client("False"));
    let (out, report) = replay(dir.path(), &base, "default");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = report.expect("a report");
    let findings = r["comparison"]["findings"].as_array().unwrap();
    let kinds: Vec<&str> = findings.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["retry-after-ignored"], "{findings:#?}");
    // 4 clients x 3 told retries, or 24 x 3 when the base's `desynchronized`
    // reading was inconclusive on 4 clients and the base was rerun with 24.
    assert!(matches!(findings[0]["base"].as_str(), Some("0 of 12" | "0 of 72")), "{findings:#?}");
    assert_eq!(r["comparison"]["base"]["verdict"], "pass");
}

#[test]
fn a_head_that_retries_a_post_without_a_key_is_retry_non_idempotent() {
    curl_available();
    // The bundled `post` (429 with Retry-After: 2 once, then 200): the base's
    // curl sends its POST once; the head's retries it without a key.
    let post = |retry: &str| format!("curl -sS -o - -d item=1 {retry} \"$RETRYGATE_URL/orders\"\n");
    let (dir, base, _) = repo(&post(""), &post("--retry 2"));
    let (out, report) = replay(dir.path(), &base, "post");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = report.expect("a report");
    let findings = r["comparison"]["findings"].as_array().unwrap();
    let kinds: Vec<&str> = findings.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["retry-count-raised", "retry-non-idempotent"], "{findings:#?}");
    assert_eq!(
        findings[1]["message"],
        "POST /orders: 0 re-sends without the same Idempotency-Key at the base, 4 at the head"
    );
}

/// The issue's client: Python (standard library only) that honours
/// Retry-After with jitter, gives up on a told wait over 30 s, backs off
/// exponentially with equal jitter otherwise (0.5 s doubling, at most 2 s), and makes `MAX_RETRIES` retries.
fn python_client(max_retries: u32, comment: &str, path: &str) -> String {
    format!(
        r#"exec python3 - <<'PY'
import email.utils, http.client, os, random, sys, time, urllib.error, urllib.request
{comment}
MAX_RETRIES = {max_retries}
url = os.environ["RETRYGATE_URL"] + "{path}"

def told(value):
    if not value:
        return None
    if value.strip().isdigit():
        return float(value)
    when = email.utils.parsedate_to_datetime(value)
    return max(0.0, when.timestamp() - time.time())

for attempt in range(MAX_RETRIES + 1):
    wait = None
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            answer.read()
            sys.exit(0)
    except urllib.error.HTTPError as e:
        if e.code not in (408, 425, 429, 500, 502, 503, 504):
            sys.exit(1)
        wait = told(e.headers.get("Retry-After"))
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError):
        pass
    if attempt == MAX_RETRIES:
        sys.exit(1)
    if wait is not None:
        if wait > 30:
            sys.exit(1)
        time.sleep(wait + random.uniform(0, 0.3))
    else:
        step = min(2.0, 0.5 * 2 ** attempt)
        time.sleep(step / 2 + random.uniform(0, step / 2))
PY
"#
    )
}

fn python_available() {
    let ok = Command::new("python3").arg("--version").output().map(|o| o.status.success());
    assert!(ok.unwrap_or(false), "python3 is missing: {INSTALL}");
}

/// Runs `f` over `items` on at most `n` threads at once (the replays are
/// mostly waiting).
fn in_parallel<T: Sync, R: Send>(items: &[T], n: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut out = Vec::new();
    for chunk in items.chunks(n) {
        out.extend(std::thread::scope(|s| {
            let handles: Vec<_> = chunk.iter().map(|i| s.spawn(|| f(i))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
        }));
    }
    out
}

#[test]
fn a_raise_from_3_to_10_blocks_under_every_bundled_scenario_and_a_comment_only_head_passes() {
    python_available();
    // The comparison judges real clients' timing (jitter seen in the
    // replay): the fleets run in the timed room, three at a time; beside
    // the suite's busy tests six at once made a comment-only head's fleet
    // look concentrated.
    let _room = crate::common::enter(crate::common::Room::Timed);
    let base = python_client(3, "", "/items");
    let raised = python_client(10, "", "/items");
    let comment = python_client(3, "# retries: see the runbook", "/items");
    let mut cases = Vec::new();
    for (name, _) in retrygate::replay::scenario::BUNDLED {
        cases.push((*name, true));
        cases.push((*name, false));
    }
    let results = in_parallel(&cases, 3, |(name, raise)| {
        let head = if *raise { &raised } else { &comment };
        let (dir, base_sha, _) = repo(&base, head);
        let (out, report) = replay(dir.path(), &base_sha, name);
        (*name, *raise, out, report)
    });
    let mut wrong = Vec::new();
    for (name, raise, out, report) in results {
        let r = report.unwrap_or_else(|| panic!("{name}: no report: {}", text(&out)));
        let kinds: Vec<&str> = r["comparison"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap())
            .collect();
        let ok = if raise {
            out.status.code() == Some(1) && kinds.contains(&"retry-count-raised")
        } else {
            out.status.code() == Some(0) && kinds.is_empty()
        };
        if !ok {
            wrong.push(format!(
                "{name} ({}): exit {:?}, findings {kinds:?}, reasons {}",
                if raise { "3 -> 10" } else { "comment only" },
                out.status.code(),
                r["reasons"]
            ));
        }
        // Every comparison says how each side stopped, and one that reached
        // no cap says so rather than passing quietly.
        if !raise && name != "long-outage" {
            assert!(r["comparison"]["to_the_cap"].is_object(), "{name}: no run to the caps");
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn a_raise_hidden_behind_a_renamed_route_blocks_and_a_rename_alone_passes() {
    python_available();
    let base = python_client(3, "", "/items");
    let renamed_and_raised = python_client(5, "", "/v2/items");
    let renamed = python_client(3, "", "/v2/items");
    let cases = [(renamed_and_raised, 1), (renamed, 0)];
    let results = in_parallel(&cases, 2, |(head, _)| {
        let (dir, base_sha, _) = repo(&base, head);
        replay(dir.path(), &base_sha, "long-outage")
    });
    for ((out, report), (_, want)) in results.into_iter().zip(&cases) {
        assert_eq!(out.status.code(), Some(*want), "{}", text(&out));
        let r = report.expect("a report");
        let ops = r["comparison"]["operations"].as_array().unwrap();
        assert_eq!(ops.len(), 1, "{ops:#?}");
        assert_eq!(ops[0]["operation"], "GET /v2/items");
        assert_eq!(ops[0]["base_operation"], "GET /items");
        let findings = r["comparison"]["findings"].as_array().unwrap();
        if *want == 1 {
            assert_eq!(findings.len(), 1, "{findings:#?}");
            assert_eq!(
                findings[0]["message"],
                "GET /v2/items (was GET /items at the base): 4 attempts per request at the base, 6 at the head"
            );
            assert!(text(&out).contains("renamed: GET /items at the base"), "{}", text(&out));
        } else {
            assert_eq!(findings, &Vec::<Value>::new());
        }
    }
}
