//! One-click fixes from the Rust analyzer, case by case.
//!
//! Each file in `tests/fixtures/fixes/` holds `// ==== base ====` and
//! `// ==== head ====` sections of `src/lib.rs`, a header `// kinds: K, ..`
//! naming the finding kinds the change must produce, and `// fix: K, ..`
//! naming those that must carry a fix. A `// ==== fixed ====` section is the
//! head with every fix applied, and must match exactly; a case without one
//! must produce no fix at all (the negative cases: a line that also changed
//! otherwise, code that moved, a removal that was really a rewrite).

use std::collections::BTreeSet;
use std::path::Path;

use retrygate::analyze::rust::RustAnalyzer;
use retrygate::analyze::{self, Analyzer};
use retrygate::changeset::{ChangeSet, FileChange};
use retrygate::finding::Finding;

struct Case {
    name: String,
    kinds: BTreeSet<String>,
    fixed_kinds: BTreeSet<String>,
    base: String,
    head: String,
    fixed: Option<String>,
}

fn list(line: &str) -> BTreeSet<String> {
    line.split(',').map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).collect()
}

fn load(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let (mut kinds, mut fixed_kinds) = (BTreeSet::new(), BTreeSet::new());
    let mut sections: [Option<String>; 3] = [None, None, None];
    let mut current: Option<usize> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("// ==== ").and_then(|r| r.strip_suffix(" ====")) {
            let i = ["base", "head", "fixed"].iter().position(|s| *s == rest);
            current = Some(i.unwrap_or_else(|| panic!("{name}: unknown section {rest}")));
            sections[current.unwrap()] = Some(String::new());
            continue;
        }
        match current {
            Some(i) => {
                let s = sections[i].as_mut().unwrap();
                s.push_str(line);
                s.push('\n');
            }
            None => {
                if let Some(k) = t.strip_prefix("// kinds:") {
                    kinds = list(k);
                }
                if let Some(k) = t.strip_prefix("// fix:") {
                    fixed_kinds = list(k);
                }
            }
        }
    }
    let [base, head, fixed] = sections;
    let case = Case {
        name: name.clone(),
        kinds,
        fixed_kinds,
        base: base.unwrap_or_else(|| panic!("{name}: no base")),
        head: head.unwrap_or_else(|| panic!("{name}: no head")),
        fixed,
    };
    assert!(!case.kinds.is_empty(), "{name}: no `// kinds:` header");
    assert_eq!(
        case.fixed.is_some(),
        !case.fixed_kinds.is_empty(),
        "{name}: `// fix:` and the fixed section go together"
    );
    case
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fixes");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths.iter().filter(|p| p.extension().is_some_and(|e| e == "rs")).map(|p| load(p)).collect()
}

fn findings(case: &Case) -> Vec<Finding> {
    let cs =
        ChangeSet::from_files(vec![FileChange::from_texts("src/lib.rs", Some(&case.base), Some(&case.head))]);
    let rust = RustAnalyzer::new();
    let analyzers: [&dyn Analyzer; 1] = [&rust];
    analyze::scan(&cs, &analyzers).findings
}

/// The head with every fix applied, bottom up; overlapping fixes fail.
fn apply(head: &str, findings: &[Finding]) -> String {
    let mut lines: Vec<String> = head.lines().map(str::to_string).collect();
    let mut fixes: Vec<_> = findings.iter().filter_map(|f| f.fix.as_ref()).collect();
    fixes.sort_by_key(|f| std::cmp::Reverse(f.line));
    let mut floor = u32::MAX;
    for f in fixes {
        assert!(f.end_line < floor, "overlapping fixes: {f:?}");
        floor = f.line;
        let new: Vec<String> = f.replacement.split('\n').map(str::to_string).collect();
        lines.splice(f.line as usize - 1..f.end_line as usize, new);
    }
    lines.join("\n") + "\n"
}

#[test]
fn fixes_put_back_what_the_base_had_and_only_when_sure() {
    let all = cases();
    assert!(all.len() >= 10, "fixture cases not found");
    let mut problems = Vec::new();
    for case in &all {
        let found = findings(case);
        let kinds: BTreeSet<String> = found.iter().map(|f| f.kind.id().to_string()).collect();
        for k in case.kinds.difference(&kinds) {
            problems.push(format!("{}: no {k} finding (got {kinds:?})", case.name));
        }
        let with_fix: BTreeSet<String> =
            found.iter().filter(|f| f.fix.is_some()).map(|f| f.kind.id().to_string()).collect();
        if with_fix != case.fixed_kinds {
            problems.push(format!(
                "{}: fixes on {with_fix:?}, expected on {:?}: {:#?}",
                case.name,
                case.fixed_kinds,
                found.iter().map(|f| (f.kind, &f.fix)).collect::<Vec<_>>()
            ));
            continue;
        }
        if let Some(want) = &case.fixed {
            let got = apply(&case.head, &found);
            if &got != want {
                problems.push(format!("{}: applying the fixes gives\n{got}", case.name));
            }
        }
        for f in found.iter().filter(|f| f.fix.is_some()) {
            let fix = f.fix.as_ref().unwrap();
            let changed = FileChange::from_texts("src/lib.rs", Some(&case.base), Some(&case.head));
            // Inside the diff: changed lines, or the one line above a pure deletion.
            let inside = changed.touches(fix.line, fix.end_line) || fix.line == fix.end_line;
            assert!(inside, "{}: fix outside the change: {fix:?}", case.name);
            assert!(!fix.description.is_empty());
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn both_positive_and_negative_cases_exist_for_every_fixable_kind() {
    let all = cases();
    for kind in ["retry-count-raised", "timeout-lowered", "jitter-removed", "retry-after-ignored"] {
        assert!(all.iter().any(|c| c.fixed_kinds.contains(kind)), "no case where {kind} gets a fix");
        assert!(
            all.iter().any(|c| c.kinds.contains(kind) && !c.fixed_kinds.contains(kind)),
            "no case where {kind} must not get a fix"
        );
    }
}

#[test]
fn fixes_reach_the_json_output() {
    let case = cases().into_iter().find(|c| c.name == "count_literal_raised").unwrap();
    let found = findings(&case);
    let v = serde_json::to_value(&found).unwrap();
    let fix = &v[0]["fix"];
    assert_eq!(fix["line"], 8, "{v}");
    assert_eq!(fix["end_line"], 8);
    assert_eq!(fix["replacement"], "                .with_max_times(3),");
    assert_eq!(fix["description"], "put back the base's count");
    let back: Vec<Finding> = serde_json::from_value(v).unwrap();
    assert_eq!(back, found, "the JSON form reads back");
}

/// The rule packs put back a compared value the same way, when it is the
/// only change on its line.
#[test]
fn rule_packs_put_back_a_raised_count_alone_on_its_line() {
    let rules = retrygate::analyze::rules::RulePackAnalyzer::bundled().unwrap();
    let analyzers: [&dyn Analyzer; 1] = [&rules];
    let run = |base: &str, head: &str| {
        let cs = ChangeSet::from_files(vec![FileChange::from_texts("app/client.py", Some(base), Some(head))]);
        analyze::scan(&cs, &analyzers).findings
    };
    let base = "import x\n\nclient = naive_client(timeout_s=2.5, retries=2)\n";
    let found = run(base, "import x\n\nclient = naive_client(timeout_s=2.5, retries=6)\n");
    let raised: Vec<&Finding> = found.iter().filter(|f| f.kind.id() == "retry-count-raised").collect();
    assert_eq!(raised.len(), 1, "{found:#?}");
    let fix = raised[0].fix.as_ref().expect("a fix");
    assert_eq!((fix.line, fix.end_line), (3, 3));
    assert_eq!(fix.replacement, "client = naive_client(timeout_s=2.5, retries=2)");

    // The same line also lowered the timeout: neither finding gets a fix.
    let found = run(base, "import x\n\nclient = naive_client(timeout_s=0.5, retries=6)\n");
    assert!(found.iter().any(|f| f.kind.id() == "retry-count-raised"), "{found:#?}");
    assert!(found.iter().all(|f| f.fix.is_none()), "{found:#?}");
}
