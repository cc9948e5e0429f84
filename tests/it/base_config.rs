//! The base commit's `.github/retrygate.yml` is read by one function for both
//! the gate (`retrygate check`) and the sign-off by comment
//! (`retrygate github` on `issue_comment`): a bad config is refused by both
//! with the same one-line message, naming the file at the base commit and
//! saying where to fix it. Real git repositories; the sign-off runs against
//! the fake GitHub on a loopback port.

use crate::common;
use crate::fake_github;

use std::time::Duration;

use common::Repo;
use fake_github::{FakeGithub, ACTIONS_TOKEN, OWNER_REPO};
use retrygate::gate::{check, CheckInput};
use retrygate::github::{check_gate, ActionEnv, ActionMode};
use serde_json::json;

/// A repository whose only commit holds `config` as `.github/retrygate.yml`.
fn base_with(config: &[u8]) -> (Repo, String) {
    let repo = Repo::new();
    repo.write("README.md", "shop\n");
    repo.write(".github/retrygate.yml", config);
    let base = repo.commit("base");
    (repo, base)
}

/// Runs the sign-off flow for a comment saying `body` on a pull request
/// whose base is `base`; returns its result and the job summary.
fn sign_off(repo: &Repo, base: &str, body: &str) -> (anyhow::Result<()>, String) {
    let fake = FakeGithub::start();
    fake.add_pull(5, "ec26c3e57ca3a959ca5aad62de7213c562f8c821", base);
    fake.set_permission("maintainer", "write", "write");
    let mut event = common::github_fixture("issue_comment_edited_webhook_event.json");
    event["action"] = json!("created");
    event["comment"]["body"] = json!(body);
    event["comment"]["user"] = fake_github::user("maintainer");
    let dir = tempfile::tempdir().unwrap();
    let event_path = dir.path().join("event.json");
    std::fs::write(&event_path, event.to_string()).unwrap();
    let env = ActionEnv {
        event_name: "issue_comment".into(),
        event_path,
        repository: OWNER_REPO.into(),
        api_url: fake.url.clone(),
        graphql_url: None,
        token: Some(ACTIONS_TOKEN.into()),
        workspace: repo.path().to_path_buf(),
        step_summary: Some(dir.path().join("summary.md")),
        output: Some(dir.path().join("output.txt")),
        run_url: None,
        link_base: None,
        links: Default::default(),
        mode: ActionMode::Full,
        verdict_file: dir.path().join("verdict/verdict.json"),
        sarif: None,
        bot_login: None,
        replay_report: None,
        write_interval: Duration::ZERO,
        // Unknown writes are looked for again after 50 ms, not 3 s.
        timing: retrygate::github::Timing { settle: Some(Duration::from_millis(50)), ..Default::default() },
    };
    let result = retrygate::github::run(&env, &check_gate).map(|_| ());
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap_or_default();
    (result, summary)
}

/// The gate's error and the sign-off's error for the same bad base config.
fn both_refuse(config: &[u8]) -> (String, String, String) {
    let (repo, base) = base_with(config);
    let gate = check(&CheckInput::new(repo.path(), &base, &base)).expect_err("the gate must refuse");
    let (signed, _) = sign_off(&repo, &base, "/retrygate sign-off ec26c3e");
    let signed = signed.expect_err("the sign-off must refuse");
    (format!("{gate:#}"), format!("{signed:#}"), base)
}

const WHERE_TO_FIX: &str =
    "; the gate reads its config from the base commit, so fix it there (a pull request cannot change its own gate)";

#[test]
fn an_oversized_base_config_is_refused_by_gate_and_sign_off_alike() {
    let (gate, signed, base) = both_refuse(&vec![b' '; (1 << 20) + 1]);
    assert_eq!(gate, signed);
    let expected = format!(
        "{}:.github/retrygate.yml: the file is 1048577 bytes, over the 1024 KiB limit; a retrygate config is a few hundred bytes{WHERE_TO_FIX}",
        &base[..7]
    );
    assert_eq!(gate, expected);
}

#[test]
fn a_malformed_base_config_is_refused_by_gate_and_sign_off_alike() {
    let (gate, signed, base) = both_refuse(b"mode: enforce\nsign_off: { comand: /lgtm }\n");
    assert_eq!(gate, signed);
    let at = format!("{}:.github/retrygate.yml:2: ", &base[..7]);
    assert!(gate.starts_with(&at), "{gate}");
    assert!(gate.contains("unknown field `comand`") && gate.ends_with(WHERE_TO_FIX), "{gate}");
}

#[test]
fn a_base_config_that_is_not_utf8_is_refused_by_gate_and_sign_off_alike() {
    let (gate, signed, base) = both_refuse(b"mode: enforce\n# \xff\xfe\n");
    assert_eq!(gate, signed);
    assert_eq!(gate, format!("{}:.github/retrygate.yml: not UTF-8 text (byte 16){WHERE_TO_FIX}", &base[..7]));
}

#[test]
fn a_good_base_config_sets_the_sign_off_command_and_the_gate_reads_it_too() {
    let (repo, base) = base_with(b"sign_off: { command: /lgtm }\nmode: advisory\n");
    let (result, summary) = sign_off(&repo, &base, "/retrygate sign-off ec26c3e");
    result.expect("a good config is no error");
    assert!(summary.contains("is not a `/lgtm` command"), "{summary}");
    let outcome = check(&CheckInput::new(repo.path(), &base, &base)).expect("a good config decides");
    assert_eq!(
        outcome.gate.facts.as_ref().unwrap().config_source,
        format!("{}:.github/retrygate.yml", &base[..7])
    );
}

#[test]
fn no_base_config_means_the_defaults_for_both() {
    let repo = Repo::new();
    repo.write("README.md", "shop\n");
    let base = repo.commit("base");
    let (result, summary) = sign_off(&repo, &base, "/lgtm");
    result.expect("no config is no error");
    assert!(summary.contains("is not a `/retrygate sign-off` command"), "{summary}");
    let outcome = check(&CheckInput::new(repo.path(), &base, &base)).expect("defaults decide");
    assert_eq!(
        outcome.gate.facts.as_ref().unwrap().config_source,
        format!("defaults (no .github/retrygate.yml at base {})", &base[..7])
    );
}
