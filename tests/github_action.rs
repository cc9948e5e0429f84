//! The shipped `action.yml` and `examples/workflows/` agree with what
//! `retrygate github` expects: the inputs and outputs the docs promise, the
//! permissions each job needs (and no more for the job that runs PR code),
//! and the publisher listening to the checker by its name.

use serde_yaml::Value;

fn load(rel: &str) -> Value {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> =
        v.as_mapping().unwrap().keys().map(|k| k.as_str().unwrap().to_string()).collect();
    k.sort();
    k
}

#[test]
fn the_action_has_the_documented_inputs_and_outputs() {
    let a = load("action.yml");
    assert_eq!(a["runs"]["using"], "composite");
    assert_eq!(
        keys(&a["inputs"]),
        ["bot-login", "config", "mode", "replay-command", "sarif", "token", "working-directory"]
    );
    assert_eq!(keys(&a["outputs"]), ["findings", "verdict"]);
    assert_eq!(a["inputs"]["token"]["default"], "${{ github.token }}");
    let steps = a["runs"]["steps"].as_sequence().unwrap();
    let install = steps[0]["run"].as_str().unwrap();
    assert!(install.contains("sha256") && install.contains("cargo install --locked"), "{install}");
    // Inputs reach the script through the environment, never spliced into it.
    let run = steps.iter().find(|s| s["id"] == "gate").unwrap()["run"].as_str().unwrap();
    assert!(!run.contains("${{"), "{run}");
}

fn permissions(workflow: &Value) -> Vec<(String, String)> {
    let p = &workflow["permissions"];
    let mut v: Vec<(String, String)> = p
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str().unwrap().to_string(), v.as_str().unwrap().to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn the_fork_split_gives_write_access_only_to_the_job_that_runs_no_pr_code() {
    let check = load("examples/workflows/retrygate-check.yml");
    assert_eq!(permissions(&check), [("contents".to_string(), "read".to_string())]);
    assert!(check["on"]["pull_request"].is_mapping());
    assert!(check.get("on").unwrap().get("pull_request_target").is_none());

    let publish = load("examples/workflows/retrygate-publish.yml");
    let listened = &publish["on"]["workflow_run"]["workflows"][0];
    assert_eq!(listened, &check["name"], "the publisher must name the checker");
    let write: Vec<(String, String)> = [
        ("actions", "read"),
        ("checks", "write"),
        ("contents", "read"),
        ("pull-requests", "write"),
        ("statuses", "write"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(permissions(&publish), write);
    let text = std::fs::read_to_string(format!(
        "{}/examples/workflows/retrygate-publish.yml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(!text.contains("actions/checkout"), "the publisher never checks out the PR");

    for single in ["examples/workflows/retrygate.yml", "examples/workflows/retrygate-sign-off.yml"] {
        assert_eq!(permissions(&load(single)), write, "{single}");
    }
}

#[test]
fn no_example_job_is_named_like_the_check() {
    // A job's own check run carries the job's name; one named `retrygate`
    // would stand next to the gate's check run under the required name.
    for f in ["retrygate.yml", "retrygate-check.yml", "retrygate-publish.yml", "retrygate-sign-off.yml"] {
        let w = load(&format!("examples/workflows/{f}"));
        for (id, job) in w["jobs"].as_mapping().unwrap() {
            assert_ne!(id.as_str(), Some("retrygate"), "{f}");
            assert_ne!(job["name"].as_str(), Some("retrygate"), "{f}");
        }
    }
}
