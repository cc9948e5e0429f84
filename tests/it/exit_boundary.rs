//! The binary's one exit boundary: whatever happens inside a command, the
//! process ends with 0, 1 or 2, and a panic is 2 ("could not decide") with
//! the panic's message, never Rust's 101. For `ledger hook` this is what
//! keeps a panicking PreToolUse hook from waving an edit through (Claude
//! Code treats every exit other than 2 as "go ahead").
//!
//! The panic is forced with `RETRYGATE_TEST_FORCE_PANIC` (see
//! `FORCE_PANIC_VAR` in the binary's `src/cli/mod.rs`), which exists for this
//! test only.

use crate::common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::Repo;

/// The variable the binary reads to panic inside a command (its `FORCE_PANIC_VAR`).
const FORCE_PANIC_VAR: &str = "RETRYGATE_TEST_FORCE_PANIC";

fn run(args: &[&str], stdin: &str, panic_in: Option<&str>, envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retrygate"));
    cmd.args(args)
        .env_remove("RUST_LOG")
        .env_remove("GIT_DIR")
        .env_remove(FORCE_PANIC_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    if let Some(c) = panic_in {
        cmd.env(FORCE_PANIC_VAR, c);
    }
    let mut child = cmd.spawn().expect("run the retrygate binary");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

struct Case {
    name: &'static str,
    args: Vec<String>,
    stdin: String,
    envs: Vec<(String, String)>,
    /// The exit code without a forced panic.
    normal_exit: i32,
}

fn cases(repo: &Repo, dir: &std::path::Path) -> Vec<Case> {
    let r = repo.path().to_str().unwrap().to_string();
    let event = dir.join("event.json");
    std::fs::write(&event, r#"{"action": "closed", "pull_request": {"number": 1, "node_id": "x", "head": {"sha": "a", "ref": "b", "repo": null}, "base": {"sha": "c", "ref": "main", "repo": null}, "user": {"login": "u"}}}"#).unwrap();
    let pre = serde_json::json!({"hook_event_name": "PreToolUse", "cwd": r, "tool_name": "Edit",
        "tool_input": {"file_path": format!("{r}/src/lib.rs")}})
    .to_string();
    let s = |x: &str| x.to_string();
    vec![
        Case {
            name: "scan",
            args: vec![s("scan"), s("--repo"), r.clone(), s("--base"), s("HEAD~1"), s("--format"), s("json")],
            stdin: String::new(),
            envs: vec![],
            normal_exit: 0,
        },
        Case {
            name: "check",
            args: vec![
                s("check"),
                s("--repo"),
                r.clone(),
                s("--base"),
                s("HEAD~1"),
                s("--format"),
                s("json"),
            ],
            stdin: String::new(),
            envs: vec![],
            normal_exit: 0,
        },
        Case {
            name: "ledger",
            args: vec![s("ledger"), s("hook"), s("claude")],
            stdin: pre,
            envs: vec![],
            normal_exit: 0,
        },
        Case {
            name: "github",
            args: vec![s("github"), s("--repo"), r.clone()],
            stdin: String::new(),
            envs: vec![
                (s("GITHUB_EVENT_NAME"), s("pull_request")),
                (s("GITHUB_EVENT_PATH"), event.display().to_string()),
                (s("GITHUB_REPOSITORY"), s("o/r")),
                (s("GITHUB_STEP_SUMMARY"), dir.join("summary.md").display().to_string()),
                (s("GITHUB_OUTPUT"), dir.join("out.txt").display().to_string()),
            ],
            normal_exit: 0,
        },
    ]
}

#[test]
fn a_panic_in_scan_check_ledger_hook_or_github_exits_2_with_the_message() {
    let repo = Repo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n").commit("base");
    repo.write("src/lib.rs", "pub fn b() {}\n").commit("head");
    let dir = tempfile::tempdir().unwrap();
    for case in cases(&repo, dir.path()) {
        let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
        let envs: Vec<(&str, &str)> = case.envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();

        // Without the forced panic the command runs normally...
        let o = run(&args, &case.stdin, None, &envs);
        assert_eq!(
            o.status.code(),
            Some(case.normal_exit),
            "{}: {}",
            case.name,
            String::from_utf8_lossy(&o.stderr)
        );

        // ...and with it, the panic becomes exit 2 with its message.
        let o = run(&args, &case.stdin, Some(case.name), &envs);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", case.name);
        assert!(
            err.contains(&format!(
                "retrygate: internal error (RETRYGATE_TEST_FORCE_PANIC asked for a panic in `{}`); this is a bug in retrygate",
                case.name
            )),
            "{}: {err}",
            case.name
        );
        assert!(!err.contains("retrygate: error:"), "a panic is reported once, as a panic: {err}");
    }
}

#[test]
fn the_forced_panic_names_one_command_and_leaves_the_others_alone() {
    let repo = Repo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n").commit("base");
    repo.write("src/lib.rs", "pub fn b() {}\n").commit("head");
    let r = repo.path().to_str().unwrap();
    let o = run(&["scan", "--repo", r, "--base", "HEAD~1", "--format", "json"], "", Some("check"), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}
