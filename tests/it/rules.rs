//! The rule packs end to end: every bundled rule's annotated cases, the
//! documentation meta-checks, the checkout incident through a real git
//! repository, and the command line's exit codes and error messages.

use crate::common;
use common::{git, write};

use std::path::{Path, PathBuf};
use std::process::Command;

use retrygate::analyze::rules::{cases, docs, read_rule_dir, test_dir, RulePackAnalyzer, BUNDLED};
use retrygate::analyze::Analyzer;
use retrygate::changeset::{ChangeSet, FileChange};
use retrygate::finding::Kind;

fn rules_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rules")
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_retrygate"))
}

#[test]
fn every_bundled_rule_case_validates() {
    let report = test_dir(&rules_dir()).unwrap();
    assert!(report.passed(), "rule tests failed:\n{}", report.render());
    assert!(report.cases >= 10, "expected the bundled cases, found {}", report.cases);
}

#[test]
fn every_rule_has_docs_and_a_positive_and_a_negative_case() {
    let packs = RulePackAnalyzer::bundled().unwrap();
    assert!(packs.rules().len() >= 40, "only {} rules loaded", packs.rules().len());
    for r in packs.rules() {
        for (field, text) in [
            ("message", &r.message),
            ("what", &r.docs.what),
            ("why", &r.docs.why),
            ("example", &r.docs.example),
            ("use_instead", &r.docs.use_instead),
        ] {
            assert!(text.trim().len() >= 10, "{}: {field} is too short: {text:?}", r.id);
        }
        assert!(!r.languages.is_empty(), "{}: no languages", r.id);
    }
    let report = test_dir(&rules_dir()).unwrap();
    for r in packs.rules() {
        let validated = |positive: bool| {
            report
                .results
                .iter()
                .filter(|c| {
                    c.rule == r.id && c.positive == positive && c.outcome == cases::CaseOutcome::Validated
                })
                .count()
        };
        assert!(validated(true) >= 1, "{}: no validated `ruleid:` case", r.id);
        assert!(validated(false) >= 1, "{}: no validated `ok:` case", r.id);
    }
}

#[test]
fn every_pack_is_covered() {
    let packs = RulePackAnalyzer::bundled().unwrap();
    for prefix in ["python/", "js/", "go/", "java/", "infra/"] {
        let n = packs.rules().iter().filter(|r| r.id.starts_with(prefix)).count();
        assert!(n >= 5, "pack {prefix} has only {n} rules");
    }
}

#[test]
fn the_binary_embeds_exactly_the_rule_files_in_the_repository() {
    let on_disk = read_rule_dir(&rules_dir()).unwrap();
    let disk_names: Vec<String> = on_disk
        .iter()
        .map(|(p, _)| Path::new(p).file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let bundled_names: Vec<String> = BUNDLED
        .iter()
        .map(|(p, _)| Path::new(p).file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(disk_names, bundled_names, "add new rule files to BUNDLED in src/analyze/rules/mod.rs");
    for ((_, disk), (_, embedded)) in on_disk.iter().zip(BUNDLED) {
        assert_eq!(disk, embedded);
    }
}

#[test]
fn the_docs_table_is_generated_from_the_rules() {
    let packs = RulePackAnalyzer::bundled().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let expected = docs::splice(&doc, &docs::rules_and_floor_table(packs.rules())).unwrap();
    assert!(doc == expected, "docs/rules.md is out of date; run scripts/regen.sh");
    for r in packs.rules() {
        assert!(doc.contains(&format!("`{}`", r.id)), "{} missing from docs/rules.md", r.id);
    }
}

#[test]
fn the_checkout_incident_yields_three_findings() {
    let packs = RulePackAnalyzer::bundled().unwrap();
    let file = FileChange::from_texts(
        "checkout/client.py",
        Some("client = naive_client(timeout_s=2.5, retries=2, jitter=True)\n"),
        Some("client = naive_client(timeout_s=0.8, retries=6, jitter=False)\n"),
    );
    let mut found: Vec<(Kind, String)> =
        packs.analyze(&file).findings.into_iter().map(|f| (f.kind, f.rule)).collect();
    found.sort();
    assert_eq!(
        found,
        vec![
            (Kind::JitterRemoved, "python/jitter-disabled".to_string()),
            (Kind::RetryCountRaised, "python/retries-raised".to_string()),
            (Kind::TimeoutLowered, "python/timeout-lowered".to_string()),
        ]
    );
}

/// A repository with `base` committed on main and `head` on a branch.
fn repo(files: &[(&str, &str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    for (path, base, _) in files {
        let p = d.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, base).unwrap();
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["checkout", "-q", "-b", "agent/change"]);
    for (path, _, head) in files {
        std::fs::write(d.join(path), head).unwrap();
    }
    git(d, &["commit", "-q", "-am", "head"]);
    dir
}

#[test]
fn scan_of_a_real_repository_reports_head_lines_with_attempts() {
    let dir = repo(&[
        (
            "checkout/client.py",
            "import x\n\nclient = naive_client(timeout_s=2.5, retries=2, jitter=True)\n",
            "import x\n\nclient = naive_client(timeout_s=0.8, retries=6, jitter=False)\n",
        ),
        ("README.md", "Use retries=2 and jitter=True.\n", "Use retries=6 and jitter=False.\n"),
        ("deploy/values.yaml", "replicas: 2\npage:\n  limit: 20\n", "replicas: 6\npage:\n  limit: 50\n"),
    ]);
    let cs = ChangeSet::from_git(dir.path(), "main", "HEAD").unwrap();
    let report = retrygate::scan::scan_changeset(&cs).unwrap();
    let json = serde_json::to_value(&report).unwrap();
    let findings = json["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 3, "{json:#}");
    assert!(findings.iter().all(|f| f["path"] == "checkout/client.py" && f["line"] == 3), "{json:#}");
    let raised = findings.iter().find(|f| f["kind"] == "retry-count-raised").unwrap();
    assert_eq!(raised["base"], serde_json::json!({"attempts": 3}));
    assert_eq!(raised["head"], serde_json::json!({"attempts": 7}));
    assert_eq!(raised["message"], "retries raised from 2 to 6 (3 -> 7 attempts)");
    let jitter = findings.iter().find(|f| f["kind"] == "jitter-removed").unwrap();
    assert_eq!(jitter["message"], "jitter disabled: jitter=False");
    let timeout = findings.iter().find(|f| f["kind"] == "timeout-lowered").unwrap();
    assert_eq!(timeout["base"], serde_json::json!({"seconds": 2.5}));
    assert_eq!(timeout["head"], serde_json::json!({"seconds": 0.8}));
    assert_eq!(json["verdict"], "block");

    let out =
        bin().args(["scan", "--base", "main", "--format", "json"]).current_dir(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("python/timeout-lowered"));
}

#[test]
fn a_change_that_only_moves_or_lowers_retries_passes() {
    let dir = repo(&[(
        "app/http.py",
        "from urllib3.util import Retry\nA = Retry(total=5, allowed_methods=None)\n\ndef f():\n    return 1\n",
        "from urllib3.util import Retry\n\ndef f():\n    return 1\nA = Retry(total=2, allowed_methods=None)\n",
    )]);
    let cs = ChangeSet::from_git(dir.path(), "main", "HEAD").unwrap();
    let report = retrygate::scan::scan_changeset(&cs).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn extra_rules_are_loaded_and_their_errors_name_file_rule_and_reason() {
    let extra = r#"
rules:
  - id: local/my-retries
    kind: retry-count-raised
    severity: warning
    languages: [python]
    paths: ["svc/**"]
    message: "my_retries raised from {base} to {head}"
    pattern: '\bmy_retries\s*=\s*(?P<n>\d+)'
    when: raised
    counts: retries
    docs: { what: a local rule, why: because we said so, example: my_retries=1 -> 2, use_instead: my_retries=1 }
"#;
    let packs = RulePackAnalyzer::with_extra(vec![("local.yml".into(), extra.into())]).unwrap();
    let hit = FileChange::from_texts("svc/a.py", Some("my_retries=1\n"), Some("my_retries=4\n"));
    let f = packs.analyze(&hit).findings;
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].rule, "local/my-retries");
    assert_eq!(f[0].severity, retrygate::finding::Severity::Warning);
    let elsewhere = FileChange::from_texts("lib/a.py", Some("my_retries=1\n"), Some("my_retries=4\n"));
    assert!(packs.analyze(&elsewhere).findings.is_empty(), "paths: must limit the rule");

    let dup = extra.replace("local/my-retries", "python/retries-raised");
    let e = RulePackAnalyzer::with_extra(vec![("local.yml".into(), dup)]).unwrap_err();
    assert_eq!(
        format!("{e:#}"),
        "local.yml: rule 'python/retries-raised': the id is already used in rules/python.yml; rule ids must be unique"
    );
    let bad = extra.replace("(?P<n>\\d+)", "(?P<n>\\d+");
    let e = format!("{:#}", RulePackAnalyzer::with_extra(vec![("local.yml".into(), bad)]).unwrap_err());
    assert!(e.starts_with("local.yml: rule 'local/my-retries': bad `pattern`"), "{e}");
}

#[test]
fn prose_files_are_not_read() {
    let packs = RulePackAnalyzer::bundled().unwrap();
    for p in ["README.md", "docs/retries.rst", "CHANGELOG.txt", "notes"] {
        assert!(!packs.wants(p), "{p} must not be scanned");
    }
    for p in ["a.py", "b.ts", "c.go", "D.java", "e.kt", "values.yaml", ".env", "Dockerfile", "nginx.conf"] {
        assert!(packs.wants(p), "{p} must be scanned");
    }
}

const ONE_RULE: &str = r#"rules:
  - id: t/retries
    kind: retry-count-raised
    severity: error
    languages: [python]
    message: "retries {base} -> {head}"
    pattern: '\bretries=(?P<n>\d+)'
    when: raised
    counts: retries
    docs: { what: w, why: y, example: e, use_instead: u }
"#;

#[test]
fn rules_test_cli_passes_fails_and_errors_with_the_right_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "r.yml", ONE_RULE);
    write(d, "tests/c/base/a.py", "f(retries=1)\ng(retries=1)\n");
    write(d, "tests/c/head/a.py", "# ruleid: t/retries\nf(retries=3)\n# ok: t/retries\ng(retries=1)\n");
    let out = bin().args(["rules", "test"]).arg(d).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("2 validated") && stdout.ends_with("PASS\n"), "{stdout}");

    // A wrong expectation: Missing and Noisy, exit 1.
    write(d, "tests/c/head/a.py", "f(retries=3)\n# ruleid: t/retries\ng(retries=1)\n");
    let out = bin().args(["rules", "test"]).arg(d).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("Missing   t/retries c/a.py:3"), "{stdout}");
    assert!(stdout.contains("Noisy     t/retries c/a.py:1"), "{stdout}");
    assert!(stdout.contains("UNTESTED  t/retries"), "{stdout}");

    // A rule file that does not load: exit 2, naming file, rule and reason.
    write(d, "r.yml", ONE_RULE.replace("counts: retries", "counts: retries\n    colour: blue"));
    let out = bin().args(["rules", "test"]).arg(d).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("r.yml: rule 't/retries': unknown field `colour`"), "{stderr}");

    // An annotation naming an unknown rule is an error in the report.
    write(d, "r.yml", ONE_RULE);
    write(d, "tests/c/head/a.py", "# ruleid: t/nope\nf(retries=3)\n");
    let out = bin().args(["rules", "test"]).arg(d).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("c/head/a.py:2: annotation names unknown rule 't/nope'"), "{stdout}");
}

#[test]
fn rules_test_without_a_rules_folder_says_what_to_pass() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().args(["rules", "test"]).current_dir(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass the rules folder"));
    let out = bin().args(["rules", "test"]).arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no *.yml rule files"));
}

#[test]
fn rules_list_prints_every_rule() {
    let out = bin().args(["rules", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let packs = RulePackAnalyzer::bundled().unwrap();
    let rust = retrygate::analyze::rust::checks::all_ids();
    let floor = retrygate::analyze::knobs::CHECKS.len();
    let trees = retrygate::analyze::trees::CHECKS.len();
    let ops = retrygate::analyze::operations::CHECKS.len();
    assert_eq!(stdout.lines().count(), packs.rules().len() + floor + trees + ops + rust.len());
    assert!(stdout.lines().any(|l| l.starts_with("op/new-retry-of-write ")), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("knob/jitter-removed ")), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("tree/retry-non-idempotent ")), "{stdout}");
    assert!(stdout.contains("python/retries-raised"));
    assert!(stdout.lines().any(|l| l.starts_with("rust/backon-jitter ")), "{stdout}");
}
