//! `retrygate github` against a stateful fake GitHub on a loopback port,
//! driven by real webhook payloads (`tests/fixtures/github/`).
//!
//! The gate is injected (the network side is tested on its own), but what it
//! publishes is real: the policy's decision on the findings and the
//! request's sign-off, titled and rendered by the printer. The binary tests
//! at the end run the real gate on a real git repository.

use crate::common;
use crate::fake_github;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fake_github::{FakeGithub, FaultKind, ACTIONS_TOKEN, OWNER_REPO, PERSONAL_TOKEN, READ_ONLY_TOKEN};
use retrygate::decision::AgentDecision;
use retrygate::decision::{
    decide, DecisionInput, Evidence, GateFacts, GateVerdict, ReplaySummary, SignOffRequest, Verdict,
};
use retrygate::finding::{Finding, Kind, Severity};
use retrygate::github::ActionOutcome;
use retrygate::github::{ActionEnv, ActionMode, GateRequest, Publication, VerdictFile};
use retrygate::printer::Context;
use retrygate::testing::github::SignOff;
use retrygate::testing::github::MARKER;
use retrygate::testing::markdown;
use serde_json::{json, Value};

const HEAD: &str = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
const BASE: &str = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e";

use common::github_fixture as fixture;

/// A job's surroundings: a temp dir with the event file, summary and outputs.
struct Job {
    dir: tempfile::TempDir,
    env: ActionEnv,
}

impl Job {
    fn new(fake: &FakeGithub, event_name: &str, payload: &Value, token: &str) -> Job {
        let dir = tempfile::tempdir().unwrap();
        let event_path = dir.path().join("event.json");
        std::fs::write(&event_path, payload.to_string()).unwrap();
        let env = ActionEnv {
            event_name: event_name.into(),
            event_path,
            repository: OWNER_REPO.into(),
            api_url: fake.url.clone(),
            graphql_url: None,
            token: Some(token.into()),
            workspace: dir.path().to_path_buf(),
            step_summary: Some(dir.path().join("summary.md")),
            output: Some(dir.path().join("output.txt")),
            run_url: Some("https://github.com/Codertocat/Hello-World/actions/runs/7".into()),
            mode: ActionMode::Full,
            verdict_file: dir.path().join("verdict/verdict.json"),
            sarif: None,
            bot_login: None,
            replay_report: None,
            link_base: None,
            links: Default::default(),
            // Pacing is tested on its own; the other tests need not wait.
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

    fn outputs(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("output.txt")).unwrap_or_default()
    }
}

fn findings(n: usize) -> Vec<Finding> {
    (0..n)
        .map(|i| {
            Finding::new(
                Kind::RetryCountRaised,
                "rust/backon-max-times",
                format!("src/f{}.rs", i % 7),
                i as u32 + 1,
            )
            .message(format!("retries raised from 2 to 6 (finding {i})"))
            .severity(if i % 3 == 0 { Severity::Warning } else { Severity::Error })
        })
        .collect()
}

/// The publication of `n` findings on `head` for a person's pull request,
/// with `sign_off`: decided by the real policy, titled and rendered by the
/// printer, as `retrygate github` publishes a gate's verdict.
fn published(head: &str, n: usize, sign_off: Option<&SignOff>) -> Publication {
    let findings = findings(n);
    let person = AgentDecision { is_agent: false, because: vec![] };
    let replay = ReplaySummary::not_required("not an agent's pull request");
    let sign_off = sign_off.map(|s| SignOffRequest { sha: s.sha.clone(), by: Some(s.by.clone()) });
    let decision = decide(&DecisionInput {
        mode: retrygate::config::Enforcement::Enforce,
        head,
        findings: &findings,
        notes: &[],
        agent: &person,
        ledger: None,
        replay: &replay,
        sign_off: sign_off.as_ref(),
    });
    let facts = GateFacts {
        base: "main".into(),
        base_sha: BASE.into(),
        merge_base: BASE.into(),
        head: head.into(),
        head_branch: None,
        author: None,
        labels: vec![],
        agent: person,
        config_source: "defaults".into(),
        mode: retrygate::config::Enforcement::Enforce,
    };
    let v = GateVerdict::new(decision, findings, vec![], Evidence::default(), Some(facts));
    let md = markdown::render_comment(&v, &Context::default());
    Publication::from_verdict(head, None, &v, md)
}

/// A gate that blocks with `n` findings (the comment tagged with `tag`).
fn blocking(n: usize, tag: &'static str) -> impl Fn(&GateRequest) -> anyhow::Result<Publication> {
    move |req: &GateRequest| {
        let mut p = published(&req.head_sha, n, req.sign_off.as_ref());
        p.comment_markdown.push_str(tag);
        Ok(p)
    }
}

/// A gate that passes: no findings.
fn passing(req: &GateRequest) -> anyhow::Result<Publication> {
    Ok(published(&req.head_sha, 0, None))
}

fn pr_event(fake: &FakeGithub) -> Value {
    fake.add_pull(2, HEAD, BASE);
    fixture("pull_request__opened.payload.json")
}

#[test]
fn a_blocking_verdict_with_120_findings_makes_exactly_3_annotation_requests() {
    let fake = FakeGithub::start();
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    let exit = retrygate::github::run(&job.env, &blocking(120, "")).unwrap();
    assert_eq!(exit, ActionOutcome::Block);

    let annotation_requests = fake
        .log()
        .iter()
        .filter(|l| l.path.contains("/check-runs") && l.method != "GET")
        .filter(|l| {
            l.body.pointer("/output/annotations").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
        })
        .count();
    assert_eq!(annotation_requests, 3);
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].name, "retrygate");
    assert_eq!(runs[0].head_sha, HEAD);
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"));
    assert_eq!(runs[0].annotations.len(), 120);
    assert_eq!(runs[0].title.as_deref(), Some("blocked: blocking-findings"));
    assert_eq!(job.outputs(), "verdict=block\nfindings=120\n");
    assert!(job.summary().contains("check run `retrygate` on `ec26c3e`: created"), "{}", job.summary());
}

#[test]
fn writes_are_sent_one_at_a_time_at_least_a_second_apart() {
    let fake = FakeGithub::start();
    let mut job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    job.env.write_interval = retrygate::testing::github::MIN_WRITE_INTERVAL;
    retrygate::github::run(&job.env, &blocking(60, "")).unwrap();
    let writes: Vec<_> = fake.log().into_iter().filter(|l| l.method != "GET").collect();
    assert_eq!(writes.len(), 3, "create, one more batch, the comment");
    for pair in writes.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(gap >= Duration::from_millis(950), "{} then {} after {gap:?}", pair[0].path, pair[1].path);
    }
    assert!(job.summary().contains("check run `retrygate` on `ec26c3e`: created"), "{}", job.summary());
}

#[test]
fn a_job_named_retrygate_is_not_mistaken_for_the_gate_check() {
    let fake = FakeGithub::start();
    let job_run = fake.add_job_check_run("retrygate", HEAD);
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    retrygate::github::run(&job.env, &blocking(2, "")).unwrap();
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        runs.iter().find(|r| r.id == job_run).unwrap().conclusion,
        None,
        "the job's run is left alone"
    );
    let ours = runs.iter().find(|r| r.id != job_run).unwrap();
    assert_eq!(ours.external_id.as_deref(), Some(retrygate::testing::github::EXTERNAL_ID));
    assert_eq!(ours.conclusion.as_deref(), Some("failure"));
}

#[test]
fn a_typical_pull_request_takes_few_requests() {
    let fake = FakeGithub::start();
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    assert_eq!(retrygate::github::run(&job.env, &blocking(3, "")).unwrap(), ActionOutcome::Block);
    let log = fake.log();
    let lines: Vec<String> = log.iter().map(|l| format!("{} {} -> {}", l.method, l.path, l.status)).collect();
    println!("requests for a typical PR ({}):\n{}", log.len(), lines.join("\n"));
    // list the pull requests of the head commit, list check runs, create
    // it, GET /user (403), list comments, create one, list review comments
    // (one-click fixes: none to post, none stale).
    assert_eq!(log.len(), 7, "{lines:#?}");

    // The same run again on the same commit writes nothing.
    let before = fake.log().len();
    assert_eq!(retrygate::github::run(&job.env, &blocking(3, "")).unwrap(), ActionOutcome::Block);
    let again: Vec<String> =
        fake.log()[before..].iter().map(|l| format!("{} {}", l.method, l.path)).collect();
    assert!(again.iter().all(|l| l.starts_with("GET ")), "a re-run with nothing new only reads: {again:?}");
    assert_eq!(again.len(), 5, "{again:?}");
}

#[test]
fn a_second_run_on_the_same_sha_keeps_one_comment_and_edits_it_only_when_it_changed() {
    let fake = FakeGithub::start();
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    retrygate::github::run(&job.env, &blocking(60, "\nfirst")).unwrap();
    retrygate::github::run(&job.env, &blocking(60, "\nfirst")).unwrap();
    let comments = fake.comments();
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].login, "github-actions[bot]");
    assert!(comments[0].body.starts_with(MARKER));
    assert_eq!(fake.count("POST", "/issues/comments/"), 0, "unchanged text is not re-sent");
    assert!(job.summary().contains("sticky comment: unchanged"), "{}", job.summary());

    retrygate::github::run(&job.env, &blocking(60, "\nsecond")).unwrap();
    let comments = fake.comments();
    assert_eq!(comments.len(), 1);
    assert!(comments[0].body.ends_with("second"));
    // octocrab edits a comment with POST to the comment's URL.
    assert_eq!(fake.count("POST", &format!("/issues/comments/{}", comments[0].id)), 1);
    // One check run, its annotations never duplicated by the re-runs.
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].annotations.len(), 60);
}

#[test]
fn a_marker_planted_by_another_user_is_never_edited() {
    let fake = FakeGithub::start();
    let planted = format!("{MARKER}\n### ✅ retrygate: passing");
    let id = fake.add_comment(2, "mallory", &planted);
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    retrygate::github::run(&job.env, &blocking(2, "")).unwrap();
    let comments = fake.comments();
    assert_eq!(comments.len(), 2);
    assert_eq!(comments.iter().find(|c| c.id == id).unwrap().body, planted);
    assert!(comments.iter().any(|c| c.login == "github-actions[bot]" && c.body.contains("blocked")));
    assert_eq!(fake.count("POST", &format!("/issues/comments/{id}")), 0);
}

#[test]
fn a_personal_token_knows_its_login_and_falls_back_to_a_status() {
    let fake = FakeGithub::start();
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), PERSONAL_TOKEN);
    assert_eq!(retrygate::github::run(&job.env, &blocking(2, "")).unwrap(), ActionOutcome::Block);
    // A personal token cannot create check runs: the status carries the verdict.
    let statuses = fake.with(|s| s.statuses.clone());
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0]["context"], "retrygate");
    assert_eq!(statuses[0]["state"], "failure");
    assert_eq!(statuses[0]["description"], "blocked: blocking-findings");
    assert_eq!(fake.comments()[0].login, "octo-maintainer");
    assert!(
        job.summary().contains("commit status `retrygate` on `ec26c3e`: set (fallback)"),
        "{}",
        job.summary()
    );
    // Found again by its author on the next run.
    retrygate::github::run(&job.env, &blocking(2, "")).unwrap();
    assert_eq!(fake.comments().len(), 1);
}

#[test]
fn a_502_on_comment_creation_does_not_produce_two_comments() {
    // The write landed, then the gateway answered 502.
    let fake = FakeGithub::start();
    fake.fault("POST", "/issues/2/comments", 0, FaultKind::After(502));
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    retrygate::github::run(&job.env, &blocking(2, "")).unwrap();
    assert_eq!(fake.comments().len(), 1);
    assert_eq!(fake.count("POST", "/issues/2/comments"), 1, "found by listing again, not re-sent");
    assert!(job.summary().contains("sticky comment: created"), "{}", job.summary());

    // The write did not land: listing shows it absent, so it is created once.
    let fake = FakeGithub::start();
    fake.fault("POST", "/issues/2/comments", 0, FaultKind::Before(502));
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    retrygate::github::run(&job.env, &blocking(2, "")).unwrap();
    assert_eq!(fake.comments().len(), 1);
    assert_eq!(fake.count("POST", "/issues/2/comments"), 2);
    assert_eq!(fake.count("GET", "/issues/2/comments"), 2);
}

#[test]
fn a_502_on_check_run_creation_does_not_produce_two_check_runs() {
    let fake = FakeGithub::start();
    fake.fault("POST", "/check-runs", 0, FaultKind::After(502));
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    retrygate::github::run(&job.env, &blocking(70, "")).unwrap();
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].annotations.len(), 70, "the 20 not yet sent are added, none twice");
}

#[test]
fn a_429_with_retry_after_2_on_a_read_waits_at_least_2s_then_succeeds() {
    let fake = FakeGithub::start();
    fake.fault("GET", "/issues/2/comments", 0, FaultKind::RateLimit(2));
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    assert_eq!(retrygate::github::run(&job.env, &blocking(2, "")).unwrap(), ActionOutcome::Block);
    let reads: Vec<_> = fake
        .log()
        .into_iter()
        .filter(|l| l.method == "GET" && l.path.contains("/issues/2/comments"))
        .collect();
    assert_eq!(reads.iter().map(|l| l.status).collect::<Vec<_>>(), [429, 200]);
    let gap = reads[1].at.duration_since(reads[0].at);
    assert!(gap >= Duration::from_secs(2), "retried after {gap:?}, before retry-after: 2");
    assert_eq!(fake.comments().len(), 1);
}

#[test]
fn a_write_is_not_retried_on_429_or_5xx() {
    let fake = FakeGithub::start();
    fake.fault("POST", "/issues/2/comments", 0, FaultKind::RateLimit(1));
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    assert_eq!(retrygate::github::run(&job.env, &blocking(2, "")).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.count("POST", "/issues/2/comments"), 1);
    assert!(fake.comments().is_empty());
    assert!(job.summary().contains("sticky comment: **not written**"), "{}", job.summary());
}

#[test]
fn pages_are_followed_through_absolute_link_headers() {
    let fake = FakeGithub::start();
    fake.with(|s| s.page_cap = 2);
    for i in 0..5 {
        fake.add_comment(2, "someone", &format!("comment {i}"));
    }
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    retrygate::github::run(&job.env, &blocking(2, "x")).unwrap();
    retrygate::github::run(&job.env, &blocking(2, "x")).unwrap();
    // Our comment is the 6th: on page 3. Found there on the second run.
    assert_eq!(fake.comments().len(), 6);
    assert!(fake.log().iter().any(|l| l.path.contains("/issues/2/comments") && l.query.contains("page=3")));
}

#[test]
fn a_read_only_token_degrades_to_the_summary_and_a_failing_exit() {
    let fake = FakeGithub::start();
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), READ_ONLY_TOKEN);
    assert_eq!(retrygate::github::run(&job.env, &blocking(2, "")).unwrap(), ActionOutcome::Block);
    assert!(fake.check_runs().is_empty() && fake.comments().is_empty());
    let s = job.summary();
    assert!(s.contains("check run `retrygate` on `ec26c3e`: **not written**"), "{s}");
    assert!(s.contains("Resource not accessible by integration"), "{s}");
    assert!(s.contains("fork-safe split"), "{s}");

    // A pass that cannot be published is not a pass either.
    assert_eq!(retrygate::github::run(&job.env, &passing).unwrap(), ActionOutcome::CouldNotDecide);
}

#[test]
fn a_pass_publishes_success_and_leaves_auto_merge_alone() {
    let fake = FakeGithub::start();
    let mut event = pr_event(&fake);
    event["pull_request"]["auto_merge"] = json!({"merge_method": "squash"});
    let job = Job::new(&fake, "pull_request", &event, ACTIONS_TOKEN);
    assert_eq!(retrygate::github::run(&job.env, &passing).unwrap(), ActionOutcome::Pass);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("success"));
    assert!(fake.with(|s| s.graphql.is_empty()));
    assert_eq!(job.outputs(), "verdict=pass\nfindings=0\n");
}

#[test]
fn a_block_disables_auto_merge_and_says_whether_it_could() {
    let fake = FakeGithub::start();
    let mut event = pr_event(&fake);
    event["pull_request"]["auto_merge"] = json!({"merge_method": "squash"});
    let job = Job::new(&fake, "pull_request", &event, ACTIONS_TOKEN);
    retrygate::github::run(&job.env, &blocking(2, "")).unwrap();
    let sent = fake.with(|s| s.graphql.clone());
    assert_eq!(sent.len(), 1);
    assert!(sent[0]["query"].as_str().unwrap().contains("disablePullRequestAutoMerge"));
    assert_eq!(sent[0]["variables"]["id"], "MDExOlB1bGxSZXF1ZXN0Mjc5MTQ3NDM3");
    assert!(job.summary().contains("auto-merge: **disabled**"), "{}", job.summary());

    fake.with(|s| s.graphql_error = Some("Resource not accessible by integration".into()));
    retrygate::github::run(&job.env, &blocking(2, "")).unwrap();
    assert!(
        job.summary().contains("auto-merge: could not be disabled (disabling auto-merge: GitHub answered 200: Resource not accessible by integration)"),
        "{}",
        job.summary()
    );
}

#[test]
fn a_gate_that_fails_blocks_with_the_reason() {
    let fake = FakeGithub::start();
    let job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    let failing = |_: &GateRequest| -> anyhow::Result<Publication> {
        anyhow::bail!("ledger .tool_ledger.jsonl:3: bad digest")
    };
    assert_eq!(retrygate::github::run(&job.env, &failing).unwrap(), ActionOutcome::CouldNotDecide);
    let run = &fake.check_runs()[0];
    assert_eq!(run.conclusion.as_deref(), Some("failure"));
    assert!(run.summary.as_deref().unwrap().contains("ledger .tool_ledger.jsonl:3: bad digest"));
    let panicking = |_: &GateRequest| -> anyhow::Result<Publication> { panic!("boom") };
    assert_eq!(retrygate::github::run(&job.env, &panicking).unwrap(), ActionOutcome::CouldNotDecide);
    assert!(fake.comments()[0].body.contains("the gate panicked"));
}

// ---- sign-off by comment -------------------------------------------------

/// A checkout whose base commit holds the config (sign-off policy).
fn checkout(config: Option<&str>) -> (common::Repo, String) {
    let repo = common::Repo::new();
    repo.write("README.md", "hello\n");
    if let Some(c) = config {
        repo.write(".github/retrygate.yml", c);
    }
    let base = repo.commit("base");
    (repo, base)
}

/// octocrab's `issue_comment` fixture (a comment on PR #5), as a new
/// comment by `login` saying `body`.
fn comment_event(login: &str, body: &str) -> Value {
    let mut ev = fixture("issue_comment_edited_webhook_event.json");
    ev["action"] = json!("created");
    ev["comment"]["body"] = json!(body);
    ev["comment"]["user"] = fake_github::user(login);
    ev
}

struct SignOffCase {
    fake: FakeGithub,
    job: Job,
    _repo: common::Repo,
}

fn sign_off_case(login: &str, body: &str, config: Option<&str>) -> SignOffCase {
    let fake = FakeGithub::start();
    let (repo, base) = checkout(config);
    fake.add_pull(5, HEAD, &base);
    fake.set_permission("maintainer", "write", "write");
    fake.set_permission("reader", "read", "read");
    fake.set_permission("Codertocat", "admin", "admin");
    let mut job = Job::new(&fake, "issue_comment", &comment_event(login, body), ACTIONS_TOKEN);
    job.env.workspace = repo.path().to_path_buf();
    SignOffCase { fake, job, _repo: repo }
}

/// A gate that records what it was asked.
fn recording(seen: &RefCell<Vec<GateRequest>>) -> impl Fn(&GateRequest) -> anyhow::Result<Publication> + '_ {
    move |req: &GateRequest| {
        seen.borrow_mut().push(req.clone());
        blocking(4, "")(req)
    }
}

#[test]
fn a_sign_off_from_a_writer_naming_the_head_passes_and_is_recorded() {
    let c = sign_off_case("maintainer", &format!("Reviewed the retries.\n/retrygate sign-off {HEAD}"), None);
    // The pull request was blocked first, on the same head.
    let mut blocked =
        Job::new(&c.fake, "pull_request", &fixture("pull_request__opened.payload.json"), ACTIONS_TOKEN);
    blocked.env.write_interval = Duration::ZERO;
    let mut opened = fixture("pull_request__opened.payload.json");
    opened["pull_request"] = c.fake.with(|s| s.pulls[&5].clone());
    std::fs::write(&blocked.env.event_path, opened.to_string()).unwrap();
    assert_eq!(retrygate::github::run(&blocked.env, &blocking(4, "")).unwrap(), ActionOutcome::Block);
    assert_eq!(c.fake.check_runs()[0].conclusion.as_deref(), Some("failure"));

    let seen = RefCell::new(Vec::new());
    assert_eq!(retrygate::github::run(&c.job.env, &recording(&seen)).unwrap(), ActionOutcome::Pass);
    let req = &seen.borrow()[0];
    assert_eq!(req.pr_number, 5);
    assert_eq!(req.head_sha, HEAD);
    assert!(!req.allow_replay, "the PR's code is not run in a job holding a write token");
    let s = req.sign_off.clone().unwrap();
    assert_eq!((s.sha.as_str(), s.by.as_str()), (HEAD, "maintainer"));
    let runs = c.fake.check_runs();
    assert_eq!(runs.len(), 1, "the same check run is updated");
    assert_eq!(runs[0].conclusion.as_deref(), Some("success"));
    assert_eq!(runs[0].title.as_deref(), Some("passing (signed off): by maintainer for ec26c3e"));
    assert_eq!(runs[0].annotations.len(), 4, "annotations are not sent twice");
    let comments = c.fake.comments();
    assert_eq!(comments.len(), 1, "the sticky comment is edited");
    assert!(
        comments[0].body.contains(&format!("✅ signed off by maintainer on {HEAD}: every block is lifted")),
        "{}",
        comments[0].body
    );
    assert_eq!(c.fake.count("GET", "/collaborators/maintainer/permission"), 1);
}

fn assert_refused(c: &SignOffCase, seen: &RefCell<Vec<GateRequest>>, exit: ActionOutcome, why: &str) {
    assert_eq!(exit, ActionOutcome::Block);
    assert!(seen.borrow().is_empty(), "the gate is not re-run");
    assert!(c.fake.check_runs().is_empty() && c.fake.comments().is_empty(), "nothing is published");
    assert!(c.job.summary().contains(why), "{}", c.job.summary());
    assert_eq!(c.job.outputs(), "verdict=none\nfindings=0\n");
}

#[test]
fn a_sign_off_from_a_read_user_is_refused() {
    let c = sign_off_case("reader", "/retrygate sign-off ec26c3e57c", None);
    let seen = RefCell::new(Vec::new());
    let exit = retrygate::github::run(&c.job.env, &recording(&seen)).unwrap();
    assert_refused(
        &c,
        &seen,
        exit,
        "sign-off by reader refused: it needs write permission on the repository and reader has read",
    );
}

#[test]
fn a_sign_off_from_the_author_is_refused_without_asking_for_permission() {
    let c = sign_off_case("Codertocat", "/retrygate sign-off ec26c3e", None);
    let seen = RefCell::new(Vec::new());
    let exit = retrygate::github::run(&c.job.env, &recording(&seen)).unwrap();
    assert_refused(&c, &seen, exit, "the pull request's author cannot sign off their own change");
    assert_eq!(c.fake.count("GET", "/permission"), 0);
}

#[test]
fn a_sign_off_from_a_bot_is_refused() {
    let c = sign_off_case("gagbo-test-app[bot]", "/retrygate sign-off ec26c3e", None);
    let seen = RefCell::new(Vec::new());
    let exit = retrygate::github::run(&c.job.env, &recording(&seen)).unwrap();
    assert_refused(&c, &seen, exit, "sign-off by gagbo-test-app[bot] refused: bots cannot sign off");
}

#[test]
fn a_sign_off_for_a_stale_sha_is_refused() {
    let c = sign_off_case("maintainer", "/retrygate sign-off f95f852", None);
    let seen = RefCell::new(Vec::new());
    let exit = retrygate::github::run(&c.job.env, &recording(&seen)).unwrap();
    assert_refused(&c, &seen, exit, "sign-off for f95f852 refused: the pull request's head is now ec26c3e");
}

#[test]
fn the_base_config_can_raise_the_bar_for_sign_off() {
    let config = "sign_off:\n  min_permission: admin\n";
    let c = sign_off_case("maintainer", "/retrygate sign-off ec26c3e", Some(config));
    let seen = RefCell::new(Vec::new());
    let exit = retrygate::github::run(&c.job.env, &recording(&seen)).unwrap();
    assert_refused(&c, &seen, exit, "it needs admin permission on the repository and maintainer has write");
}

#[test]
fn comments_that_are_not_sign_offs_and_comments_on_issues_do_nothing() {
    let c = sign_off_case("maintainer", "Looks good to me", None);
    let seen = RefCell::new(Vec::new());
    assert_eq!(retrygate::github::run(&c.job.env, &recording(&seen)).unwrap(), ActionOutcome::Pass);
    assert!(seen.borrow().is_empty() && c.fake.comments().is_empty());
    assert_eq!(c.job.outputs(), "verdict=none\nfindings=0\n");

    let fake = FakeGithub::start();
    let job =
        Job::new(&fake, "issue_comment", &fixture("issue_comment__created.payload.json"), ACTIONS_TOKEN);
    assert_eq!(retrygate::github::run(&job.env, &recording(&seen)).unwrap(), ActionOutcome::Pass);
    assert!(fake.log().is_empty(), "a comment on a plain issue makes no request");
}

// ---- the fork-safe split -------------------------------------------------

fn verdict_file(path: &Path, pr: u64, head: &str) {
    VerdictFile {
        version: 1,
        repository: OWNER_REPO.into(),
        pr_number: pr,
        head_sha: head.into(),
        publication: published(head, 3, None),
    }
    .write(path)
    .unwrap();
}

fn no_gate(_: &GateRequest) -> anyhow::Result<Publication> {
    panic!("a refused publication never computes a verdict")
}

#[test]
fn compute_mode_writes_the_verdict_file_and_makes_no_request() {
    let fake = FakeGithub::start();
    let mut job = Job::new(&fake, "pull_request", &pr_event(&fake), READ_ONLY_TOKEN);
    job.env.mode = ActionMode::Compute;
    job.env.sarif = Some(job.dir.path().join("retrygate.sarif"));
    assert_eq!(retrygate::github::run(&job.env, &blocking(3, "")).unwrap(), ActionOutcome::Block);
    assert!(fake.log().is_empty());
    let file = VerdictFile::read(&job.env.verdict_file).unwrap();
    assert_eq!((file.pr_number, file.head_sha.as_str()), (2, HEAD));
    assert_eq!(file.publication.verdict, Verdict::Block);
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(job.dir.path().join("retrygate.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
}

#[test]
fn a_workflow_run_publishes_a_fork_verdict_after_checking_the_head() {
    // workflow_run.completed for a fork PR: `pull_requests` is empty. The
    // verdict is recomputed on the head in the checkout (fetched as data);
    // tests/it/github_fail_closed.rs runs the real gate on this path.
    let (repo, base) = checkout(None);
    repo.write("README.md", "hello, fork\n");
    let run_head = repo.commit("fork change");
    let fake = FakeGithub::start();
    fake.add_pull(2, &run_head, &base);
    fake.with(|s| s.pulls.get_mut(&2).unwrap()["head"]["repo"]["full_name"] = json!("octo-org/octo-repo"));
    let mut payload = fixture("workflow_run__completed.payload.json");
    payload["workflow_run"]["head_sha"] = json!(run_head);
    let mut job = Job::new(&fake, "workflow_run", &payload, ACTIONS_TOKEN);
    job.env.mode = ActionMode::Publish;
    job.env.workspace = repo.path().to_path_buf();
    verdict_file(&job.env.verdict_file, 2, &run_head);
    let seen = RefCell::new(Vec::new());
    assert_eq!(retrygate::github::run(&job.env, &recording(&seen)).unwrap(), ActionOutcome::Block);
    let req = seen.borrow()[0].clone();
    assert_eq!(
        (req.pr_number, req.head_sha.as_str(), req.base_sha.as_str()),
        (2, run_head.as_str(), base.as_str())
    );
    assert!(!req.allow_replay, "the publishing job runs no pull-request code");
    assert_eq!(req.replay_report_origin, retrygate::gate::ReportOrigin::PullRequestRun { fork: true });
    let runs = fake.check_runs();
    assert_eq!((runs.len(), runs[0].head_sha.as_str(), runs[0].annotations.len()), (1, run_head.as_str(), 4));
    assert_eq!(fake.comments().len(), 1);

    // The PR moved on since the run: its verdict is not published.
    let fake = FakeGithub::start();
    fake.add_pull(2, HEAD, BASE);
    let job2 = Job {
        env: ActionEnv { api_url: fake.url.clone(), ..job.env.clone() },
        dir: tempfile::tempdir().unwrap(),
    };
    assert_eq!(retrygate::github::run(&job2.env, &no_gate).unwrap(), ActionOutcome::CouldNotDecide);
    assert!(fake.check_runs().is_empty());
}

#[test]
fn a_workflow_run_whose_verdict_names_another_head_is_refused() {
    // The fixture's run is on 3484a3f; the verdict file is about the PR's ec26c3e.
    let fake = FakeGithub::start();
    fake.add_pull(2, HEAD, BASE);
    let mut job = Job::new(
        &fake,
        "workflow_run",
        &fixture("workflow_run__completed.with-pull-requests.payload.json"),
        ACTIONS_TOKEN,
    );
    job.env.mode = ActionMode::Publish;
    verdict_file(&job.env.verdict_file, 2, HEAD);
    assert_eq!(retrygate::github::run(&job.env, &no_gate).unwrap(), ActionOutcome::CouldNotDecide);
    assert!(fake.log().is_empty(), "refused before any request");
    assert!(
        job.summary().contains("refusing to publish: the verdict file is about ec26c3e57ca3a959ca5aad62de7213c562f8c821 but workflow run 289782451 ran on 3484a3fb816e0859fd6e1cea078d76385ff50625"),
        "{}",
        job.summary()
    );
    // A missing artifact is refused the same way, never a pass.
    std::fs::remove_file(&job.env.verdict_file).unwrap();
    assert_eq!(retrygate::github::run(&job.env, &no_gate).unwrap(), ActionOutcome::CouldNotDecide);
    assert!(job.summary().contains("download the verdict artifact"), "{}", job.summary());
}

#[test]
fn wrong_modes_and_missing_tokens_are_errors_that_say_what_to_do() {
    let fake = FakeGithub::start();
    let mut job = Job::new(&fake, "pull_request", &pr_event(&fake), ACTIONS_TOKEN);
    job.env.mode = ActionMode::Publish;
    let e = retrygate::github::run(&job.env, &no_gate).unwrap_err();
    assert!(e.to_string().contains("use --mode compute in the pull_request job"), "{e}");
    job.env.mode = ActionMode::Full;
    job.env.token = None;
    let e = retrygate::github::run(&job.env, &blocking(2, "")).unwrap_err();
    assert!(e.to_string().contains("GITHUB_TOKEN is not set"), "{e}");
    job.env.event_path = PathBuf::from("/nonexistent/event.json");
    let e = retrygate::github::run(&job.env, &blocking(2, "")).unwrap_err();
    assert!(
        format!("{e:#}")
            .contains("cannot read the event payload /nonexistent/event.json (GITHUB_EVENT_PATH)"),
        "{e:#}"
    );
}
