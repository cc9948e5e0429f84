//! Test code does not block, `paths.ignore` and `paths.tests`, through the
//! binary on real git repositories, and the dogfood test: this repository,
//! gated with its own `.github/retrygate.yml`, is not blocked by its own
//! deliberately bad fixtures.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::Repo;
use serde_json::Value;

const CONFIG: &str = ".github/retrygate.yml";

fn run(repo: &Repo, args: &[&str]) -> (Output, Value) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(args)
        .arg("--repo")
        .arg(repo.path())
        .args(["--base", "main", "--head", "HEAD", "--format", "json"])
        .output()
        .expect("run retrygate");
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, json)
}

fn scan(repo: &Repo) -> (Output, Value) {
    run(repo, &["scan"])
}

/// The paths of the blocking findings, sorted, each once.
fn blocking_paths(json: &Value) -> Vec<&str> {
    let mut paths: Vec<&str> = findings(json)
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["path"].as_str().unwrap_or_default())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn findings(json: &Value) -> &Vec<Value> {
    json["findings"].as_array().expect("findings")
}

/// `(path, kind, severity)` of every finding.
fn summary(json: &Value) -> Vec<(String, String, String)> {
    findings(json)
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("path"), s("kind"), s("severity"))
        })
        .collect()
}

fn rust_retry(max: u32) -> String {
    format!(
        "use backon::{{ExponentialBuilder, Retryable}};\n\
const MAX_RETRIES: usize = {max};\n\
async fn fetch(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {{\n\
    (|| async {{ c.get(\"https://api/x\").send().await }})\n\
        .retry(ExponentialBuilder::default().with_jitter().with_max_times(MAX_RETRIES))\n\
        .await\n\
}}\n"
    )
}

/// The same retry inside a `#[cfg(test)]` module (and a `#[tokio::test]`
/// function) after some production code.
fn rust_retry_in_tests(max: u32) -> String {
    format!(
        "pub fn live() {{}}\n\
#[cfg(test)]\n\
mod tests {{\n{}}}\n\
#[tokio::test]\n\
async fn storm() {{\n    let n: usize = {max};\n    let _ = backon::ExponentialBuilder::default().with_jitter().with_max_times(n);\n}}\n",
        rust_retry(max)
    )
}

fn python_retry(total: u32) -> String {
    format!(
        "from urllib3.util import Retry\n\nRETRY = Retry(\n    total={total},\n    backoff_factor=0.5,\n)\n"
    )
}

/// A repository whose base has `files` with small retry budgets, and a
/// `change` branch (checked out) that raises every one of them.
fn raised_everywhere(config: Option<&str>, rust: &[&str], python: &[&str], cfg_test: &[&str]) -> Repo {
    let repo = Repo::new();
    repo.write("README.md", "x\n");
    if let Some(c) = config {
        repo.write(CONFIG, c);
    }
    for p in rust {
        repo.write(p, rust_retry(2));
    }
    for p in python {
        repo.write(p, python_retry(2));
    }
    for p in cfg_test {
        repo.write(p, rust_retry_in_tests(2));
    }
    repo.commit("base");
    repo.branch("change");
    for p in rust {
        repo.write(p, rust_retry(6));
    }
    for p in python {
        repo.write(p, python_retry(8));
    }
    for p in cfg_test {
        repo.write(p, rust_retry_in_tests(6));
    }
    repo.commit("raise the retry budgets");
    repo
}

#[test]
fn findings_in_test_code_are_notes_that_say_why_and_production_code_still_blocks() {
    let repo = raised_everywhere(
        None,
        &["src/client.rs", "tests/retry.rs", "benches/load.rs", "examples/demo.rs"],
        &["svc/client.py", "svc/test_client.py", "svc/tests/helpers.py", "svc/conftest.py"],
        &["src/with_tests.rs"],
    );
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "production code still blocks: {json:#}");
    let all = summary(&json);
    let blocking: Vec<&str> =
        all.iter().filter(|(_, _, s)| s == "error").map(|(p, _, _)| p.as_str()).collect();
    let mut blocking_paths = blocking.clone();
    blocking_paths.dedup();
    assert_eq!(blocking_paths, ["src/client.rs", "svc/client.py"], "{json:#}");
    for path in ["tests/retry.rs", "benches/load.rs", "examples/demo.rs", "svc/test_client.py"] {
        let f =
            findings(&json).iter().find(|f| f["path"] == path).unwrap_or_else(|| panic!("{path}: {json:#}"));
        assert_eq!(f["severity"], "note", "{f:#}");
        assert_eq!(f["kind"], "retry-count-raised", "{f:#}");
        let msg = f["message"].as_str().unwrap();
        assert!(msg.contains("test code (the path matches `**/"), "{msg}");
        assert!(msg.ends_with("a note instead of an error, so it does not block"), "{msg}");
    }
    for path in ["svc/tests/helpers.py", "svc/conftest.py"] {
        assert!(
            findings(&json).iter().filter(|f| f["path"] == path).all(|f| f["severity"] == "note"),
            "{path}: {json:#}"
        );
    }
    // The #[cfg(test)] module and the #[tokio::test] function, in src/.
    let in_src: Vec<&Value> = findings(&json).iter().filter(|f| f["path"] == "src/with_tests.rs").collect();
    assert!(!in_src.is_empty(), "the raise inside the test module is still reported: {json:#}");
    assert!(in_src.iter().all(|f| f["severity"] == "note"), "{json:#}");
    let msgs: Vec<&str> = in_src.iter().map(|f| f["message"].as_str().unwrap()).collect();
    assert!(
        msgs.iter().any(|m| m.contains("test code (inside `#[cfg(test)] mod tests`, lines 2-")),
        "{msgs:#?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("test code (inside `#[tokio::test] fn storm`, lines ")),
        "{msgs:#?}"
    );
}

#[test]
fn limits_max_attempts_does_not_block_on_test_code_either() {
    let repo = Repo::new();
    repo.write(CONFIG, "limits: { max_attempts: 3 }\n");
    repo.write("README.md", "x\n");
    repo.commit("base");
    repo.branch("change");
    repo.write("tests/storm.rs", rust_retry(9));
    repo.write("tests/broken.rs", "fn retry() { backon::ExponentialBuilder::default().with_max_times(3\n");
    repo.commit("a test that retries ten times, and one that does not parse");
    let (out, json) = run(&repo, &["check", "--human"]);
    assert_eq!(out.status.code(), Some(0), "{json:#}");
    let limit: Vec<&Value> = findings(&json).iter().filter(|f| f["rule"] == "policy/max-attempts").collect();
    assert_eq!(limit.len(), 1, "{json:#}");
    assert_eq!(limit[0]["severity"], "note", "{json:#}");
    assert!(json["notes"].as_array().unwrap().iter().all(|n| n["blocking"] == false), "{json:#}");
    // The same policy in production code is over the limit and blocks.
    repo.write("src/storm.rs", rust_retry(9));
    repo.commit("and in production");
    let (out, json) = run(&repo, &["check", "--human"]);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    assert!(
        findings(&json).iter().any(|f| f["rule"] == "policy/max-attempts"
            && f["path"] == "src/storm.rs"
            && f["severity"] == "error"),
        "{json:#}"
    );
}

#[test]
fn a_module_file_declared_under_cfg_test_in_an_unchanged_file_is_test_code() {
    let repo = Repo::new();
    // lib.rs is not part of the change: the declaration is read from the head tree.
    repo.write("src/lib.rs", "mod retry;\n#[cfg(test)]\nmod tests;\n");
    repo.write("src/tests.rs", rust_retry(2));
    repo.write("src/retry.rs", rust_retry(2));
    repo.commit("base");
    repo.branch("change");
    repo.write("src/tests.rs", rust_retry(6));
    repo.write("src/retry.rs", rust_retry(6));
    repo.commit("raise both");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let sev = |path: &str| -> Vec<String> {
        findings(&json)
            .iter()
            .filter(|f| f["path"] == path)
            .map(|f| f["severity"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(sev("src/retry.rs").contains(&"error".to_string()), "declared plainly: {json:#}");
    assert!(!sev("src/tests.rs").is_empty() && sev("src/tests.rs").iter().all(|s| s == "note"), "{json:#}");
    let f = findings(&json).iter().find(|f| f["path"] == "src/tests.rs").unwrap();
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("(the module is declared by `#[cfg(test)] mod tests;` in src/lib.rs)"),
        "{f:#}"
    );
}

#[test]
fn the_same_raise_outside_test_code_blocks_from_both_analyzers() {
    // Negative control: the files that were notes above block under other names.
    // A Rust module inside src/ ships with the crate, whatever its folder is
    // called: moving a retry into src/fixtures/ does not hide it.
    let repo =
        raised_everywhere(None, &["src/testing.rs", "src/fixtures/retry.rs"], &["svc/contest.py"], &[]);
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let blocking: Vec<String> =
        summary(&json).into_iter().filter(|(_, _, s)| s == "error").map(|(p, _, _)| p).collect();
    assert!(blocking.contains(&"src/testing.rs".to_string()), "{json:#}");
    assert!(blocking.contains(&"src/fixtures/retry.rs".to_string()), "{json:#}");
    assert!(blocking.contains(&"svc/contest.py".to_string()), "{json:#}");
}

#[test]
fn paths_tests_replaces_the_default_patterns() {
    let config = "paths:\n  tests: [\"qa/\"]\n";
    let repo =
        raised_everywhere(Some(config), &["qa/load.rs", "tests/retry.rs"], &[], &["src/with_tests.rs"]);
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let sev = |path: &str| -> Vec<String> {
        findings(&json)
            .iter()
            .filter(|f| f["path"] == path)
            .map(|f| f["severity"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(sev("qa/load.rs").iter().all(|s| s == "note") && !sev("qa/load.rs").is_empty(), "{json:#}");
    assert!(sev("tests/retry.rs").contains(&"error".to_string()), "tests/ is no longer test code: {json:#}");
    assert!(
        sev("src/with_tests.rs").iter().all(|s| s == "note"),
        "#[cfg(test)] items stay test code when paths.tests is set: {json:#}"
    );
    let qa = findings(&json).iter().find(|f| f["path"] == "qa/load.rs").unwrap();
    assert!(qa["message"].as_str().unwrap().contains("the path matches `qa/`"), "{qa:#}");
}

#[test]
fn paths_ignore_drops_files_from_the_scan_but_not_from_the_policy() {
    let config = "paths:\n  ignore: [\"vendor/\", \"**/*.gen.py\"]\nprotected_paths: [\"vendor/\"]\n";
    let repo = raised_everywhere(Some(config), &["vendor/lib/retry.rs"], &["api/client.gen.py"], &[]);
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(0), "{json:#}");
    assert!(findings(&json).is_empty(), "ignored files are not analysed: {json:#}");
    let notes: Vec<&str> =
        json["notes"].as_array().unwrap().iter().map(|n| n["message"].as_str().unwrap()).collect();
    assert_eq!(notes, ["2 changed files matched paths.ignore and were not scanned"]);
    // An agent's change under a protected path still needs a person, ignored or not.
    let (out, json) = run(&repo, &["check", "--agent"]);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let kinds: Vec<&str> = findings(&json).iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["protected-path"], "{json:#}");
}

#[test]
fn a_pull_request_that_changes_paths_is_a_gate_config_change_judged_by_the_base() {
    let repo = Repo::new();
    repo.write(CONFIG, "paths:\n  ignore: [\"vendor/\"]\n");
    repo.write("src/client.rs", rust_retry(2));
    repo.commit("base");
    repo.branch("change");
    // The pull request hides its own raise behind a new ignore entry and
    // switches test-code handling to cover src/.
    repo.write(CONFIG, "paths:\n  ignore: [\"vendor/\", \"src/\"]\n  tests: [\"src/\"]\n");
    repo.write("src/client.rs", rust_retry(6));
    repo.commit("ignore src");
    let (out, json) = run(&repo, &["check", "--human"]);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let all = summary(&json);
    assert!(all.contains(&(CONFIG.to_string(), "gate-config-changed".into(), "error".into())), "{json:#}");
    assert!(
        all.contains(&("src/client.rs".to_string(), "retry-count-raised".into(), "error".into())),
        "the head's paths are not used: {json:#}"
    );
    // `scan` reads the base's config the same way.
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    assert!(summary(&json).iter().any(|(p, _, s)| p == "src/client.rs" && s == "error"), "{json:#}");
}

#[test]
fn scan_refuses_a_base_config_with_a_bad_glob_naming_the_key() {
    let repo = Repo::new();
    repo.write(CONFIG, "paths:\n  ignore:\n    - \"vendor/[\"\n");
    repo.commit("base");
    repo.branch("change");
    repo.write("src/a.rs", "fn a() {}\n");
    repo.commit("change");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--base", "main", "--format", "json"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(".github/retrygate.yml:3: paths.ignore: invalid glob \"vendor/[\""), "{err}");
    assert!(err.contains("fix it there"), "{err}");
}

/// Copies `rel` (a file or a folder) of this repository into `repo`.
fn copy_tree(src_root: &Path, rel: &str, repo: &Repo) -> usize {
    let from = src_root.join(rel);
    if from.is_file() {
        repo.write(rel, std::fs::read(&from).unwrap());
        return 1;
    }
    let mut n = 0;
    for entry in std::fs::read_dir(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = format!("{rel}/{name}");
        if entry.file_type().unwrap().is_dir() {
            if name == "target" {
                continue;
            }
            n += copy_tree(src_root, &child, repo);
        } else {
            repo.write(&child, std::fs::read(entry.path()).unwrap());
            n += 1;
        }
    }
    n
}

/// This repository's deliberately bad inputs, added in one pull request to
/// a repository whose base holds `config`.
fn fixture_pull_request(config: Option<&str>) -> (Repo, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo = Repo::new();
    repo.write("README.md", "dogfood\n");
    if let Some(c) = config {
        repo.write(CONFIG, c);
    }
    repo.commit("base");
    repo.branch("fixtures");
    let mut files = 0;
    for dir in ["rules/tests", "tests/fixtures/rust", "tests/clients", "examples/checkout-incident"] {
        files += copy_tree(root, dir, &repo);
    }
    repo.commit("add the fixture tree");
    (repo, files)
}

#[test]
fn dogfood_this_repository_is_not_blocked_by_its_own_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let own = std::fs::read_to_string(root.join(CONFIG)).expect("this repository has .github/retrygate.yml");

    // With this repository's own config: nothing blocks, and the gate as a
    // whole passes for a person's pull request.
    let (repo, files) = fixture_pull_request(Some(&own));
    assert!(files > 50, "the fixture tree was copied ({files} files)");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(0), "{json:#}");
    assert!(findings(&json).iter().all(|f| f["severity"] == "note"), "{json:#}");
    assert!(json["notes"].as_array().unwrap().iter().all(|n| n["blocking"] == false), "{json:#}");
    let (out, json) = run(&repo, &["check", "--human"]);
    assert_eq!(out.status.code(), Some(0), "{json:#}");
    assert_eq!(json["verdict"], "pass");

    // The same change with test-code handling switched off and nothing
    // ignored blocks: the fixtures really are bad, and the config is what
    // keeps them from blocking.
    let (repo, _) = fixture_pull_request(Some("paths:\n  tests: []\n"));
    let (out, blocked_json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{blocked_json:#}");
    let blocking: Vec<(String, String, String)> =
        summary(&blocked_json).into_iter().filter(|(_, _, s)| s == "error").collect();
    assert!(blocking.len() >= 5, "{blocking:#?}");
    let fixture_dirs = ["rules/tests/", "tests/fixtures/", "tests/clients/", "examples/checkout-incident/"];
    assert!(blocking.iter().all(|(p, _, _)| fixture_dirs.iter().any(|d| p.starts_with(d))), "{blocking:#?}");
    for dir in ["rules/tests/", "tests/fixtures/rust/"] {
        assert!(blocking.iter().any(|(p, _, _)| p.starts_with(dir)), "{dir}: {blocking:#?}");
    }

    // Without any config the default test patterns already make every one
    // of those findings a note that says why.
    let (repo, _) = fixture_pull_request(None);
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(0), "{json:#}");
    let notes: Vec<&Value> = findings(&json).iter().collect();
    assert!(notes.len() >= blocking.len(), "{json:#}");
    assert!(notes.iter().all(|f| f["severity"] == "note"), "{json:#}");
    // Each says it is test code, except those that were notes without the
    // test patterns too (a POST judged a read).
    let notes_anyway: Vec<String> = findings(&blocked_json)
        .iter()
        .filter(|f| f["severity"] == "note")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        notes.iter().all(|f| {
            let m = f["message"].as_str().unwrap();
            m.contains("test code (") || notes_anyway.iter().any(|n| n == m)
        }),
        "{json:#}"
    );
}

#[test]
fn a_generated_header_skips_only_a_file_that_was_generated_already() {
    const GEN: &str = "# Code generated by openapi-generator. DO NOT EDIT.\n";
    let repo = Repo::new();
    repo.write("api/gen_client.py", format!("{GEN}{}", python_retry(2)));
    repo.write("api/README", "clients\n");
    repo.commit("base");
    repo.branch("change");
    // The generator's output changed: said in a note, not read.
    repo.write("api/gen_client.py", format!("{GEN}{}", python_retry(9)));
    // A file the change adds says it is generated: it is read all the same.
    // (A new retry has no base to compare with: its methods are what is
    // judged.)
    let posting = "from urllib3.util import Retry\n\nRETRY = Retry(total=3, allowed_methods=None)\n";
    repo.write("api/new_client.py", format!("{GEN}{posting}"));
    repo.commit("regenerate and add");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let blocking: Vec<(String, String)> =
        summary(&json).into_iter().filter(|(_, _, s)| s == "error").map(|(p, k, _)| (p, k)).collect();
    assert!(
        blocking.iter().any(|(p, k)| p == "api/new_client.py" && k == "retry-non-idempotent"),
        "the new file's retry is judged: {json:#}"
    );
    assert!(blocking.iter().all(|(p, _)| p != "api/gen_client.py"), "{json:#}");
    let notes: Vec<&str> =
        json["notes"].as_array().unwrap().iter().map(|n| n["message"].as_str().unwrap()).collect();
    assert!(
        notes.iter().any(|n| n.starts_with("not analysed: it says it is generated")),
        "the skip is said: {notes:?}"
    );
}

/// What ships is read from the manifests: the same new retry of a POST is
/// a note in the `xtask` crate and in a library only `[dev-dependencies]`
/// name, and blocks in a crate that ships (a library a binary depends on,
/// whatever its folder is called).
#[test]
fn crates_the_build_says_do_not_ship_do_not_block() {
    let retry = "pub async fn send(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    let mut attempt = 0;\n    loop {\n        match c.post(\"http://127.0.0.1:4000/graphql\").send().await {\n            Ok(r) => return Ok(r),\n            Err(e) if attempt == 5 => return Err(e),\n            Err(_) => attempt += 1,\n        }\n        tokio::time::sleep(std::time::Duration::from_millis(100)).await;\n    }\n}\n";
    let repo = Repo::new();
    repo.write("Cargo.toml", "[workspace]\nmembers = [\"app\", \"xtask\", \"testkit\", \"simulation\"]\n");
    repo.write("app/Cargo.toml", "[package]\nname = \"app\"\n\n[dependencies]\nsimulation = { path = \"../simulation\" }\n\n[dev-dependencies]\ntestkit = { path = \"../testkit\" }\n");
    repo.write("app/src/main.rs", "fn main() {}\n");
    repo.write("xtask/Cargo.toml", "[package]\nname = \"xtask\"\npublish = false\n");
    repo.write("xtask/src/main.rs", "fn main() {}\n");
    repo.write("testkit/Cargo.toml", "[package]\nname = \"testkit\"\n");
    repo.write("testkit/src/lib.rs", "\n");
    repo.write("simulation/Cargo.toml", "[package]\nname = \"simulation\"\n");
    repo.write("simulation/src/lib.rs", "\n");
    repo.commit("base");
    repo.branch("agent/change");
    for path in ["xtask/src/smoke.rs", "testkit/src/server.rs", "simulation/src/client.rs"] {
        repo.write(path, retry);
    }
    repo.commit("retry the local server");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let blocking: Vec<&str> = findings(&json)
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["path"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(blocking, ["simulation/src/client.rs"], "{json:#}");
    let why = |path: &str, what: &str| {
        findings(&json).iter().any(|f| {
            f["path"] == path
                && f["severity"] == "note"
                && f["message"].as_str().is_some_and(|m| m.contains(what))
        })
    };
    assert!(why("xtask/src/smoke.rs", "crate `xtask` is build tooling"), "{json:#}");
    assert!(why("testkit/src/server.rs", "only under [dev-dependencies]"), "{json:#}");
}

/// `paths.shipped` in the base config names code that ships whatever the
/// build and the test patterns say: the xtask crate's retry then blocks.
#[test]
fn paths_shipped_overrides_the_build_and_the_test_patterns() {
    let retry = "pub async fn send(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    let mut attempt = 0;\n    loop {\n        match c.post(\"http://127.0.0.1:4000/graphql\").send().await {\n            Ok(r) => return Ok(r),\n            Err(e) if attempt == 5 => return Err(e),\n            Err(_) => attempt += 1,\n        }\n        tokio::time::sleep(std::time::Duration::from_millis(100)).await;\n    }\n}\n";
    let repo = Repo::new();
    repo.write("Cargo.toml", "[workspace]\nmembers = [\"xtask\"]\n");
    repo.write("xtask/Cargo.toml", "[package]\nname = \"xtask\"\n");
    repo.write("xtask/src/main.rs", "fn main() {}\n");
    repo.write(CONFIG, "paths:\n  shipped: [\"xtask/\", \"tests/loadgen/\"]\n");
    repo.commit("base");
    repo.branch("agent/change");
    repo.write("xtask/src/smoke.rs", retry);
    repo.write("tests/loadgen/src/lib.rs", retry);
    repo.commit("retry");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let blocking = blocking_paths(&json);
    assert_eq!(blocking, ["tests/loadgen/src/lib.rs", "xtask/src/smoke.rs"], "{json:#}");
}

/// A .NET test project's folder is the project's, settings files included:
/// a retry count raised in its `appsettings.json` is a note, while the same
/// raise in the service's own `appsettings.json` blocks.
#[test]
fn settings_files_of_a_dotnet_test_project_do_not_block() {
    let settings = |n: u32| {
        format!("{{\n  \"OpenAI\": {{\n    \"Endpoint\": \"https://api.example.com\",\n    \"MaxRetries\": {n}\n  }}\n}}\n")
    };
    let repo = Repo::new();
    repo.write(
        "Store.FunctionalTests/Store.FunctionalTests.csproj",
        "<Project Sdk=\"Microsoft.NET.Sdk\">\n  <ItemGroup>\n    <PackageReference Include=\"Microsoft.NET.Test.Sdk\" />\n    <PackageReference Include=\"xunit\" />\n  </ItemGroup>\n</Project>\n",
    );
    repo.write("Service/Service.csproj", "<Project Sdk=\"Microsoft.NET.Sdk.Web\">\n</Project>\n");
    repo.write("Store.FunctionalTests/appsettings.json", settings(2));
    repo.write("Service/appsettings.json", settings(2));
    repo.commit("base");
    repo.branch("agent/change");
    repo.write("Store.FunctionalTests/appsettings.json", settings(10));
    repo.write("Service/appsettings.json", settings(10));
    repo.commit("raise");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let at = |path: &str, severity: &str| {
        findings(&json).iter().any(|f| f["path"] == path && f["severity"] == severity)
    };
    assert!(at("Service/appsettings.json", "error"), "{json:#}");
    assert!(at("Store.FunctionalTests/appsettings.json", "note"), "{json:#}");
    assert!(!at("Store.FunctionalTests/appsettings.json", "error"), "{json:#}");
}

#[test]
fn a_raise_in_a_script_under_dot_github_is_a_note_and_the_same_raise_in_the_product_blocks() {
    let repo = raised_everywhere(None, &[], &[".github/scripts/release_notes.py", "app/http.py"], &[]);
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let s = summary(&json);
    assert!(
        s.contains(&("app/http.py".to_string(), "retry-count-raised".to_string(), "error".to_string())),
        "{json:#}"
    );
    let gh: Vec<&Value> =
        findings(&json).iter().filter(|f| f["path"] == ".github/scripts/release_notes.py").collect();
    assert!(!gh.is_empty(), "{json:#}");
    for f in gh {
        assert_eq!(f["severity"], "note", "{json:#}");
        assert!(f["message"].as_str().unwrap_or_default().contains("`.github/` holds"), "{json:#}");
    }
}

#[test]
fn a_rust_module_compiled_only_with_a_test_feature_is_test_code() {
    let repo = Repo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"svc\"\nversion = \"0.1.0\"\n\n[features]\ntest-util = []\n",
    );
    repo.write("src/lib.rs", "pub fn live() {}\n\n#[cfg(feature = \"test-util\")]\npub mod test_util;\n");
    repo.write("src/test_util.rs", rust_retry(2));
    repo.write("src/net.rs", rust_retry(2));
    repo.commit("base");
    repo.branch("change");
    repo.write("src/test_util.rs", rust_retry(6));
    repo.write("src/net.rs", rust_retry(6));
    repo.commit("raise");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let sev = |p: &str| -> Vec<String> {
        findings(&json)
            .iter()
            .filter(|f| f["path"] == p)
            .map(|f| f["severity"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert!(sev("src/net.rs").contains(&"error".to_string()), "{json:#}");
    let t = sev("src/test_util.rs");
    assert!(!t.is_empty() && t.iter().all(|s| s == "note"), "{json:#}");
}

/// Go test support is read from imports, not names: a file that imports
/// `testing` (a testify suite helper) and an `internal/` package that only
/// `_test.go` files import do not block; the same new retry of a POST in a
/// public package (which its users import, not its own code), and in a
/// product file that the change itself made import `testing`, still blocks.
#[test]
fn go_test_support_is_decided_by_imports_and_a_change_cannot_add_them_to_exempt_itself() {
    let retry = |imports: &str| {
        format!(
            "package {{PKG}}\n\nimport (\n{imports}\t\"net/http\"\n\t\"strings\"\n\t\"time\"\n)\n\nfunc Send(url string) (*http.Response, error) {{\n\tvar err error\n\tfor i := 0; i < 5; i++ {{\n\t\tvar resp *http.Response\n\t\tresp, err = http.Post(url, \"application/json\", strings.NewReader(\"{{}}\"))\n\t\tif err == nil {{\n\t\t\treturn resp, nil\n\t\t}}\n\t\ttime.Sleep(time.Second)\n\t}}\n\treturn nil, err\n}}\n"
        )
    };
    let once = |pkg: &str, imports: &str| {
        format!("package {pkg}\n\nimport (\n{imports}\t\"net/http\"\n\t\"strings\"\n)\n\nfunc Send(url string) (*http.Response, error) {{\n\treturn http.Post(url, \"application/json\", strings.NewReader(\"{{}}\"))\n}}\n")
    };
    let repo = Repo::new();
    repo.write("go.mod", "module example.com/shop\n\ngo 1.22\n");
    repo.write("shop.go", "package shop\n\nfunc Version() string { return \"1\" }\n");
    repo.write("suite/helper.go", once("suite", "\t\"testing\"\n"));
    repo.write("suite/helper_test.go", "package suite\n");
    repo.write("internal/fakeserver/server.go", once("fakeserver", ""));
    repo.write("orders/orders_test.go", "package orders\n\nimport (\n\t\"testing\"\n\t\"example.com/shop/internal/fakeserver\"\n\t\"example.com/shop/client\"\n)\n\nfunc TestX(t *testing.T) { _, _ = fakeserver.Send(\"\"); _, _ = client.Send(\"\") }\n");
    repo.write("client/client.go", once("client", ""));
    repo.write("internal/billing/billing.go", once("billing", ""));
    repo.commit("base");
    repo.branch("agent/change");
    repo.write("suite/helper.go", retry("\t\"testing\"\n").replace("{PKG}", "suite"));
    repo.write("internal/fakeserver/server.go", retry("").replace("{PKG}", "fakeserver"));
    repo.write("client/client.go", retry("").replace("{PKG}", "client"));
    // The change adds the import itself: the base product file made none.
    repo.write("internal/billing/billing.go", retry("\t\"testing\"\n").replace("{PKG}", "billing"));
    repo.commit("retry the POSTs");
    let (out, json) = scan(&repo);
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    let blocking = blocking_paths(&json);
    assert_eq!(blocking, ["client/client.go", "internal/billing/billing.go"], "{json:#}");
    let why = |path: &str, what: &str| {
        findings(&json).iter().any(|f| {
            f["path"] == path
                && f["severity"] == "note"
                && f["message"].as_str().is_some_and(|m| m.contains(what))
        })
    };
    assert!(why("suite/helper.go", "Go test support: the file imports `testing`"), "{json:#}");
    assert!(
        why(
            "internal/fakeserver/server.go",
            "package `example.com/shop/internal/fakeserver` is imported only by `_test.go` files"
        ),
        "{json:#}"
    );
}
