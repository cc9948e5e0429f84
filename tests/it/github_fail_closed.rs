//! `retrygate github` where a green check could be reached without being
//! deserved: a verdict file rewritten by the pull request's own run, a
//! fork's own replay report, a write-token job asked to run the pull
//! request's code, a retarget to another base, a merge queue. Each runs the
//! real gate on a real git repository against the fake GitHub.

use crate::common;
use crate::fake_github;

use std::path::Path;
use std::time::Duration;

use common::Repo;
use fake_github::{CheckRun, FakeGithub, ACTIONS_TOKEN, OWNER_REPO, READ_ONLY_TOKEN};
use retrygate::github::ActionOutcome;
use retrygate::github::{check_gate, ActionEnv, ActionMode, VerdictFile};
use retrygate::testing::github::heads::{self, EntryVerdict, HeadEntry};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

use common::github_fixture as fixture;

struct Job {
    dir: tempfile::TempDir,
    env: ActionEnv,
}

impl Job {
    fn new(
        fake: &FakeGithub,
        repo: &Path,
        event_name: &str,
        payload: &Value,
        token: &str,
        mode: ActionMode,
    ) -> Job {
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
            workspace: repo.to_path_buf(),
            step_summary: Some(dir.path().join("summary.md")),
            output: Some(dir.path().join("output.txt")),
            run_url: None,
            mode,
            verdict_file: dir.path().join("retrygate-verdict/verdict.json"),
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
}

/// A repository whose `main` has the checkout client and `config`, and a
/// branch `branch` with `head_text` as the client.
fn repo(config: Option<&str>, branch: &str, head_text: &str) -> (Repo, String, String) {
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    if let Some(c) = config {
        repo.write(".github/retrygate.yml", c);
    }
    let base = repo.commit("base");
    repo.branch(branch);
    repo.write("src/checkout.rs", head_text);
    let head = repo.commit("change");
    (repo, base, head)
}

/// The `pull_request` payload for PR #2 from `head` onto `base`.
fn pr_payload(action: &str, head: &str, base: &str) -> Value {
    let mut v = fixture("pull_request__opened.payload.json");
    v["action"] = json!(action);
    v["pull_request"]["head"]["sha"] = json!(head);
    v["pull_request"]["base"]["sha"] = json!(base);
    v
}

fn fork_of(fake: &FakeGithub, pr: u64, fork: &str) {
    fake.with(|s| s.pulls.get_mut(&pr).unwrap()["head"]["repo"]["full_name"] = json!(fork));
}

/// `workflow_run.completed` (a fork's run: no pull_requests) on `head`.
fn run_payload(head: &str) -> Value {
    let mut v = fixture("workflow_run__completed.payload.json");
    v["workflow_run"]["head_sha"] = json!(head);
    v
}

#[test]
fn a_verdict_file_rewritten_to_pass_still_publishes_the_recomputed_block() {
    let fake = FakeGithub::start();
    let (repo, base, head) = repo(None, "feature", common::AGENT_PATCH);
    fake.add_pull(2, &head, &base);
    fork_of(&fake, 2, "octo-org/octo-repo");

    // The fork's pull_request run computes a block...
    let compute = Job::new(
        &fake,
        repo.path(),
        "pull_request",
        &pr_payload("opened", &head, &base),
        READ_ONLY_TOKEN,
        ActionMode::Compute,
    );
    assert_eq!(retrygate::github::run(&compute.env, &check_gate).unwrap(), ActionOutcome::Block);
    // ...and its own code rewrites the verdict file to an all-clear.
    let mut file = VerdictFile::read(&compute.env.verdict_file).unwrap();
    assert_eq!(file.publication.verdict, retrygate::printer::Verdict::Block);
    file.publication.verdict = retrygate::printer::Verdict::Pass;
    file.publication.findings.clear();
    file.publication.title = "passing: all clear".into();
    file.publication.comment_markdown = "### ✅ all clear".into();
    file.publication.summary_markdown = "### ✅ all clear".into();

    let mut publish =
        Job::new(&fake, repo.path(), "workflow_run", &run_payload(&head), ACTIONS_TOKEN, ActionMode::Publish);
    publish.env.verdict_file = compute.env.verdict_file.clone();
    file.write(&publish.env.verdict_file).unwrap();
    assert_eq!(retrygate::github::run(&publish.env, &check_gate).unwrap(), ActionOutcome::Block);
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"));
    assert!(runs[0].title.as_deref().unwrap().starts_with("blocked"), "{:?}", runs[0].title);
    assert!(!runs[0].annotations.is_empty(), "the recomputed findings are annotated");
    let comments = fake.comments();
    assert_eq!(comments.len(), 1);
    assert!(!comments[0].body.contains("all clear"), "{}", comments[0].body);
    assert!(comments[0].body.contains("retrygate: blocked"), "{}", comments[0].body);
}

#[test]
fn publishing_needs_the_head_fetched_into_the_checkout() {
    let fake = FakeGithub::start();
    let (repo, base, head) = repo(None, "feature", common::AGENT_PATCH);
    fake.add_pull(2, &head, &base);
    fork_of(&fake, 2, "octo-org/octo-repo");
    // The publishing job's checkout: the base only.
    let checkout = Repo::clone_from(&repo, &["--single-branch", "--branch", "main"]);
    let job = Job::new(
        &fake,
        checkout.path(),
        "workflow_run",
        &run_payload(&head),
        ACTIONS_TOKEN,
        ActionMode::Publish,
    );
    VerdictFile {
        version: 1,
        repository: OWNER_REPO.into(),
        pr_number: 2,
        head_sha: head.clone(),
        publication: retrygate::github::Publication::could_not_decide(&head, &anyhow::anyhow!("x")),
    }
    .write(&job.env.verdict_file)
    .unwrap();
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::CouldNotDecide);
    assert!(fake.check_runs().is_empty());
    assert!(
        job.summary().contains(&format!("commit {head} is not in the checkout"))
            && job
                .summary()
                .contains("fetches the pull request's head as data (`git fetch origin pull/2/head`)"),
        "{}",
        job.summary()
    );
    // Fetched as data, the same job publishes.
    checkout.git(&["fetch", "-q", "origin", "feature"]);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("failure"));
}

/// A passing replay report for `head` from the built-in reference client.
fn passing_report(repo: &Repo, head: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let out = std::process::Command::new(BIN)
        .current_dir(repo.path())
        .args([
            "replay",
            "--scenario",
            ".github/replay-fast.yml",
            "--clients",
            "1",
            "--format",
            "json",
            "--commit",
            head,
        ])
        .arg("--report")
        .arg(to)
        .args(["--", BIN, "replay-client", "--profile", "reference"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

const FAST_SCENARIO: &str =
    "description: one 429, then 200\nresponses:\n  - status: 429\n  - status: 200\nbudget: 3\n";

/// An agent PR (branch `codex/...`) that changes HTTP-client code, with a
/// passing replay report in the artifact, published for a fork.
fn fork_replay_case(config: &str) -> (FakeGithub, Job, Repo) {
    let fake = FakeGithub::start();
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    repo.write(".github/replay-fast.yml", FAST_SCENARIO);
    repo.write(".github/retrygate.yml", config);
    let base = repo.commit("base");
    repo.branch("codex/http");
    repo.write("src/http.rs", "pub fn get(c: &reqwest::blocking::Client) -> reqwest::Result<String> {\n    c.get(\"https://shop.example/cart\").send()?.text()\n}\n");
    let head = repo.commit("http");
    fake.add_pull(2, &head, &base);
    fork_of(&fake, 2, "octo-org/octo-repo");
    fake.with(|s| s.pulls.get_mut(&2).unwrap()["head"]["ref"] = json!("codex/http"));
    let job =
        Job::new(&fake, repo.path(), "workflow_run", &run_payload(&head), ACTIONS_TOKEN, ActionMode::Publish);
    VerdictFile {
        version: 1,
        repository: OWNER_REPO.into(),
        pr_number: 2,
        head_sha: head.clone(),
        publication: retrygate::github::Publication::could_not_decide(&head, &anyhow::anyhow!("x")),
    }
    .write(&job.env.verdict_file)
    .unwrap();
    passing_report(&repo, &head, &retrygate::testing::github::replay_report_beside(&job.env.verdict_file));
    (fake, job, repo)
}

#[test]
fn a_forks_own_replay_report_cannot_make_it_pass_unless_the_base_config_trusts_it() {
    let config = "require: { ledger: false, replay: true }\nreplay: { scenario: .github/replay-fast.yml, clients: 1 }\n";
    let (fake, job, _repo) = fork_replay_case(config);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
    let c = &fake.comments()[0].body;
    assert!(c.contains("reported by the fork's own run"), "{c}");
    assert!(c.contains("replay.trust\\_fork\\_reports: true"), "{c}");
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("failure"));

    let trusting = format!(
        "{config}replay: {{ scenario: .github/replay-fast.yml, clients: 1, trust_fork_reports: true }}\n"
    )
    .replacen("replay: { scenario: .github/replay-fast.yml, clients: 1 }\n", "", 1);
    let (fake, job, _repo) = fork_replay_case(&trusting);
    assert_eq!(
        retrygate::github::run(&job.env, &check_gate).unwrap(),
        ActionOutcome::Pass,
        "{}",
        job.summary()
    );
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("success"));
    assert!(fake.comments()[0].body.contains("reported by the fork's own run"));
}

#[test]
fn the_write_token_job_never_runs_the_pull_requests_replay_command() {
    let fake = FakeGithub::start();
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    repo.write(".github/replay-fast.yml", FAST_SCENARIO);
    let marker = repo.path().join("pr-code-ran");
    repo.write(
        ".github/retrygate.yml",
        format!("require: {{ ledger: false }}\nreplay: {{ command: 'touch {}', scenario: .github/replay-fast.yml, clients: 1 }}\n", marker.display()),
    );
    let base = repo.commit("base");
    repo.branch("codex/http");
    repo.write("src/http.rs", "pub fn get(c: &reqwest::blocking::Client) -> reqwest::Result<String> {\n    c.get(\"https://x\").send()?.text()\n}\n");
    let head = repo.commit("http");
    let mut payload = pr_payload("opened", &head, &base);
    payload["pull_request"]["head"]["ref"] = json!("codex/http");
    fake.add_pull(2, &head, &base);
    let job = Job::new(&fake, repo.path(), "pull_request", &payload, ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
    assert!(!marker.exists(), "replay.command ran in the job that holds the write token");
    assert!(fake.comments()[0].body.contains("running replay.command is not allowed in this job"));
}

#[test]
fn a_retarget_is_judged_again_and_the_check_run_names_its_base() {
    // `release` says advisory; `main` enforces.
    let fake = FakeGithub::start();
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    let main = repo.commit("base");
    repo.branch("release");
    repo.write(".github/retrygate.yml", "mode: advisory\n");
    let release = repo.commit("advisory on release");
    repo.branch("feature");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    let head = repo.commit("faster");

    fake.add_pull(2, &head, &release);
    fake.with(|s| s.pulls.get_mut(&2).unwrap()["base"]["ref"] = json!("release"));
    let mut opened = pr_payload("opened", &head, &release);
    opened["pull_request"]["base"]["ref"] = json!("release");
    let job = Job::new(&fake, repo.path(), "pull_request", &opened, ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Pass);
    let run = fake.check_runs()[0].clone();
    assert_eq!(run.conclusion.as_deref(), Some("success"));
    // The title says what the comment says: it would block.
    let title = run.title.clone().unwrap();
    assert!(title.starts_with("passing (advisory mode, would block): "), "{title}");
    assert!(fake.comments()[0].body.contains("passing (advisory mode, would block)"));
    assert_eq!(run.external_id.as_deref(), Some(format!("retrygate-gate base=release@{release}").as_str()));

    // A title edit changes nothing.
    let mut title_edit = pr_payload("edited", &head, &release);
    title_edit["changes"] = json!({"title": {"from": "Update the README"}});
    let job = Job::new(&fake, repo.path(), "pull_request", &title_edit, ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Pass);
    assert_eq!(fake.check_runs()[0].conclusion.as_deref(), Some("success"));

    // Retargeted to main: `edited` with a base change; the same head now blocks.
    let mut retarget = pr_payload("edited", &head, &main);
    retarget["pull_request"]["base"]["ref"] = json!("main");
    retarget["changes"] = json!({"base": {"ref": {"from": "release"}, "sha": {"from": release}}});
    let job = Job::new(&fake, repo.path(), "pull_request", &retarget, ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1, "the same check run is updated");
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"));
    assert_eq!(runs[0].external_id.as_deref(), Some(format!("retrygate-gate base=main@{main}").as_str()));
}

#[test]
fn one_head_opened_into_two_bases_shows_the_stricter_bases_verdict_with_the_real_gate() {
    // `release` says advisory; `main` enforces. The same branch is opened
    // into both: #7 into `main` (blocked), #8 into `release` (passing there).
    let fake = FakeGithub::start();
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    let main = repo.commit("base");
    repo.branch("release");
    repo.write(".github/retrygate.yml", "mode: advisory\n");
    let release = repo.commit("advisory on release");
    repo.branch("feature");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    let head = repo.commit("faster");
    let mut payloads = Vec::new();
    for (n, branch, base) in [(7u64, "main", &main), (8, "release", &release)] {
        let mut pr = fake.add_pull(n, &head, base);
        pr["base"]["ref"] = json!(branch);
        fake.with(|s| s.pulls.insert(n, pr.clone()));
        let mut ev = pr_payload("opened", &head, base);
        ev["pull_request"] = pr;
        payloads.push(ev);
    }
    let job7 = Job::new(&fake, repo.path(), "pull_request", &payloads[0], ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(retrygate::github::run(&job7.env, &check_gate).unwrap(), ActionOutcome::Block);
    let job8 = Job::new(&fake, repo.path(), "pull_request", &payloads[1], ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(
        retrygate::github::run(&job8.env, &check_gate).unwrap(),
        ActionOutcome::Block,
        "{}",
        job8.summary()
    );
    let runs = fake.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"), "#7 never shows #8's pass");
    let title = runs[0].title.clone().unwrap();
    assert!(title.starts_with("blocked by #7 into main: blocked: "), "{title}");
    let summary = runs[0].summary.clone().unwrap();
    assert!(
        summary.contains("| #8 into `release` (this run) | ✅ passing: passing (advisory mode, would block)"),
        "{summary}"
    );
    let c8 = fake.comments().into_iter().find(|c| c.issue == 8).unwrap().body;
    assert!(c8.contains("pull request #7 into `main` has the same head commit"), "{c8}");
}

// ---- merge queues ----------------------------------------------------------

/// `main`, then pull requests #3 (a README edit) and #4 (the regression),
/// and the merge queue's group commit: `main` with both merged on top, as
/// the merge method writes them.
struct Queue {
    repo: Repo,
    base: String,
    head3: String,
    head4: String,
    group: String,
}

fn queue() -> Queue {
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    repo.write("README.md", "shop\n");
    let base = repo.commit("base");
    repo.branch("docs");
    repo.write("README.md", "shop, with docs\n");
    let head3 = repo.commit("docs");
    repo.checkout("main");
    repo.branch("faster");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    let head4 = repo.commit("faster");
    repo.checkout("main");
    repo.git(&["checkout", "-q", "-b", &format!("gh-readonly-queue/main/pr-4-{base}")]);
    repo.git(&["merge", "-q", "--no-ff", "docs", "-m", "Merge pull request #3 from octo-org/docs"]);
    repo.git(&["merge", "-q", "--no-ff", "faster", "-m", "Merge pull request #4 from octo-org/faster"]);
    let group = repo.head();
    Queue { repo, base, head3, head4, group }
}

/// The merge_group fixture for `q`'s group (with `base_sha`, as GitHub's
/// documentation lists it).
fn group_payload(q: &Queue) -> Value {
    let mut v = fixture("merge_group__checks_requested.payload.json");
    v["merge_group"]["head_sha"] = json!(q.group);
    v["merge_group"]["base_sha"] = json!(q.base);
    v["merge_group"]["head_ref"] = json!(format!("refs/heads/gh-readonly-queue/main/pr-4-{}", q.base));
    v
}

/// A retrygate check run on `head`, as a PR's own run left it.
fn pr_check_run(fake: &FakeGithub, id: u64, head: &str, conclusion: &str, base_branch: &str, title: &str) {
    fake.with(|s| {
        s.check_runs.push(CheckRun {
            id,
            name: "retrygate".into(),
            external_id: Some(format!("retrygate-gate base={base_branch}@0000000")),
            head_sha: head.into(),
            status: "completed".into(),
            conclusion: Some(conclusion.into()),
            title: Some(title.into()),
            summary: Some(String::new()),
            text: None,
            annotations: Vec::new(),
        })
    });
}

fn group_job(fake: &FakeGithub, q: &Queue) -> Job {
    fake.add_pull(3, &q.head3, &q.base);
    fake.add_pull(4, &q.head4, &q.base);
    for n in [3, 4] {
        fake.with(|s| s.pulls.get_mut(&n).unwrap()["base"]["ref"] = json!("main"));
    }
    Job::new(fake, q.repo.path(), "merge_group", &group_payload(q), ACTIONS_TOKEN, ActionMode::Full)
}

fn group_run(fake: &FakeGithub, q: &Queue) -> CheckRun {
    fake.check_runs().into_iter().find(|r| r.head_sha == q.group).expect("a check run on the group commit")
}

#[test]
fn a_queued_pull_request_without_a_passing_verdict_blocks_the_group() {
    let q = queue();
    let fake = FakeGithub::start();
    pr_check_run(&fake, 1, &q.head3, "success", "main", "passing: no blocking retry regressions");
    let job = group_job(&fake, &q);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
    let run = group_run(&fake, &q);
    assert_eq!(run.conclusion.as_deref(), Some("failure"));
    assert_eq!(run.title.as_deref(), Some("blocked: queued pull requests without a passing verdict: #4"));
    assert!(run
        .summary
        .as_deref()
        .unwrap()
        .contains(&format!("#4: **not passing**: no retrygate verdict on its head `{}`", &q.head4[..7])));
    assert!(fake.comments().is_empty(), "a group commit has no pull request to comment on");

    // A failing verdict, or a pass computed against another base branch,
    // counts no more.
    for (conclusion, branch, why) in [
        ("failure", "main", "is `failure`"),
        ("success", "release", "computed against `release`, not `main`"),
    ] {
        let fake = FakeGithub::start();
        pr_check_run(&fake, 1, &q.head3, "success", "main", "passing: no blocking retry regressions");
        pr_check_run(&fake, 2, &q.head4, conclusion, branch, "x");
        let job = group_job(&fake, &q);
        assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
        assert!(group_run(&fake, &q).summary.unwrap().contains(why), "{why}");
    }
}

/// A check run on `head` that records pull request `pr`'s own pass against
/// `main`, signed off by `by` with `lifted` as the findings they accepted.
fn signed_off_run(fake: &FakeGithub, id: u64, pr: u64, head: &str, by: &str, lifted: &[&str]) {
    let entry = HeadEntry {
        pr,
        base: "main".into(),
        base_sha: "0000000".into(),
        verdict: EntryVerdict::Pass,
        title: format!("passing (signed off): by {by}"),
        signed_off_by: Some(by.into()),
        lifted: lifted.iter().map(|s| s.to_string()).collect(),
        lifted_complete: true,
    };
    pr_check_run(fake, id, head, "success", "main", "passing (signed off)");
    fake.with(|s| s.check_runs.iter_mut().find(|r| r.id == id).unwrap().text = Some(heads::encode(&[entry])));
}

#[test]
fn the_groups_own_gate_counts_unless_its_findings_are_the_ones_signed_off() {
    let q = queue();
    // Both PRs claim a plain pass, yet the group holds the regression: the
    // group's own gate blocks it.
    let fake = FakeGithub::start();
    pr_check_run(&fake, 1, &q.head3, "success", "main", "passing: no blocking retry regressions");
    pr_check_run(&fake, 2, &q.head4, "success", "main", "passing: no blocking retry regressions");
    let job = group_job(&fake, &q);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
    let run = group_run(&fake, &q);
    assert_eq!(run.conclusion.as_deref(), Some("failure"));
    assert!(run.title.as_deref().unwrap().starts_with("blocked: "), "{:?}", run.title);
    assert!(run.external_id.as_deref().unwrap().starts_with("retrygate-gate base=main@"));

    // #4 passed by a maintainer's sign-off, given on GitHub as a comment:
    // its check run records the findings the maintainer accepted, and the
    // group's findings are exactly those.
    let fake = FakeGithub::start();
    pr_check_run(&fake, 1, &q.head3, "success", "main", "passing: no blocking retry regressions");
    let job = group_job(&fake, &q);
    fake.set_permission("maintainer", "write", "write");
    let mut comment = fixture("issue_comment_edited_webhook_event.json");
    comment["action"] = json!("created");
    comment["issue"]["number"] = json!(4);
    comment["comment"]["body"] = json!(format!("/retrygate sign-off {}", q.head4));
    comment["comment"]["user"] = fake_github::user("maintainer");
    let sign_off = Job::new(&fake, q.repo.path(), "issue_comment", &comment, ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(
        retrygate::github::run(&sign_off.env, &check_gate).unwrap(),
        ActionOutcome::Pass,
        "{}",
        sign_off.summary()
    );
    assert_eq!(
        retrygate::github::run(&job.env, &check_gate).unwrap(),
        ActionOutcome::Pass,
        "{}",
        job.summary()
    );
    let run = group_run(&fake, &q);
    assert_eq!(run.conclusion.as_deref(), Some("success"));
    let summary = run.summary.unwrap();
    assert!(summary.contains("#4: passing (signed off by maintainer)"), "{summary}");
    assert!(summary.contains("Every blocking finding of the group is one a maintainer signed off on the pull request that brought it (#4)"), "{summary}");

    // A sign-off accepted other findings than the group's: a combined
    // regression, which is what the group's own check is for. It blocks.
    let fake = FakeGithub::start();
    pr_check_run(&fake, 1, &q.head3, "success", "main", "passing: no blocking retry regressions");
    signed_off_run(
        &fake,
        2,
        4,
        &q.head4,
        "maintainer",
        &["retry-count-raised|rust/backon-max-times|src/checkout.rs|retries raised from 2 to 3"],
    );
    let job = group_job(&fake, &q);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
    let run = group_run(&fake, &q);
    assert_eq!(run.conclusion.as_deref(), Some("failure"));
    let summary = run.summary.unwrap();
    assert!(summary.contains("#4: passing (signed off by maintainer)"), "{summary}");
    assert!(
        summary.contains("A sign-off on a queued pull request does not lift this: the group's finding"),
        "{summary}"
    );
    assert!(summary.contains("(a combined regression)"), "{summary}");
}

#[test]
fn a_group_whose_gate_could_not_decide_is_never_lifted_by_a_sign_off() {
    // The queue's base carries a typo in the config: the group's gate cannot
    // decide. #4 passed by a sign-off that accepted the group's very finding.
    let q = queue();
    q.repo.checkout("main");
    q.repo.write(".github/retrygate.yml", "mode: enforce\nrequire: { ledgr: true }\n");
    let typo = q.repo.commit("config typo");
    q.repo.git(&["checkout", "-q", "-b", &format!("gh-readonly-queue/main/pr-4-{typo}")]);
    q.repo.git(&["merge", "-q", "--no-ff", &q.head3, "-m", "Merge pull request #3 from octo-org/docs"]);
    q.repo.git(&["merge", "-q", "--no-ff", &q.head4, "-m", "Merge pull request #4 from octo-org/faster"]);
    let group = q.repo.head();
    let q = Queue { base: typo, group, ..q };
    let fake = FakeGithub::start();
    pr_check_run(&fake, 1, &q.head3, "success", "main", "passing: no blocking retry regressions");
    signed_off_run(&fake, 2, 4, &q.head4, "maintainer", &[]);
    let mut payload = group_payload(&q);
    payload["merge_group"]["head_ref"] = json!(format!("refs/heads/gh-readonly-queue/main/pr-4-{}", q.base));
    fake.add_pull(3, &q.head3, &q.base);
    fake.add_pull(4, &q.head4, &q.base);
    let job = Job::new(&fake, q.repo.path(), "merge_group", &payload, ACTIONS_TOKEN, ActionMode::Full);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::CouldNotDecide);
    let run = group_run(&fake, &q);
    assert_eq!(run.conclusion.as_deref(), Some("failure"), "never success");
    let summary = run.summary.unwrap();
    assert!(summary.contains("#4: passing (signed off by maintainer)"), "{summary}");
    assert!(summary.contains("could not decide, and nothing lifts that"), "{summary}");
    assert!(summary.contains("ledgr"), "the reason is shown: {summary}");
}

#[test]
fn a_group_commit_that_names_no_pull_request_blocks() {
    let q = queue();
    // A rebase-method group: a plain commit on top names no pull request.
    q.repo.write("README.md", "shop, rebased\n");
    let extra = q.repo.commit("Tweak the README");
    let q = Queue { group: extra.clone(), ..q };
    let fake = FakeGithub::start();
    pr_check_run(&fake, 1, &q.head3, "success", "main", "passing: no blocking retry regressions");
    pr_check_run(&fake, 2, &q.head4, "success", "main", "passing (signed off): by maintainer for 1234567");
    let job = group_job(&fake, &q);
    assert_eq!(retrygate::github::run(&job.env, &check_gate).unwrap(), ActionOutcome::Block);
    let run = group_run(&fake, &q);
    assert_eq!(run.title.as_deref(), Some("blocked: commits that name no pull request"));
    assert!(run.summary.unwrap().contains(&format!("commit `{}` names no pull request", &extra[..7])));
}
