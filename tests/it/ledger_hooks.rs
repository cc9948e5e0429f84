//! `retrygate ledger hook claude|codex|cursor` fed real-shaped hook JSON in a
//! real git repository: the ledger it leaves, its exit code and answers, and
//! the mutation gate on protected paths.

use crate::common;
use common::{git, write};

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use retrygate::ledger::verify::{verify, ChangeTarget};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "app/checkout.py", "TIMEOUT = 10\n");
    write(d, "src/lib.rs", "pub fn f() {}\n");
    write(d, "old.txt", "bye\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    git(d, &["checkout", "-qb", "agent"]);
    dir
}

/// Runs the hook from an unrelated directory (agents do not promise a cwd):
/// the repository comes from the input's `cwd` / `workspace_roots`.
fn hook(agent: &str, input: &Value, mutate: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(["ledger", "hook", agent])
        .current_dir(std::env::temp_dir())
        .env_remove("AGENT_MUTATE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(m) = mutate {
        cmd.env("AGENT_MUTATE", m);
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn ledger_records(dir: &Path) -> Vec<Value> {
    match std::fs::read_to_string(dir.join(".tool_ledger.jsonl")) {
        Ok(text) => text.lines().map(|l| serde_json::from_str(l).unwrap()).collect(),
        Err(_) => Vec::new(),
    }
}

fn sha(dir: &Path, rel: &str) -> String {
    hex::encode(Sha256::digest(std::fs::read(dir.join(rel)).unwrap()))
}

fn claude(event: &str, dir: &Path, tool: &str, input: Value) -> Value {
    let mut v = json!({
        "session_id": "abc123",
        "transcript_path": "/home/u/.claude/projects/x/abc123.jsonl",
        "cwd": dir,
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_01ABC",
    });
    if event == "PostToolUse" {
        v["tool_response"] = json!({"success": true});
    }
    v
}

#[test]
fn claude_pre_tool_denies_a_protected_edit_and_records_the_attempt() {
    let r = repo();
    let d = r.path();
    let input = claude(
        "PreToolUse",
        d,
        "Edit",
        json!({
        "file_path": d.join("app/checkout.py"), "old_string": "10", "new_string": "1", "replace_all": false}),
    );
    let out = hook("claude", &input, None);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("app/checkout.py is a protected path (protected by \"app/\")"), "{stderr}");
    assert!(stderr.contains("AGENT_MUTATE=signed-off"), "{stderr}");
    assert!(out.stdout.is_empty());
    let recs = ledger_records(d);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["tool"], "Edit");
    assert_eq!(recs[0]["payload"]["decision"], "denied");
    assert_eq!(recs[0]["payload"]["path"], "app/checkout.py");
    assert!(recs[0].get("sha256").is_none(), "a denial is not an edit");

    // A wrong value is not a sign-off.
    assert_eq!(hook("claude", &input, Some("yes")).status.code(), Some(2));
    // A human signed off: allowed, nothing recorded before the edit happens.
    let out = hook("claude", &input, Some("signed-off"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(ledger_records(d).len(), 2);
}

#[test]
fn claude_pre_tool_allows_unprotected_edits_and_shell_commands_silently() {
    let r = repo();
    let d = r.path();
    let out = hook(
        "claude",
        &claude("PreToolUse", d, "Write", json!({"file_path": d.join("src/new.rs"), "content": "x"})),
        None,
    );
    assert_eq!((out.status.code(), out.stdout.is_empty(), out.stderr.is_empty()), (Some(0), true, true));
    let out = hook(
        "claude",
        &claude("PreToolUse", d, "Bash", json!({"command": "sed -i s/10/1/ app/checkout.py"})),
        None,
    );
    assert_eq!(out.status.code(), Some(0), "shell commands are recorded, not gated");
    // The agent may not rewrite its own ledger, signed off or not.
    let own =
        claude("PreToolUse", d, "Write", json!({"file_path": d.join(".tool_ledger.jsonl"), "content": ""}));
    let out = hook("claude", &own, Some("signed-off"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only retrygate writes"));
    // An edit whose file cannot be told is denied, not waved through.
    let blind = claude("PreToolUse", d, "Edit", json!({"old_string": "a", "new_string": "b"}));
    assert_eq!(hook("claude", &blind, Some("signed-off")).status.code(), Some(2));
    // `..` and relative paths cannot sneak past the gate.
    let sneaky = claude("PreToolUse", d, "Write", json!({"file_path": "src/../app/new.py", "content": "x"}));
    assert_eq!(hook("claude", &sneaky, None).status.code(), Some(2));
    assert!(ledger_records(d).iter().all(|r| r["payload"]["decision"] == "denied"));
}

#[test]
fn claude_post_tool_records_edits_with_hashes_and_commands() {
    let r = repo();
    let d = r.path();
    write(d, "src/lib.rs", "pub fn f() -> u8 { 1 }\n");
    let out = hook(
        "claude",
        &claude("PostToolUse", d, "Write", json!({"file_path": d.join("src/lib.rs"), "content": "..."})),
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    write(d, "src/extra.rs", "// x\n");
    let multi = claude(
        "PostToolUse",
        d,
        "MultiEdit",
        json!({"file_path": "src/extra.rs", "edits": [{"old_string": "a", "new_string": "b"}]}),
    );
    assert_eq!(hook("claude", &multi, None).status.code(), Some(0));
    let bash =
        claude("PostToolUse", d, "Bash", json!({"command": "cargo test -q", "description": "run tests"}));
    assert_eq!(hook("claude", &bash, None).status.code(), Some(0));
    let recs = ledger_records(d);
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0]["payload"], json!({"path": "src/lib.rs", "tool_use_id": "toolu_01ABC"}));
    assert_eq!(recs[0]["sha256"], sha(d, "src/lib.rs"));
    assert_eq!(
        (recs[0]["v"].clone(), recs[0]["seq"].clone(), recs[0]["prev"].clone()),
        (json!(2), json!(1), Value::Null)
    );
    assert_eq!(recs[1]["payload"]["path"], "src/extra.rs");
    assert_eq!(recs[2]["payload"]["command"], "cargo test -q");
    assert!(recs[2].get("sha256").is_none());
    assert!(verify(&d.join(".tool_ledger.jsonl"), None).unwrap().valid);
}

#[test]
fn codex_apply_patch_is_gated_and_recorded_per_file() {
    let r = repo();
    let d = r.path();
    let patch =
        "*** Begin Patch\n*** Update File: app/checkout.py\n@@\n-TIMEOUT = 10\n+TIMEOUT = 1\n*** End Patch\n";
    let pre = json!({"session_id": "s", "turn_id": "t", "cwd": d, "hook_event_name": "PreToolUse", "model": "gpt-5-codex",
        "tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "call_1"});
    let out = hook("codex", &pre, None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("apply_patch is denied: app/checkout.py is a protected path"));
    assert_eq!(ledger_records(d)[0]["payload"]["decision"], "denied");

    // An unprotected patch that adds, updates, moves and deletes.
    let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n*** Update File: src/lib.rs\n*** Move to: src/core.rs\n@@\n-pub fn f() {}\n+pub fn g() {}\n*** Delete File: old.txt\n*** End Patch\n";
    let pre = json!({"cwd": d, "hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_input": {"command": patch}});
    assert_eq!(hook("codex", &pre, None).status.code(), Some(0));
    // Codex applies it; then the post hook.
    write(d, "docs/new.md", "hello\n");
    std::fs::rename(d.join("src/lib.rs"), d.join("src/core.rs")).unwrap();
    write(d, "src/core.rs", "pub fn g() {}\n");
    std::fs::remove_file(d.join("old.txt")).unwrap();
    let post = json!({"cwd": d, "hook_event_name": "PostToolUse", "tool_name": "apply_patch",
        "tool_input": {"command": patch}, "tool_response": "Success. Updated the following files: ..."});
    let out = hook("codex", &post, None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let recs = ledger_records(d);
    let edits: Vec<(String, Value)> = recs[1..]
        .iter()
        .map(|r| (r["payload"]["path"].as_str().unwrap().to_string(), r["sha256"].clone()))
        .collect();
    assert_eq!(
        edits,
        vec![
            ("docs/new.md".to_string(), json!(sha(d, "docs/new.md"))),
            ("src/lib.rs".to_string(), Value::Null),
            ("src/core.rs".to_string(), json!(sha(d, "src/core.rs"))),
            ("old.txt".to_string(), Value::Null),
        ]
    );
    // The whole session explains the commit.
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "codex"]);
    let mut target = ChangeTarget::from_git(d, "main", "agent").unwrap();
    target.exclude(".tool_ledger.jsonl");
    let report = verify(&d.join(".tool_ledger.jsonl"), Some(&target)).unwrap();
    assert!(report.valid, "{:?}", report.problems);
    assert_eq!(report.coverage.unwrap().explained, 4);
}

#[test]
fn cursor_hooks_deny_with_json_and_record_edits_and_shell() {
    let r = repo();
    let d = r.path();
    let base = json!({"conversation_id": "c1", "generation_id": "g1", "workspace_roots": [d], "cursor_version": "2.0.77"});
    let with = |extra: Value| {
        let mut v = base.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    let pre = with(
        json!({"hook_event_name": "preToolUse", "tool_name": "Write", "tool_input": {"file_path": d.join("app/x.py")}}),
    );
    let out = hook("cursor", &pre, None);
    assert_eq!(out.status.code(), Some(2));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["permission"], "deny");
    assert!(answer["agent_message"].as_str().unwrap().contains("app/x.py"));

    let shell = with(json!({"hook_event_name": "beforeShellExecution", "command": "npm test", "cwd": d}));
    let out = hook("cursor", &shell, None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), json!({}));

    write(d, "src/lib.rs", "pub fn h() {}\n");
    let edit = with(json!({"hook_event_name": "afterFileEdit", "file_path": d.join("src/lib.rs"),
        "edits": [{"old_string": "f", "new_string": "h"}]}));
    assert_eq!(hook("cursor", &edit, None).status.code(), Some(0));
    let ran = with(
        json!({"hook_event_name": "afterShellExecution", "command": "npm test", "output": "ok", "duration": 150}),
    );
    assert_eq!(hook("cursor", &ran, None).status.code(), Some(0));
    let recs = ledger_records(d);
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0]["payload"]["decision"], "denied");
    assert_eq!(
        (recs[1]["tool"].clone(), recs[1]["sha256"].clone()),
        (json!("afterFileEdit"), json!(sha(d, "src/lib.rs")))
    );
    assert_eq!(recs[1]["payload"]["tool_use_id"], "g1");
    assert_eq!(
        (recs[2]["tool"].clone(), recs[2]["payload"]["command"].clone()),
        (json!("Shell"), json!("npm test"))
    );
}

#[test]
fn the_repository_config_decides_what_is_protected_and_where_the_ledger_goes() {
    let r = repo();
    let d = r.path();
    write(
        d,
        ".github/retrygate.yml",
        "protected_paths: [\"src/**/*.rs\"]\nledger: { path: logs/agent.jsonl }\n",
    );
    // The hook reads the config committed at HEAD, not the working tree.
    git(d, &["add", ".github/retrygate.yml"]);
    git(d, &["commit", "-qm", "config"]);
    let out = hook(
        "claude",
        &claude("PreToolUse", d, "Edit", json!({"file_path": d.join("app/checkout.py")})),
        None,
    );
    assert_eq!(out.status.code(), Some(0), "app/ is no longer protected here");
    let out =
        hook("claude", &claude("PreToolUse", d, "Edit", json!({"file_path": d.join("src/lib.rs")})), None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("protected by \"src/**/*.rs\""));
    assert!(d.join("logs/agent.jsonl").exists());
    assert!(!d.join(".tool_ledger.jsonl").exists());

    // A broken config fails closed: the edit is blocked with the file and line.
    write(d, ".github/retrygate.yml", "protected_paths: [\"app/\"]\nprotect: []\n");
    git(d, &["commit", "-qam", "broken config"]);
    let out =
        hook("claude", &claude("PreToolUse", d, "Edit", json!({"file_path": d.join("src/lib.rs")})), None);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".github/retrygate.yml (committed at HEAD):2: unknown field `protect`"),
        "{stderr}"
    );

    // An oversized config is refused with its real size, before it is read.
    let big = format!("# {}\n", "x".repeat(1 << 20));
    write(d, ".github/retrygate.yml", &big);
    git(d, &["commit", "-qam", "huge config"]);
    let out = hook(
        "claude",
        &claude("PreToolUse", d, "Edit", json!({"file_path": d.join("app/checkout.py")})),
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            ".github/retrygate.yml (committed at HEAD): the file is {} bytes, over the 1024 KiB limit; a retrygate config is a few hundred bytes",
            big.len()
        )),
        "{stderr}"
    );
}

#[test]
fn garbage_on_stdin_blocks_instead_of_allowing() {
    let r = repo();
    let mut child = Command::new(BIN)
        .args(["ledger", "hook", "claude"])
        .current_dir(r.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"\x00\xffnot json").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the hook input is not JSON"));
    // Events the hook does not act on pass through untouched.
    let out = hook("claude", &json!({"hook_event_name": "Stop", "cwd": r.path()}), None);
    assert_eq!(out.status.code(), Some(0));
    assert!(ledger_records(r.path()).is_empty());
}
