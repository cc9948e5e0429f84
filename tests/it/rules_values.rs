//! Values the rule packs compute rather than read as a literal: an
//! expression that cannot be computed where a number was is a blocking note
//! naming the file and line; one with a written default is compared.

use retrygate::analyze::rules::RulePackAnalyzer;
use retrygate::analyze::Analyzer;
use retrygate::changeset::FileChange;

fn scan(path: &str, base: &str, head: &str) -> retrygate::analyze::FileResult {
    let packs = RulePackAnalyzer::bundled().unwrap();
    packs.analyze(&FileChange::from_texts(path, Some(base), Some(head)))
}

const BASE: &str =
    "from urllib3.util import Retry\n\ndef adapter():\n    return Retry(total=3, backoff_factor=0.5)\n";

#[test]
fn a_literal_replaced_by_a_value_that_cannot_be_computed_is_a_blocking_note() {
    let head = BASE.replace("total=3", "total=settings.http_retries()");
    let r = scan("svc/http.py", BASE, &head);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    let note = &r.notes[0];
    assert!(note.blocking);
    assert_eq!(note.path.as_deref(), Some("svc/http.py"));
    assert!(note.message.starts_with("line 4: "), "{}", note.message);
    assert!(note.message.contains("`settings.http_retries()`"), "{}", note.message);
    assert!(note.message.contains("was 3"), "{}", note.message);
    assert!(note.message.contains("python/urllib3-retry-total-raised"), "{}", note.message);
}

#[test]
fn an_environment_read_without_a_default_is_a_blocking_note_and_with_one_is_compared() {
    let head = BASE.replace("total=3", "total=int(os.environ[\"HTTP_RETRIES\"])");
    let r = scan("svc/http.py", BASE, &head);
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(r.notes[0].message.contains("no written default"), "{}", r.notes[0].message);

    // The written default is what runs: 2 is lower, nothing to say.
    let head = BASE.replace("total=3", "total=int(os.environ.get(\"HTTP_RETRIES\", \"2\"))");
    let r = scan("svc/http.py", BASE, &head);
    assert!(r.findings.is_empty() && r.notes.is_empty(), "{:?} {:?}", r.findings, r.notes);
    // ... and 9 is higher: a finding, no note.
    let head = BASE.replace("total=3", "total=int(os.environ.get(\"HTTP_RETRIES\", \"9\"))");
    let r = scan("svc/http.py", BASE, &head);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert_eq!(r.findings[0].message, "urllib3 Retry count raised from 3 to 9 (4 -> 10 attempts)");
}

#[test]
fn a_value_that_cannot_be_computed_on_both_sides_or_in_new_code_is_not_a_note() {
    let base = BASE.replace("total=3", "total=load()");
    let head = base.replace("backoff_factor=0.5", "backoff_factor=1");
    let r = scan("svc/http.py", &base, &head);
    assert!(r.notes.is_empty() && r.findings.is_empty(), "{:?} {:?}", r.notes, r.findings);
    let r = scan("svc/http.py", "import os\n", &BASE.replace("total=3", "total=load()"));
    assert!(r.notes.is_empty(), "new code has nothing to compare with: {:?}", r.notes);
}

#[test]
fn a_constant_raised_away_from_its_use_is_reported_on_the_constant() {
    let base = "from tenacity import retry, stop_after_attempt\n\nLIMIT = 3\n\n\n@retry(stop=stop_after_attempt(LIMIT))\ndef f():\n    pass\n";
    let r = scan("svc/job.py", base, &base.replace("LIMIT = 3", "LIMIT = 8"));
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert_eq!((r.findings[0].line, r.findings[0].message.as_str()), (3, "attempt limit raised from 3 to 8"));
    // The same constant lowered, or a constant no retry uses, is not.
    assert!(scan("svc/job.py", base, &base.replace("LIMIT = 3", "LIMIT = 2")).findings.is_empty());
    let unused = base.replace("stop_after_attempt(LIMIT)", "stop_after_attempt(3)");
    assert!(scan("svc/job.py", &unused, &unused.replace("LIMIT = 3", "LIMIT = 8")).findings.is_empty());
}

#[test]
fn config_values_are_not_resolved_as_names() {
    // `retries: auto` in YAML is a word, not a variable: no note.
    let r = scan("deploy/values.yaml", "http:\n  retries: 2\n", "http:\n  retries: auto\n");
    assert!(r.notes.is_empty() && r.findings.is_empty(), "{:?} {:?}", r.notes, r.findings);
}
