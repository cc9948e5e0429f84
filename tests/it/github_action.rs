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
    // Installing is scripts/install-action.sh (tested in tests/it/install_action.rs):
    // the prebuilt phase, the cache restore, then the source phase (id `install`,
    // whose `bin` output later steps run).
    let run_of =
        |id: &str| steps.iter().find(|s| s["id"] == id).unwrap()["run"].as_str().unwrap().to_string();
    assert_eq!(run_of("prebuilt"), "bash \"$ACTION_PATH/scripts/install-action.sh\" prebuilt");
    assert_eq!(run_of("install"), "bash \"$ACTION_PATH/scripts/install-action.sh\" source");
    let script = text("scripts/install-action.sh");
    assert!(script.contains("sha256sums.txt") && script.contains("install --locked"), "{script}");
    // The source build is saved to the cache only by the modes that run no
    // pull-request code (`install` is the default branch's warm-up).
    let save = steps
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/cache/save@")))
        .unwrap();
    assert_eq!(
        save["if"],
        "steps.install.outputs.built == 'true' && (inputs.mode == 'full' || inputs.mode == 'publish' || inputs.mode == 'install')"
    );
    // Install mode runs nothing else: not the gate, not the replay.
    let gate = steps.iter().find(|s| s["id"] == "gate").unwrap();
    assert_eq!(gate["if"], "inputs.mode != 'replay' && inputs.mode != 'install'");
    // Inputs reach the script through the environment, never spliced into it.
    let run = steps.iter().find(|s| s["id"] == "gate").unwrap()["run"].as_str().unwrap();
    assert!(!run.contains("${{"), "{run}");
}

fn permissions(p: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = p
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str().unwrap().to_string(), v.as_str().unwrap().to_string()))
        .collect();
    v.sort();
    v
}

fn write_set() -> Vec<(String, String)> {
    [
        ("actions", "read"),
        ("checks", "write"),
        ("contents", "read"),
        ("pull-requests", "write"),
        ("statuses", "write"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

/// A job's id, effective permissions and steps.
type Job = (String, Vec<(String, String)>, Vec<Value>);

/// Every job of a workflow with its effective permissions (its own, else
/// the workflow's) and its steps.
fn jobs(w: &Value) -> Vec<Job> {
    w["jobs"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(id, job)| {
            let p = if job.get("permissions").is_some() { &job["permissions"] } else { &w["permissions"] };
            (id.as_str().unwrap().to_string(), permissions(p), job["steps"].as_sequence().unwrap().clone())
        })
        .collect()
}

fn text(rel: &str) -> String {
    std::fs::read_to_string(format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

const EXAMPLES: [&str; 4] = [
    "examples/workflows/retrygate.yml",
    "examples/workflows/retrygate-check.yml",
    "examples/workflows/retrygate-publish.yml",
    "examples/workflows/retrygate-sign-off.yml",
];

#[test]
fn the_fork_split_gives_write_access_only_to_jobs_that_run_no_pr_code() {
    let check = load("examples/workflows/retrygate-check.yml");
    assert_eq!(permissions(&check["permissions"]), [("contents".to_string(), "read".to_string())]);
    assert!(check["on"]["pull_request"].is_mapping());
    assert!(check.get("on").unwrap().get("pull_request_target").is_none());

    let publish = load("examples/workflows/retrygate-publish.yml");
    let listened = &publish["on"]["workflow_run"]["workflows"][0];
    assert_eq!(listened, &check["name"], "the publisher must name the checker");
    for f in EXAMPLES {
        for (id, perms, steps) in jobs(&load(f)) {
            let writes = perms.iter().any(|(_, v)| v == "write");
            let runs_pr_code = steps.iter().any(|s| s["with"].get("replay-command").is_some());
            assert!(
                !(writes && runs_pr_code),
                "{f}: job {id} holds a write token and runs the pull request's code"
            );
            if writes {
                assert_eq!(perms, write_set(), "{f}: {id}");
            }
            for s in &steps {
                if s["uses"].as_str().is_some_and(|u| u.starts_with("actions/checkout@")) {
                    // No ref: never the pull request's code checked out in a
                    // write job; and no token stored in .git/config anywhere.
                    assert_eq!(s["with"]["persist-credentials"], Value::Bool(false), "{f}: {id}");
                    if writes {
                        assert!(s["with"].get("ref").is_none(), "{f}: {id} checks out another ref");
                    }
                }
            }
        }
    }
    // The replay job of the single workflow: no permissions at all.
    let single = load("examples/workflows/retrygate.yml");
    let replay = &single["jobs"]["replay"];
    assert_eq!(replay["permissions"].as_mapping().map(|m| m.len()), Some(0));
    assert_eq!(replay["steps"][1]["with"]["mode"], "replay");
    assert_eq!(single["jobs"]["gate"]["needs"], "replay");
}

#[test]
fn the_publisher_checks_out_the_base_and_fetches_the_head_as_data() {
    let publish = load("examples/workflows/retrygate-publish.yml");
    let steps = publish["jobs"]["publish"]["steps"].as_sequence().unwrap();
    assert!(steps[0]["uses"].as_str().unwrap().starts_with("actions/checkout@"));
    assert_eq!(steps[0]["with"]["fetch-depth"], 0);
    let fetch = steps[1]["run"].as_str().unwrap();
    assert!(fetch.contains("fetch --no-tags origin \"$HEAD_SHA\""), "{fetch}");
    assert_eq!(steps[1]["env"]["HEAD_SHA"], "${{ github.event.workflow_run.head_sha }}");
    assert_eq!(steps[2]["with"]["mode"], "publish");
}

#[test]
fn the_examples_trigger_on_retargets_and_merge_queues() {
    for f in ["examples/workflows/retrygate.yml", "examples/workflows/retrygate-check.yml"] {
        let types = load(f)["on"]["pull_request"]["types"].as_sequence().unwrap().clone();
        assert!(types.contains(&Value::from("edited")), "{f}");
    }
    for f in ["examples/workflows/retrygate.yml", "examples/workflows/retrygate-sign-off.yml"] {
        assert_eq!(load(f)["on"]["merge_group"]["types"][0], "checks_requested", "{f}");
    }
}

/// Every example whose pull-request jobs install retrygate has a warm-up job
/// on `push` to the default branch: GitHub lets every pull request restore a
/// cache saved there, but a cache saved in a pull request's run only that
/// pull request, and the jobs that run pull-request code never save one.
#[test]
fn the_pull_request_examples_warm_the_cache_on_the_default_branch() {
    for f in ["examples/workflows/retrygate.yml", "examples/workflows/retrygate-check.yml"] {
        let w = load(f);
        assert_eq!(w["on"]["push"]["branches"][0], "main", "{f}: warmed on pushes to the default branch");
        let warm = &w["jobs"]["warm-up"];
        assert_eq!(warm["if"], "github.event_name == 'push'", "{f}");
        assert_eq!(warm["permissions"], Value::Mapping(Default::default()), "{f}: no token");
        let steps = warm["steps"].as_sequence().unwrap();
        assert_eq!(steps.len(), 1, "{f}: no checkout, nothing but the install");
        assert!(steps[0]["uses"].as_str().unwrap().starts_with("retrygate/retrygate@"), "{f}");
        assert_eq!(steps[0]["with"]["mode"], "install", "{f}");
        // No other job runs on the push.
        for (id, job) in w["jobs"].as_mapping().unwrap() {
            if id.as_str() == Some("warm-up") {
                continue;
            }
            let cond = job["if"].as_str().unwrap_or("");
            assert!(
                cond.contains("github.event_name == 'pull_request'")
                    || cond.contains("github.event_name != 'push'"),
                "{f}: job {id:?} must not run on the warm-up push: if: {cond:?}"
            );
        }
    }
}

#[test]
fn a_plain_comment_gets_its_own_concurrency_group() {
    // Runs in one group replace each other while pending: a comment that is
    // not a sign-off must not share the gate's group.
    for f in ["examples/workflows/retrygate.yml", "examples/workflows/retrygate-sign-off.yml"] {
        let group = load(f)["concurrency"]["group"].as_str().unwrap().to_string();
        assert!(
            group.contains(
                "!contains(github.event.comment.body, '/retrygate sign-off')) && github.event.comment.id"
            ),
            "{f}: {group}"
        );
    }
}

#[test]
fn every_action_is_pinned_by_a_full_commit_sha_retrygate_included() {
    for f in ["action.yml"].iter().chain(EXAMPLES.iter()) {
        for line in text(f).lines() {
            let Some(uses) = line.trim_start().trim_start_matches("- ").strip_prefix("uses: ") else {
                continue;
            };
            let target = uses.split_whitespace().next().unwrap();
            // No tag: none exists before the first release, and a tag can
            // be moved (docs/github.md, "Which retrygate to pin").
            assert!(!line.contains("zizmor: ignore[unpinned-uses]"), "{f}: {line}");
            let sha = target.rsplit_once('@').map(|(_, r)| r).unwrap_or("");
            assert!(sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()), "{f}: {line}");
        }
    }
}

#[test]
fn the_action_refuses_a_replay_command_in_a_write_token_mode() {
    let a = load("action.yml");
    let steps = a["runs"]["steps"].as_sequence().unwrap();
    let guard = steps[0]["run"].as_str().unwrap();
    assert!(
        guard.contains("full|publish)") && guard.contains("replay-command runs the pull request's code"),
        "{guard}"
    );
    let replay = steps
        .iter()
        .find(|s| s["name"].as_str().is_some_and(|n| n.starts_with("Run the 429 replay")))
        .unwrap();
    assert_eq!(
        replay["if"],
        "inputs.mode == 'replay' || (inputs.mode == 'compute' && inputs.replay-command != '')"
    );
    assert!(replay["env"].get("GITHUB_TOKEN").is_none());
    // The binary is named by its step output, not found on a PATH a step could change.
    assert!(!text("action.yml").contains(">> \"$GITHUB_PATH\""));
}

#[test]
fn no_example_job_is_named_like_the_check() {
    // A job's own check run carries the job's name; one named `retrygate`
    // would stand next to the gate's check run under the required name.
    for f in EXAMPLES {
        let w = load(f);
        for (id, job) in w["jobs"].as_mapping().unwrap() {
            assert_ne!(id.as_str(), Some("retrygate"), "{f}");
            assert_ne!(job["name"].as_str(), Some("retrygate"), "{f}");
        }
    }
}
