//! Fixture tests for the settings floor (`src/analyze/knobs`), run through
//! the binary on a real git repository, so what they assert is what a user
//! sees: every analyzer, the test-code decision and the de-duplication.
//!
//! Each `tests/fixtures/knobs/NAME.case` holds header lines, then sections
//! `==== base PATH ====` and `==== head PATH ====` (a case may hold several
//! files; a file with no base section is new, one with an empty head
//! section is deleted; `==== both PATH ====` is a file the change leaves
//! as it is). Header lines:
//! - `expect: PATH:LINE KIND SEVERITY`: exactly these findings of severity
//!   warning or error are reported (one line each); no `expect:` line means
//!   none is (a negative fixture);
//! - `note: TEXT`: a note containing TEXT is reported;
//! - `by: PREFIX`: every expected finding comes from a rule whose id starts
//!   with PREFIX (`tree/`: the syntax-tree analyzer decided it, not a
//!   layer below it).
//!
//! The same cases run for the syntax-tree analyzer (`src/analyze/trees`)
//! from `tests/fixtures/trees`, where `libraries_have_positive_and_negative_cases`
//! also checks that every library data file in `rules/libraries` has a
//! positive and a negative case. A `NAME.pending` file there is a case
//! the analyzers still get wrong, kept with the expectation that is right
//! and a first line that says the shape (docs/trees.md, "Known misses",
//! says what is missed);
//! renaming it to `.case` makes it run.
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
    by: Option<String>,
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
        by: None,
        base: BTreeMap::new(),
        head: BTreeMap::new(),
    };
    let mut current: Option<(bool, String)> = None;
    let mut both = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_end();
        if let Some(rest) = trimmed.strip_prefix("==== ").and_then(|r| r.strip_suffix(" ====")) {
            let (side, p) = rest
                .split_once(' ')
                .unwrap_or_else(|| panic!("{}: section needs a path: {trimmed}", case.name));
            let is_head = match side {
                "base" => false,
                "head" => true,
                "both" => {
                    case.base.insert(p.to_string(), String::new());
                    true
                }
                _ => panic!("{}: unknown section {side}", case.name),
            };
            let map = if is_head { &mut case.head } else { &mut case.base };
            map.insert(p.to_string(), String::new());
            both = side == "both";
            current = Some((is_head, p.to_string()));
            continue;
        }
        match &current {
            None => {
                if let Some(e) = trimmed.strip_prefix("expect: ") {
                    case.expect.insert(e.trim().to_string());
                } else if let Some(n) = trimmed.strip_prefix("note: ") {
                    case.notes.push(n.trim().to_string());
                } else if let Some(b) = trimmed.strip_prefix("by: ") {
                    case.by = Some(b.trim().to_string());
                } else if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    panic!("{}: unknown header line {trimmed}", case.name);
                }
            }
            Some((is_head, p)) => {
                let map = if *is_head { &mut case.head } else { &mut case.base };
                map.get_mut(p).unwrap().push_str(line);
                if both {
                    case.base.get_mut(p).unwrap().push_str(line);
                }
            }
        }
    }
    case
}

fn cases() -> Vec<PathBuf> {
    cases_in("knobs")
}

fn cases_in(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(folder);
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
    if let Some(by) = &case.by {
        for f in v["findings"].as_array().unwrap().iter().filter(|f| f["severity"] != "note") {
            let rule = f["rule"].as_str().unwrap_or("");
            if !rule.starts_with(by.as_str()) {
                problems.push(format!("{}:{} came from {rule}, not {by}", f["path"], f["line"]));
            }
        }
    }
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

fn run_all(folder: &str) {
    let paths = cases_in(folder);
    let failures: Vec<String> = paths.iter().map(|p| load(p)).filter_map(|c| run(&c)).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}

#[test]
fn knob_fixtures() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    run_all("knobs");
}

#[test]
fn tree_fixtures() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    run_all("trees");
}

/// Every check of the tree analyzer has a case that only it decides
/// (`by: tree/`): a rule no fixture can fail is not tested.
#[test]
fn every_tree_check_has_a_case_of_its_own() {
    let all: Vec<Case> = cases_in("trees").iter().map(|p| load(p)).collect();
    for (id, kind, _) in retrygate::analyze::trees::CHECKS {
        assert!(
            all.iter().any(|c| c.by.as_deref() == Some("tree/")
                && c.expect.iter().any(|e| e.contains(&format!(" {} ", kind.id())))),
            "no `by: tree/` case expects {id}"
        );
    }
}

/// Every library data file has a case that expects a finding and one that
/// expects none, named after the file (`python-tenacity.yml` ->
/// `python_tenacity_*.case`): adding a library means adding its cases.
#[test]
fn libraries_have_positive_and_negative_cases() {
    let all: Vec<Case> = cases_in("trees").iter().map(|p| load(p)).collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/libraries");
    let mut missing = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let Some(stem) =
            p.file_stem().and_then(|s| s.to_str()).filter(|_| p.extension().is_some_and(|x| x == "yml"))
        else {
            continue;
        };
        let prefix = format!("{}_", stem.replace('-', "_"));
        let of_lib: Vec<&Case> = all.iter().filter(|c| c.name.starts_with(&prefix)).collect();
        if !of_lib.iter().any(|c| !c.expect.is_empty()) {
            missing.push(format!("{stem}: no positive case ({prefix}*.case expecting a finding)"));
        }
        if !of_lib.iter().any(|c| c.expect.is_empty()) {
            missing.push(format!("{stem}: no negative case ({prefix}*.case expecting none)"));
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
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
