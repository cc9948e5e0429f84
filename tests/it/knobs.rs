//! Fixture tests for the settings floor (`src/analyze/knobs`), run through
//! the binary on a real git repository, so what they assert is what a user
//! sees: every analyzer, the test-code decision and the de-duplication.
//!
//! Each `tests/fixtures/knobs/NAME.case` holds header lines, then sections
//! `==== base PATH ====` and `==== head PATH ====` (a case may hold several
//! files; a file with no base section is new, one with an empty head
//! section is deleted). Header lines:
//! - `expect: PATH:LINE KIND SEVERITY`: exactly these findings of severity
//!   warning or error are reported (one line each); no `expect:` line means
//!   none is (a negative fixture);
//! - `note: TEXT`: a note containing TEXT is reported.
//!
//! `every_kind_of_the_floor_has_positive_and_negative_cases` checks that
//! each kind the floor reports has both.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Repo;

struct Case {
    name: String,
    expect: BTreeSet<String>,
    notes: Vec<String>,
    base: BTreeMap<String, String>,
    head: BTreeMap<String, String>,
}

fn load(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let mut case = Case {
        name,
        expect: BTreeSet::new(),
        notes: Vec::new(),
        base: BTreeMap::new(),
        head: BTreeMap::new(),
    };
    let mut current: Option<(bool, String)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_end();
        if let Some(rest) = trimmed.strip_prefix("==== ").and_then(|r| r.strip_suffix(" ====")) {
            let (side, p) = rest
                .split_once(' ')
                .unwrap_or_else(|| panic!("{}: section needs a path: {trimmed}", case.name));
            let is_head = match side {
                "base" => false,
                "head" => true,
                _ => panic!("{}: unknown section {side}", case.name),
            };
            let map = if is_head { &mut case.head } else { &mut case.base };
            map.insert(p.to_string(), String::new());
            current = Some((is_head, p.to_string()));
            continue;
        }
        match &current {
            None => {
                if let Some(e) = trimmed.strip_prefix("expect: ") {
                    case.expect.insert(e.trim().to_string());
                } else if let Some(n) = trimmed.strip_prefix("note: ") {
                    case.notes.push(n.trim().to_string());
                } else if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    panic!("{}: unknown header line {trimmed}", case.name);
                }
            }
            Some((is_head, p)) => {
                let map = if *is_head { &mut case.head } else { &mut case.base };
                map.get_mut(p).unwrap().push_str(line);
            }
        }
    }
    case
}

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/knobs");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    out.sort();
    out
}

/// Runs the case; returns what did not match, or nothing.
fn run(case: &Case) -> Option<String> {
    let repo = Repo::new();
    repo.write("README.md", "fixture\n");
    for (p, t) in &case.base {
        repo.write(p, t);
    }
    let base = repo.commit("base");
    for p in case.base.keys() {
        if !case.head.contains_key(p) {
            repo.remove(p);
        }
    }
    for (p, t) in &case.head {
        if t.is_empty() && case.base.contains_key(p) {
            repo.remove(p);
        } else {
            repo.write(p, t);
        }
    }
    let head = repo.commit("head");
    let out = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", &base, "--head", &head, "--format", "json"])
        .output()
        .unwrap();
    let code = out.status.code();
    if !matches!(code, Some(0 | 1)) {
        return Some(format!("{}: exit {code:?}: {}", case.name, String::from_utf8_lossy(&out.stderr)));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let got: BTreeSet<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "note")
        .map(|f| {
            format!(
                "{}:{} {} {}",
                f["path"].as_str().unwrap(),
                f["line"],
                f["kind"].as_str().unwrap(),
                f["severity"].as_str().unwrap()
            )
        })
        .collect();
    let notes: Vec<String> = v["notes"]
        .as_array()
        .map(|a| a.iter().filter_map(|n| n["message"].as_str().map(String::from)).collect())
        .unwrap_or_default();
    let mut problems = Vec::new();
    if got != case.expect {
        problems.push(format!(
            "findings: expected {:?}, got {:?}; messages: {}",
            case.expect, got, v["findings"]
        ));
    }
    for n in &case.notes {
        if !notes.iter().any(|m| m.contains(n.as_str())) {
            problems.push(format!("no note containing {n:?} among {notes:?}"));
        }
    }
    (!problems.is_empty()).then(|| format!("{}: {}", case.name, problems.join("; ")))
}

#[test]
fn knob_fixtures() {
    let failures: Vec<String> = cases().iter().map(|p| load(p)).filter_map(|c| run(&c)).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases().len(),
        failures.join("\n")
    );
}

#[test]
fn every_kind_of_the_floor_has_positive_and_negative_cases() {
    let all: Vec<Case> = cases().iter().map(|p| load(p)).collect();
    for kind in ["retry-count-raised", "retry-unbounded", "jitter-removed", "timeout-lowered"] {
        let prefix = kind.split('-').next().unwrap();
        assert!(
            all.iter().any(|c| c.expect.iter().any(|e| e.contains(&format!(" {kind} ")))),
            "no positive case for {kind}"
        );
        assert!(
            all.iter().any(|c| c.expect.is_empty() && c.name.starts_with(&format!("{prefix}_"))),
            "no negative case (a `{prefix}_*` case expecting nothing) for {kind}"
        );
    }
}
