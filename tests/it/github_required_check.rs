//! Issue 28: the published required check cannot be wrong. Each test plays
//! one of the seven scenarios against the stateful fake GitHub: the fault,
//! the event sequence, and what a maintainer then sees (the check run's
//! conclusion, one comment, a job summary that matches what landed).
//!
//! The gate is injected (a pass or a block rendered by the real printer,
//! bound to the base it was asked about); the sign-off tests read the
//! sign-off policy from a real git checkout.

use crate::common;
use crate::fake_github;

use std::time::Duration;

use fake_github::{FakeGithub, FaultKind, ACTIONS_TOKEN, OWNER_REPO};
use retrygate::decision::GateVerdict;
use retrygate::finding::{Finding, Kind};
use retrygate::github::{ActionEnv, ActionMode, ActionOutcome, GateRequest, Publication, Timing};
use retrygate::printer::Context;
use retrygate::testing::github::BaseBinding;
use retrygate::testing::markdown;
use serde_json::{json, Value};

use common::github_fixture as fixture;

const HEAD: &str = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
const BASE: &str = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e";

struct Job {
    dir: tempfile::TempDir,
    env: ActionEnv,
}

impl Job {
    fn new(fake: &FakeGithub, event_name: &str, payload: &Value) -> Job {
        let dir = tempfile::tempdir().unwrap();
        let event_path = dir.path().join("event.json");
        std::fs::write(&event_path, payload.to_string()).unwrap();
        let env = ActionEnv {
            event_name: event_name.into(),
            event_path,
            repository: OWNER_REPO.into(),
            api_url: fake.url.clone(),
            graphql_url: None,
            token: Some(ACTIONS_TOKEN.into()),
            workspace: dir.path().to_path_buf(),
            step_summary: Some(dir.path().join("summary.md")),
            output: Some(dir.path().join("output.txt")),
            run_url: None,
            mode: ActionMode::Full,
            verdict_file: dir.path().join("verdict.json"),
            sarif: None,
            bot_login: None,
            replay_report: None,
            link_base: None,
            links: Default::default(),
            write_interval: Duration::ZERO,
            timing: Timing { settle: Some(Duration::from_millis(50)), ..Default::default() },
        };
        Job { dir, env }
    }

    fn summary(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("summary.md")).unwrap_or_default()
    }
}

/// The gate's publication for `req`: blocked by one retry regression when
/// `block`, else passing; bound to the base it judged.
fn judged(req: &GateRequest, block: bool) -> Publication {
    let findings = if block {
        vec![Finding::new(Kind::RetryCountRaised, "rust/backon-max-times", "src/client.rs", 42)
            .message("retries raised from 2 to 6")]
    } else {
        vec![]
    };
    let v = GateVerdict::from_scan(findings, vec![]);
    let md = markdown::render_comment(&v, &Context::default());
    let base = BaseBinding { branch: req.base_ref.clone(), sha: req.base_sha.clone() };
    Publication::from_verdict(&req.head_sha, Some(base), &v, md)
}

/// `main`'s policy blocks the change; any other branch's passes it.
fn main_blocks(req: &GateRequest) -> anyhow::Result<Publication> {
    Ok(judged(req, req.base_ref == "main"))
}

/// Pull request `n` with head `HEAD` into `base`, in the fake and as its
/// `pull_request` payload.
fn pull(fake: &FakeGithub, n: u64, base: &str) -> Value {
    let mut pr = fake.add_pull(n, HEAD, BASE);
    pr["base"]["ref"] = json!(base);
    pr["head"]["ref"] = json!("feature");
    fake.with(|s| s.pulls.insert(n, pr.clone()));
    let mut ev = fixture("pull_request__opened.payload.json");
    ev["pull_request"] = pr;
    ev["number"] = json!(n);
    ev
}

fn comment_on(fake: &FakeGithub, pr: u64) -> String {
    let bodies: Vec<String> = fake.comments().into_iter().filter(|c| c.issue == pr).map(|c| c.body).collect();
    assert_eq!(bodies.len(), 1, "one comment on #{pr}: {bodies:#?}");
    bodies.into_iter().next().unwrap()
}

// ---- 1. one head commit, several pull requests ------------------------------

#[test]
fn a_second_pull_request_from_the_same_head_cannot_turn_the_first_ones_check_green() {
    let fake = FakeGithub::start();
    let seven = pull(&fake, 7, "main");
    let eight = pull(&fake, 8, "evil");
    // #7 (feature -> main) is blocked.
    let job7 = Job::new(&fake, "pull_request", &seven);
    assert_eq!(retrygate::github::run(&job7.env, &main_blocks).unwrap(), ActionOutcome::Block);
    // The same branch is opened as #8 into a branch whose policy passes it.
    let job8 = Job::new(&fake, "pull_request", &eight);
    assert_eq!(
        retrygate::github::run(&job8.env, &main_blocks).unwrap(),
        ActionOutcome::Block,
        "the job fails as the check does"
    );

    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1, "one check run per commit");
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"), "#7 never shows a borrowed success");
    assert_eq!(runs[0].title.as_deref(), Some("blocked by #7 into main: blocked: blocking-findings"));
    let summary = runs[0].summary.clone().unwrap();
    assert!(summary.contains("| #7 into `main` | ❌ blocked: blocked: blocking-findings |"), "{summary}");
    assert!(summary.contains("| #8 into `evil` (this run) | ✅ passing"), "{summary}");
    // What each pull request says: #7 its block; #8 its own pass, and why
    // the required check is red.
    assert!(comment_on(&fake, 7).contains("retrygate: blocked"));
    let c8 = comment_on(&fake, 8);
    assert!(c8.contains("retrygate: passing"), "{c8}");
    assert!(c8.contains("The required `retrygate` check on this commit is **blocked**: pull request #7 into `main` has the same head commit"), "{c8}");
    assert!(job8.summary().contains("the check shows the strictest verdict of the open pull requests with this head: #8, #7 (`block`)"), "{}", job8.summary());

    // #7 is closed: #8's own verdict is all that is left, and it passes.
    fake.with(|s| s.pulls.get_mut(&7).unwrap()["state"] = json!("closed"));
    assert_eq!(retrygate::github::run(&job8.env, &main_blocks).unwrap(), ActionOutcome::Pass);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("success"));
    assert_eq!(fake.check_runs().len(), 1);
}

#[test]
fn the_first_pull_requests_run_sees_the_other_one_even_when_it_passed_first() {
    let fake = FakeGithub::start();
    let seven = pull(&fake, 7, "main");
    let eight = pull(&fake, 8, "evil");
    // #8 (into `evil`) runs first while #7 is open and not judged yet.
    let job8 = Job::new(&fake, "pull_request", &eight);
    assert_eq!(retrygate::github::run(&job8.env, &main_blocks).unwrap(), ActionOutcome::Block);
    let title = fake.check_runs()[0].title.clone().unwrap();
    assert!(title.starts_with("blocked by #7: no retrygate verdict yet"), "{title}");
    // Then #7's own run: blocked, and the record keeps #8's pass.
    let job7 = Job::new(&fake, "pull_request", &seven);
    assert_eq!(retrygate::github::run(&job7.env, &main_blocks).unwrap(), ActionOutcome::Block);
    let run = fake.check_runs()[0].clone();
    assert_eq!(run.conclusion.as_deref(), Some("failure"));
    assert_eq!(run.title.as_deref(), Some("blocked: blocking-findings"), "#7's own block decides");
    assert!(run.summary.unwrap().contains("| #8 into `evil` | ✅ passing"));
    assert!(!comment_on(&fake, 7).contains("same head commit"), "the check agrees with #7's own verdict");
}

// ---- 2. a failed update to a stricter verdict ------------------------------

/// PR #2 passes against `release`, then is retargeted to `main`, whose
/// policy blocks it: the existing `success` run must become `failure`.
fn passed_then_retargeted(fake: &FakeGithub) -> Job {
    let mut ev = pull(fake, 2, "release");
    let job = Job::new(fake, "pull_request", &ev);
    assert_eq!(retrygate::github::run(&job.env, &main_blocks).unwrap(), ActionOutcome::Pass);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("success"));
    fake.with(|s| s.pulls.get_mut(&2).unwrap()["base"]["ref"] = json!("main"));
    ev["action"] = json!("edited");
    ev["pull_request"]["base"]["ref"] = json!("main");
    ev["changes"] = json!({"base": {"ref": {"from": "release"}, "sha": {"from": BASE}}});
    Job::new(fake, "pull_request", &ev)
}

#[test]
fn a_502_on_the_update_to_a_block_is_read_back_and_tried_again() {
    let fake = FakeGithub::start();
    let retarget = passed_then_retargeted(&fake);
    fake.fault("PATCH", "/check-runs/", 0, FaultKind::Before(502));
    assert_eq!(retrygate::github::run(&retarget.env, &main_blocks).unwrap(), ActionOutcome::Block);
    let run = fake.check_runs()[0].clone();
    assert_eq!(run.conclusion.as_deref(), Some("failure"));
    assert_eq!(fake.count("PATCH", "/check-runs/"), 2, "the second after reading the run again");
    let reads = fake.log().iter().filter(|l| l.method == "GET" && l.path.ends_with("/check-runs")).count();
    assert_eq!(reads, 3, "one read by the first run, one before each write of the second");
    assert!(
        retarget.summary().contains("check run `retrygate` on `ec26c3e`: updated"),
        "{}",
        retarget.summary()
    );
    assert!(fake.with(|s| s.statuses.is_empty()), "no fallback needed");
}

#[test]
fn an_unreadable_200_that_landed_is_not_written_again() {
    let fake = FakeGithub::start();
    let retarget = passed_then_retargeted(&fake);
    // A proxy answered 200 with an HTML page after the update was applied.
    fake.fault("PATCH", "/check-runs/", 0, FaultKind::Html(true));
    assert_eq!(retrygate::github::run(&retarget.env, &main_blocks).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("failure"));
    assert_eq!(fake.count("PATCH", "/check-runs/"), 1, "read back, found applied, not sent again");
    assert!(
        retarget.summary().contains("check run `retrygate` on `ec26c3e`: updated"),
        "{}",
        retarget.summary()
    );
}

#[test]
fn a_refused_update_of_a_stale_success_is_superseded_by_a_newer_failing_run() {
    let fake = FakeGithub::start();
    let retarget = passed_then_retargeted(&fake);
    for _ in 0..retrygate::testing::github::MAX_WRITE_ATTEMPTS {
        fake.fault("PATCH", "/check-runs/", 0, FaultKind::Before(502));
    }
    assert_eq!(retrygate::github::run(&retarget.env, &main_blocks).unwrap(), ActionOutcome::Block);
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let (old, new) = (&runs[0], &runs[1]);
    assert_eq!(old.conclusion.as_deref(), Some("success"), "GitHub kept refusing the update");
    assert_eq!(new.conclusion.as_deref(), Some("failure"));
    assert!(new.id > old.id, "branch protection reads the newest run of the name");
    let summary = retarget.summary();
    assert!(
        summary.contains(&format!("refused every update, so a new run supersedes it (id {}", new.id)),
        "{summary}"
    );
    assert!(!summary.contains("a stale check run remains"), "{summary}");
    // The next publish finds and updates the newer run, not the stale one.
    assert_eq!(retrygate::github::run(&retarget.env, &main_blocks).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.check_runs().len(), 2);
}

#[test]
fn an_update_and_a_superseding_create_that_keep_failing_exit_2_and_say_a_stale_success_remains() {
    let fake = FakeGithub::start();
    let retarget = passed_then_retargeted(&fake);
    for _ in 0..retrygate::testing::github::MAX_WRITE_ATTEMPTS {
        fake.fault("PATCH", "/check-runs/", 0, FaultKind::Before(502));
    }
    fake.fault("POST", "/check-runs", 0, FaultKind::Before(422));
    assert_eq!(retrygate::github::run(&retarget.env, &main_blocks).unwrap(), ActionOutcome::CouldNotDecide);
    let run = fake.check_runs()[0].clone();
    assert_eq!(run.conclusion.as_deref(), Some("success"), "GitHub kept refusing the update");
    assert_eq!(fake.count("PATCH", "/check-runs/"), retrygate::testing::github::MAX_WRITE_ATTEMPTS as usize);
    // The fallback status is set, and the summary does not pretend it is enough.
    let statuses = fake.with(|s| s.statuses.clone());
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0]["state"], "failure");
    let summary = retarget.summary();
    assert!(
        summary.contains(&format!(
            "a stale check run remains: `retrygate` (id {}) on {HEAD} still shows `success`",
            run.id
        )),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "gh api -X PATCH repos/{OWNER_REPO}/check-runs/{} -f status=completed -f conclusion=failure",
            run.id
        )),
        "{summary}"
    );
    let outputs = std::fs::read_to_string(retarget.dir.path().join("output.txt")).unwrap();
    assert!(outputs.ends_with("verdict=block\nfindings=1\n"), "{outputs}");
}

#[test]
fn a_block_that_cannot_update_a_failing_run_is_not_called_stale() {
    // The run already fails; a failed update leaves nothing kinder standing.
    let fake = FakeGithub::start();
    let ev = pull(&fake, 2, "main");
    let job = Job::new(&fake, "pull_request", &ev);
    let one = |req: &GateRequest| Ok(judged(req, true));
    assert_eq!(retrygate::github::run(&job.env, &one).unwrap(), ActionOutcome::Block);
    let two = |req: &GateRequest| {
        let mut p = judged(req, true);
        p.title.push_str(" (again)");
        Ok(p)
    };
    fake.fault("PATCH", "/check-runs/", 0, FaultKind::Before(422));
    assert_eq!(retrygate::github::run(&job.env, &two).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.count("PATCH", "/check-runs/"), 1, "a 422 is not retried");
    assert!(!job.summary().contains("stale check run"), "{}", job.summary());
}

// ---- 5. deadlines and duplicates ----------------------------------------------

#[test]
fn a_create_that_lands_after_its_request_timed_out_is_found_not_repeated() {
    let fake = FakeGithub::start();
    let ev = pull(&fake, 2, "main");
    let mut job = Job::new(&fake, "pull_request", &ev);
    job.env.timing.request_deadline = Some(Duration::from_millis(700));
    job.env.timing.settle = Some(Duration::from_millis(900));
    // Both creates land 1.2 s after they were sent, answered at 2 s: after
    // the client gave up, and before it looks again.
    fake.fault("POST", "/check-runs", 0, FaultKind::Late { apply_ms: 1200, answer_ms: 2000 });
    fake.fault("POST", "/issues/2/comments", 0, FaultKind::Late { apply_ms: 1200, answer_ms: 2000 });
    assert_eq!(retrygate::github::run(&job.env, &main_blocks).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.check_runs().len(), 1);
    assert_eq!(fake.count("POST", "/check-runs"), 1);
    assert_eq!(fake.comments().len(), 1, "one comment");
    assert_eq!(fake.count("POST", "/issues/2/comments"), 1);
    let summary = job.summary();
    assert!(summary.contains("check run `retrygate` on `ec26c3e`: created"), "{summary}");
    assert!(summary.contains("sticky comment: created"), "{summary}");
}

#[test]
fn the_publish_deadline_counts_from_the_publish_not_from_before_a_slow_gate() {
    // A sign-off: the pull request and the permission are read, then the
    // gate takes longer than the whole publish deadline.
    let repo = common::Repo::new();
    repo.write("README.md", "hello\n");
    let base = repo.commit("base");
    let fake = FakeGithub::start();
    fake.add_pull(5, HEAD, &base);
    fake.set_permission("maintainer", "write", "write");
    let mut ev = fixture("issue_comment_edited_webhook_event.json");
    ev["action"] = json!("created");
    ev["comment"]["body"] = json!(format!("/retrygate sign-off {HEAD}"));
    ev["comment"]["user"] = fake_github::user("maintainer");
    let mut job = Job::new(&fake, "issue_comment", &ev);
    job.env.workspace = repo.path().to_path_buf();
    job.env.timing.publish_deadline = Some(Duration::from_millis(1500));
    let slow = |req: &GateRequest| {
        std::thread::sleep(Duration::from_millis(1800));
        let mut p = judged(req, false);
        p.signed_off_by = req.sign_off.as_ref().map(|s| s.by.clone());
        Ok(p)
    };
    assert_eq!(retrygate::github::run(&job.env, &slow).unwrap(), ActionOutcome::Pass, "{}", job.summary());
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("success"));
    assert!(fake.with(|s| s.statuses.is_empty()), "the check run landed: no fallback");
    let summary = job.summary();
    assert!(summary.contains("check run `retrygate` on `ec26c3e`: created"), "{summary}");
    assert!(!summary.contains("not written"), "{summary}");
}

// ---- 3 and 4. a sign-off is what a person rendered and sent -----------------

struct SignOffCase {
    fake: FakeGithub,
    job: Job,
    _repo: common::Repo,
}

/// Pull request #5 (head `HEAD`) blocked on its own; `login` comments
/// `body` (a new comment, or `action`).
fn sign_off_case(login: &str, body: &str, edit: impl FnOnce(&mut Value)) -> SignOffCase {
    let repo = common::Repo::new();
    repo.write("README.md", "hello\n");
    let base = repo.commit("base");
    let fake = FakeGithub::start();
    fake.add_pull(5, HEAD, &base);
    fake.set_permission("maintainer", "write", "write");
    let mut ev = fixture("issue_comment_edited_webhook_event.json");
    ev["action"] = json!("created");
    ev["comment"]["body"] = json!(body);
    ev["comment"]["user"] = fake_github::user(login);
    edit(&mut ev);
    let mut job = Job::new(&fake, "issue_comment", &ev);
    job.env.workspace = repo.path().to_path_buf();
    SignOffCase { fake, job, _repo: repo }
}

/// The gate: blocked, unless a sign-off was accepted.
fn lifted_by_sign_off(req: &GateRequest) -> anyhow::Result<Publication> {
    let mut p = judged(req, req.sign_off.is_none());
    p.signed_off_by = req.sign_off.as_ref().map(|s| s.by.clone());
    Ok(p)
}

#[test]
fn a_sign_off_naming_the_full_head_lifts_the_block() {
    let c = sign_off_case("maintainer", &format!("Reviewed.\n\n/retrygate sign-off {HEAD}\n"), |_| {});
    assert_eq!(retrygate::github::run(&c.job.env, &lifted_by_sign_off).unwrap(), ActionOutcome::Pass);
    assert_eq!(c.fake.check_runs()[0].conclusion.as_deref(), Some("success"));
}

#[test]
fn a_command_in_a_code_block_an_html_comment_or_a_quote_is_not_a_sign_off() {
    let cmd = format!("/retrygate sign-off {HEAD}");
    for body in [
        format!("Not yet! When I'm done I will post:\n\n```\n{cmd}\n```\n"),
        format!("Not yet. Later:\n\n    {cmd}\n"),
        format!("Looks fine so far.\n\n<!-- {cmd} -->\n"),
        format!("> {cmd}\n\nDid you mean this?"),
    ] {
        let c = sign_off_case("maintainer", &body, |_| {});
        let gate = |_: &GateRequest| -> anyhow::Result<Publication> { panic!("not a sign-off: {body:?}") };
        assert_eq!(retrygate::github::run(&c.job.env, &gate).unwrap(), ActionOutcome::Pass, "nothing to do");
        assert!(c.fake.check_runs().is_empty() && c.fake.comments().is_empty(), "{body:?}");
        assert!(c.job.summary().contains("is not a `/retrygate sign-off` command"), "{}", c.job.summary());
    }
}

#[test]
fn a_comment_a_github_app_posted_for_a_maintainer_is_refused_like_a_bots() {
    let c = sign_off_case("maintainer", &format!("/retrygate sign-off {HEAD}"), |ev| {
        ev["comment"]["performed_via_github_app"] = json!({"id": 1143301, "slug": "copilot-swe-agent", "name": "Copilot", "owner": {"login": "github"}});
    });
    let gate = |_: &GateRequest| -> anyhow::Result<Publication> { panic!("refused before the gate") };
    assert_eq!(retrygate::github::run(&c.job.env, &gate).unwrap(), ActionOutcome::Block);
    assert!(c.fake.check_runs().is_empty(), "nothing is published");
    assert_eq!(c.fake.count("GET", "/permission"), 0, "refused before asking for a permission");
    assert!(
        c.job.summary().contains("sign-off by maintainer refused: the comment was posted by the GitHub App `copilot-swe-agent` on maintainer's behalf"),
        "{}",
        c.job.summary()
    );
}

#[test]
fn an_edited_comment_is_never_a_sign_off() {
    let c = sign_off_case("maintainer", &format!("/retrygate sign-off {HEAD}"), |ev| {
        ev["action"] = json!("edited");
    });
    let gate = |_: &GateRequest| -> anyhow::Result<Publication> { panic!("an edit is ignored") };
    assert_eq!(retrygate::github::run(&c.job.env, &gate).unwrap(), ActionOutcome::Pass);
    assert!(c.fake.log().is_empty(), "not even read");
    assert!(
        c.job.summary().contains("only new comments can sign off (action `edited`)"),
        "{}",
        c.job.summary()
    );
}

#[test]
fn a_short_sha_is_refused_with_the_full_one_to_copy() {
    let c = sign_off_case("maintainer", "/retrygate sign-off ec26c3e", |_| {});
    let gate = |_: &GateRequest| -> anyhow::Result<Publication> { panic!("refused before the gate") };
    assert_eq!(retrygate::github::run(&c.job.env, &gate).unwrap(), ActionOutcome::Block);
    assert!(c.fake.check_runs().is_empty());
    assert!(
        c.job.summary().contains(&format!(
            "if ec26c3e is the commit you reviewed, comment `/retrygate sign-off {HEAD}`"
        )),
        "{}",
        c.job.summary()
    );
}

#[test]
fn a_sign_off_does_not_lift_a_gate_that_could_not_decide() {
    let c = sign_off_case("maintainer", &format!("/retrygate sign-off {HEAD}"), |_| {});
    let broken = |_: &GateRequest| -> anyhow::Result<Publication> {
        anyhow::bail!(".github/retrygate.yml:2: unknown field `ledgr`")
    };
    assert_eq!(retrygate::github::run(&c.job.env, &broken).unwrap(), ActionOutcome::CouldNotDecide);
    let run = c.fake.check_runs()[0].clone();
    assert_eq!(run.conclusion.as_deref(), Some("failure"));
    assert!(run.summary.unwrap().contains("A sign-off cannot lift this"));
}

#[test]
fn a_fallback_status_whose_answer_timed_out_is_read_back_for_the_summary() {
    // A personal token cannot create check runs: the verdict goes to the
    // commit status, which lands after its request timed out.
    let fake = FakeGithub::start();
    let ev = pull(&fake, 2, "main");
    let mut job = Job::new(&fake, "pull_request", &ev);
    job.env.token = Some(fake_github::PERSONAL_TOKEN.into());
    job.env.timing.request_deadline = Some(Duration::from_millis(700));
    job.env.timing.settle = Some(Duration::from_millis(900));
    fake.fault("POST", "/statuses/", 0, FaultKind::Late { apply_ms: 1200, answer_ms: 2000 });
    assert_eq!(retrygate::github::run(&job.env, &main_blocks).unwrap(), ActionOutcome::Block);
    let statuses = fake.with(|s| s.statuses.clone());
    assert_eq!(statuses.len(), 1, "sent once");
    assert_eq!(statuses[0]["state"], "failure");
    assert!(
        job.summary().contains("commit status `retrygate` on `ec26c3e`: set (fallback)"),
        "what landed, not `not written`: {}",
        job.summary()
    );

    // The same status that never lands is reported as not written.
    let fake = FakeGithub::start();
    let ev = pull(&fake, 2, "main");
    let mut job = Job::new(&fake, "pull_request", &ev);
    job.env.token = Some(fake_github::PERSONAL_TOKEN.into());
    fake.fault("POST", "/statuses/", 0, FaultKind::Before(502));
    assert_eq!(retrygate::github::run(&job.env, &main_blocks).unwrap(), ActionOutcome::Block);
    assert!(fake.with(|s| s.statuses.is_empty()));
    assert!(
        job.summary().contains("commit status `retrygate` on `ec26c3e`: **not written**"),
        "{}",
        job.summary()
    );
}

#[test]
fn a_pass_is_not_published_when_the_other_pull_requests_of_the_head_cannot_be_listed() {
    let fake = FakeGithub::start();
    let ev = pull(&fake, 2, "release");
    fake.fault("GET", &format!("/commits/{HEAD}/pulls"), 0, FaultKind::Before(404));
    let job = Job::new(&fake, "pull_request", &ev);
    assert_eq!(retrygate::github::run(&job.env, &main_blocks).unwrap(), ActionOutcome::CouldNotDecide);
    let run = fake.check_runs()[0].clone();
    assert_eq!(run.conclusion.as_deref(), Some("failure"), "a pass it cannot vouch for is not published");
    assert!(run.summary.unwrap().contains(
        "a pass is published only when the other open pull requests with this head commit are known"
    ),);
    assert!(comment_on(&fake, 2).contains("could not decide"));

    // A block needs no such list: it is published as it is.
    let fake = FakeGithub::start();
    let ev = pull(&fake, 2, "main");
    fake.fault("GET", &format!("/commits/{HEAD}/pulls"), 0, FaultKind::Before(404));
    let job = Job::new(&fake, "pull_request", &ev);
    assert_eq!(retrygate::github::run(&job.env, &main_blocks).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.check_runs()[0].title.as_deref(), Some("blocked: blocking-findings"));
}

#[test]
fn a_passing_pull_requests_comment_says_why_its_check_is_red_while_another_blocks_it() {
    let fake = FakeGithub::start();
    let seven = pull(&fake, 7, "main");
    let eight = pull(&fake, 8, "strict");
    let strict_blocks = |req: &GateRequest| Ok(judged(req, req.base_ref == "strict"));
    let job7 = Job::new(&fake, "pull_request", &seven);
    // #8 is open and not judged yet: #7's pass does not stand for it.
    assert_eq!(retrygate::github::run(&job7.env, &strict_blocks).unwrap(), ActionOutcome::Block);
    let job8 = Job::new(&fake, "pull_request", &eight);
    assert_eq!(retrygate::github::run(&job8.env, &strict_blocks).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.check_runs()[0].title.as_deref(), Some("blocked: blocking-findings"));
    // #8's run told #7's comment why #7's check is red.
    let c7 = comment_on(&fake, 7);
    assert!(c7.contains("retrygate: passing"), "{c7}");
    assert!(c7.contains("is **blocked**: pull request #8 into `strict` has the same head commit"), "{c7}");
    assert_eq!(c7.matches("retrygate:head-note").count(), 1, "{c7}");
    assert!(
        job8.summary().contains("sticky comment of #7 (same head commit): note on the check updated"),
        "{}",
        job8.summary()
    );

    // #8 is closed and #7 runs again: a pass, and no note.
    fake.with(|s| s.pulls.get_mut(&8).unwrap()["state"] = json!("closed"));
    assert_eq!(retrygate::github::run(&job7.env, &strict_blocks).unwrap(), ActionOutcome::Pass);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("success"));
    let c7 = comment_on(&fake, 7);
    assert!(!c7.contains("retrygate:head-note") && !c7.contains("same head commit"), "{c7}");
    assert_eq!(fake.comments().len(), 2, "one comment per pull request, never more");
}

#[test]
fn a_recorded_block_is_kept_when_githubs_list_of_the_commits_pull_requests_leaves_it_out() {
    // The head is already on the default branch (a release PR from `main`):
    // GitHub's list of the commit's pull requests does not name #7.
    let fake = FakeGithub::start();
    let seven = pull(&fake, 7, "main");
    let eight = pull(&fake, 8, "evil");
    fake.with(|s| s.commit_pulls_hidden.push(7));
    let job7 = Job::new(&fake, "pull_request", &seven);
    assert_eq!(retrygate::github::run(&job7.env, &main_blocks).unwrap(), ActionOutcome::Block);
    let job8 = Job::new(&fake, "pull_request", &eight);
    assert_eq!(retrygate::github::run(&job8.env, &main_blocks).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("failure"));
    let asked = fake.log().iter().filter(|l| l.method == "GET" && l.path.ends_with("/pulls/7")).count();
    assert_eq!(asked, 1, "asked about #7 directly");

    // Once #7 is closed, asking says so, and #8's own pass stands.
    fake.with(|s| s.pulls.get_mut(&7).unwrap()["state"] = json!("closed"));
    assert_eq!(retrygate::github::run(&job8.env, &main_blocks).unwrap(), ActionOutcome::Pass);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("success"));
}
