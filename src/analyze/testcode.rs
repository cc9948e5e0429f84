//! Test code does not block: findings in tests, benches, examples and
//! fixtures are reported as notes, and say why.
//!
//! A retry in a test talks to a fake server, or is the deliberately bad
//! input a test feeds the code under test; blocking on it teaches maintainers
//! to switch the gate off. The decision is made here, once, after every
//! analyzer has run ([`crate::analyze::scan_with`]), so the Rust analyzer and
//! the rule packs get the same treatment:
//!
//! - [`ScanPaths`]: the compiled `paths.ignore` (files no analyzer reads)
//!   and `paths.tests` (test code; [`DEFAULT_TEST_PATTERNS`] unless set);
//! - [`test_code_reason`]: the pure decision for one finding, given what is
//!   known of its file ([`FileFacts`]: the test pattern its path matches, and
//!   for Rust the `#[cfg(test)]`/`#[test]` items of the head);
//! - [`demote`]: applies it to a scan's findings and notes.
//!
//! ```
//! use retrygate::analyze::testcode::{test_code_reason, FileFacts, ScanPaths};
//! use retrygate::finding::{Finding, Kind};
//! let paths = ScanPaths::defaults();
//! let f = Finding::new(Kind::RetryCountRaised, "py/x", "svc/tests/test_client.py", 3);
//! let facts = FileFacts { test_pattern: paths.test_pattern("svc/tests/test_client.py"), test_items: &[] };
//! assert!(test_code_reason(&f, &facts).unwrap().contains("**/tests/"));
//! ```

use std::collections::HashMap;

use crate::analyze::rust::testitems::{test_items, TestItem};
use crate::changeset::{ChangeSet, Side};
use crate::config::{Paths, ProtectedPaths};
use crate::finding::{Finding, Note, Severity};

/// Test code unless the base config sets `paths.tests`, in the
/// `protected_paths` pattern rules (`dir/` is everything under it).
pub const DEFAULT_TEST_PATTERNS: &[&str] = &[
    // Rust (and any language that uses these folders)
    "**/tests/",
    "**/benches/",
    "**/examples/",
    // Python
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
    // Go
    "**/*_test.go",
    // JavaScript / TypeScript
    "**/*.test.*",
    "**/*.spec.*",
    "**/__tests__/",
    // Java / Kotlin (Maven and Gradle layout)
    "**/src/test/",
    // Fixture folders
    "**/fixtures/",
    "**/__fixtures__/",
    "**/test-fixtures/",
    "**/test_fixtures/",
    "**/testdata/",
    "**/test_data/",
];

/// The path half of the decision, compiled once per scan.
#[derive(Debug, Clone)]
pub struct ScanPaths {
    ignore: ProtectedPaths,
    tests: ProtectedPaths,
    /// `paths.tests` or the default patterns, for the note's wording.
    tests_key: &'static str,
}

impl ScanPaths {
    /// No ignored files; the default test patterns.
    pub fn defaults() -> ScanPaths {
        ScanPaths::from_config(&Paths::default())
    }

    /// From the (validated) `paths` section of the base config.
    pub fn from_config(paths: &Paths) -> ScanPaths {
        let (tests, tests_key) = match &paths.tests {
            Some(globs) => (ProtectedPaths::new(globs), "paths.tests"),
            None => {
                let defaults: Vec<String> = DEFAULT_TEST_PATTERNS.iter().map(|s| s.to_string()).collect();
                (ProtectedPaths::new(&defaults), DEFAULTS_KEY)
            }
        };
        ScanPaths { ignore: ProtectedPaths::new(&paths.ignore), tests, tests_key }
    }

    /// The `paths.ignore` entry that drops `path` from the scan, if any.
    pub fn ignored(&self, path: &str) -> Option<&str> {
        self.ignore.matching(path)
    }

    /// The test pattern `path` matches, if any.
    ///
    /// With the default patterns a Rust file under a `src/` folder is
    /// compiled into its crate, whatever the folders inside `src/` are
    /// called (`src/fixtures/retry.rs` is a module that can ship); only
    /// `#[cfg(test)]` and `#[test]` items make code there test code. So for
    /// such a file only the path up to its last `src` folder is matched: the
    /// crate as a whole may be test code (`tests/clients/x/src/main.rs`), a
    /// folder inside `src/` cannot make it so. A `paths.tests` the base sets
    /// is taken as written.
    pub fn test_pattern(&self, path: &str) -> Option<&str> {
        if self.tests_key == DEFAULTS_KEY && path.ends_with(".rs") {
            let crate_src = match path.rfind("/src/") {
                Some(i) => Some(&path[..i + "/src".len()]),
                None => path.starts_with("src/").then_some("src"),
            };
            if let Some(dir) = crate_src {
                return self.tests.matching(dir);
            }
        }
        self.tests.matching(path)
    }
}

/// How the note names the default patterns (and how [`ScanPaths`] knows it has them).
const DEFAULTS_KEY: &str = "the default test patterns";

/// What is known of one file when deciding whether a finding in it is test code.
#[derive(Debug, Clone, Copy)]
pub struct FileFacts<'a> {
    /// The test pattern its path matches ([`ScanPaths::test_pattern`]).
    pub test_pattern: Option<&'a str>,
    /// Test items of the file's head (Rust only; empty otherwise).
    pub test_items: &'a [TestItem],
}

/// Why `finding` is in test code (and so does not block), or `None`.
///
/// A finding for the whole file (line 0) is test code only by its path; a
/// finding on lines is test code by its path, or when a test item covers
/// every one of its lines.
pub fn test_code_reason(finding: &Finding, file: &FileFacts) -> Option<String> {
    if let Some(pattern) = file.test_pattern {
        return Some(format!("test code (the path matches `{pattern}`)"));
    }
    if finding.line == 0 {
        return None;
    }
    file.test_items
        .iter()
        .find(|t| t.line <= finding.line && finding.end_line <= t.end_line)
        .map(|t| format!("test code (inside `{}`, lines {}-{})", t.what, t.line, t.end_line))
}

/// Turns every `warning` and `error` finding in test code into a `note`
/// whose message ends with why, and every blocking note about a file whose
/// path is test code into an informational one (all findings there would be
/// notes, so not being able to read it hides nothing that blocks).
pub fn demote(findings: &mut [Finding], notes: &mut [Note], cs: &ChangeSet, paths: &ScanPaths) {
    // Parsed at most once per file, and only for files that have a finding
    // the path alone does not settle.
    let mut items: HashMap<String, Vec<TestItem>> = HashMap::new();
    for f in findings.iter_mut().filter(|f| f.severity > Severity::Note) {
        let test_pattern = paths.test_pattern(&f.path);
        if test_pattern.is_none() && !items.contains_key(&f.path) {
            items.insert(f.path.clone(), rust_test_items(cs, &f.path));
        }
        let facts =
            FileFacts { test_pattern, test_items: items.get(&f.path).map(Vec::as_slice).unwrap_or(&[]) };
        if let Some(why) = test_code_reason(f, &facts) {
            let was = if f.severity == Severity::Error { "an error" } else { "a warning" };
            f.severity = Severity::Note;
            f.message = format!("{}; {why}: a note instead of {was}, so it does not block", f.message);
        }
    }
    for n in notes.iter_mut().filter(|n| n.blocking) {
        let Some(pattern) = n.path.as_deref().and_then(|p| paths.test_pattern(p)) else { continue };
        n.blocking = false;
        n.message = format!(
            "{}; the path is test code (matches `{pattern}` of {}), where findings do not block, so this does not block either",
            n.message, paths.tests_key
        );
    }
}

/// The test items of the Rust file `path` in the change set: of its head, or
/// of its base when it was deleted. A file that does not parse has none (the
/// Rust analyzer already said it could not read it).
fn rust_test_items(cs: &ChangeSet, path: &str) -> Vec<TestItem> {
    if !path.ends_with(".rs") {
        return Vec::new();
    }
    let Some(file) = cs.files.iter().find(|f| f.path == path) else { return Vec::new() };
    let text = match (&file.head, &file.base) {
        (Side::Text(t), _) | (Side::Absent, Side::Text(t)) => t,
        _ => return Vec::new(),
    };
    // Cheap prefilter: no attribute can name a test without the word.
    if !text.contains("test") {
        return Vec::new();
    }
    test_items(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changeset::FileChange;
    use crate::finding::Kind;

    fn finding(path: &str, line: u32, end_line: u32) -> Finding {
        Finding::new(Kind::RetryCountRaised, "rust/x", path, line).lines(line, end_line).message("raised")
    }

    #[test]
    fn default_patterns_cover_every_language_layout() {
        let p = ScanPaths::defaults();
        let tests = [
            "tests/retry.rs",
            "crates/net/tests/it.rs",
            "benches/scan.rs",
            "examples/client.rs",
            "pkg/test_client.py",
            "client_test.py",
            "svc/conftest.py",
            "svc/tests/helpers.py",
            "net/client_test.go",
            "src/api.test.ts",
            "web/api.spec.js",
            "web/__tests__/api.ts",
            "app/src/test/java/RetryTest.java",
            "app/src/test/kotlin/RetryTest.kt",
            "rules/tests/python-checkout/head/client.py",
            "tests/fixtures/rust/backon_unbounded.rs",
            "go/testdata/x.go",
            "js/__fixtures__/a.js",
            // A whole test crate: the folder above src/ decides.
            "tests/clients/reqwest-retry/src/main.rs",
            "examples/server/src/main.rs",
            // Other languages keep their layouts inside src/.
            "pkg/src/tests/test_x.py",
            "web/src/__tests__/api.ts",
            "app/src/fixtures/data.py",
        ];
        for path in tests {
            assert!(p.test_pattern(path).is_some(), "{path} is test code");
        }
        let production = [
            "src/retry.rs",
            "src/testing.rs",
            "src/tests.rs",
            "client.py",
            "testing/client.py",
            "contest.py",
            "net/client.go",
            "src/api.ts",
            "src/latest/api.ts",
            "app/src/main/java/Retry.java",
            "src/test_utils.rs",
            // Rust modules inside src/ ship with the crate, whatever their folder is called.
            "src/fixtures/retry.rs",
            "src/tests/mod.rs",
            "crates/net/src/examples/client.rs",
            "crates/net/src/test/mod.rs",
        ];
        for path in production {
            assert_eq!(p.test_pattern(path), None, "{path} is not test code");
        }
    }

    #[test]
    fn paths_tests_replaces_the_defaults_and_ignore_matches_its_globs() {
        let paths =
            Paths { ignore: vec!["vendor/".into(), "**/*.pb.go".into()], tests: Some(vec!["qa/".into()]) };
        let p = ScanPaths::from_config(&paths);
        assert_eq!(p.test_pattern("qa/load.py"), Some("qa/"));
        assert_eq!(p.test_pattern("tests/retry.rs"), None, "set paths.tests replaces the defaults");
        assert_eq!(p.ignored("vendor/lib/x.go"), Some("vendor/"));
        assert_eq!(p.ignored("api/v1/x.pb.go"), Some("**/*.pb.go"));
        assert_eq!(p.ignored("src/vendor.rs"), None);
        let none = ScanPaths::from_config(&Paths { ignore: vec![], tests: Some(vec![]) });
        assert_eq!(none.test_pattern("tests/retry.rs"), None, "`tests: []` means no path is test code");
        assert_eq!(ScanPaths::defaults().ignored("vendor/x.go"), None, "nothing is ignored by default");
    }

    #[test]
    fn the_decision_by_path_and_by_test_item() {
        let item = TestItem { what: "#[cfg(test)] mod tests".into(), line: 10, end_line: 20 };
        let by_item = FileFacts { test_pattern: None, test_items: std::slice::from_ref(&item) };
        let why = test_code_reason(&finding("src/a.rs", 12, 14), &by_item).unwrap();
        assert_eq!(why, "test code (inside `#[cfg(test)] mod tests`, lines 10-20)");
        assert_eq!(test_code_reason(&finding("src/a.rs", 9, 9), &by_item), None, "before the module");
        assert_eq!(test_code_reason(&finding("src/a.rs", 18, 22), &by_item), None, "reaches past it");
        assert_eq!(test_code_reason(&finding("src/a.rs", 0, 0), &by_item), None, "a whole-file finding");
        let by_path = FileFacts { test_pattern: Some("**/tests/"), test_items: &[] };
        assert_eq!(
            test_code_reason(&finding("tests/a.rs", 0, 0), &by_path).as_deref(),
            Some("test code (the path matches `**/tests/`)")
        );
        let neither = FileFacts { test_pattern: None, test_items: &[] };
        assert_eq!(test_code_reason(&finding("src/a.rs", 12, 12), &neither), None);
    }

    #[test]
    fn demote_turns_test_findings_into_notes_that_say_why() {
        let src = "fn live() {}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
        let cs = ChangeSet::from_files(vec![
            FileChange::from_texts("src/a.rs", None, Some(src)),
            FileChange::from_texts("tests/it.rs", None, Some("fn t() {}\n")),
        ]);
        let mut findings = vec![
            finding("src/a.rs", 1, 1),
            finding("src/a.rs", 4, 4),
            finding("tests/it.rs", 1, 1),
            finding("src/a.rs", 4, 4).severity(Severity::Warning),
        ];
        let mut notes = vec![
            Note::blocking(Some("tests/it.rs"), "could not parse"),
            Note::blocking(Some("src/a.rs"), "could not parse"),
        ];
        demote(&mut findings, &mut notes, &cs, &ScanPaths::defaults());
        let sev: Vec<Severity> = findings.iter().map(|f| f.severity).collect();
        assert_eq!(sev, [Severity::Error, Severity::Note, Severity::Note, Severity::Note]);
        assert_eq!(findings[0].message, "raised", "production code keeps its message");
        assert_eq!(
            findings[1].message,
            "raised; test code (inside `#[cfg(test)] mod tests`, lines 2-5): a note instead of an error, so it does not block"
        );
        assert!(findings[2].message.contains("the path matches `**/tests/`"), "{}", findings[2].message);
        assert!(
            findings[3].message.ends_with("a note instead of a warning, so it does not block"),
            "{}",
            findings[3].message
        );
        assert!(!notes[0].blocking && notes[0].message.contains("the default test patterns"), "{}", notes[0]);
        assert!(notes[1].blocking, "a production file that cannot be read still blocks");
    }
}
