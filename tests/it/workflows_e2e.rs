//! The example workflows (`examples/workflows/`) and this repository's own
//! `.github/workflows/retrygate.yml`, run as GitHub runs them: each event the
//! workflow declares, from a branch and from a fork, through the real
//! composite `action.yml` and the test binary, against the stateful fake
//! GitHub API, ending with what a maintainer sees (check runs, comments).
//!
//! The runner is `workflows_e2e/runner.rs` (why not the `wrkflw` crate: see
//! its module doc and docs/github.md, "The workflows, end to end"). The
//! adopter's own replay test (`cargo test --test replay_429` in the
//! examples) is the one input replaced: this repository has no such test, so
//! the `replay-command` input runs the binary's built-in reference client.

mod expr;
mod runner;

use std::path::{Path, PathBuf};

use crate::common::{self, Repo};
use crate::fake_github::{FakeGithub, OWNER_REPO};
use retrygate::ledger::append::{append, NewRecord};
use retrygate::ledger::pyjson::Value as PyValue;
use runner::{Conclusion, Event, RunResult, World};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

/// One 429 without Retry-After, then 200: a correct client passes it fast.
const FAST_SCENARIO: &str =
    "description: one 429, then 200\nresponses:\n  - status: 429\n  - status: 200\nbudget: 3\n";
const CONFIG: &str = "replay: { scenario: .github/replay-fast.yml, clients: 1 }\n";
const HTTP_FILE: &str = "pub fn get(c: &reqwest::blocking::Client) -> reqwest::Result<String> {\n    c.get(\"https://shop.example/cart\").send()?.text()\n}\n";
/// The adopter's replay test, replaced (see the module doc).
const REPLAY_COMMAND: &str = "\"$RETRYGATE\" replay-client --profile reference";
const MAINTAINER: &str = "octo-maintainer";

fn crate_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A pull request as the test's origin holds it.
struct Pr {
    number: u64,
    head: String,
    base: String,
    merge: String,
    branch: String,
    fork: bool,
}

/// `main` with the pre-incident client, the replay scenario, the config and
/// the workflows an adopter copied (README "On GitHub").
fn adopter_repo(config: &str, workflows: &[&str]) -> Repo {
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    repo.write("README.txt", "shop\n");
    repo.write(".github/replay-fast.yml", FAST_SCENARIO);
    repo.write(".github/retrygate.yml", config);
    for w in workflows {
        let text = std::fs::read_to_string(crate_path(w)).unwrap();
        repo.write(
            &format!(".github/workflows/{}", Path::new(w).file_name().unwrap().to_string_lossy()),
            text,
        );
    }
    repo.commit("base");
    repo
}

fn record_edit(repo: &Repo, path: &str, content: &str) {
    let payload = PyValue::Object(vec![("path".into(), PyValue::Str(path.into()))]);
    let sha = hex::encode(Sha256::digest(content.as_bytes()));
    append(
        &repo.join(".tool_ledger.jsonl"),
        NewRecord { tool: "edit".into(), payload, sha256: Some(Some(sha)) },
    )
    .unwrap();
}

/// Branch `branch` off main with `path` set to `content` (with the agent's
/// ledger), the merge commit GitHub makes for it, and the refs GitHub keeps,
/// pushed to the origin.
fn open_pr(world: &World, repo: &Repo, number: u64, branch: &str, edits: &[(&str, &str)], fork: bool) -> Pr {
    let base = repo.rev("main");
    repo.git(&["checkout", "-q", "-B", branch, &base]);
    for (path, content) in edits {
        repo.write(path, content);
        record_edit(repo, path, content);
    }
    let head = repo.commit("the agent's change");
    repo.git(&["checkout", "-q", "--detach", &base]);
    repo.git(&["merge", "-q", "--no-ff", "-m", &format!("Merge {head} into {base}"), &head]);
    let merge = repo.head();
    repo.git(&["checkout", "-q", "main"]);
    world.push(repo.path(), &base, "refs/heads/main");
    if !fork {
        world.push(repo.path(), &head, &format!("refs/heads/{branch}"));
    }
    world.push(repo.path(), &head, &format!("refs/pull/{number}/head"));
    world.push(repo.path(), &merge, &format!("refs/pull/{number}/merge"));
    let pr = Pr { number, head, base, merge, branch: branch.into(), fork };
    world.fake.with(|s| s.pulls.insert(number, pull_json(&pr)));
    pr
}

fn pull_json(pr: &Pr) -> Value {
    let mut p = common::github_fixture("pull_request__opened.payload.json")["pull_request"].clone();
    p["number"] = json!(pr.number);
    p["head"]["sha"] = json!(pr.head);
    p["head"]["ref"] = json!(pr.branch);
    p["base"]["sha"] = json!(pr.base);
    p["base"]["ref"] = json!("main");
    p["merge_commit_sha"] = json!(pr.merge);
    if pr.fork {
        p["head"]["repo"]["full_name"] = json!("forker/Hello-World");
        p["head"]["repo"]["fork"] = json!(true);
        p["head"]["repo"]["owner"]["login"] = json!("forker");
    } else {
        p["head"]["repo"]["full_name"] = json!(OWNER_REPO);
        p["head"]["repo"]["fork"] = json!(false);
    }
    p
}

fn pr_event(pr: &Pr) -> Event {
    let mut payload = common::github_fixture("pull_request__opened.payload.json");
    payload["number"] = json!(pr.number);
    payload["pull_request"] = pull_json(pr);
    Event {
        name: "pull_request".into(),
        payload,
        git_ref: format!("refs/pull/{}/merge", pr.number),
        sha: pr.merge.clone(),
        fork: pr.fork,
        check_sha: pr.head.clone(),
    }
}

fn comment_event(pr: &Pr, main: &str, login: &str, body: &str, id: u64) -> Event {
    let mut payload = common::github_fixture("issue_comment__created.payload.json");
    payload["issue"]["number"] = json!(pr.number);
    payload["issue"]["pull_request"] =
        json!({"url": format!("https://api.github.com/repos/{OWNER_REPO}/pulls/{}", pr.number)});
    payload["comment"]["body"] = json!(body);
    payload["comment"]["id"] = json!(id);
    payload["comment"]["user"] = crate::fake_github::user(login);
    payload["sender"] = crate::fake_github::user(login);
    Event {
        name: "issue_comment".into(),
        payload,
        git_ref: "refs/heads/main".into(),
        sha: main.into(),
        fork: false,
        check_sha: main.into(),
    }
}

fn workflow_run_event(check_run: &RunResult, pr: &Pr, main: &str) -> Event {
    let mut payload = common::github_fixture("workflow_run__completed.with-pull-requests.payload.json");
    let wr = &mut payload["workflow_run"];
    wr["id"] = json!(check_run.id);
    wr["name"] = json!("retrygate check");
    wr["event"] = json!("pull_request");
    wr["head_sha"] = json!(pr.head);
    wr["head_branch"] = json!(pr.branch);
    wr["conclusion"] = json!("success");
    wr["head_repository"]["full_name"] = json!(if pr.fork { "forker/Hello-World" } else { OWNER_REPO });
    // GitHub attaches no pull request to a fork's run.
    wr["pull_requests"] = if pr.fork {
        json!([])
    } else {
        json!([{"number": pr.number, "head": {"sha": pr.head, "ref": pr.branch}, "base": {"sha": pr.base, "ref": "main"}}])
    };
    Event {
        name: "workflow_run".into(),
        payload,
        git_ref: "refs/heads/main".into(),
        sha: main.into(),
        fork: false,
        check_sha: main.into(),
    }
}

/// The gate's own check runs on `sha` (not the runner's job check runs).
fn gate_checks(fake: &FakeGithub, sha: &str) -> Vec<(String, String)> {
    fake.check_runs()
        .into_iter()
        .filter(|r| r.name == "retrygate" && r.head_sha == sha)
        .map(|r| (r.conclusion.unwrap_or_default(), r.summary.unwrap_or_default()))
        .collect()
}

fn latest_comment(fake: &FakeGithub, pr: u64) -> String {
    fake.comments()
        .into_iter()
        .rfind(|c| c.issue == pr && c.login == "github-actions[bot]")
        .map(|c| c.body)
        .unwrap_or_default()
}

fn assert_job(run: &RunResult, job: &str, want: Conclusion) {
    let j = run.job(job);
    assert_eq!(j.conclusion, want, "job {job}:\n{}", j.log);
}

/// What `retrygate scan` finds on the same change with the same config.
fn scan_count(repo: &Repo, pr: &Pr) -> usize {
    let out = std::process::Command::new(BIN)
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", &pr.base, "--head", &pr.head, "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("scan: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    v["findings"].as_array().expect("findings").len()
}

/// The comment as GitHub renders it (cmark-gfm with tables), as text.
fn rendered(md: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("cmark-gfm")
        .args(["-e", "table"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("cmark-gfm is installed");
    child.stdin.take().unwrap().write_all(md.as_bytes()).unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
}

/// A blocked comment: its counts agree with each other and with `scan`,
/// and nothing in it, rendered, is cut short with `…`.
fn assert_comment_agrees_with_scan(comment: &str, scanned: usize) {
    let heading = regex::Regex::new(r"#### Findings \((\d+)\): (\d+) blocking").unwrap();
    let c = heading.captures(comment).unwrap_or_else(|| panic!("no findings heading in\n{comment}"));
    let (total, blocking): (usize, usize) = (c[1].parse().unwrap(), c[2].parse().unwrap());
    let table = &comment[c.get(0).unwrap().end()..];
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .collect();
    assert_eq!((total, rows.len()), (scanned, scanned), "comment vs scan:\n{comment}");
    let errors = rows.iter().filter(|r| r.starts_with("| 🔴")).count();
    assert_eq!(errors, blocking, "{comment}");
    let said = regex::Regex::new(r"\*\*blocking-findings\*\*: (\d+) retry regressions").unwrap();
    let said: usize = said.captures(comment).unwrap_or_else(|| panic!("{comment}"))[1].parse().unwrap();
    assert_eq!(said, blocking, "{comment}");
    let html = rendered(comment);
    assert!(html.contains("<td><strong>blocking-findings</strong>"), "{html}");
    assert!(!html.contains('…'), "a cut text in the rendered comment:\n{html}");
    assert_links_resolve(&html);
}

/// Every link of a rendered comment goes somewhere: an absolute URL on
/// GitHub, never empty, relative or a placeholder.
fn assert_links_resolve(html: &str) {
    let href = regex::Regex::new(r#"href="([^"]*)""#).unwrap();
    let links: Vec<&str> = href.captures_iter(html).map(|c| c.get(1).unwrap().as_str()).collect();
    assert!(!links.is_empty(), "the comment links the run and the docs:\n{html}");
    for l in links {
        assert!(l.starts_with("https://github.com/") && !l.contains("{") && !l.ends_with('/'), "{l}\n{html}");
    }
}

/// The full commit SHA every example pins the Action at
/// (`uses: retrygate/retrygate@SHA`), the same in every file.
fn example_pin() -> String {
    let re = regex::Regex::new(r"uses: retrygate/retrygate@([0-9a-f]{40}) # ").unwrap();
    let mut pins = Vec::new();
    for f in ["retrygate.yml", "retrygate-check.yml", "retrygate-publish.yml", "retrygate-sign-off.yml"] {
        let text = std::fs::read_to_string(crate_path(&format!("examples/workflows/{f}"))).unwrap();
        let uses = text.lines().filter(|l| l.contains("retrygate/retrygate@")).count();
        let found: Vec<String> = re.captures_iter(&text).map(|c| c[1].to_string()).collect();
        assert_eq!(found.len(), uses, "{f}: every `uses: retrygate/retrygate@` is a full SHA pin");
        pins.extend(found);
    }
    pins.dedup();
    assert_eq!(pins.len(), 1, "one pin in every example: {pins:?}");
    pins.remove(0)
}

// ------------------------------------------------------------ retrygate.yml

#[test]
fn the_single_workflow_on_branch_and_fork_prs_sign_offs_and_its_cache() {
    let fake = FakeGithub::start();
    fake.set_permission(MAINTAINER, "write", "write");
    let wf = "examples/workflows/retrygate.yml";
    let repo = adopter_repo(CONFIG, &[wf]);
    let mut world = World::new(&fake, repo.path());
    let wf = repo.join(".github/workflows/retrygate.yml");
    let replay = [("replay-command", REPLAY_COMMAND)];

    // A branch PR with a correct client.
    let pr1 = open_pr(&world, &repo, 1, "codex/http", &[("src/http.rs", HTTP_FILE)], false);
    let run = world.run(&wf, &pr_event(&pr1), &replay).expect("listens to pull_request");
    assert_eq!(run.concurrency.as_deref(), Some("retrygate-1-gate"));
    assert_job(&run, "replay", Conclusion::Success);
    let replay_log = &run.job("replay").log;
    assert!(replay_log.contains(&format!("checked out refs/pull/1/merge at {}", pr1.merge)), "{replay_log}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(world.artifact(run.id, "retrygate-replay").unwrap().join("replay.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(report["verdict"], "pass", "{report}");
    // The replay step ran the base too and compared the head with it.
    assert_eq!(report["comparison"]["base_commit"].as_str().map(str::len), Some(40), "{report}");
    assert_eq!(report["comparison"]["findings"], serde_json::json!([]), "{report}");
    // The replay job holds a token the API refuses writes with, and the
    // gate job the write token; only the gate job's check counts.
    let checks = gate_checks(&fake, &pr1.head);
    assert_eq!(checks.len(), 1, "{checks:?}\n{}", run.job("gate").log);
    // Accepted only because the replay step replays the head (not the merge
    // commit the job checked out) with the base config's scenario (issue 24
    // item 2); before that this was `replay-rejected` on every agent PR.
    assert_eq!(checks[0].0, "success", "{}\n{}", checks[0].1, run.job("gate").log);
    assert_job(&run, "gate", Conclusion::Success);
    // Both jobs built retrygate (no cache yet: the replay job runs the pull
    // request's code, so it restores but never saves); the gate job saved
    // its build under the pull request's merge ref.
    assert_eq!(world.builds(), 2);
    assert!(run.job("gate").log.contains("in refs/pull/1/merge"), "{}", run.job("gate").log);

    // The incident patch on another PR: blocked; that PR cannot see PR 1's
    // cache, so it builds again.
    let pr2 = open_pr(&world, &repo, 2, "codex/faster", &[("src/checkout.rs", common::AGENT_PATCH)], false);
    let run = world.run(&wf, &pr_event(&pr2), &replay).unwrap();
    assert_job(&run, "gate", Conclusion::Failure);
    assert_eq!(world.builds(), 4, "a pull request's cache is its own");
    let checks = gate_checks(&fake, &pr2.head);
    assert_eq!(checks.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["failure"]);
    let comment = latest_comment(&fake, 2);
    assert!(comment.contains("retrygate: blocked"), "{comment}");
    assert_comment_agrees_with_scan(&comment, scan_count(&repo, &pr2));
    // Links a maintainer can follow: the run, the replay report's artifact,
    // and the docs at the commit the workflow pins the Action to.
    let pin = example_pin();
    let run_page = format!("https://github.com/{OWNER_REPO}/actions/runs/{}", run.id);
    for link in [
        format!("[workflow run](<{run_page}>)"),
        format!("The report is the artifact `retrygate-replay` of [the workflow run that made it](<{run_page}#artifacts>)."),
        format!("[how retrygate decides](<https://github.com/retrygate/retrygate/blob/{pin}/docs/gate.md>)"),
        format!("[Who may sign off, and how](<https://github.com/retrygate/retrygate/blob/{pin}/docs/github.md#sign-off-by-comment>)"),
    ] {
        assert!(comment.contains(&link), "lacks {link}:\n{comment}");
    }
    // The comment a maintainer reads on this pull request, as Markdown and
    // as GitHub renders it (`cargo test workflows_e2e -- --nocapture`).
    eprintln!("--- the blocked comment:\n{comment}\n--- rendered:\n{}", rendered(&comment));

    // A comment that is not a sign-off: no job runs, a group of its own.
    let main = repo.rev("main");
    let run = world.run(&wf, &comment_event(&pr2, &main, MAINTAINER, "looks risky", 501), &[]).unwrap();
    assert_eq!(run.concurrency.as_deref(), Some("retrygate-2-501"));
    assert!(run.jobs.iter().all(|j| j.conclusion == Conclusion::Skipped), "{:?}", run.jobs);

    // A sign-off naming a 7-hex prefix is refused: still blocked. It runs
    // on the default branch, so its source build is saved for everyone.
    let short = format!("/retrygate sign-off {}", &pr2.head[..7]);
    let run = world.run(&wf, &comment_event(&pr2, &main, MAINTAINER, &short, 502), &[]).unwrap();
    assert_job(&run, "replay", Conclusion::Skipped);
    let gate_log = &run.job("gate").log;
    assert!(gate_log.contains(&format!("checked out refs/heads/main at {main}")), "{gate_log}");
    assert!(gate_log.contains(&pr2.head), "the refusal shows the full SHA to copy:\n{gate_log}");
    assert_eq!(world.builds(), 5, "neither pull request's cache is visible on the default branch");
    let checks = gate_checks(&fake, &pr2.head);
    assert!(checks.iter().all(|c| c.0 == "failure"), "{checks:?}");

    // The full SHA lifts the block; the build comes from the default
    // branch's cache now.
    let full = format!("/retrygate sign-off {}", pr2.head);
    let run = world.run(&wf, &comment_event(&pr2, &main, MAINTAINER, &full, 503), &[]).unwrap();
    assert_job(&run, "gate", Conclusion::Success);
    assert!(run.job("gate").log.contains("cache restored"), "{}", run.job("gate").log);
    assert_eq!(world.builds(), 5);
    let checks = gate_checks(&fake, &pr2.head);
    assert_eq!(checks.last().map(|c| c.0.as_str()), Some("success"), "{checks:?}");

    // A fork PR: every token is read-only, so nothing is published and the
    // gate job fails; it never passes.
    let pr3 = open_pr(&world, &repo, 3, "codex/http", &[("src/http.rs", HTTP_FILE)], true);
    let before = fake.comments().len();
    let run = world.run(&wf, &pr_event(&pr3), &replay).unwrap();
    assert_job(&run, "replay", Conclusion::Success);
    assert_job(&run, "gate", Conclusion::Failure);
    assert!(
        run.job("gate").log.contains("Resource not accessible by integration"),
        "{}",
        run.job("gate").log
    );
    assert!(gate_checks(&fake, &pr3.head).is_empty());
    assert_eq!(fake.comments().len(), before);
    assert_eq!(world.builds(), 5, "the default branch's cache serves every pull request");
}

// ------------------------------------------------- the fork-safe split

/// retrygate-check.yml on `pull_request`, then retrygate-publish.yml on the
/// `workflow_run` it completes.
fn check_then_publish(world: &mut World, repo: &Repo, pr: &Pr) -> (RunResult, RunResult) {
    check_then_publish_with(world, repo, pr, REPLAY_COMMAND)
}

/// [`check_then_publish`] with `replay_command` as the check workflow's
/// `replay-command`.
fn check_then_publish_with(
    world: &mut World,
    repo: &Repo,
    pr: &Pr,
    replay_command: &str,
) -> (RunResult, RunResult) {
    let check = repo.join(".github/workflows/retrygate-check.yml");
    let publish = repo.join(".github/workflows/retrygate-publish.yml");
    let replay = [("replay-command", replay_command)];
    let run = world.run(&check, &pr_event(pr), &replay).expect("listens to pull_request");
    assert!(world.run(&publish, &pr_event(pr), &[]).is_none(), "publish never runs on pull_request");
    let log = &run.job("check").log;
    assert!(log.contains(&format!("checked out refs/pull/{}/merge at {}", pr.number, pr.merge)), "{log}");
    // It uploads its verdict and report whatever the verdict.
    let artifact =
        world.artifact(run.id, "retrygate-verdict").unwrap_or_else(|| panic!("no artifact:\n{log}"));
    assert!(artifact.join("replay.json").is_file() && artifact.join("verdict.json").is_file(), "{log}");
    let main = repo.rev("main");
    let published =
        world.run(&publish, &workflow_run_event(&run, pr, &main), &[]).expect("listens to workflow_run");
    let log = &published.job("publish").log;
    assert!(log.contains(&format!("checked out refs/heads/main at {main}")), "{log}");
    assert_eq!(published.concurrency.as_deref(), Some(format!("retrygate-publish-{}", pr.head).as_str()));
    (run, published)
}

#[test]
fn the_fork_safe_split_on_branch_and_fork_prs_sign_offs_and_a_merge_queue() {
    let fake = FakeGithub::start();
    fake.set_permission(MAINTAINER, "write", "write");
    let repo = adopter_repo(
        CONFIG,
        &[
            "examples/workflows/retrygate-check.yml",
            "examples/workflows/retrygate-publish.yml",
            "examples/workflows/retrygate-sign-off.yml",
        ],
    );
    let mut world = World::new(&fake, repo.path());
    let sign_off = repo.join(".github/workflows/retrygate-sign-off.yml");

    // A branch PR with a correct client: the check job computes (it may not
    // publish: its token is read-only), the publish run publishes.
    let pr1 = open_pr(&world, &repo, 1, "codex/http", &[("src/http.rs", HTTP_FILE)], false);
    let (check, publish) = check_then_publish(&mut world, &repo, &pr1);
    let checks = gate_checks(&fake, &pr1.head);
    assert_eq!(checks.len(), 1, "{checks:?}\n{}", publish.job("publish").log);
    // Accepted only because the replay names the head, not the merge commit
    // the check job checked out, and runs the base config's scenario (issue
    // 24 item 2).
    assert_eq!(checks[0].0, "success", "{}\n{}", checks[0].1, publish.job("publish").log);
    assert_job(&check, "check", Conclusion::Success);
    assert_job(&publish, "publish", Conclusion::Success);
    // Neither job that builds may share its build with another PR: the check
    // job never saves, the publish job saves on the default branch.
    assert_eq!(world.builds(), 2);

    // The same client from a fork: its own report cannot make it pass.
    let pr2 = open_pr(&world, &repo, 2, "codex/http", &[("src/http.rs", HTTP_FILE)], true);
    let (check, publish) = check_then_publish(&mut world, &repo, &pr2);
    for log in [&check.job("check").log, &publish.job("publish").log] {
        assert!(log.contains("cache restored"), "{log}");
    }
    assert_eq!(world.builds(), 2, "both restored the build the first publish run saved on main");
    let checks = gate_checks(&fake, &pr2.head);
    assert_eq!(checks.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["failure"], "{checks:?}");
    let comment = latest_comment(&fake, 2);
    assert!(comment.contains("reported by the fork's own run"), "{comment}");

    // The incident patch from a branch: blocked, and the comment agrees
    // with `scan`.
    let pr3 = open_pr(&world, &repo, 3, "codex/faster", &[("src/checkout.rs", common::AGENT_PATCH)], false);
    check_then_publish(&mut world, &repo, &pr3);
    let checks = gate_checks(&fake, &pr3.head);
    assert_eq!(checks.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["failure"], "{checks:?}");
    assert_comment_agrees_with_scan(&latest_comment(&fake, 3), scan_count(&repo, &pr3));

    // Sign-offs: a ground 7-hex prefix is refused; the full SHA lifts the
    // block, on a branch PR and on a fork PR alike (the head is fetched
    // from refs/pull/N/head as data).
    let main = repo.rev("main");
    let short = format!("/retrygate sign-off {}", &pr3.head[..7]);
    let run = world.run(&sign_off, &comment_event(&pr3, &main, MAINTAINER, &short, 601), &[]).unwrap();
    assert!(run.job("sign-off").log.contains(&pr3.head), "{}", run.job("sign-off").log);
    assert!(gate_checks(&fake, &pr3.head).iter().all(|c| c.0 == "failure"));
    for (pr, id) in [(&pr3, 602), (&pr2, 603)] {
        let full = format!("/retrygate sign-off {}", pr.head);
        let run = world.run(&sign_off, &comment_event(pr, &main, MAINTAINER, &full, id), &[]).unwrap();
        assert_eq!(run.concurrency, Some(format!("retrygate-{}-gate", pr.number)));
        assert_job(&run, "sign-off", Conclusion::Success);
        let checks = gate_checks(&fake, &pr.head);
        assert_eq!(checks.last().map(|c| c.0.as_str()), Some("success"), "{checks:?}");
    }
    // A comment by someone without write access changes nothing.
    let full = format!("/retrygate sign-off {}", pr3.head);
    let gate_runs = || fake.check_runs().iter().filter(|r| r.name == "retrygate").count();
    let before = gate_runs();
    let run = world.run(&sign_off, &comment_event(&pr3, &main, "drive-by", &full, 604), &[]).unwrap();
    assert_job(&run, "sign-off", Conclusion::Failure);
    let log = &run.job("sign-off").log;
    assert!(log.contains("sign-off by drive-by refused: it needs write permission"), "{log}");
    assert_eq!(gate_runs(), before);
    assert_eq!(gate_checks(&fake, &pr3.head).last().map(|c| c.0.as_str()), Some("success"));

    // The merge queue: the group's commit gets the check, no weaker than
    // the queued pull request's signed-off verdict.
    repo.git(&["checkout", "-q", "--detach", &main]);
    repo.git(&["merge", "-q", "--no-ff", "-m", "Merge pull request #3", &pr3.head]);
    let group = repo.head();
    repo.git(&["checkout", "-q", "main"]);
    let head_ref = format!("refs/heads/gh-readonly-queue/main/pr-3-{main}");
    world.push(repo.path(), &group, &head_ref);
    let mut payload = common::github_fixture("merge_group__checks_requested.payload.json");
    payload["merge_group"]["head_sha"] = json!(group);
    payload["merge_group"]["head_ref"] = json!(head_ref);
    payload["merge_group"]["base_sha"] = json!(main);
    payload["repository"] = common::github_fixture("pull_request__opened.payload.json")["repository"].clone();
    let event = Event {
        name: "merge_group".into(),
        payload,
        git_ref: head_ref.clone(),
        sha: group.clone(),
        fork: false,
        check_sha: group.clone(),
    };
    let run = world.run(&sign_off, &event, &[]).unwrap();
    let log = &run.job("sign-off").log;
    assert!(log.contains(&format!("checked out {head_ref} at {group}")), "{log}");
    assert!(log.contains("--- skipped: Fetch the pull request's head as data"), "{log}");
    let checks = gate_checks(&fake, &group);
    assert_eq!(checks.len(), 1, "{log}");
    assert_eq!(checks[0].0, "success", "{}\n{log}", checks[0].1);
}

// ------------------------------------- .github/workflows/retrygate.yml

#[test]
fn the_dogfood_workflow_runs_the_base_action_from_dot_slash_on_branch_and_fork_prs() {
    let fake = FakeGithub::start();
    fake.set_permission(MAINTAINER, "write", "write");
    // An adopter of the dogfood form: the Action's own files at the root
    // (what `uses: ./` loads), and this repository's policy.
    let repo = Repo::new();
    for f in [
        "action.yml",
        "scripts/install-action.sh",
        "Cargo.toml",
        "Cargo.lock",
        ".github/retrygate.yml",
        ".github/workflows/retrygate.yml",
    ] {
        repo.write(f, std::fs::read(crate_path(f)).unwrap());
    }
    // A listed archive: the install step then reaches its download, where a
    // local action (empty github.action_repository) has none.
    let version = regex::Regex::new(r#"(?m)^version = "(.*)""#)
        .unwrap()
        .captures(&std::fs::read_to_string(crate_path("Cargo.toml")).unwrap())
        .unwrap()[1]
        .to_string();
    repo.write(
        "dist/sha256sums.txt",
        format!("{}  retrygate-v{version}-x86_64-unknown-linux-musl.tar.gz\n", "0".repeat(64)),
    );
    repo.write("src/checkout.rs", common::BEFORE);
    repo.commit("base");
    let mut world = World::new(&fake, repo.path());
    let wf = repo.join(".github/workflows/retrygate.yml");

    // A person's branch PR: the job checks out the base, fetches the head
    // as data, and publishes a pass.
    let pr1 = open_pr(&world, &repo, 1, "fix/readme", &[("README.md", "docs\n")], false);
    let run = world.run(&wf, &pr_event(&pr1), &[]).unwrap();
    let log = &run.job("gate").log;
    assert_job(&run, "gate", Conclusion::Success);
    assert!(
        log.contains(&format!("checked out {} at {}", pr1.base, pr1.base)),
        "the base, never the PR:\n{log}"
    );
    assert!(
        log.contains("the action has no repository to download"),
        "action_repository is empty for ./:\n{log}"
    );
    assert_eq!(gate_checks(&fake, &pr1.head).iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["success"]);
    assert_eq!(fake.check_runs().iter().filter(|r| r.name == "gate (dogfood)").count(), 1);

    // An agent's patch from a branch: blocked.
    let pr2 = open_pr(&world, &repo, 2, "codex/faster", &[("src/checkout.rs", common::AGENT_PATCH)], false);
    let run = world.run(&wf, &pr_event(&pr2), &[]).unwrap();
    assert_job(&run, "gate", Conclusion::Failure);
    assert_eq!(gate_checks(&fake, &pr2.head).iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["failure"]);
    let comment = latest_comment(&fake, 2);
    assert_comment_agrees_with_scan(&comment, scan_count(&repo, &pr2));
    // `uses: ./` has no action repository or ref: the docs of this
    // version's release tag in retrygate's home repository.
    let docs = format!("(<https://github.com/retrygate/retrygate/blob/v{version}/docs/gate.md>)");
    assert!(comment.contains(&docs), "lacks {docs}:\n{comment}");
    // Signed off with the full SHA, on the default branch.
    let main = repo.rev("main");
    let short = format!("/retrygate sign-off {}", &pr2.head[..7]);
    world.run(&wf, &comment_event(&pr2, &main, MAINTAINER, &short, 701), &[]).unwrap();
    assert!(gate_checks(&fake, &pr2.head).iter().all(|c| c.0 == "failure"));
    let full = format!("/retrygate sign-off {}", pr2.head);
    let run = world.run(&wf, &comment_event(&pr2, &main, MAINTAINER, &full, 702), &[]).unwrap();
    assert_job(&run, "gate", Conclusion::Success);
    assert_eq!(gate_checks(&fake, &pr2.head).last().map(|c| c.0.as_str()), Some("success"));

    // The same patch from a fork: compute only, no check, the job fails.
    let pr3 = open_pr(&world, &repo, 3, "codex/faster", &[("src/checkout.rs", common::AGENT_PATCH)], true);
    let run = world.run(&wf, &pr_event(&pr3), &[]).unwrap();
    assert_job(&run, "gate", Conclusion::Failure);
    assert!(gate_checks(&fake, &pr3.head).is_empty());
    // A harmless fork PR computes a pass; it is still not published.
    let pr4 = open_pr(&world, &repo, 4, "fix/typo", &[("README.md", "typo\n")], true);
    let run = world.run(&wf, &pr_event(&pr4), &[]).unwrap();
    assert_job(&run, "gate", Conclusion::Success);
    assert!(run.job("gate").log.contains("--- skipped: Cache the source build"), "compute mode never saves");
    assert!(gate_checks(&fake, &pr4.head).is_empty());
}

/// The fork-safe split from forks, with a base config that trusts a fork's
/// own replay report (`replay.trust_fork_reports: true`): a correct client's
/// replay is accepted; a fork that swaps the replay script for a polite stub
/// is replayed with the base's script and refused; the incident patch's
/// comment agrees with `scan` and reads whole; a ground 7-hex sign-off is
/// refused and the full SHA lifts the block.
#[test]
fn the_fork_safe_split_from_forks_a_trusting_base_accepts_a_correct_replay_only() {
    let fake = FakeGithub::start();
    fake.set_permission(MAINTAINER, "write", "write");
    let repo = adopter_repo(
        "replay: { scenario: default, clients: 4, trust_fork_reports: true }\n",
        &[
            "examples/workflows/retrygate-check.yml",
            "examples/workflows/retrygate-publish.yml",
            "examples/workflows/retrygate-sign-off.yml",
        ],
    );
    // The adopter's replay drives its client through a script
    // (`client-profile` stands in for the client's code).
    repo.write(
        "scripts/replay.sh",
        "exec \"$RETRYGATE\" replay-client --profile \"$(cat client-profile)\"\n",
    );
    repo.write("client-profile", "reference\n");
    repo.commit("the replay script");
    let mut world = World::new(&fake, repo.path());
    let script = "bash scripts/replay.sh";

    // A correct client from a fork: accepted.
    let pr1 = open_pr(&world, &repo, 1, "codex/http", &[("src/http.rs", HTTP_FILE)], true);
    let (check, publish) = check_then_publish_with(&mut world, &repo, &pr1, script);
    assert_job(&check, "check", Conclusion::Success);
    let checks = gate_checks(&fake, &pr1.head);
    assert_eq!(
        checks.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["success"],
        "{checks:?}\n{}",
        publish.job("publish").log
    );
    let comment = latest_comment(&fake, 1);
    assert!(comment.contains("reported by the fork's own run"), "{comment}");
    assert!(
        comment.contains(&format!("The report is the artifact `retrygate-verdict` of [the workflow run that made it](<https://github.com/{OWNER_REPO}/actions/runs/{}#artifacts>).", check.id)),
        "the publish run links the check run's artifact:\n{comment}"
    );

    // The stub swap from a fork: the base's script runs the storming client.
    let stub = "exec \"$RETRYGATE\" replay-client --profile reference\n";
    let pr2 = open_pr(
        &world,
        &repo,
        2,
        "codex/faster-http",
        &[("src/http.rs", HTTP_FILE), ("client-profile", "storm\n"), ("scripts/replay.sh", stub)],
        true,
    );
    let (check, _) = check_then_publish_with(&mut world, &repo, &pr2, script);
    assert!(
        check.job("check").log.contains("scripts/replay.sh is the base's copy"),
        "{}",
        check.job("check").log
    );
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(world.artifact(check.id, "retrygate-verdict").unwrap().join("replay.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(report["verdict"], "fail", "the base's script ran the storming client: {report}");
    assert_eq!(gate_checks(&fake, &pr2.head).iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["failure"]);
    assert!(latest_comment(&fake, 2).contains("**replay-failed**"), "{}", latest_comment(&fake, 2));

    // The incident patch from a fork: blocked; its comment agrees with scan.
    let pr3 = open_pr(&world, &repo, 3, "codex/faster", &[("src/checkout.rs", common::AGENT_PATCH)], true);
    check_then_publish_with(&mut world, &repo, &pr3, script);
    assert_eq!(gate_checks(&fake, &pr3.head).iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["failure"]);
    assert_comment_agrees_with_scan(&latest_comment(&fake, 3), scan_count(&repo, &pr3));

    // A ground prefix is refused on a fork's pull request; the full SHA lifts.
    let sign_off = repo.join(".github/workflows/retrygate-sign-off.yml");
    let main = repo.rev("main");
    let short = format!("/retrygate sign-off {}", &pr3.head[..7]);
    let run = world.run(&sign_off, &comment_event(&pr3, &main, MAINTAINER, &short, 801), &[]).unwrap();
    assert!(
        run.job("sign-off").log.contains(&pr3.head),
        "the full SHA to copy:\n{}",
        run.job("sign-off").log
    );
    assert!(gate_checks(&fake, &pr3.head).iter().all(|c| c.0 == "failure"));
    let full = format!("/retrygate sign-off {}", pr3.head);
    let run = world.run(&sign_off, &comment_event(&pr3, &main, MAINTAINER, &full, 802), &[]).unwrap();
    assert_job(&run, "sign-off", Conclusion::Success);
    assert_eq!(gate_checks(&fake, &pr3.head).last().map(|c| c.0.as_str()), Some("success"));
}

// ------------------------------------------------------------ the runner

#[test]
fn the_runner_gives_each_job_the_token_its_permissions_allow_and_refuses_unknown_actions() {
    let fake = FakeGithub::start();
    let repo = adopter_repo(CONFIG, &[]);
    let mut world = World::new(&fake, repo.path());
    let pr = open_pr(&world, &repo, 1, "fix/a", &[("README.txt", "b\n")], false);
    let post = "curl -s -o /dev/null -w 'HTTP %{http_code}\\n' -X POST -H \"Authorization: token $T\" \"$GITHUB_API_URL/repos/$GITHUB_REPOSITORY/check-runs\" -d '{\"name\":\"x\",\"head_sha\":\"'$GITHUB_SHA'\"}'";
    // Outside the repository: a commit there would take it along.
    let wf = world.dir.path().join("wf.yml");
    std::fs::write(
        &wf,
        format!(
            "on: {{ pull_request: {{ types: [opened] }} }}\npermissions: {{}}\njobs:\n  none:\n    steps:\n      - env: {{ T: '${{{{ github.token }}}}' }}\n        run: {post:?}\n  writer:\n    permissions: {{ checks: write }}\n    steps:\n      - env: {{ T: '${{{{ github.token }}}}' }}\n        run: {post:?}\n  unknown:\n    needs: [none, writer]\n    steps:\n      - uses: some/action@v1\n      - run: echo never\n  after:\n    needs: unknown\n    steps:\n      - run: echo never\n  cleanup:\n    needs: unknown\n    if: always()\n    steps:\n      - run: echo cleaned\n"
        ),
    )
    .unwrap();
    let run = world.run(&wf, &pr_event(&pr), &[]).unwrap();
    assert!(run.job("none").log.contains("HTTP 403"), "{}", run.job("none").log);
    assert!(run.job("writer").log.contains("HTTP 201"), "{}", run.job("writer").log);
    assert_job(&run, "unknown", Conclusion::Failure);
    assert!(
        run.job("unknown").log.contains("no emulation for `uses: some/action`"),
        "{}",
        run.job("unknown").log
    );
    assert!(run.job("unknown").log.contains("--- skipped: echo never"), "{}", run.job("unknown").log);
    assert_job(&run, "after", Conclusion::Skipped);
    assert!(run.job("cleanup").log.contains("cleaned"), "{}", run.job("cleanup").log);
    // From a fork, even `checks: write` is read-only.
    let fork = open_pr(&world, &repo, 2, "fix/b", &[("README.txt", "c\n")], true);
    let run = world.run(&wf, &pr_event(&fork), &[]).unwrap();
    assert!(run.job("writer").log.contains("HTTP 403"), "{}", run.job("writer").log);
    // Another activity type, another event: the workflow does not run.
    let mut sync = pr_event(&pr);
    sync.payload["action"] = json!("synchronize");
    assert!(world.run(&wf, &sync, &[]).is_none());
}

#[test]
fn a_pull_request_that_swaps_the_replay_script_for_a_stub_is_replayed_with_the_bases_script() {
    let fake = FakeGithub::start();
    // The adopter's replay is a script in the repository that drives the
    // client (`client-profile` stands in for the client's code).
    let repo = adopter_repo("replay: { clients: 4 }\n", &["examples/workflows/retrygate.yml"]);
    repo.write(
        "scripts/replay.sh",
        "exec \"$RETRYGATE\" replay-client --profile \"$(cat client-profile)\"\n",
    );
    repo.write("client-profile", "reference\n");
    repo.commit("the replay script");
    let mut world = World::new(&fake, repo.path());
    let wf = repo.join(".github/workflows/retrygate.yml");
    // The agent makes the client storm, and the script a polite stub that
    // never runs it.
    let stub = "exec \"$RETRYGATE\" replay-client --profile reference\n";
    let pr = open_pr(
        &world,
        &repo,
        1,
        "codex/http",
        &[("src/http.rs", HTTP_FILE), ("client-profile", "storm\n"), ("scripts/replay.sh", stub)],
        false,
    );
    let run = world.run(&wf, &pr_event(&pr), &[("replay-command", "bash scripts/replay.sh")]).unwrap();
    let log = &run.job("replay").log;
    assert!(log.contains("scripts/replay.sh is the base's copy"), "{log}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(world.artifact(run.id, "retrygate-replay").unwrap().join("replay.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(report["verdict"], "fail", "the base's script ran the storming client: {report}");
    assert_job(&run, "gate", Conclusion::Failure);
    let comment = latest_comment(&fake, 1);
    assert!(comment.contains("**replay-failed**"), "{comment}");
    // Not flagged `gate-config-changed`: the gate job knows the files named
    // by the base config's `replay.command`, not the workflow's
    // `replay-command` input, so the edit to scripts/replay.sh goes
    // unflagged here (the base's copy is still what ran).
    assert_eq!(gate_checks(&fake, &pr.head).iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["failure"]);
}

/// Issue 24: a replay counts as evidence only if it exercised a retry. The
/// client gives up at its first 429 (a POST it never re-sends without a
/// key): its replay passes every check, and the gate still blocks, saying
/// plainly that no client retried and what that means.
#[test]
fn a_replay_in_which_no_client_retried_blocks_with_a_plain_reason() {
    let fake = FakeGithub::start();
    let repo = adopter_repo(CONFIG, &["examples/workflows/retrygate.yml"]);
    let mut world = World::new(&fake, repo.path());
    let wf = repo.join(".github/workflows/retrygate.yml");
    let gives_up = "\"$RETRYGATE\" replay-client --profile reference --method POST --no-idempotency-key";
    let pr = open_pr(&world, &repo, 1, "codex/http", &[("src/http.rs", HTTP_FILE)], false);
    let run = world.run(&wf, &pr_event(&pr), &[("replay-command", gives_up)]).unwrap();
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(world.artifact(run.id, "retrygate-replay").unwrap().join("replay.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(report["verdict"], "pass", "giving up is safe for the dependency: {report}");
    assert_job(&run, "gate", Conclusion::Failure);
    assert_eq!(gate_checks(&fake, &pr.head).iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["failure"]);
    let comment = latest_comment(&fake, 1);
    for part in [
        "| ⛔ | **replay-no-retry**: no client retried in the 429 replay, so the retry code this change touches never ran and the replay shows nothing about it |",
        "#### 429 replay: ⛔ no client retried",
        "> **No client retried**: the one client stopped at the first failed answer. A client that gives up did not storm the dependency, but the retry code under review never ran, so this replay shows nothing about it",
    ] {
        assert!(comment.contains(part), "lacks {part:?}:\n{comment}");
    }
    let html = rendered(&comment);
    assert!(!html.contains('…'), "{html}");
    assert_links_resolve(&html);
    // docs/github.md shows this comment ("What a maintainer sees").
    eprintln!("--- the no-retry comment:\n{comment}");
}

/// The examples name the Action by one full commit SHA of retrygate's home
/// repository (there is no release tag yet), the agents install retrygate
/// from that same commit, and docs/github.md shows it; `scripts/release.sh
/// pin` rewrites every one of them, and refuses anything but a full SHA.
#[test]
fn every_example_pins_one_full_sha_and_release_sh_pin_moves_them_together() {
    let pin = example_pin();
    for f in [
        "examples/agents/claude-code/.github/workflows/claude.yml",
        "examples/agents/copilot/.github/workflows/copilot-setup-steps.yml",
        "examples/agents/generic/.github/workflows/agent-job.yml",
    ] {
        let text = std::fs::read_to_string(crate_path(f)).unwrap();
        assert!(text.contains(&format!("RETRYGATE_REV: {pin}\n")), "{f} installs another commit");
    }
    let docs = std::fs::read_to_string(crate_path("docs/github.md")).unwrap();
    assert!(docs.contains(&format!("uses: retrygate/retrygate@{pin}")), "docs/github.md shows another pin");
    assert!(!docs.contains("retrygate/retrygate@v0 "), "no tag that does not exist");

    // The script, on a copy of the examples.
    let dir = tempfile::tempdir().unwrap();
    let copy = |rel: &str| {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(crate_path(rel), &to).unwrap();
    };
    copy("scripts/release.sh");
    copy("Cargo.toml");
    for f in ["retrygate.yml", "retrygate-check.yml", "retrygate-publish.yml", "retrygate-sign-off.yml"] {
        copy(&format!("examples/workflows/{f}"));
    }
    copy("examples/agents/generic/.github/workflows/agent-job.yml");
    let pin_with = |sha: &str, label: &str| {
        std::process::Command::new("bash")
            .arg(dir.path().join("scripts/release.sh"))
            .args(["pin", sha, label])
            .output()
            .unwrap()
    };
    let new = "0123456789abcdef0123456789abcdef01234567";
    let out = pin_with(new, "v0.2.0");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let wf = std::fs::read_to_string(dir.path().join("examples/workflows/retrygate.yml")).unwrap();
    assert_eq!(wf.matches(&format!("uses: retrygate/retrygate@{new} # v0.2.0\n")).count(), 3, "{wf}");
    assert!(!wf.contains(&pin), "{wf}");
    let agent =
        std::fs::read_to_string(dir.path().join("examples/agents/generic/.github/workflows/agent-job.yml"))
            .unwrap();
    assert!(agent.contains(&format!("RETRYGATE_REV: {new}\n")), "{agent}");
    // A tag or a short SHA is refused, and nothing changes.
    let out = pin_with("v0.2.0", "v0.2.0");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("pin needs a full 40-hex commit SHA, got 'v0.2.0'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = pin_with(&new[..7], "x");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(dir.path().join("examples/workflows/retrygate.yml")).unwrap(), wf);
}

/// A push to the default branch runs only the warm-up job (`mode: install`),
/// which saves the source build where every pull request can restore it: the
/// next pull request, from a branch or a fork, builds nothing.
#[test]
fn the_warm_up_on_the_default_branch_serves_every_new_pull_request() {
    for wf in ["examples/workflows/retrygate.yml", "examples/workflows/retrygate-check.yml"] {
        let fake = FakeGithub::start();
        let repo = adopter_repo(CONFIG, &[wf]);
        let mut world = World::new(&fake, repo.path());
        let path = repo.join(&format!(".github/workflows/{}", wf.rsplit('/').next().unwrap()));
        let main = repo.rev("main");
        let mut payload =
            json!({"ref": "refs/heads/main", "after": main, "repository": {"full_name": OWNER_REPO}});
        payload["sender"] = crate::fake_github::user(MAINTAINER);
        let push = Event {
            name: "push".into(),
            payload,
            git_ref: "refs/heads/main".into(),
            sha: main.clone(),
            fork: false,
            check_sha: main.clone(),
        };
        let run = world.run(&path, &push, &[]).unwrap_or_else(|| panic!("{wf} listens to push"));
        assert_job(&run, "warm-up", Conclusion::Success);
        for job in &run.jobs {
            if job.id != "warm-up" {
                assert_eq!(job.conclusion, Conclusion::Skipped, "{wf}: {} runs on the push", job.id);
            }
        }
        let log = &run.job("warm-up").log;
        assert!(!log.contains("--- skipped: Cache the source build"), "{wf}: the warm-up saves: {log}");
        assert!(log.contains("--- skipped: Run retrygate"), "{wf}: install mode runs no gate: {log}");
        assert_eq!(world.builds(), 1, "{wf}");
        assert!(fake.count("POST", "/check-runs") == 0, "{wf}: the warm-up publishes nothing");

        // New pull requests, from a branch and from a fork, restore it.
        let replay = [("replay-command", REPLAY_COMMAND)];
        let pr = open_pr(&world, &repo, 1, "codex/http", &[("src/http.rs", HTTP_FILE)], false);
        world.run(&path, &pr_event(&pr), &replay).expect("listens to pull_request");
        let fork = open_pr(&world, &repo, 2, "feature", &[("src/http.rs", HTTP_FILE)], true);
        world.run(&path, &pr_event(&fork), &replay).expect("listens to pull_request");
        assert_eq!(world.builds(), 1, "{wf}: no pull request built retrygate again");
    }
}
