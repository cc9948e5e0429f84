//! One-click fixes on GitHub: `suggestion` review comments posted by
//! `retrygate github` against the stateful fake GitHub (`tests/fake_github`),
//! which refuses lines outside the diff with 422 as GitHub does.

use crate::common;
use crate::fake_github;

use std::time::Duration;

use fake_github::{FakeGithub, ACTIONS_TOKEN, OWNER_REPO, READ_ONLY_TOKEN};
use retrygate::finding::{Finding, Fix, Kind, Severity};
use retrygate::github::ActionOutcome;
use retrygate::github::{check_gate, ActionEnv, ActionMode, GateRequest, Publication, VerdictFile};
use retrygate::printer::{Context, GateVerdict};
use retrygate::testing::github::{MARKER_PREFIX, MAX_SUGGESTIONS};
use retrygate::testing::markdown;
use serde_json::{json, Value};

const HEAD: &str = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
const BASE: &str = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e";
const PR: u64 = 2;

struct Job {
    dir: tempfile::TempDir,
    env: ActionEnv,
}

impl Job {
    fn new(fake: &FakeGithub, token: &str, mode: ActionMode) -> Job {
        let dir = tempfile::tempdir().unwrap();
        let event_path = dir.path().join("event.json");
        fake.add_pull(PR, HEAD, BASE);
        let payload = common::github_fixture("pull_request__opened.payload.json");
        std::fs::write(&event_path, payload.to_string()).unwrap();
        let env = ActionEnv {
            event_name: "pull_request".into(),
            event_path,
            repository: OWNER_REPO.into(),
            api_url: fake.url.clone(),
            graphql_url: None,
            token: Some(token.into()),
            workspace: dir.path().to_path_buf(),
            step_summary: Some(dir.path().join("summary.md")),
            output: Some(dir.path().join("output.txt")),
            run_url: None,
            mode,
            verdict_file: dir.path().join("verdict/verdict.json"),
            sarif: None,
            bot_login: None,
            replay_report: None,
            link_base: None,
            links: Default::default(),
            write_interval: Duration::ZERO,
            // Unknown writes are looked for again after 50 ms, not 3 s.
            timing: retrygate::github::Timing {
                settle: Some(Duration::from_millis(50)),
                ..Default::default()
            },
        };
        Job { dir, env }
    }

    fn summary(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("summary.md")).unwrap_or_default()
    }

    fn run(&self, findings: &[Finding]) -> ActionOutcome {
        let findings = findings.to_vec();
        let gate = move |req: &GateRequest| {
            let verdict = GateVerdict::from_scan(findings.clone(), vec![]);
            let md = markdown::render_comment(&verdict, &Context::default());
            Ok(Publication::from_verdict(&req.head_sha, None, &verdict, md))
        };
        retrygate::github::run(&self.env, &gate).unwrap()
    }
}

/// A count-raised finding on `line` of `path` whose fix replaces `lines`.
fn fixed(path: &str, line: u32, end_line: u32, replacement: &str, message: &str) -> Finding {
    Finding::new(Kind::RetryCountRaised, "rust/backon-attempts", path, line).message(message).fix(Fix {
        description: "put back the base's count".into(),
        line,
        end_line,
        replacement: replacement.into(),
    })
}

/// The head-side line ranges of every hunk of `path` in `git diff -U3`,
/// as GitHub's pull-request diff has them.
fn git_hunks(repo: &common::Repo, base: &str, head: &str, path: &str) -> Vec<(u64, u64)> {
    let diff = repo.git(&["diff", "-U3", base, head, "--", path]);
    diff.lines()
        .filter_map(|l| l.strip_prefix("@@ "))
        .filter_map(|l| l.split(' ').nth(1)?.strip_prefix('+').map(str::to_string))
        .map(|r| {
            let (start, len) = r.split_once(',').map_or((r.as_str(), "1"), |(a, b)| (a, b));
            let (start, len): (u64, u64) = (start.parse().unwrap(), len.parse().unwrap());
            (start, start + len.max(1) - 1)
        })
        .collect()
}

/// The checkout incident end to end: the real gate on a real repository
/// finds the raised count and the lowered timeout, each in a `const`, and
/// suggests the base's lines; the read-only `compute` job of the fork-safe
/// split posts nothing, the `publish` job that recomputes does.
#[test]
fn the_real_gate_suggests_the_base_lines_and_only_the_write_token_job_posts() {
    let repo = common::Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    let base = repo.commit("base");
    repo.branch("agent");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    let head = repo.commit("faster checkout");
    let fake = FakeGithub::start();
    fake.set_diff(PR, "src/checkout.rs", &git_hunks(&repo, &base, &head, "src/checkout.rs"));
    let job = |event: &str, payload: Value, token: &str, mode: ActionMode| {
        let mut j = Job::new(&fake, token, mode);
        fake.add_pull(PR, &head, &base);
        j.env.event_name = event.into();
        j.env.workspace = repo.path().to_path_buf();
        std::fs::write(&j.env.event_path, payload.to_string()).unwrap();
        j
    };
    let mut pr = common::github_fixture("pull_request__opened.payload.json");
    pr["pull_request"]["head"]["sha"] = json!(head);
    pr["pull_request"]["base"]["sha"] = json!(base);
    // A fork's pull request: the read-only job computes.
    let compute = job("pull_request", pr.clone(), READ_ONLY_TOKEN, ActionMode::Compute);
    assert_eq!(retrygate::github::run(&compute.env, &check_gate).unwrap(), ActionOutcome::Block);
    assert!(fake.reviews().is_empty() && fake.review_comments().is_empty());
    let file = VerdictFile::read(&compute.env.verdict_file).unwrap();
    assert!(file.publication.findings.iter().any(|f| f.fix.is_some()), "the verdict carries the fixes");

    // The workflow_run job recomputes and publishes, suggestions included.
    let mut run = common::github_fixture("workflow_run__completed.payload.json");
    run["workflow_run"]["head_sha"] = json!(head);
    let mut publish = job("workflow_run", run, ACTIONS_TOKEN, ActionMode::Publish);
    publish.env.verdict_file = compute.env.verdict_file.clone();
    fake.with(|s| s.pulls.get_mut(&PR).unwrap()["head"]["repo"]["full_name"] = json!("octo-org/octo-repo"));
    assert_eq!(retrygate::github::run(&publish.env, &check_gate).unwrap(), ActionOutcome::Block);
    let comments = fake.review_comments();
    let mut lines: Vec<Option<u64>> = comments.iter().map(|c| c.line).collect();
    lines.sort();
    assert_eq!(lines, [Some(8), Some(9)], "the two consts: {}", publish.summary());
    assert!(comments.iter().any(|c| c.body.contains("```suggestion\nconst MAX_RETRIES: u32 = 2;\n```")));
    assert!(comments.iter().any(|c| c.body.contains("```suggestion\nconst TIMEOUT_MS: u64 = 2500;\n```")));
    assert_eq!(fake.reviews().len(), 1);
    assert_eq!(fake.reviews()[0].state, "COMMENTED");
    let bodies: Vec<&str> = comments.iter().map(|c| c.body.as_str()).collect();
    let base_text = common::BEFORE;
    for b in &bodies {
        let suggested = b.split("```suggestion\n").nth(1).and_then(|r| r.split("\n```").next()).unwrap();
        assert!(base_text.contains(suggested), "a suggestion puts back base text: {suggested}");
    }
    assert!(publish.summary().contains("posted"), "{}", publish.summary());

    // The same-repository job (full mode) on the same head adds nothing.
    let full = job("pull_request", pr, ACTIONS_TOKEN, ActionMode::Full);
    retrygate::github::run(&full.env, &check_gate).unwrap();
    assert_eq!(fake.review_comments().len(), comments.len());
    assert_eq!(fake.reviews().len(), 1);
}

fn three() -> Vec<Finding> {
    vec![
        fixed("src/a.rs", 3, 3, "        .with_max_times(3)", "retries raised from 2 to 7"),
        fixed("src/a.rs", 10, 10, "const MAX: u32 = 2;", "retries raised from 2 to 6"),
        fixed("src/b.rs", 20, 21, "        .with_max_times(3)\n        .with_jitter();", "jitter removed"),
        // No fix: no suggestion.
        Finding::new(Kind::RetryNonIdempotent, "rust/backon-methods", "src/b.rs", 40).message("POST retried"),
    ]
}

fn fake_with_diff() -> FakeGithub {
    let fake = FakeGithub::start();
    fake.set_diff(PR, "src/a.rs", &[(1, 12)]);
    fake.set_diff(PR, "src/b.rs", &[(18, 24)]);
    fake
}

fn writes(fake: &FakeGithub) -> Vec<String> {
    fake.log()
        .iter()
        .filter(|l| l.method != "GET" && l.path.contains("/pulls/"))
        .map(|l| format!("{} {} -> {}", l.method, l.path, l.status))
        .collect()
}

#[test]
fn suggestions_are_posted_once_in_one_comment_only_review() {
    let fake = fake_with_diff();
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(job.run(&three()), ActionOutcome::Block, "suggestions do not change the verdict");
    let reviews = fake.reviews();
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    assert_eq!(reviews[0].state, "COMMENTED", "the review never approves or requests changes");
    assert_eq!(reviews[0].commit_id, HEAD);
    let comments = fake.review_comments();
    assert_eq!(comments.len(), 3, "one per fix, none for the finding without one");
    let multi = comments.iter().find(|c| c.path == "src/b.rs").unwrap();
    assert_eq!((multi.start_line, multi.line), (Some(20), Some(21)));
    assert!(multi.body.starts_with(MARKER_PREFIX), "{}", multi.body);
    assert!(
        multi.body.contains("```suggestion\n        .with_max_times(3)\n        .with_jitter();\n```"),
        "{}",
        multi.body
    );
    let single = comments.iter().find(|c| c.line == Some(3)).unwrap();
    assert_eq!(single.start_line, None, "one line: no start_line");
    assert!(
        job.summary().contains("one-click fixes: 3 posted, 0 updated, 0 deleted, 0 unchanged"),
        "{}",
        job.summary()
    );

    // The same run again: nothing written.
    let before = writes(&fake).len();
    job.run(&three());
    assert_eq!(writes(&fake).len(), before, "{:#?}", writes(&fake));
    assert_eq!(fake.review_comments().len(), 3);
    assert_eq!(fake.reviews().len(), 1);
    assert!(job.summary().contains("0 posted, 0 updated, 0 deleted, 3 unchanged"), "{}", job.summary());
}

#[test]
fn a_changed_finding_edits_its_comment_and_a_fixed_one_deletes_it() {
    let fake = fake_with_diff();
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Full);
    job.run(&three());
    let ids: Vec<u64> = fake.review_comments().iter().map(|c| c.id).collect();

    // The count went higher still: same place, new text.
    let mut v = three();
    v[0] = fixed("src/a.rs", 3, 3, "        .with_max_times(3)", "retries raised from 2 to 9");
    job.run(&v);
    let after = fake.review_comments();
    assert_eq!(after.iter().map(|c| c.id).collect::<Vec<_>>(), ids, "edited in place, none added");
    assert!(after[0].body.contains("2 to 9"), "{}", after[0].body);
    assert_eq!(fake.count("PATCH", "/pulls/comments/"), 1);
    assert!(job.summary().contains("0 posted, 1 updated, 0 deleted, 2 unchanged"), "{}", job.summary());

    // The agent put the count back: its suggestion goes.
    v.remove(0);
    job.run(&v);
    let left = fake.review_comments();
    assert_eq!(left.len(), 2);
    assert!(left.iter().all(|c| c.line != Some(3)));
    assert!(job.summary().contains("0 posted, 0 updated, 1 deleted, 2 unchanged"), "{}", job.summary());
    assert_eq!(fake.reviews().len(), 1, "no new review for edits and deletions");
}

#[test]
fn an_outdated_or_moved_suggestion_is_replaced() {
    let fake = fake_with_diff();
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Full);
    job.run(&three());
    let old = fake.review_comments().iter().find(|c| c.line == Some(10)).unwrap().id;
    fake.outdate(old);
    let mut v = three();
    v[2] = fixed("src/b.rs", 22, 23, "        .with_max_times(3)\n        .with_jitter();", "jitter removed");
    job.run(&v);
    let now = fake.review_comments();
    assert_eq!(now.len(), 3, "{now:#?}");
    assert!(now.iter().all(|c| c.id != old), "the outdated one was deleted");
    assert!(now.iter().any(|c| c.line == Some(10)), "and posted again");
    assert!(now.iter().any(|c| c.path == "src/b.rs" && c.start_line == Some(22) && c.line == Some(23)));
    assert!(job.summary().contains("2 posted, 0 updated, 2 deleted, 1 unchanged"), "{}", job.summary());
    assert!(fake.reviews().iter().all(|r| r.state == "COMMENTED"));
}

#[test]
fn at_most_twenty_suggestions_blocking_first() {
    let fake = FakeGithub::start();
    fake.set_diff(PR, "src/many.rs", &[(1, 100)]);
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Full);
    let mut v: Vec<Finding> = (1..=25)
        .map(|i| fixed("src/many.rs", i, i, "x", &format!("finding {i}")).severity(Severity::Warning))
        .collect();
    v.push(fixed("src/many.rs", 90, 90, "y", "the blocking one"));
    job.run(&v);
    let comments = fake.review_comments();
    assert_eq!(comments.len(), MAX_SUGGESTIONS);
    assert!(comments.iter().any(|c| c.line == Some(90)), "the blocking finding is among them");
    assert!(job.summary().contains("6 left out (at most 20 per pull request)"), "{}", job.summary());
    // A re-run keeps the same twenty.
    job.run(&v);
    assert_eq!(fake.review_comments().len(), MAX_SUGGESTIONS);
    assert_eq!(fake.reviews().len(), 1);
}

#[test]
fn a_line_outside_the_diff_is_skipped_and_the_others_still_land() {
    let fake = fake_with_diff();
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Full);
    let mut v = three();
    v.push(fixed("src/a.rs", 50, 50, "far away", "outside every hunk"));
    assert_eq!(job.run(&v), ActionOutcome::Block, "the verdict is what it was");
    let log = fake.log();
    let refused = log.iter().filter(|l| l.path.ends_with("/pulls/2/reviews") && l.status == 422).count();
    assert_eq!(refused, 1, "GitHub refused the whole review once");
    let comments = fake.review_comments();
    assert_eq!(comments.len(), 3, "the three on the diff were posted one by one: {comments:#?}");
    assert!(comments.iter().all(|c| c.line != Some(50)));
    let summary = job.summary();
    assert!(summary.contains("3 posted"), "{summary}");
    assert!(summary.contains("**1 refused by GitHub** (line outside the diff): src/a.rs:50"), "{summary}");
    assert!(summary.contains("must be part of the diff"), "{summary}");

    // A re-run posts nothing twice, and tries the refused one again.
    job.run(&v);
    assert_eq!(fake.review_comments().len(), 3);
}

#[test]
fn a_planted_marker_is_not_ours() {
    let fake = fake_with_diff();
    let planted = fake.add_review_comment(
        PR,
        "mallory",
        "src/a.rs",
        3,
        &format!("{MARKER_PREFIX}deadbeef -->\nplanted"),
    );
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Full);
    job.run(&three());
    let comments = fake.review_comments();
    assert_eq!(comments.len(), 4);
    let kept = comments.iter().find(|c| c.id == planted).unwrap();
    assert!(kept.body.ends_with("planted"), "someone else's comment is never edited or deleted");
    assert_eq!(fake.count("DELETE", "/pulls/comments/"), 0);
}

#[test]
fn the_job_that_may_run_pull_request_code_posts_no_suggestion() {
    let fake = fake_with_diff();
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Compute);
    job.run(&three());
    assert!(fake.reviews().is_empty());
    assert!(fake.review_comments().is_empty());
    assert!(
        fake.log().iter().all(|l| !l.path.contains("/pulls/")),
        "{:?}",
        fake.log().iter().map(|l| &l.path).collect::<Vec<_>>()
    );
}

#[test]
fn a_read_only_token_reports_the_refusal_and_keeps_the_verdict() {
    let fake = fake_with_diff();
    let job = Job::new(&fake, READ_ONLY_TOKEN, ActionMode::Full);
    assert_eq!(job.run(&three()), ActionOutcome::Block);
    assert!(fake.review_comments().is_empty());
    let summary = job.summary();
    assert!(summary.contains("- one-click fixes: **not written**"), "{summary}");
    assert!(summary.contains("Resource not accessible by integration"), "{summary}");
}

#[test]
fn review_comments_are_listed_across_pages() {
    let fake = fake_with_diff();
    fake.with(|s| s.page_cap = 2);
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Full);
    job.run(&three());
    for i in 0..3 {
        fake.add_review_comment(PR, "octo-reviewer", "src/a.rs", 1, &format!("human comment {i}"));
    }
    job.run(&three());
    let pages =
        fake.log().iter().filter(|l| l.method == "GET" && l.path.ends_with("/pulls/2/comments")).count();
    assert!(pages >= 4, "1 page before, 3 pages of 2 after: {pages}");
    assert_eq!(fake.reviews().len(), 1, "ours were found on every page, so nothing was posted twice");
    assert_eq!(fake.review_comments().len(), 6);
}

#[test]
fn an_answered_suggestion_is_closed_with_a_note_not_deleted() {
    let fake = fake_with_diff();
    let job = Job::new(&fake, ACTIONS_TOKEN, ActionMode::Full);
    job.run(&three());
    let ours = fake.review_comments().iter().find(|c| c.line == Some(3)).unwrap().id;
    let answer = fake.reply_to(ours, "octo-maintainer", "is 7 really too many here?");
    let mut v = three();
    v.remove(0);
    job.run(&v);
    let after = fake.review_comments();
    let closed = after.iter().find(|c| c.id == ours).expect("kept: someone answered it");
    assert!(closed.body.contains("no longer applies"), "{}", closed.body);
    assert!(after.iter().any(|c| c.id == answer));
    assert_eq!(fake.count("DELETE", "/pulls/comments/"), 0);
    // From then on it is left alone, and the suggestion is not posted again.
    let writes_before = writes(&fake).len();
    job.run(&v);
    assert_eq!(writes(&fake).len(), writes_before, "{:#?}", writes(&fake));
    job.run(&three());
    let again = fake.review_comments();
    assert_eq!(again.iter().filter(|c| c.line == Some(3) && c.body.contains("```suggestion")).count(), 1);
    assert!(again.iter().any(|c| c.id == ours), "the closed thread stays");
}

/// Suggestions come last and stop `review::RESERVE` before the publish deadline:
/// with many stale ones to delete a second apart, the verdict is still
/// published in time and the summary counts what is left for the next run.
/// Runs the binary, whose deadline comes from its environment.
#[test]
fn suggestions_never_make_the_verdict_miss_the_publish_deadline() {
    let repo = common::Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    let base = repo.commit("base");
    repo.branch("agent");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    let head = repo.commit("faster checkout");
    let fake = FakeGithub::start();
    fake.add_pull(PR, &head, &base);
    fake.set_diff(PR, "src/checkout.rs", &git_hunks(&repo, &base, &head, "src/checkout.rs"));
    for i in 0..12 {
        fake.add_review_comment(
            PR,
            "github-actions[bot]",
            "src/checkout.rs",
            8,
            &format!("{MARKER_PREFIX}stale{i} -->\nold"),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let mut event = common::github_fixture("pull_request__opened.payload.json");
    event["pull_request"]["head"]["sha"] = json!(head);
    event["pull_request"]["base"]["sha"] = json!(base);
    std::fs::write(dir.path().join("event.json"), event.to_string()).unwrap();
    let deadline = 8;
    let started = std::time::Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .arg("github")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", dir.path().join("event.json"))
        .env("GITHUB_REPOSITORY", OWNER_REPO)
        .env("GITHUB_API_URL", &fake.url)
        .env("GITHUB_TOKEN", ACTIONS_TOKEN)
        .env("GITHUB_WORKSPACE", repo.path())
        .env("GITHUB_STEP_SUMMARY", dir.path().join("summary.md"))
        .env("RETRYGATE_PUBLISH_DEADLINE", deadline.to_string())
        .output()
        .unwrap();
    let took = started.elapsed();
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "blocked and published, not 'could not publish': {stderr}\n{summary}"
    );
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("failure"));
    assert!(took < Duration::from_secs(deadline), "{took:?}");
    let left = fake.review_comments().iter().filter(|c| c.body.contains("stale")).count();
    assert!(left > 0 && left < 12, "some stale ones deleted, not all: {left}");
    assert!(
        summary.contains("changes not made before the publish deadline (the next run makes them)"),
        "{summary}"
    );
}
