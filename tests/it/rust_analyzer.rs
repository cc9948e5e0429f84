//! Fixture tests for the Rust analyzer, in the spirit of Clippy's UI tests
//! and Semgrep's rule tests.
//!
//! Each file in `tests/fixtures/rust/` is one case: sections
//! `// ==== base [PATH] ====` and `// ==== head [PATH] ====` hold the two
//! versions (PATH defaults to `src/lib.rs`; a case may hold several files, or
//! only a head for a new file). In head sections, `// ruleid: KIND` on a line
//! says a finding of KIND must cover the next line; `// ok: KIND` says none
//! may. `// error: KIND` and `// warning: KIND` are `ruleid` markers that
//! also fix the finding's severity (a new unbounded retry warns; removing a
//! bound blocks); `// notice: KIND` expects a finding of severity note (a
//! judgment written down that does not block). Any finding no marker expects fails the case ("noisy"), so
//! a case with only `ok:` markers is a negative fixture. A header line
//! `// crate: NAME` names the library the case is about, and
//! `// pattern: N` the pattern of issue 11 ("detection that holds on real
//! code") it was built for.
//!
//! If you add a retry library to the analyzer, add a positive and a negative
//! case for it here; `every_crate_and_kind_has_positive_and_negative_cases`
//! checks that none is missing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use retrygate::analyze::rust::RustAnalyzer;
use retrygate::analyze::{self, Analyzer};
use retrygate::changeset::{ChangeSet, FileChange};
use retrygate::finding::{Finding, Severity};

struct Case {
    name: String,
    krate: String,
    base: BTreeMap<String, String>,
    head: BTreeMap<String, String>,
    /// `// note: TEXT`: a blocking note containing TEXT is expected.
    notes: Vec<String>,
    /// `// pattern: N`
    pattern: Option<u32>,
}

fn load(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let mut case = Case {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        krate: String::new(),
        base: BTreeMap::new(),
        head: BTreeMap::new(),
        notes: Vec::new(),
        pattern: None,
    };
    let mut current: Option<(bool, String)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("// ==== ").and_then(|r| r.strip_suffix(" ====")) {
            let mut parts = rest.split_whitespace();
            let side = parts.next().unwrap();
            let p = parts.next().unwrap_or("src/lib.rs").to_string();
            assert!(side == "base" || side == "head", "{}: bad section {rest}", case.name);
            let is_head = side == "head";
            let map = if is_head { &mut case.head } else { &mut case.base };
            map.entry(p.clone()).or_default();
            current = Some((is_head, p));
            continue;
        }
        if let Some(k) = t.strip_prefix("// crate: ") {
            case.krate = k.trim().to_string();
        }
        if let Some(n) = t.strip_prefix("// pattern: ") {
            case.pattern =
                Some(n.trim().parse().unwrap_or_else(|_| panic!("{}: bad pattern {n}", case.name)));
        }
        if let Some(n) = t.strip_prefix("// note: ") {
            case.notes.push(n.trim().to_string());
        }
        if let Some((is_head, p)) = &current {
            let map = if *is_head { &mut case.head } else { &mut case.base };
            let buf = map.get_mut(p).unwrap();
            buf.push_str(line);
            buf.push('\n');
        }
    }
    assert!(!case.krate.is_empty(), "{}: missing `// crate: NAME` header", case.name);
    case
}

fn cases() -> Vec<Case> {
    crate::common::rust_fixtures("rust").iter().map(|p| load(p)).collect()
}

fn run(case: &Case) -> (Vec<Finding>, Vec<String>) {
    let paths: BTreeSet<&String> = case.base.keys().chain(case.head.keys()).collect();
    let files: Vec<FileChange> = paths
        .into_iter()
        .map(|p| {
            FileChange::from_texts(
                p,
                case.base.get(p).map(String::as_str),
                case.head.get(p).map(String::as_str),
            )
        })
        .collect();
    let cs = ChangeSet::from_files(files);
    let rust = RustAnalyzer::new();
    let analyzers: [&dyn Analyzer; 1] = [&rust];
    let out = analyze::scan(&cs, &analyzers);
    (out.findings, out.notes.iter().map(|n| n.to_string()).collect())
}

/// Expected (path, line, kind, positive?, severity) from the markers.
fn expectations(case: &Case) -> Vec<(String, u32, String, bool, Option<Severity>)> {
    let mut out = Vec::new();
    let markers = [
        ("// ruleid: ", true, None),
        ("// error: ", true, Some(Severity::Error)),
        ("// warning: ", true, Some(Severity::Warning)),
        ("// notice: ", true, Some(Severity::Note)),
        ("// ok: ", false, None),
    ];
    for (path, text) in &case.head {
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            for (prefix, positive, severity) in markers {
                if let Some(kinds) = t.strip_prefix(prefix) {
                    for k in kinds.split(',') {
                        out.push((path.clone(), i as u32 + 2, k.trim().to_string(), positive, severity));
                    }
                }
            }
        }
    }
    out
}

fn check(case: &Case) -> Vec<String> {
    let (findings, notes) = run(case);
    let mut problems = Vec::new();
    for n in &notes {
        if !case.notes.iter().any(|want| n.contains(want.as_str())) {
            problems.push(format!("unexpected note: {n}"));
        }
    }
    for want in &case.notes {
        if !notes.iter().any(|n| n.contains(want.as_str())) {
            problems.push(format!("missing note: {want}"));
        }
    }
    let exp = expectations(case);
    let mut explained = vec![false; findings.len()];
    for (path, line, kind, positive, severity) in &exp {
        let hits: Vec<usize> = findings
            .iter()
            .enumerate()
            .filter(|(_, f)| &f.path == path && f.kind.id() == kind && f.line <= *line && *line <= f.end_line)
            .map(|(i, _)| i)
            .collect();
        if *positive {
            if hits.is_empty() {
                problems.push(format!("missing: {kind} at {path}:{line}"));
            }
            if let Some(want) = severity {
                for &i in &hits {
                    if findings[i].severity != *want {
                        problems.push(format!(
                            "{kind} at {path}:{line} is {:?}, the marker says {want:?}: {}",
                            findings[i].severity, findings[i].message
                        ));
                    }
                }
            }
            for i in hits {
                explained[i] = true;
            }
        } else if !hits.is_empty() {
            problems.push(format!("reported where `ok` says not: {kind} at {path}:{line}"));
        }
    }
    for (i, f) in findings.iter().enumerate() {
        if !explained[i] {
            problems
                .push(format!("noisy: {} at {}:{}-{}: {}", f.kind, f.path, f.line, f.end_line, f.message));
        }
    }
    problems
}

#[test]
fn rust_fixtures() {
    let all = cases();
    assert!(all.len() > 20, "fixtures not found");
    let mut failures = Vec::new();
    for case in &all {
        let problems = check(case);
        if !problems.is_empty() {
            failures.push(format!("{}:\n    {}", case.name, problems.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

/// The finding kinds the Rust analyzer decides (the other two are policy kinds).
const KINDS: &[&str] = &[
    "jitter-removed",
    "retry-count-raised",
    "retry-non-idempotent",
    "timeout-lowered",
    "retry-after-ignored",
    "retry-unbounded",
    "setting-discarded",
    "retry-without-jitter",
];

#[test]
fn every_crate_and_kind_has_positive_and_negative_cases() {
    let all = cases();
    let mut missing = Vec::new();
    // Every crate of the analyzer's registry, and hand-written loops.
    let crates = retrygate::testing::analyze::retry_library_names().into_iter().chain(["loop"]);
    for krate in crates {
        let mine: Vec<&Case> = all.iter().filter(|c| c.krate == krate).collect();
        let pos = mine.iter().any(|c| expectations(c).iter().any(|e| e.3));
        let neg = mine.iter().any(|c| expectations(c).iter().all(|e| !e.3));
        if !pos || !neg {
            missing.push(format!("crate {krate}: positive {pos}, negative {neg}"));
        }
    }
    for kind in KINDS {
        let pos = all.iter().any(|c| expectations(c).iter().any(|e| e.3 && e.2 == *kind));
        let neg = all.iter().any(|c| expectations(c).iter().any(|e| !e.3 && e.2 == *kind));
        if !pos || !neg {
            missing.push(format!("kind {kind}: positive {pos}, negative {neg}"));
        }
    }
    assert!(missing.is_empty(), "fixtures missing:\n{}", missing.join("\n"));
}

/// Issue 11's patterns that the Rust analyzer decides (3, test code, is
/// decided with the paths configuration; 7, one finding per kind and line,
/// has its own tests next to `keep_most_severe`).
const PATTERNS: &[u32] = &[1, 2, 4, 5, 6];

#[test]
fn every_pattern_has_positive_and_negative_cases() {
    let all = cases();
    let mut missing = Vec::new();
    for p in PATTERNS {
        let mine: Vec<&Case> = all.iter().filter(|c| c.pattern == Some(*p)).collect();
        let pos = mine.iter().any(|c| expectations(c).iter().any(|e| e.3));
        let neg = mine.iter().any(|c| expectations(c).iter().all(|e| !e.3));
        if !pos || !neg {
            missing.push(format!("pattern {p}: positive {pos}, negative {neg}"));
        }
    }
    assert!(missing.is_empty(), "fixtures missing:\n{}", missing.join("\n"));
}

#[test]
fn benign_cases_raise_no_error() {
    for case in cases().iter().filter(|c| c.name.starts_with("benign_")) {
        let (findings, _) = run(case);
        let errors: Vec<_> = findings.iter().filter(|f| f.severity == Severity::Error).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", case.name);
    }
}
