//! This repository's own workflows follow the trust rules of docs/github.md:
//! every action pinned by commit SHA, no checkout that leaves the token in
//! git's config, no job that holds a write token and checks out the pull
//! request's code, and the dogfood gate runs the Action from `./` with this
//! repository's `.github/retrygate.yml`. (zizmor and actionlint check the
//! same files for what they know; these are the rules specific to a gate.)

use std::path::{Path, PathBuf};

use serde_yaml::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn workflows() -> Vec<(PathBuf, Value)> {
    let dir = root().join(".github/workflows");
    let mut out: Vec<(PathBuf, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let v = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn jobs(w: &Value) -> Vec<(&str, &Value)> {
    w["jobs"].as_mapping().expect("jobs").iter().map(|(k, v)| (k.as_str().unwrap(), v)).collect()
}

fn steps(job: &Value) -> &[Value] {
    job["steps"].as_sequence().map(Vec::as_slice).unwrap_or(&[])
}

/// `on:` parses as the boolean `true` key in YAML 1.1; look under both.
fn triggers(w: &Value) -> Vec<String> {
    let on = w.get("on").or_else(|| w.as_mapping().and_then(|m| m.get(Value::Bool(true)))).expect("on:");
    match on {
        Value::Mapping(m) => m.keys().map(|k| k.as_str().unwrap().to_string()).collect(),
        Value::Sequence(s) => s.iter().map(|k| k.as_str().unwrap().to_string()).collect(),
        Value::String(s) => vec![s.clone()],
        other => panic!("unexpected on: {other:?}"),
    }
}

fn writes(job: &Value) -> bool {
    job["permissions"].as_mapping().is_some_and(|m| m.values().any(|v| v.as_str() == Some("write")))
}

fn is_sha_pinned(uses: &str) -> bool {
    let Some((name, rev)) = uses.split_once('@') else { return false };
    name.contains('/')
        && rev.len() == 40
        && rev.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

#[test]
fn the_repository_has_ci_and_a_dogfood_gate() {
    let names: Vec<String> =
        workflows().iter().map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert!(names.contains(&"ci.yml".to_string()), "{names:?}");
    assert!(names.contains(&"retrygate.yml".to_string()), "{names:?}");
}

/// What breaks the trust rules in one workflow, one line per problem.
fn problems(name: &str, w: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let on = triggers(w);
    let on_pr = on.iter().any(|t| t == "pull_request");
    if on.iter().any(|t| t == "pull_request_target") {
        out.push(format!("{name}: pull_request_target hands a write token to pull request code"));
    }
    if w["permissions"].as_mapping().is_none_or(|m| !m.is_empty()) {
        out.push(format!("{name}: top-level permissions must be {{}} (each job states its own)"));
    }
    for (job_name, job) in jobs(w) {
        if !job["permissions"].is_mapping() {
            out.push(format!("{name}: job {job_name} does not state its permissions"));
        }
        for step in steps(job) {
            if let Some(uses) = step["uses"].as_str() {
                if uses != "./" && !is_sha_pinned(uses) {
                    out.push(format!("{name}: {job_name}: `{uses}` is not pinned by commit SHA"));
                }
                if uses.starts_with("actions/checkout@") {
                    if step["with"]["persist-credentials"] != Value::Bool(false) {
                        out.push(format!(
                            "{name}: {job_name}: actions/checkout without persist-credentials: false"
                        ));
                    }
                    let r = step["with"]["ref"].as_str().unwrap_or_default();
                    if writes(job) && on_pr && !r.contains("github.event.pull_request.base.sha") {
                        out.push(format!(
                            "{name}: {job_name} holds a write token and checks out the pull request (ref: {r:?})"
                        ));
                    }
                }
            }
            let run = step["run"].as_str().unwrap_or_default();
            if writes(job) {
                for runs_code in
                    ["cargo ", "make", "npm ", "./scripts", ".ci/run", "git checkout", "git switch"]
                {
                    if run.contains(runs_code) {
                        out.push(format!("{name}: {job_name} holds a write token and runs `{runs_code}`"));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn this_repositorys_workflows_follow_the_trust_rules() {
    for (path, w) in workflows() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(problems(&name, &w), Vec::<String>::new());
    }
}

#[test]
fn the_trust_rules_catch_each_kind_of_mistake() {
    let bad = r#"
on: [pull_request, pull_request_target]
permissions: { contents: write }
jobs:
  gate:
    permissions: { checks: write }
    steps:
      - uses: actions/checkout@v7
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1
        with: { persist-credentials: false, ref: "${{ github.event.pull_request.head.sha }}" }
      - run: cargo build
  loose:
    steps:
      - run: echo hi
"#;
    let found = problems("bad.yml", &serde_yaml::from_str(bad).unwrap());
    let expect = [
        "bad.yml: pull_request_target hands a write token to pull request code",
        "bad.yml: top-level permissions must be {} (each job states its own)",
        "bad.yml: gate: `actions/checkout@v7` is not pinned by commit SHA",
        "bad.yml: gate: actions/checkout without persist-credentials: false",
        "bad.yml: gate holds a write token and checks out the pull request (ref: \"\")",
        "bad.yml: gate holds a write token and checks out the pull request (ref: \"${{ github.event.pull_request.head.sha }}\")",
        "bad.yml: gate holds a write token and runs `cargo `",
        "bad.yml: job loose does not state its permissions",
    ];
    assert_eq!(found, expect);
}

#[test]
fn the_dogfood_gate_runs_the_action_from_dot_slash_with_this_repositorys_config() {
    let (_, w) = workflows().into_iter().find(|(p, _)| p.ends_with("retrygate.yml")).unwrap();
    let triggers = triggers(&w);
    assert!(triggers.contains(&"pull_request".to_string()), "{triggers:?}");
    let (name, job) = jobs(&w)
        .into_iter()
        .find(|(_, j)| steps(j).iter().any(|s| s["uses"] == "./"))
        .expect("a job uses ./");
    assert!(writes(job), "{name} publishes");
    assert!(
        job["name"].as_str().is_some_and(|n| n != "retrygate"),
        "a job named `retrygate` would shadow the gate's check"
    );
    let step = steps(job).iter().find(|s| s["uses"] == "./").unwrap();
    let config = step["with"]["config"].as_str().unwrap_or(".github/retrygate.yml");
    assert_eq!(config, ".github/retrygate.yml");
    assert!(
        step["with"]["replay-command"].is_null(),
        "nothing from the pull request runs in a job with a write token"
    );
    let text = std::fs::read_to_string(root().join(".github/retrygate.yml")).unwrap();
    let c = retrygate::config::Config::from_yaml_str(&text, ".github/retrygate.yml").unwrap();
    assert!(
        !c.require.replay && c.replay.command.is_none(),
        "the gate job cannot run a replay of pull request code"
    );
    for dir in ["rules/tests/", "tests/fixtures/"] {
        assert!(c.paths.ignore.iter().flatten().any(|p| p == dir), "{dir} is ignored: {:?}", c.paths.ignore);
    }
}

#[test]
fn ci_runs_the_ci_script_on_pushes_and_pull_requests_read_only() {
    let (_, w) = workflows().into_iter().find(|(p, _)| p.ends_with("ci.yml")).unwrap();
    let t = triggers(&w);
    assert!(t.contains(&"push".to_string()) && t.contains(&"pull_request".to_string()), "{t:?}");
    let runs_ci = jobs(&w).into_iter().any(|(_, j)| {
        !writes(j) && steps(j).iter().any(|s| s["run"].as_str().is_some_and(|r| r.contains(".ci/run")))
    });
    assert!(runs_ci, "a read-only job runs .ci/run");
}

#[test]
fn sha_pin_check_accepts_only_full_lowercase_shas() {
    assert!(is_sha_pinned("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1"));
    assert!(!is_sha_pinned("actions/checkout@v7"));
    assert!(!is_sha_pinned("actions/checkout@3d3c42e"));
    assert!(!is_sha_pinned("actions/checkout"));
    assert!(!is_sha_pinned("actions/checkout@3D3C42E5AAC5BA805825DA76410C181273BA90B1"));
}
