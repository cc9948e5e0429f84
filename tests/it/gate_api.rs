//! The library entry point the GitHub layer calls, `gate::check`, on real
//! repositories: the outcome's JSON and Markdown agree with the verdict, line
//! links use the caller's link base, and `allow_replay_command: false` never
//! runs the base config's command.

use crate::common;

use common::Repo;
use retrygate::gate::{check, CheckInput};
use retrygate::printer::Verdict;

fn incident(config: &str) -> Repo {
    let repo = Repo::new();
    repo.write("src/checkout.rs", common::BEFORE);
    repo.write(".github/retrygate.yml", config);
    repo.commit("base");
    repo.branch("codex/faster");
    repo.write("src/checkout.rs", common::AGENT_PATCH);
    repo.commit("faster");
    repo
}

#[test]
fn the_outcome_carries_the_same_verdict_in_json_and_markdown_with_line_links() {
    let repo = incident("require: { ledger: true, replay: false }\n");
    let head = repo.head();
    let link = format!("https://github.com/acme/shop/blob/{head}");
    let input =
        CheckInput { link_base: Some(link.clone()), ..CheckInput::new(repo.path(), "main", "codex/faster") };
    let out = check(&input).unwrap();
    assert_eq!(out.verdict, Verdict::Block);
    assert_eq!(out.json["verdict"], "block");
    assert_eq!(out.json["facts"]["head"], head.as_str());
    assert_eq!(out.json["evidence"]["replay"], serde_json::Value::Null, "require.replay is off");
    assert!(out.markdown.starts_with("### ❌ retrygate: blocked"));
    assert!(out.markdown.contains(&format!("]({link}/src/checkout.rs#L17)")), "{}", out.markdown);
    assert!(out.markdown.contains(&format!("]({link}/src/checkout.rs#L23-L29)")), "{}", out.markdown);
    assert!(out.markdown.contains(&format!("/retrygate sign-off {head}")), "{}", out.markdown);
}

#[test]
fn a_job_that_may_not_run_code_counts_the_replay_as_not_run() {
    let repo = incident("replay: { command: 'touch ran-it' }\n");
    let input =
        CheckInput { allow_replay_command: false, ..CheckInput::new(repo.path(), "main", "codex/faster") };
    let out = check(&input).unwrap();
    assert_eq!(out.json["evidence"]["replay"]["status"], "not-run");
    let reasons: Vec<&str> = out.gate.reasons.iter().map(|r| r.code.as_str()).collect();
    assert!(reasons.contains(&"replay-not-run"), "{reasons:?}");
    assert!(!repo.join("ran-it").exists(), "the command must not have run");
}

#[test]
fn errors_are_errors_not_verdicts() {
    let repo = incident("mode: strict\n");
    let err = check(&CheckInput::new(repo.path(), "main", "codex/faster")).unwrap_err();
    assert!(
        format!("{err:#}").contains(".github/retrygate.yml:1: mode: unknown variant `strict`"),
        "{err:#}"
    );
    let nowhere = tempfile::tempdir().unwrap();
    let err = check(&CheckInput::new(nowhere.path(), "main", "HEAD")).unwrap_err();
    assert!(format!("{err:#}").contains("is not a git repository"), "{err:#}");
}
