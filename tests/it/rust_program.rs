//! The whole-program cases of the Rust analyzer (issue 22), each built as a
//! real git repository: a base commit, a head commit on a branch, and
//! `retrygate scan --format json` between them.
//!
//! Each file in `tests/fixtures/rust_program/` is one case, in the format
//! of the fixtures of `rust_analyzer.rs`, with one more section kind:
//! `// ==== both PATH ====` is a file the change does not touch (committed
//! in the base, unchanged at the head). Markers (`// ruleid: KIND`,
//! `// ok: KIND`) may sit in head and both sections; `// note: TEXT` says a
//! blocking note containing TEXT is expected; `// shape: NAME` names the
//! refactor the case is about. Every shape has a positive and a negative
//! case (`every_shape_has_positive_and_negative_cases`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::Repo;
use serde_json::Value;

struct Case {
    name: String,
    shape: String,
    base: BTreeMap<String, String>,
    head: BTreeMap<String, String>,
    both: BTreeMap<String, String>,
    notes: Vec<String>,
}

fn load(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let mut case = Case {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        shape: String::new(),
        base: BTreeMap::new(),
        head: BTreeMap::new(),
        both: BTreeMap::new(),
        notes: Vec::new(),
    };
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("// ==== ").and_then(|r| r.strip_suffix(" ====")) {
            let mut parts = rest.split_whitespace();
            let side = parts.next().unwrap().to_string();
            let p = parts.next().unwrap_or("src/lib.rs").to_string();
            assert!(["base", "head", "both"].contains(&side.as_str()), "{}: bad section {rest}", case.name);
            current = Some((side, p));
            continue;
        }
        let Some((side, p)) = &current else {
            if let Some(s) = t.strip_prefix("// shape: ") {
                case.shape = s.trim().to_string();
            }
            if let Some(n) = t.strip_prefix("// note: ") {
                case.notes.push(n.trim().to_string());
            }
            continue;
        };
        let map = match side.as_str() {
            "base" => &mut case.base,
            "head" => &mut case.head,
            _ => &mut case.both,
        };
        let buf = map.entry(p.clone()).or_default();
        buf.push_str(line);
        buf.push('\n');
    }
    assert!(!case.shape.is_empty(), "{}: missing `// shape: NAME` header", case.name);
    case
}

fn cases() -> Vec<Case> {
    crate::common::rust_fixtures("rust_program").iter().map(|p| load(p)).collect()
}

fn scan(case: &Case) -> Value {
    let repo = Repo::new();
    for (p, t) in case.both.iter().chain(&case.base) {
        repo.write(p, t);
    }
    repo.commit("base");
    repo.branch("change");
    for p in case.base.keys() {
        if !case.head.contains_key(p) {
            repo.remove(p);
        }
    }
    for (p, t) in &case.head {
        repo.write(p, t);
    }
    repo.commit("change");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", "change", "--format", "json"])
        .output()
        .expect("run retrygate");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}: stderr: {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

/// (path, line, kind, positive) from the markers of head and both sections.
fn expectations(case: &Case) -> Vec<(String, u64, String, bool)> {
    let mut out = Vec::new();
    for (path, text) in case.head.iter().chain(&case.both) {
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            for (prefix, positive) in [("// ruleid: ", true), ("// ok: ", false)] {
                if let Some(kinds) = t.strip_prefix(prefix) {
                    for k in kinds.split(',') {
                        out.push((path.clone(), i as u64 + 2, k.trim().to_string(), positive));
                    }
                }
            }
        }
    }
    out
}

fn check(case: &Case) -> Vec<String> {
    let json = scan(case);
    let findings = json["findings"].as_array().cloned().unwrap_or_default();
    let notes: Vec<String> = json["notes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|n| n["blocking"] == true)
        .map(|n| n["message"].as_str().unwrap_or("").to_string())
        .collect();
    let mut problems = Vec::new();
    for want in &case.notes {
        if !notes.iter().any(|n| n.contains(want.as_str())) {
            problems.push(format!("missing blocking note: {want} (notes: {notes:?})"));
        }
    }
    for n in &notes {
        if !case.notes.iter().any(|want| n.contains(want.as_str())) {
            problems.push(format!("unexpected blocking note: {n}"));
        }
    }
    let mut explained = vec![false; findings.len()];
    for (path, line, kind, positive) in expectations(case) {
        let hits: Vec<usize> = findings
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f["path"] == path.as_str()
                    && f["kind"] == kind.as_str()
                    && f["line"].as_u64().is_some_and(|l| l <= line)
                    && f["end_line"].as_u64().or(f["line"].as_u64()).is_some_and(|l| line <= l)
            })
            .map(|(i, _)| i)
            .collect();
        if positive && hits.is_empty() {
            problems.push(format!("missing: {kind} at {path}:{line}"));
        }
        if !positive && !hits.is_empty() {
            problems.push(format!("reported where `ok` says not: {kind} at {path}:{line}"));
        }
        for i in hits {
            explained[i] = true;
        }
    }
    for (i, f) in findings.iter().enumerate() {
        if !explained[i] {
            problems.push(format!("noisy: {} at {}:{}: {}", f["kind"], f["path"], f["line"], f["message"]));
        }
    }
    problems
}

#[test]
fn program_fixtures() {
    let _room = crate::common::enter(crate::common::Room::Busy);
    let all = cases();
    assert!(all.len() >= 16, "fixtures not found");
    let failures: Vec<String> = all
        .iter()
        .filter_map(|case| {
            let problems = check(case);
            (!problems.is_empty()).then(|| format!("{}:\n    {}", case.name, problems.join("\n    ")))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn every_shape_has_positive_and_negative_cases() {
    let all = cases();
    let mut shapes: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for c in &all {
        let e = expectations(c);
        let entry = shapes.entry(c.shape.as_str()).or_default();
        entry.0 |= e.iter().any(|x| x.3) || !c.notes.is_empty();
        entry.1 |= e.iter().all(|x| !x.3) && c.notes.is_empty();
    }
    for shape in [
        "const-in-another-module",
        "policy-in-own-module",
        "alias",
        "nested-fn",
        "macro-rules",
        "helper-argument",
        "include",
        "client-timeout",
        "loop-by-behaviour",
        "client-layer",
        "struct-default",
    ] {
        assert_eq!(shapes.get(shape), Some(&(true, true)), "shape {shape}: (positive, negative)");
    }
}
