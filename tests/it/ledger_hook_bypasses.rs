//! The mutation hook against what an agent controls: the working tree's
//! config, the event's `cwd`, symbolic links, several workspace roots, the
//! size of the event and the number of files in a patch, and special files.
//! Each case was a way to get a protected edit allowed (or the hook stuck)
//! before; see docs/ledger.md, "What the hook trusts".

use crate::common;
use common::{git, write};

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

/// A repository with `app/` and `clients/` (protected by default) and `src/`.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "app/checkout.py", "TIMEOUT = 10\n");
    write(d, "clients/http.py", "RETRIES = 2\n");
    write(d, "src/lib.rs", "pub fn f() {}\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    dir
}

/// Longest a hook may take here: the agents' own hook timeout (Codex
/// documents 10 s). A hook still running then is killed and the test fails,
/// instead of hanging (a FIFO used to block it forever).
const HOOK_DEADLINE: Duration = Duration::from_secs(10);

fn run(agent: &str, stdin: &[u8], cwd: &Path, mutate: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(["ledger", "hook", agent])
        .current_dir(cwd)
        .env_remove("AGENT_MUTATE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(m) = mutate {
        cmd.env("AGENT_MUTATE", m);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin_pipe = child.stdin.take().unwrap();
    // The hook may refuse before reading everything: a broken pipe is fine.
    let _ = stdin_pipe.write_all(stdin);
    drop(stdin_pipe);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HOOK_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the hook was still running after {HOOK_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn hook(input: &Value, mutate: Option<&str>) -> Output {
    run("claude", input.to_string().as_bytes(), &std::env::temp_dir(), mutate)
}

fn pre_edit(cwd: impl AsRef<Path>, file: impl AsRef<Path>) -> Value {
    json!({"session_id": "s", "cwd": cwd.as_ref(), "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": file.as_ref(), "old_string": "a", "new_string": "b"}, "tool_use_id": "t1"})
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_denied(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stderr(o).contains(needle), "{}", stderr(o));
}

fn records(ledger: &Path) -> Vec<Value> {
    std::fs::read_to_string(ledger)
        .map(|t| t.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
        .unwrap_or_default()
}

#[test]
fn an_uncommitted_config_neither_unprotects_nor_moves_the_ledger() {
    let r = repo();
    let d = r.path();
    // The agent's own write (not a protected path by default).
    write(d, ".github/retrygate.yml", "protected_paths: []\nledger: { path: elsewhere.jsonl }\n");
    let o = hook(&pre_edit(d, d.join("app/checkout.py")), None);
    assert_denied(&o, "app/checkout.py is a protected path (protected by \"app/\")");
    assert_eq!(records(&d.join(".tool_ledger.jsonl")).len(), 1, "the denial is in the committed ledger path");
    assert!(!d.join("elsewhere.jsonl").exists());
}

#[test]
fn the_gate_config_and_the_agents_hook_settings_need_a_sign_off() {
    let r = repo();
    let d = r.path();
    for f in [
        ".github/retrygate.yml",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".codex/hooks.json",
        ".cursor/hooks.json",
    ] {
        let o = hook(&pre_edit(d, d.join(f)), None);
        assert_denied(&o, &format!("{f} configures the gate or the agent's hooks; a human must sign off"));
        let o = hook(&pre_edit(d, d.join(f)), Some("signed-off"));
        assert_eq!(o.status.code(), Some(0), "{f}: {}", stderr(&o));
    }
    // Other files under the same folders are ordinary.
    let o = hook(&pre_edit(d, d.join(".claude/commands/review.md")), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn the_repository_comes_from_the_file_not_the_cwd() {
    let r = repo();
    let d = r.path();
    let other = repo();
    let parent = d.parent().unwrap();
    let name = d.file_name().unwrap().to_str().unwrap();
    // cwd one level above: a relative path into the repository.
    let o = hook(&pre_edit(parent, format!("{name}/app/checkout.py")), None);
    assert_denied(&o, "protected by \"app/\"");
    assert_eq!(records(&d.join(".tool_ledger.jsonl")).len(), 1, "recorded in the file's repository");
    assert!(!parent.join(".tool_ledger.jsonl").exists());
    // cwd `/`, a missing folder, another repository: an absolute path.
    for cwd in [Path::new("/"), &d.join("no/such/dir"), other.path()] {
        let o = hook(&pre_edit(cwd, d.join("clients/new.py")), None);
        assert_denied(&o, "clients/new.py is a protected path (protected by \"clients/\")");
    }
    assert_eq!(records(&d.join(".tool_ledger.jsonl")).len(), 4);
    assert!(records(&other.path().join(".tool_ledger.jsonl")).is_empty(), "not in the cwd's repository");
    // A relative path from a missing folder cannot be placed: denied.
    let o = hook(&pre_edit(d.join("gone"), "x.py"), None);
    assert_denied(&o, "does not exist");
    // An edit outside every repository is not part of any pull request.
    let outside = tempfile::tempdir().unwrap();
    let o = hook(&pre_edit(d, outside.path().join("app/x.py")), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn symbolic_links_are_followed_as_the_kernel_follows_them() {
    let r = repo();
    let d = r.path();
    std::fs::create_dir_all(d.join("app/sub")).unwrap();
    std::fs::create_dir_all(d.join("clients/sub")).unwrap();
    std::fs::create_dir_all(d.join("docs")).unwrap();
    std::os::unix::fs::symlink(d.join("app/sub"), d.join("deep")).unwrap();
    std::os::unix::fs::symlink("clients/sub", d.join("s")).unwrap();
    std::os::unix::fs::symlink("../clients/new.py", d.join("docs/d.py")).unwrap();
    // `deep/..` is app/, not the repository root.
    let o = hook(&pre_edit(d, d.join("deep/../x.py")), None);
    assert_denied(&o, "deep/../x.py (which is app/x.py) is a protected path");
    // `s/..` is clients/.
    let o = hook(&pre_edit(d, "s/../x.py"), None);
    assert_denied(&o, "(which is clients/x.py) is a protected path");
    // A dangling link: writing through it creates clients/new.py.
    let o = hook(&pre_edit(d, d.join("docs/d.py")), None);
    assert_denied(&o, "(which is clients/new.py) is a protected path");
    // A plain file next to them is fine.
    let o = hook(&pre_edit(d, d.join("docs/readme.md")), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_fake_repository_inside_a_protected_folder_does_not_hide_it() {
    let r = repo();
    let d = r.path();
    // The agent makes clients/ look like a repository of its own (with no
    // config, so nothing of "clients/" inside it would be protected).
    git(&d.join("clients"), &["init", "-q"]);
    let o = hook(&pre_edit(d, d.join("clients/http.py")), None);
    assert_denied(&o, "clients/http.py is a protected path (protected by \"clients/\")");
}

#[test]
fn cursor_edits_in_any_workspace_root_are_gated() {
    let first = repo();
    let second = repo();
    let event = json!({"hook_event_name": "preToolUse", "tool_name": "Write", "conversation_id": "c",
        "generation_id": "g", "workspace_roots": [first.path(), second.path()],
        "tool_input": {"file_path": second.path().join("app/new.py"), "content": "x"}});
    let o = run("cursor", event.to_string().as_bytes(), &std::env::temp_dir(), None);
    assert_denied(&o, "app/new.py is a protected path");
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"permission\":\"deny\""));
    assert_eq!(records(&second.path().join(".tool_ledger.jsonl")).len(), 1);
    // A relative path is checked against every root that could hold it.
    let event = json!({"hook_event_name": "preToolUse", "tool_name": "Write", "conversation_id": "c",
        "generation_id": "g", "workspace_roots": [first.path().join("src"), second.path()],
        "tool_input": {"file_path": "app/new.py", "content": "x"}});
    let o = run("cursor", event.to_string().as_bytes(), &std::env::temp_dir(), None);
    assert_denied(&o, "app/new.py is a protected path");
}

#[test]
fn powershell_is_recorded_with_its_command() {
    let r = repo();
    let d = r.path();
    let post = json!({"session_id": "s", "cwd": d, "hook_event_name": "PostToolUse", "tool_name": "PowerShell",
        "tool_input": {"command": "Remove-Item app/checkout.py"}, "tool_response": {}, "tool_use_id": "t9"});
    let o = hook(&post, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = records(&d.join(".tool_ledger.jsonl"));
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["tool"], "PowerShell");
    assert_eq!(recs[0]["payload"]["command"], "Remove-Item app/checkout.py");
}

#[test]
fn a_post_tool_hook_on_a_fifo_ends_with_an_error_instead_of_blocking() {
    let r = repo();
    let d = r.path();
    let fifo = d.join("src/pipe.rs");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let post = json!({"session_id": "s", "cwd": d, "hook_event_name": "PostToolUse", "tool_name": "Write",
        "tool_input": {"file_path": fifo, "content": "x"}, "tool_response": {}, "tool_use_id": "t1"});
    let started = Instant::now();
    let o = hook(&post, None);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_denied(&o, "cannot hash src/pipe.rs: it is a FIFO, not a regular file");
    assert!(records(&d.join(".tool_ledger.jsonl")).is_empty());
}

#[test]
fn an_event_over_the_cap_is_refused_unread() {
    let r = repo();
    let d = r.path();
    // 16 MB of JSON array: refused, whatever its content.
    let mut big = String::from("[");
    while big.len() < 16 << 20 {
        big.push_str("0,");
    }
    big.push_str("0]");
    let started = Instant::now();
    let o = run("claude", big.as_bytes(), d, None);
    assert_denied(&o, "the hook input (stdin): larger than the 8388608 bytes");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Under the cap, memory stays close to the input's size: see
    // tests/ledger_hook_memory.rs.
}

fn patch_naming(n: usize, dir: &str) -> String {
    let mut p = String::from("*** Begin Patch\n");
    for i in 0..n {
        p.push_str(&format!("*** Add File: {dir}/f{i}.txt\n+x\n"));
    }
    p.push_str("*** End Patch\n");
    p
}

#[test]
fn a_codex_patch_naming_200k_files_is_answered_within_codexs_timeout() {
    let r = repo();
    let d = r.path();
    let pre = |patch: String| {
        json!({"session_id": "s", "cwd": d, "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
            "tool_input": {"command": patch}, "tool_use_id": "t1"})
    };
    let started = Instant::now();
    let o = run("codex", pre(patch_naming(200_000, "docs")).to_string().as_bytes(), d, None);
    let took = started.elapsed();
    assert_denied(&o, "the call names 200000 files, more than the 5000 retrygate checks");
    assert!(took < Duration::from_secs(10), "{took:?}");
    // Up to the limit every file is checked, still well within 10 s.
    let started = Instant::now();
    let o = run("codex", pre(patch_naming(5_000, "docs")).to_string().as_bytes(), d, None);
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(took < Duration::from_secs(10), "{took:?}");
    // After the call, the 5,000 edits are recorded in one locked append.
    for i in 0..5_000 {
        write(d, &format!("docs/f{i}.txt"), "x\n");
    }
    let mut post = pre(patch_naming(5_000, "docs"));
    post["hook_event_name"] = json!("PostToolUse");
    let started = Instant::now();
    let o = run("codex", post.to_string().as_bytes(), d, None);
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(took < Duration::from_secs(10), "{took:?}");
    let report = retrygate::ledger::verify::verify(&d.join(".tool_ledger.jsonl"), None).unwrap();
    assert!(report.valid, "{:?}", report.problems);
    assert_eq!(report.records, 5_001, "the denial of the 200k patch, then 5,000 edits");
    let mut protected = patch_naming(4_999, "docs");
    protected.insert_str("*** Begin Patch\n".len(), "*** Add File: clients/x.py\n+x\n");
    let o = run("codex", pre(protected).to_string().as_bytes(), d, None);
    assert_denied(&o, "clients/x.py is a protected path");
}

/// A v1 ledger line (what existing agent tool layers write) for an edit of
/// `path`: digest = first 16 hex of SHA-256 over Python's
/// `json.dumps(payload, sort_keys=True)`.
fn v1_edit(ts: f64, path: &str) -> String {
    use sha2::{Digest, Sha256};
    let payload = format!("{{\"path\": {}}}", serde_json::to_string(path).unwrap());
    let digest = &hex::encode(Sha256::digest(payload.as_bytes()))[..16];
    format!("{{\"ts\": {ts}, \"tool\": \"edit_file\", \"payload\": {payload}, \"digest\": \"{digest}\"}}\n")
}

#[test]
fn a_record_for_a_backslash_path_does_not_explain_the_slash_path() {
    use retrygate::ledger::verify::{verify, ChangeTarget};
    let r = repo();
    let d = r.path();
    git(d, &["checkout", "-qb", "agent"]);
    write(d, "src/client.rs", "pub fn c() {}\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "client"]);
    let target = ChangeTarget::from_git(d, "main", "agent").unwrap();
    let ledger = d.join("ledger.jsonl");
    std::fs::write(&ledger, v1_edit(1764410001.5, "src\\client.rs")).unwrap();
    let report = verify(&ledger, Some(&target)).unwrap();
    assert!(
        report.problems.iter().all(|p| p.line.is_none()),
        "the record itself is valid: {:?}",
        report.problems
    );
    assert_eq!(report.coverage.unwrap().unexplained, ["src/client.rs"]);
    // The same record with a slash explains it.
    std::fs::write(&ledger, v1_edit(1764410001.5, "src/client.rs")).unwrap();
    let report = verify(&ledger, Some(&target)).unwrap();
    assert!(report.valid, "{:?}", report.problems);
    assert_eq!(report.coverage.unwrap().explained, 1);
}
