//! Findings about *which* files a pull request touches, rather than what
//! the code does: edits to the gate itself (`gate-config-changed`) and an
//! agent's edits under `protected_paths` (`protected-path`).

use crate::changeset::FileChange;
use crate::config::{Config, CONFIG_PATH};
use crate::finding::{Finding, Kind};

/// Whether `path` is a GitHub Actions workflow file.
pub(crate) fn is_workflow(path: &str) -> bool {
    path.strip_prefix(".github/workflows/")
        .is_some_and(|name| !name.contains('/') && (name.ends_with(".yml") || name.ends_with(".yaml")))
}

/// Whether a workflow text runs retrygate (the Action or the binary).
fn runs_retrygate(text: &str) -> bool {
    text.to_ascii_lowercase().contains("retrygate")
}

/// Whether a workflow's token may write check runs or commit statuses, and so
/// could publish a forged `retrygate` verdict: a `permissions` block (top
/// level, or on every job) that grants `checks: write`, `statuses: write` or
/// `write-all`, or no block at all (the repository's default token may be
/// read-write). A workflow retrygate cannot read as YAML counts as able to.
fn may_write_checks(text: &str) -> bool {
    use serde_yaml::Value;
    if crate::yaml::check(text).is_err() {
        return true;
    }
    let Ok(doc) = serde_yaml::from_str::<Value>(text) else { return true };
    let writes = |p: &Value| match p {
        Value::String(s) => s != "read-all",
        Value::Mapping(m) => ["checks", "statuses"]
            .iter()
            .any(|k| m.get(*k).and_then(Value::as_str).is_some_and(|v| v == "write")),
        // `permissions: {}` parses as a mapping; anything else is unknown.
        _ => true,
    };
    match doc.get("permissions") {
        Some(p) if writes(p) => return true,
        Some(_) => {}
        None => {
            let Some(jobs) = doc.get("jobs").and_then(Value::as_mapping) else { return true };
            if jobs.values().any(|j| j.get("permissions").is_none()) {
                return true;
            }
        }
    }
    doc.get("jobs")
        .and_then(Value::as_mapping)
        .is_some_and(|jobs| jobs.values().filter_map(|j| j.get("permissions")).any(writes))
}

/// The repository files the base config's replay names: every word of
/// `replay.command` that reads as a relative path (it has a `/` or a script
/// extension; quotes, a leading `./` and a `--flag=` prefix dropped), and
/// every scenario file of `replay.scenario`. They are gate config: the
/// replay's evidence is only as good as the script it runs and the scenario
/// it plays.
pub fn replay_files(config: &Config) -> Vec<String> {
    let mut out = command_files(config.replay.command.as_deref().unwrap_or(""));
    let bundled = |n: &str| crate::replay::scenario::BUNDLED.iter().any(|(b, _)| *b == n);
    for name in config.replay.scenario.split(',').map(str::trim).filter(|n| !bundled(n)) {
        let name = name.trim_start_matches("./");
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// The words of a shell command that read as relative file paths (see
/// [`replay_files`]).
pub fn command_files(command: &str) -> Vec<String> {
    const SCRIPTS: &[&str] =
        &[".sh", ".bash", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".rs", ".yml", ".yaml"];
    let mut out: Vec<String> = Vec::new();
    let mut add = |word: &str| {
        let w = word.trim_matches(|c| c == '"' || c == '\'' || c == ';' || c == '(' || c == ')');
        let w = w.rsplit_once('=').map_or(w, |(flag, v)| if flag.starts_with('-') { v } else { w });
        let w = w.trim_start_matches("./");
        let pathlike = w.contains('/') || SCRIPTS.iter().any(|e| w.ends_with(e));
        if !w.is_empty()
            && pathlike
            && !w.starts_with(['/', '-', '$', '~'])
            && !w.contains("://")
            && !w.split('/').any(|c| c == "..")
            && !out.iter().any(|o| o == w)
        {
            out.push(w.to_string());
        }
    };
    for word in command.split_whitespace() {
        add(word);
    }
    out
}

/// Whether `path` is inside the rule folder `dir` (as `rules.extra` names it).
fn under_dir(path: &str, dir: &str) -> bool {
    let d = dir.trim_start_matches("./").trim_end_matches('/');
    !d.is_empty() && (path == d || path.starts_with(&format!("{d}/")))
}

/// One `gate-config-changed` finding per file of the change that is the
/// config, a rule folder the base config names, a workflow that runs
/// retrygate on either side (removing retrygate from a workflow counts), or
/// a workflow whose head may write check runs or statuses (it could forge
/// the gate's own check, which merge queues and rulesets trust).
pub(crate) fn gate_config_changes(config: &Config, files: &[FileChange]) -> Vec<Finding> {
    let mut out = Vec::new();
    for f in files {
        let names: Vec<&str> = std::iter::once(f.path.as_str()).chain(f.old_path.as_deref()).collect();
        let why = if names.contains(&CONFIG_PATH) {
            Some(format!(
                "{CONFIG_PATH} changed: the gate keeps using the base commit's config; a maintainer must sign off on the new one"
            ))
        } else if let Some(dir) = config.rules.extra.iter().find(|d| names.iter().any(|p| under_dir(p, d))) {
            Some(format!(
                "rule pack in {dir} (rules.extra) changed: the gate keeps using the base commit's rules; a maintainer must sign off"
            ))
        } else if let Some(file) = replay_files(config).into_iter().find(|r| names.contains(&r.as_str())) {
            Some(format!(
                "{file} is named by replay.command or replay.scenario, so it is part of the replay evidence: a pull \
                 request that changes it could change what its own replay proves; a maintainer must sign off"
            ))
        } else if names.iter().any(|p| is_workflow(p))
            && (f.base.text().is_some_and(runs_retrygate) || f.head.text().is_some_and(runs_retrygate))
        {
            Some("a workflow that runs retrygate changed; a maintainer must sign off".to_string())
        } else if names.iter().any(|p| is_workflow(p)) && f.head.text().is_some_and(may_write_checks) {
            Some("a workflow whose token may write check runs or statuses changed (it could publish a forged `retrygate` check); give it `permissions:` without `checks: write`/`statuses: write`, or a maintainer must sign off".to_string())
        } else {
            None
        };
        if let Some(message) = why {
            out.push(
                Finding::new(Kind::GateConfigChanged, "policy/gate-config-changed", &f.path, 0)
                    .message(message),
            );
        }
    }
    out
}

/// One `protected-path` finding per changed file under `protected_paths`
/// (a rename counts from either side). Call it for agent PRs only.
pub(crate) fn protected_path_changes(
    config: &Config,
    files: &[FileChange],
) -> Result<Vec<Finding>, crate::config::ConfigError> {
    let protected = config.protected()?;
    let mut out = Vec::new();
    for f in files {
        let hit =
            protected.matching(&f.path).or_else(|| f.old_path.as_deref().and_then(|o| protected.matching(o)));
        if let Some(pattern) = hit {
            out.push(
                Finding::new(Kind::ProtectedPath, "policy/protected-path", &f.path, 0).message(format!(
                    "an agent's pull request changes {} under protected path `{pattern}`; a maintainer must review and sign off",
                    f.path
                )),
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, base: Option<&str>, head: Option<&str>) -> FileChange {
        FileChange::from_texts(path, base, head)
    }

    #[test]
    fn the_config_rule_folders_and_retrygate_workflows_are_gate_changes() {
        let config =
            Config::from_yaml_str("rules: { extra: [\".github/retrygate-rules/\"] }\n", "r.yml").unwrap();
        let files = vec![
            change(CONFIG_PATH, Some("mode: enforce\n"), Some("mode: advisory\n")),
            change(".github/retrygate-rules/py.yml", None, Some("rules: []\n")),
            change(".github/workflows/gate.yml", Some("uses: org/retrygate@v1\n"), Some("run: true\n")),
            change(
                ".github/workflows/lint.yml",
                Some("permissions: {contents: read}\njobs: {l: {steps: [{run: cargo clippy}]}}\n"),
                Some("permissions: {contents: read}\njobs: {l: {steps: [{run: cargo fmt}]}}\n"),
            ),
            change(".github/retrygate-rules-old.txt", None, Some("x")),
            change("src/lib.rs", None, Some("fn a() {}")),
        ];
        let found = gate_config_changes(&config, &files);
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [CONFIG_PATH, ".github/retrygate-rules/py.yml", ".github/workflows/gate.yml"]);
        assert!(found.iter().all(|f| f.kind == Kind::GateConfigChanged && f.is_blocking()));
        assert!(found[0].message.contains("base commit's config"), "{}", found[0].message);
        assert!(found[1].message.contains(".github/retrygate-rules/"), "{}", found[1].message);
    }

    #[test]
    fn files_the_replay_command_or_scenario_names_are_gate_config() {
        let config = Config::from_yaml_str(
            "replay: { command: \"sh ./scripts/replay.sh --out=target/r.json && python3 'tools/client.py' $URL\", \
             scenario: [default, .github/replay/fast.yml] }\n",
            "r.yml",
        )
        .unwrap();
        assert_eq!(
            replay_files(&config),
            ["scripts/replay.sh", "target/r.json", "tools/client.py", ".github/replay/fast.yml"]
        );
        let files = vec![
            change("scripts/replay.sh", Some("curl --retry 5 \"$RETRYGATE_URL\"\n"), Some("exit 0\n")),
            change(".github/replay/fast.yml", Some("budget: 3\n"), Some("budget: 9\n")),
            change("scripts/other.sh", Some("a\n"), Some("b\n")),
        ];
        let found = gate_config_changes(&config, &files);
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["scripts/replay.sh", ".github/replay/fast.yml"]);
        assert!(
            found[0].message.starts_with("scripts/replay.sh is named by replay.command"),
            "{}",
            found[0].message
        );
        // No replay.command and bundled scenarios: nothing named.
        assert!(replay_files(&Config::default()).is_empty());
        let plain = Config::from_yaml_str("replay: { command: \"cargo test --test replay_429\" }\n", "r.yml")
            .unwrap();
        assert!(replay_files(&plain).is_empty());
    }

    #[test]
    fn a_workflow_that_may_write_checks_is_a_gate_change() {
        let wf = |head: &str| change(".github/workflows/x.yml", None, Some(head));
        let flagged = |head: &str| gate_config_changes(&Config::default(), &[wf(head)]).len() == 1;
        // Could forge the check: explicit grants, write-all, or no block at all.
        assert!(flagged("permissions: {checks: write}\njobs: {a: {steps: []}}\n"));
        assert!(flagged("permissions: write-all\njobs: {a: {steps: []}}\n"));
        assert!(flagged("jobs: {a: {steps: []}}\n"));
        assert!(flagged("jobs: {a: {permissions: {}, steps: []}, b: {steps: []}}\n"));
        assert!(flagged("permissions: {}\njobs: {a: {permissions: {statuses: write}, steps: []}}\n"));
        assert!(flagged("permissions: [\n"));
        // Cannot: read-only tokens, at the top or on every job.
        assert!(!flagged("permissions: {contents: read}\njobs: {a: {steps: []}}\n"));
        assert!(!flagged("permissions: read-all\njobs: {a: {steps: []}}\n"));
        assert!(!flagged("jobs: {a: {permissions: {}, steps: []}, b: {permissions: {contents: read}}}\n"));
        let found = gate_config_changes(&Config::default(), &[wf("jobs: {a: {steps: []}}\n")]);
        assert!(found[0].message.contains("forged `retrygate` check"), "{}", found[0].message);
    }

    #[test]
    fn a_config_moved_away_is_still_a_gate_change() {
        let mut f = change("old/retrygate.yml", Some("mode: enforce\n"), Some("mode: enforce\n"));
        f.old_path = Some(CONFIG_PATH.into());
        assert_eq!(gate_config_changes(&Config::default(), &[f]).len(), 1);
    }

    #[test]
    fn workflow_paths() {
        assert!(is_workflow(".github/workflows/ci.yml") && is_workflow(".github/workflows/ci.yaml"));
        assert!(!is_workflow(".github/workflows/sub/ci.yml") && !is_workflow("workflows/ci.yml"));
    }

    #[test]
    fn protected_paths_match_either_side_of_a_rename() {
        let config = Config::default();
        let mut moved = change("lib/checkout.rs", Some("a"), Some("a"));
        moved.old_path = Some("clients/checkout.rs".into());
        let files =
            vec![change("app/pay.rs", Some("a"), Some("b")), moved, change("src/x.rs", None, Some("b"))];
        let found = protected_path_changes(&config, &files).unwrap();
        assert_eq!(found.len(), 2);
        assert!(found[0].message.contains("`app/`"), "{}", found[0].message);
        assert!(found[1].message.contains("`clients/`"), "{}", found[1].message);
        let none = Config::from_yaml_str("protected_paths: []\n", "r.yml").unwrap();
        assert!(protected_path_changes(&none, &files).unwrap().is_empty());
    }
}
