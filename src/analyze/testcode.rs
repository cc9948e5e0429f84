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
//!   for Rust the `#[cfg(test)] mod NAME;` declaring the file and the
//!   `#[cfg(test)]`/`#[test]` items of the head);
//! - [`demote`]: applies it to a scan's findings and notes.

use std::collections::HashMap;

use crate::analyze::rust::testitems::{declares_module, test_items, TestItem};
use crate::analyze::ships::Build;
use crate::changeset::{ChangeSet, Side};
use crate::config::{Paths, ProtectedPaths};
use crate::finding::{Finding, Note, Severity};

/// Test code unless the base config sets `paths.tests`, in the
/// `protected_paths` pattern rules (`dir/` is everything under it).
pub(crate) const DEFAULT_TEST_PATTERNS: &[&str] = &[
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
    // JavaScript / TypeScript. `test/` and `spec/` are mocha's, ava's and
    // jasmine's default folders: in the real-history evaluation every
    // JS/TS error in them was a library testing its own retry option.
    "**/*.test.*",
    "**/*.spec.*",
    "**/__tests__/",
    "**/test/",
    "**/spec/",
    // Java / Kotlin (Maven and Gradle layout): the test source sets Gradle
    // and Maven Failsafe configure by these folder names, which the build,
    // not the file, decides.
    "**/src/test/",
    "**/src/intTest/",
    "**/src/integrationTest/",
    "**/src/testFixtures/",
    "**/src/it/",
    // End-to-end test folders. A file's own name (`e2e_keys.py`, the
    // end-to-end encryption keys; `src/client/e2e.rs`, a module compiled
    // into the crate) is not evidence: no build tool collects tests by it,
    // and a change can choose it. A project whose e2e clients sit among its
    // shipped modules lists them under `paths.tests`.
    "**/e2e/",
    "**/e2e_tests/",
    "**/e2e-tests/",
    // Fixture folders
    "**/fixtures/",
    "**/__fixtures__/",
    "**/test-fixtures/",
    "**/test_fixtures/",
    "**/testdata/",
    "**/test_data/",
];

/// Not the project's code unless the base config sets `paths.ignore`:
/// vendored dependencies (Go modules' `vendor/`, copied sources in
/// `third_party/`, a library's bundled copies of its dependencies in
/// `vendored/` or, as pip and setuptools name it, `_vendor/`, installed npm packages in `node_modules/`, Yarn's own
/// releases, plugins and cache in `.yarn/`, and the Plug'n'Play loader it
/// writes, `.pnp.cjs`), and setuptools' build output `build/lib/` (a copy
/// of the package `setup.py build` makes; Python imports the source, not
/// it). A change there is an upgrade of someone else's
/// code, judged where it is made. Node does not load a project's modules
/// from `.yarn/`, so moving code there does not hide it from a build.
pub(crate) const DEFAULT_IGNORE_PATTERNS: &[&str] = &[
    "vendor/",
    "**/vendor/",
    "vendored/",
    "**/vendored/",
    "_vendor/",
    "**/_vendor/",
    "third_party/",
    "**/third_party/",
    "node_modules/",
    "**/node_modules/",
    ".yarn/",
    "**/.yarn/",
    ".pnp.cjs",
    "**/.pnp.cjs",
    ".pnp.loader.mjs",
    "**/.pnp.loader.mjs",
    "build/lib/",
    "**/build/lib/",
];

/// The path half of the decision, compiled once per scan.
#[derive(Debug, Clone)]
pub(crate) struct ScanPaths {
    ignore: ProtectedPaths,
    tests: ProtectedPaths,
    /// `paths.shipped`: never test code by path, whatever else says so.
    shipped: ProtectedPaths,
    /// `paths.tests` or the default patterns, for the note's wording.
    tests_key: &'static str,
    /// `paths.ignore` or the default vendored folders, for the note's wording.
    ignore_key: &'static str,
}

impl ScanPaths {
    /// The default vendored folders ignored; the default test patterns.
    #[allow(
        clippy::expect_used,
        reason = "the default patterns are constants, compiled in a unit test below"
    )]
    pub(crate) fn defaults() -> ScanPaths {
        // The default patterns are constants, compiled in a unit test below.
        ScanPaths::from_config(&Paths::default()).expect("the default test patterns are valid globs")
    }

    /// From the `paths` section of the base config. An invalid glob is an
    /// error naming its key, never a matcher that matches nothing.
    pub(crate) fn from_config(paths: &Paths) -> anyhow::Result<ScanPaths> {
        let compile = |key: &str, globs: &[String]| {
            ProtectedPaths::compile(globs)
                .map_err(|e| anyhow::anyhow!("{key}: invalid glob \"{}\": {}", e.pattern, e.error.kind()))
        };
        let (tests, tests_key) = match &paths.tests {
            Some(globs) => (compile("paths.tests", globs)?, "paths.tests"),
            None => {
                let defaults: Vec<String> = DEFAULT_TEST_PATTERNS.iter().map(|s| s.to_string()).collect();
                (compile(DEFAULTS_KEY, &defaults)?, DEFAULTS_KEY)
            }
        };
        let (ignore, ignore_key) = match &paths.ignore {
            Some(globs) => (compile("paths.ignore", globs)?, "paths.ignore"),
            None => {
                let defaults: Vec<String> = DEFAULT_IGNORE_PATTERNS.iter().map(|s| s.to_string()).collect();
                (compile(IGNORE_DEFAULTS_KEY, &defaults)?, IGNORE_DEFAULTS_KEY)
            }
        };
        let shipped = compile("paths.shipped", &paths.shipped)?;
        Ok(ScanPaths { ignore, tests, shipped, tests_key, ignore_key })
    }

    /// What decided which files are ignored, for notes: `paths.ignore`, or
    /// the default vendored folders.
    pub(crate) fn ignore_source(&self) -> &'static str {
        self.ignore_key
    }

    /// The `paths.ignore` entry that drops `path` from the scan, if any.
    pub(crate) fn ignored(&self, path: &str) -> Option<&str> {
        self.ignore.matching(path)
    }

    /// Whether the base config's `paths.shipped` names `path` as code that
    /// ships, which no test pattern or build rule can make test code.
    pub(crate) fn is_shipped(&self, path: &str) -> bool {
        self.shipped.matching(path).is_some()
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
    pub(crate) fn test_pattern(&self, path: &str) -> Option<&str> {
        if self.is_shipped(path) {
            return None;
        }
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
/// How the note names the default ignored folders.
const IGNORE_DEFAULTS_KEY: &str =
    "the default vendored folders (vendor/, vendored/, _vendor/, third_party/, node_modules/, Yarn's .yarn/, .pnp.cjs and .pnp.loader.mjs, setuptools' build/lib/; set paths.ignore to change)";

/// What is known of one file when deciding whether a finding in it is test code.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FileFacts<'a> {
    /// The test pattern its path matches ([`ScanPaths::test_pattern`]).
    pub(crate) test_pattern: Option<&'a str>,
    /// For a Rust module file: the `#[cfg(test)] mod NAME;` declaration that
    /// makes the whole file test code, as `` `#[cfg(test)] mod tests;` in src/lib.rs ``.
    pub(crate) test_module: Option<&'a str>,
    /// Test items of the file's head (Rust only; empty otherwise).
    pub(crate) test_items: &'a [TestItem],
    /// Why the build says the file does not ship ([`super::ships`]).
    pub(crate) not_shipped: Option<&'a str>,
}

/// Why `finding` is in test code (and so does not block), or `None`.
///
/// A finding for the whole file (line 0) is test code only by its path; a
/// finding on lines is test code by its path, or when a test item covers
/// every one of its lines.
pub(crate) fn test_code_reason(finding: &Finding, file: &FileFacts) -> Option<String> {
    if let Some(pattern) = file.test_pattern {
        return Some(format!("test code (the path matches `{pattern}`)"));
    }
    if let Some(decl) = file.test_module {
        return Some(format!("test code (the module is declared by {decl})"));
    }
    if let Some(why) = file.not_shipped {
        return Some(why.to_string());
    }
    if finding.line == 0 {
        return None;
    }
    file.test_items
        .iter()
        .find(|t| t.line <= finding.line && finding.end_line <= t.end_line)
        .map(|t| format!("test code (inside `{}`, lines {}-{})", t.what, t.line, t.end_line))
}

/// Why `.github/` does not ship: GitHub reads it for the repository's
/// workflows, actions and templates, and the scripts there are run by CI.
const GITHUB_FOLDER: &str =
    "not shipped (`.github/` holds the repository's GitHub workflows and the scripts they run)";

/// Whether `path` is code GitHub's workflows run from `.github/` (its
/// scripts): the workflows and actions themselves are CI configuration,
/// whose own retries the infra rules judge.
fn github_scripts(path: &str) -> bool {
    path.starts_with(".github/")
        && !path.starts_with(".github/workflows/")
        && !path.ends_with("action.yml")
        && !path.ends_with("action.yaml")
}

/// Turns every `warning` and `error` finding in test code into a `note`
/// whose message ends with why, and every blocking note about a file whose
/// path is test code into an informational one (all findings there would be
/// notes, so not being able to read it hides nothing that blocks).
pub(crate) fn demote(findings: &mut [Finding], notes: &mut [Note], cs: &ChangeSet, paths: &ScanPaths) {
    // Parsed at most once per file, and only for files that have a finding
    // the path alone does not settle.
    let mut items: HashMap<String, (Option<String>, Vec<TestItem>)> = HashMap::new();
    let mut tree = HeadFiles::new(cs);
    // Read only when a finding is left that the path does not settle. A
    // project's folder holds its settings files too (a test project's
    // `appsettings.json`), so every file under it is decided, not only code.
    let mut build: Option<Option<Build>> = None;
    for f in findings.iter_mut().filter(|f| f.severity > Severity::Note) {
        let test_pattern = paths.test_pattern(&f.path);
        if test_pattern.is_none() && !items.contains_key(&f.path) {
            let module = rust_test_module(&mut tree, &f.path);
            let found = if module.is_some() { Vec::new() } else { rust_test_items(cs, &f.path) };
            items.insert(f.path.clone(), (module, found));
        }
        let (module, found) =
            items.get(&f.path).map_or((None, &[][..]), |(m, i)| (m.as_deref(), i.as_slice()));
        let not_shipped = if test_pattern.is_none() && module.is_none() && !paths.is_shipped(&f.path) {
            if github_scripts(&f.path) {
                Some(GITHUB_FOLDER)
            } else {
                build.get_or_insert_with(|| Build::of_head(cs)).as_ref().and_then(|b| b.reason(&f.path))
            }
        } else {
            None
        };
        let facts = FileFacts { test_pattern, test_module: module, test_items: found, not_shipped };
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

/// Head versions of Rust files, from the change set or else from git at
/// the head commit, read at most once each.
struct HeadFiles<'a> {
    cs: &'a ChangeSet,
    git: Option<crate::changeset::Git>,
    texts: HashMap<String, Option<String>>,
}

impl<'a> HeadFiles<'a> {
    fn new(cs: &'a ChangeSet) -> HeadFiles<'a> {
        HeadFiles { cs, git: None, texts: HashMap::new() }
    }

    fn text(&mut self, path: &str) -> Option<&str> {
        if !self.texts.contains_key(path) {
            let text = match self.cs.files.iter().find(|f| f.path == path) {
                Some(f) => f.head.text().map(str::to_owned),
                None => self.read_from_git(path),
            };
            self.texts.insert(path.to_string(), text);
        }
        self.texts.get(path).and_then(|t| t.as_deref())
    }

    /// An unchanged file of the head tree. A change set built without git
    /// (tests, rule cases) has an all-zero head and no tree to read.
    fn read_from_git(&mut self, path: &str) -> Option<String> {
        if self.cs.head.bytes().all(|b| b == b'0') {
            return None;
        }
        if self.git.is_none() {
            self.git = crate::changeset::Git::open(&self.cs.repo).ok();
        }
        let git = self.git.as_ref()?;
        match git.read_blob_at(&self.cs.head, path, crate::changeset::MAX_FILE_BYTES) {
            Ok(Some(crate::changeset::git::Blob::Bytes(b))) => String::from_utf8(b).ok(),
            _ => None,
        }
    }
}

/// Words in the path of a Rust module file that make a `#[cfg(test)] mod`
/// declaration worth looking for (`tests.rs`, `test_util.rs`, `mock.rs`,
/// `src/testing/`, `fakes.rs`, `fixtures.rs`, `stubs.rs`).
const TEST_MODULE_WORDS: &[&str] = &["test", "mock", "fake", "fixture", "stub"];

/// How many parent modules are followed up from a file (`a/b/c/d.rs`).
const MAX_MODULE_DEPTH: usize = 8;

/// For a Rust module file (`src/tests.rs`, `src/net/tests/mod.rs`), the
/// `#[cfg(test)] mod NAME;` declaration, in it parent or further up, that
/// makes the whole file compile only in tests.
///
/// Looked up only for files whose path names test code ([`TEST_MODULE_WORDS`]):
/// each lookup may read a few files from git, and a pull request's findings
/// in files called otherwise (thousands, in a large refactor) must not pay
/// for it. A test module with another name stays blocking, the safe side.
fn rust_test_module(tree: &mut HeadFiles, path: &str) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    if !path.ends_with(".rs") || !TEST_MODULE_WORDS.iter().any(|w| lower.contains(w)) {
        return None;
    }
    let mut current = path.to_string();
    for _ in 0..MAX_MODULE_DEPTH {
        let (name, parents) = module_parents(&current)?;
        let (parent, is_test) = parents
            .into_iter()
            .find_map(|p| tree.text(&p).and_then(|t| declares_module(t, &name)).map(|d| (p, d)))?;
        if is_test {
            return Some(format!("`#[cfg(test)] mod {name};` in {parent}"));
        }
        current = parent;
    }
    None
}

/// The module name of a Rust file and the files that could declare it:
/// `src/a/b.rs` is `b`, declared in `src/a.rs`, `src/a/mod.rs` (or a crate
/// root `src/a/lib.rs`, `src/a/main.rs`); `src/a/b/mod.rs` likewise.
/// Crate roots (`lib.rs`, `main.rs`) have no parent.
fn module_parents(path: &str) -> Option<(String, Vec<String>)> {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = file.strip_suffix(".rs")?;
    if matches!(stem, "lib" | "main") {
        return None;
    }
    let (name, module_dir) =
        if stem == "mod" { dir.rsplit_once('/').map_or((dir, ""), |(d, n)| (n, d)) } else { (stem, dir) };
    if name.is_empty() {
        return None;
    }
    let join = |f: &str| if module_dir.is_empty() { f.to_string() } else { format!("{module_dir}/{f}") };
    let mut parents = vec![join("lib.rs"), join("main.rs"), join("mod.rs")];
    if !module_dir.is_empty() {
        parents.push(format!("{module_dir}.rs"));
    }
    Some((name.to_string(), parents))
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
            "test/hooks.ts",
            "packages/ky/test/stream.ts",
            "spec/index.ts",
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
            // End-to-end test folders.
            "web/e2e/checkout.ts",
            "pkg/e2e_tests/client.go",
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
            "src/contest/api.ts",
            "lib/testing/api.js",
            "app/src/main/java/Retry.java",
            "src/test_utils.rs",
            // Rust modules inside src/ ship with the crate, whatever their folder is called.
            "src/fixtures/retry.rs",
            "src/tests/mod.rs",
            "crates/net/src/examples/client.rs",
            "crates/net/src/test/mod.rs",
            // Words that contain e2e are not e2e, and a file's own name
            // is not a test folder: it ships unless the build says not.
            "handlers/e2e_keys.py",
            "svc/src/client/e2e.rs",
            "svc/src/e2e_client.rs",
            "app/e2e.py",
            "src/e2ee.rs",
            "src/crypto/e2ee/session.rs",
        ];
        for path in production {
            assert_eq!(p.test_pattern(path), None, "{path} is not test code");
        }
    }

    #[test]
    fn paths_tests_replaces_the_defaults_and_ignore_matches_its_globs() {
        let paths = Paths {
            ignore: Some(vec!["vendor/".into(), "**/*.pb.go".into()]),
            tests: Some(vec!["qa/".into()]),
            shipped: vec!["qa/loadgen/".into()],
        };
        let p = ScanPaths::from_config(&paths).unwrap();
        assert_eq!(p.test_pattern("qa/load.py"), Some("qa/"));
        assert_eq!(p.test_pattern("qa/loadgen/run.py"), None, "paths.shipped wins over paths.tests");
        assert_eq!(p.test_pattern("tests/retry.rs"), None, "set paths.tests replaces the defaults");
        assert_eq!(p.ignored("vendor/lib/x.go"), Some("vendor/"));
        assert_eq!(p.ignored("api/v1/x.pb.go"), Some("**/*.pb.go"));
        assert_eq!(p.ignored("src/vendor.rs"), None);
        let none =
            ScanPaths::from_config(&Paths { ignore: Some(vec![]), tests: Some(vec![]), shipped: vec![] })
                .unwrap();
        assert_eq!(none.test_pattern("tests/retry.rs"), None, "`tests: []` means no path is test code");
        assert_eq!(none.ignored("vendor/x.go"), None, "`ignore: []` means every file is scanned");
        assert_eq!(none.ignore_source(), "paths.ignore");
        let d = ScanPaths::defaults();
        for vendored in [
            "vendor/github.com/a/b/x.go",
            "svc/vendor/x.go",
            "third_party/lib/x.py",
            "sdk/vendored/requests/adapters.py",
            "src/pip/_vendor/rich/prompt.py",
            "web/node_modules/ky/index.js",
            ".yarn/plugins/@yarnpkg/plugin-interactive-tools.cjs",
            ".yarn/releases/yarn-4.1.0.cjs",
            "packages/web/.yarn/sdks/typescript/lib/tsserver.js",
            ".pnp.cjs",
        ] {
            assert!(d.ignored(vendored).is_some(), "{vendored} is vendored by default");
        }
        for own in [
            "src/vendor.rs",
            "vendors/x.go",
            "app/vendor_client.py",
            "pkg/thirdparty.go",
            "src/yarn/install.ts",
            "lib/pnp.cjs",
        ] {
            assert_eq!(d.ignored(own), None, "{own} is the project's own");
        }
        assert!(d.ignore_source().starts_with("the default vendored folders"));
        // The note names every default it applied.
        for p in DEFAULT_IGNORE_PATTERNS.iter().filter(|p| !p.starts_with("**/")) {
            assert!(d.ignore_source().contains(p.trim_end_matches('/')), "{p} is not named in the note");
        }
    }

    #[test]
    fn the_decision_by_path_and_by_test_item() {
        let item = TestItem { what: "#[cfg(test)] mod tests".into(), line: 10, end_line: 20 };
        let by_item = FileFacts { test_items: std::slice::from_ref(&item), ..FileFacts::default() };
        let why = test_code_reason(&finding("src/a.rs", 12, 14), &by_item).unwrap();
        assert_eq!(why, "test code (inside `#[cfg(test)] mod tests`, lines 10-20)");
        assert_eq!(test_code_reason(&finding("src/a.rs", 9, 9), &by_item), None, "before the module");
        assert_eq!(test_code_reason(&finding("src/a.rs", 18, 22), &by_item), None, "reaches past it");
        assert_eq!(test_code_reason(&finding("src/a.rs", 0, 0), &by_item), None, "a whole-file finding");
        let by_path = FileFacts { test_pattern: Some("**/tests/"), ..FileFacts::default() };
        assert_eq!(
            test_code_reason(&finding("tests/a.rs", 0, 0), &by_path).as_deref(),
            Some("test code (the path matches `**/tests/`)")
        );
        let neither = FileFacts::default();
        assert_eq!(test_code_reason(&finding("src/a.rs", 12, 12), &neither), None);
    }

    #[test]
    fn module_files_and_the_files_that_can_declare_them() {
        let (name, parents) = module_parents("src/net/tests.rs").unwrap();
        assert_eq!(name, "tests");
        assert_eq!(parents, ["src/net/lib.rs", "src/net/main.rs", "src/net/mod.rs", "src/net.rs"]);
        let (name, parents) = module_parents("src/tests/mod.rs").unwrap();
        assert_eq!(name, "tests");
        assert_eq!(parents, ["src/lib.rs", "src/main.rs", "src/mod.rs", "src.rs"]);
        assert_eq!(module_parents("src/lib.rs"), None);
        assert_eq!(module_parents("src/main.rs"), None);
        assert_eq!(module_parents("src/a.py"), None);
    }

    #[test]
    fn a_module_declared_under_cfg_test_is_test_code_up_the_chain() {
        let cs = ChangeSet::from_files(vec![
            FileChange::from_texts("src/lib.rs", None, Some("mod net;\n#[cfg(test)]\nmod tests;\n")),
            FileChange::from_texts("src/tests/mod.rs", None, Some("mod helpers;\n")),
            FileChange::from_texts("src/tests/helpers.rs", None, Some("fn h() {}\n")),
            FileChange::from_texts("src/net.rs", None, Some("mod retry;\nmod mocks;\n")),
            FileChange::from_texts("src/net/retry.rs", None, Some("fn r() {}\n")),
            FileChange::from_texts("src/net/mocks.rs", None, Some("fn m() {}\n")),
        ]);
        let mut tree = HeadFiles::new(&cs);
        let decl = "`#[cfg(test)] mod tests;` in src/lib.rs";
        assert_eq!(rust_test_module(&mut tree, "src/tests/mod.rs").as_deref(), Some(decl));
        assert_eq!(rust_test_module(&mut tree, "src/tests/helpers.rs").as_deref(), Some(decl));
        assert_eq!(rust_test_module(&mut tree, "src/net/retry.rs"), None, "not named like test code");
        assert_eq!(rust_test_module(&mut tree, "src/net/mocks.rs"), None, "src/net.rs declares it plainly");
        assert_eq!(rust_test_module(&mut tree, "src/net/mock_retry.rs"), None, "declared nowhere");
        let f = finding("src/tests/helpers.rs", 1, 1);
        let facts = FileFacts { test_module: Some(decl), ..FileFacts::default() };
        assert_eq!(
            test_code_reason(&f, &facts).as_deref(),
            Some("test code (the module is declared by `#[cfg(test)] mod tests;` in src/lib.rs)")
        );
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

/// The example this module's doc used to carry (the items are internal,
/// so it runs here rather than as a doctest).
#[cfg(test)]
mod example {
    #[test]
    fn a_file_under_tests_is_test_code() {
        use super::{test_code_reason, FileFacts, ScanPaths};
        use crate::finding::{Finding, Kind};
        let paths = ScanPaths::defaults();
        let f = Finding::new(Kind::RetryCountRaised, "py/x", "svc/tests/test_client.py", 3);
        let facts = FileFacts {
            test_pattern: paths.test_pattern("svc/tests/test_client.py"),
            ..FileFacts::default()
        };
        assert!(test_code_reason(&f, &facts).unwrap().contains("**/tests/"));
    }
}
