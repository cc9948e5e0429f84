//! The agent setups in `examples/agents/` produce what the gate looks for:
//! the hook that writes `ledger.path`, an upload of that file as the
//! artifact `ledger.artifact` (hidden files included: the ledger's name
//! starts with a dot), every action pinned by commit SHA, and retrygate
//! installed where the agent runs. (zizmor checks them too; see
//! examples/agents/README.md.)

use retrygate::config::Config;
use serde_yaml::Value;

const WORKFLOWS: &[&str] = &[
    "examples/agents/claude-code/.github/workflows/claude.yml",
    "examples/agents/copilot/.github/workflows/copilot-setup-steps.yml",
    "examples/agents/generic/.github/workflows/agent-job.yml",
];

fn read(rel: &str) -> String {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn steps(workflow: &Value) -> Vec<Value> {
    let jobs = workflow["jobs"].as_mapping().expect("jobs");
    jobs.values().flat_map(|j| j["steps"].as_sequence().cloned().unwrap_or_default()).collect()
}

#[test]
fn every_action_is_pinned_by_a_commit_sha() {
    for rel in WORKFLOWS {
        let w: Value = serde_yaml::from_str(&read(rel)).unwrap();
        for step in steps(&w) {
            let Some(uses) = step["uses"].as_str() else { continue };
            let (_, rev) = uses.split_once('@').unwrap_or_else(|| panic!("{rel}: {uses} has no ref"));
            assert!(
                rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()),
                "{rel}: {uses} is not pinned by SHA"
            );
        }
    }
}

#[test]
fn the_uploads_carry_ledger_path_as_ledger_artifact() {
    let defaults = Config::default();
    for rel in [WORKFLOWS[0], WORKFLOWS[2]] {
        let w: Value = serde_yaml::from_str(&read(rel)).unwrap();
        let all = steps(&w);
        let upload = all
            .iter()
            .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/upload-artifact@")))
            .unwrap_or_else(|| panic!("{rel}: no upload-artifact step"));
        assert_eq!(upload["with"]["name"].as_str(), Some(defaults.ledger.artifact.as_str()), "{rel}");
        assert_eq!(upload["with"]["path"].as_str(), Some(defaults.ledger.path.as_str()), "{rel}");
        assert_eq!(
            upload["with"]["include-hidden-files"],
            Value::Bool(true),
            "{rel}: the ledger is a dotfile"
        );
        assert!(all
            .iter()
            .any(|s| s["run"].as_str().is_some_and(|r| r.contains("cargo install --locked --git https://github.com/retrygate/retrygate --rev \"$RETRYGATE_REV\" retrygate"))));
    }
    // The generic job uploads before it pushes, so the check of the push finds it.
    let w: Value = serde_yaml::from_str(&read(WORKFLOWS[2])).unwrap();
    let names: Vec<String> =
        steps(&w).iter().filter_map(|s| s["name"].as_str().map(str::to_string)).collect();
    let upload = names.iter().position(|n| n.starts_with("Upload")).unwrap();
    let push = names.iter().position(|n| n.contains("push")).unwrap();
    assert!(upload < push, "{names:?}");
}

#[test]
fn the_claude_settings_call_the_ledger_hook_around_every_edit() {
    let v: serde_json::Value =
        serde_json::from_str(&read("examples/agents/claude-code/.claude/settings.json")).unwrap();
    for (event, tools) in [
        ("PreToolUse", "Edit|Write|MultiEdit|NotebookEdit"),
        ("PostToolUse", "Edit|Write|MultiEdit|NotebookEdit|Bash"),
    ] {
        let entry = &v["hooks"][event][0];
        assert_eq!(entry["matcher"], tools, "{event}");
        assert_eq!(entry["hooks"][0]["command"], "retrygate ledger hook claude", "{event}");
    }
}

#[test]
fn copilot_runs_the_setup_job_by_its_fixed_name_and_installs_retrygate() {
    let w: Value = serde_yaml::from_str(&read(WORKFLOWS[1])).unwrap();
    let job = &w["jobs"]["copilot-setup-steps"];
    assert!(job.is_mapping(), "Copilot runs only the job named copilot-setup-steps");
    let runs: Vec<&str> =
        job["steps"].as_sequence().unwrap().iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(runs.iter().any(|r| r.contains("cargo install --locked --git https://github.com/retrygate/retrygate --rev \"$RETRYGATE_REV\" retrygate")), "{runs:?}");
}
