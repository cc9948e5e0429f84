//! The real `retrygate` binary on real repositories: exit codes (0 pass,
//! 1 blocked, 2 could not decide), the error messages a user sees on stderr,
//! the machine-readable formats, and `explain`.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::Repo;
use serde_json::Value;

fn retrygate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("GIT_DIR")
        .output()
        .expect("run the retrygate binary")
}

fn scan(repo: &Path, extra: &[&str]) -> Output {
    let repo = repo.to_str().expect("temp paths are UTF-8");
    let mut args = vec!["scan", "--repo", repo];
    args.extend_from_slice(extra);
    retrygate(&args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts exit 2 and that stderr holds every one of `needles`, and that
/// nothing that looks like a verdict reached stdout.
fn assert_could_not_decide(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
    assert!(
        !stdout(o).contains("PASS") && !stdout(o).contains("\"verdict\""),
        "no verdict on an error: {}",
        stdout(o)
    );
}

/// `main` with one Rust file, `feature` changing it plus a non-Rust binary.
fn pr_repo() -> Repo {
    let repo = Repo::new();
    repo.write("src/client.rs", "fn call() {}\n");
    repo.commit("base");
    repo.branch("feature");
    repo.write("src/client.rs", "fn call() { /* changed */ }\n");
    repo.write("assets/logo.png", b"\x89PNG\0\0\0".as_slice());
    repo.commit("change");
    repo
}

#[test]
fn unknown_revision_exits_2_naming_it() {
    let repo = pr_repo();
    let o = scan(repo.path(), &["--base", "no-such-branch"]);
    assert_could_not_decide(&o, &["retrygate: error: unknown revision 'no-such-branch'", "git fetch"]);
    let o = scan(repo.path(), &["--base", "main", "--head", "deadbeef"]);
    assert_could_not_decide(&o, &["unknown revision 'deadbeef'"]);
}

#[test]
fn not_a_repository_exits_2_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let o = scan(dir.path(), &["--base", "main"]);
    assert_could_not_decide(&o, &["is not a git repository", "--repo DIR"]);
    let o = scan(&dir.path().join("missing"), &["--base", "main"]);
    assert_could_not_decide(&o, &["does not exist"]);
}

#[test]
fn shallow_clone_exits_2_asking_for_full_history() {
    let origin = pr_repo();
    origin.checkout("main");
    origin.write("README.md", "main moves on\n");
    origin.commit("main advances");
    let clone = Repo::clone_from(&origin, &["--depth", "1", "--no-single-branch"]);
    let o = scan(clone.path(), &["--base", "origin/main", "--head", "origin/feature"]);
    assert_could_not_decide(&o, &["the clone is shallow", "fetch full history", "git fetch --unshallow"]);
}

#[test]
fn json_output_has_verdict_findings_and_notes() {
    let repo = pr_repo();
    let o = scan(repo.path(), &["--base", "main", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON");
    assert_eq!(v["verdict"], "pass");
    assert!(v["findings"].is_array(), "{v}");
    let notes = v["notes"].as_array().expect("notes array");
    assert!(
        notes.iter().any(|n| n["path"] == "assets/logo.png" && n["message"] == "skipped: binary file"),
        "{v}"
    );
}

#[test]
fn text_is_the_default_when_stdout_is_not_a_terminal_and_json_is_asked_for() {
    let repo = pr_repo();
    let o = scan(repo.path(), &["--base", "main"]);
    let text = stdout(&o);
    assert!(text.trim_end().lines().last().is_some_and(|l| l.starts_with("retrygate: PASS")), "{text}");
    assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
    let o = scan(repo.path(), &["--base", "main", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is JSON");
    assert_eq!(v["verdict"], "pass");
}

#[test]
fn an_unreadable_rust_file_blocks_with_exit_1() {
    // A Rust file the analyzer cannot read must not pass (fail closed).
    let repo = pr_repo();
    repo.write("src/blob.rs", b"fn a() {}\0\0\0".as_slice());
    repo.commit("binary rust file");
    let o = scan(repo.path(), &["--base", "main", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["verdict"], "block");
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n["path"] == "src/blob.rs" && n["blocking"] == true),
        "{v}"
    );
}

#[test]
fn every_format_renders_through_the_binary() {
    let repo = pr_repo();
    let run = |format: &str| {
        let o = scan(repo.path(), &["--base", "main", "--format", format]);
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        stdout(&o)
    };
    let sarif: Value = serde_json::from_str(&run("sarif")).expect("SARIF is JSON");
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["tool"]["driver"]["name"], "retrygate");
    assert!(run("markdown").starts_with("### ✅ retrygate: passing"));
    let gh = run("github");
    assert!(gh.contains("::notice file=assets/logo.png,title=retrygate note::skipped: binary file"), "{gh}");
    assert!(gh.ends_with("retrygate: PASS: no blocking findings\n"), "{gh}");
    assert!(run("text").contains("retrygate: PASS"));
}

#[test]
fn usage_errors_exit_2() {
    let o = retrygate(&["scan"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--base"), "{}", stderr(&o));
    let o = retrygate(&["scan", "--base", "main", "--format", "yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("yaml"), "{}", stderr(&o));
    let o = retrygate(&["no-such-command"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn explain_prints_a_kinds_documentation() {
    let o = retrygate(&["explain", "jitter-removed"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let doc = retrygate::finding::Kind::JitterRemoved.doc();
    assert!(out.starts_with("jitter-removed (default severity: error)"), "{out}");
    for (label, text) in [
        ("What it flags", doc.what),
        ("Why it matters", doc.why),
        ("Example", doc.example),
        ("Use instead", doc.use_instead),
    ] {
        assert!(out.contains(&format!("{label}: {text}")), "{label}: {out}");
    }
    assert!(!out.contains("retry-count-raised"), "only the kind asked for: {out}");
}

#[test]
fn explain_without_a_kind_lists_them_all() {
    let o = retrygate(&["explain"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for k in retrygate::finding::Kind::ALL {
        assert!(out.contains(&format!("{} (default severity: ", k.id())), "{k}: {out}");
    }
}

#[test]
fn explain_an_unknown_kind_exits_2_naming_the_known_ones() {
    let o = retrygate(&["explain", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("unknown finding kind 'nope'"), "{err}");
    for k in retrygate::finding::Kind::ALL {
        assert!(err.contains(k.id()), "{k} not listed: {err}");
    }
    assert!(stdout(&o).is_empty());
}

#[test]
fn scan_from_a_subdirectory_sees_the_whole_change_with_repository_paths() {
    // `--repo` defaults to the current directory; a user's `diff.relative`
    // must not narrow the scan to it.
    let repo = pr_repo();
    repo.git(&["config", "diff.relative", "true"]);
    let o = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--base", "main", "--format", "json"])
        .current_dir(repo.join("src"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n["path"] == "assets/logo.png"), "{v}");
}
