//! `retrygate ledger hook claude|codex|cursor`: the agent's tool layer.
//!
//! The agent runs this command around its tool calls with the call as JSON
//! on stdin. After a call (Claude Code and Codex `PostToolUse`; Cursor
//! `postToolUse`, `afterFileEdit`, `afterShellExecution`) it appends v2
//! records: one per file an edit touched, with the file's SHA-256 on disk,
//! or one with the shell command. Before a call (`PreToolUse`, Cursor
//! `preToolUse`) it is the mutation gate: an edit to a protected path
//! (`protected_paths` in the repository's `.github/retrygate.yml`) is denied
//! unless `AGENT_MUTATE=signed-off`, and the denied attempt is recorded too.
//!
//! Denial follows each agent's protocol: exit code 2 with the reason on
//! stderr (Claude Code and Codex feed it back to the model); Cursor also
//! reads `{"permission": "deny", ...}` from stdout. Any error (unreadable
//! input, bad config, unwritable ledger) also exits 2, so a broken gate
//! blocks instead of waving edits through.
//!
//! Shell commands are recorded, not gated: what a command writes is not
//! knowable before it runs. The gate's coverage check closes that gap: an
//! edit made by a shell command has no edit record, so the changed file is
//! "unexplained" and the pull request is blocked.

use std::path::{Path, PathBuf};

use super::append::{append, hash_file, repo_relative, AppendError, NewRecord};
use super::patch::{parse_patch, touched};
use super::pyjson::Value;
use crate::changeset::Git;
use crate::config::{Config, ProtectedPaths};

/// The value of `AGENT_MUTATE` that lifts the mutation gate.
pub const SIGNED_OFF: &str = "signed-off";

/// Hook input larger than this is refused (a `Write` carries the whole file).
pub const MAX_INPUT_BYTES: usize = 64 << 20;

/// Which agent's wire format to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    Claude,
    Codex,
    Cursor,
}

/// What the process should do: exit code and the text for stdout/stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookOutcome {
    pub exit: u8,
    pub stdout: String,
    pub stderr: String,
}

/// Inputs from the environment, passed in so tests need not set env vars.
#[derive(Debug, Clone)]
pub struct HookEnv {
    /// `AGENT_MUTATE`.
    pub agent_mutate: Option<String>,
    /// `--ledger`; otherwise the config's `ledger.path` under the repository root.
    pub ledger: Option<PathBuf>,
    /// Where to start when the input names no directory (the process cwd).
    pub fallback_dir: PathBuf,
}

/// Why the hook could not do its job (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("the hook input is not JSON ({0}); run this command only as a {1:?} hook (see docs/ledger.md)")]
    BadInput(String, Agent),
    #[error("hook input over {} MiB; refusing to read it", MAX_INPUT_BYTES >> 20)]
    InputTooLarge,
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Append(#[from] AppendError),
    #[error("cannot hash {path}: {source}")]
    Hash { path: String, source: std::io::Error },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Pre,
    Post,
}

/// A file an edit touches, as the agent named it. Whether the edit removed
/// it is read from the disk afterwards, not from the request.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileTouch {
    path: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    Edit(Vec<FileTouch>),
    Command(String),
    Other(Option<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    phase: Phase,
    tool: String,
    dir: Option<PathBuf>,
    action: Action,
    tool_use_id: Option<String>,
}

const EDIT_TOOLS: [&str; 8] =
    ["Write", "Edit", "MultiEdit", "NotebookEdit", "StrReplace", "Delete", "TabWrite", "apply_patch"];

fn str_at<'a>(v: &'a serde_json::Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k).and_then(serde_json::Value::as_str))
}

/// The action a generic `tool_name`/`tool_input` call performs.
fn tool_action(tool: &str, input: &serde_json::Value) -> Action {
    // Cursor sends MCP tool_input as a JSON string; treat it as opaque.
    if tool == "apply_patch" {
        let patch = str_at(input, &["command", "patch", "input"]).unwrap_or("");
        let files = touched(&parse_patch(patch)).into_iter().map(|t| FileTouch { path: t.path }).collect();
        return Action::Edit(files);
    }
    if EDIT_TOOLS.contains(&tool) {
        let files = str_at(input, &["file_path", "notebook_path", "path", "target_file"])
            .map(|p| vec![FileTouch { path: p.to_string() }])
            .unwrap_or_default();
        return Action::Edit(files);
    }
    if matches!(tool, "Bash" | "Shell" | "shell" | "exec_command" | "local_shell") {
        if let Some(cmd) = str_at(input, &["command", "cmd"]) {
            return Action::Command(cmd.to_string());
        }
        if let Some(argv) = input.get("command").and_then(serde_json::Value::as_array) {
            let words: Vec<&str> = argv.iter().filter_map(serde_json::Value::as_str).collect();
            return Action::Command(words.join(" "));
        }
    }
    Action::Other(str_at(input, &["file_path", "path"]).map(str::to_string))
}

/// Reads the agent's event; `None` for events the hook does not act on.
fn parse_event(agent: Agent, v: &serde_json::Value) -> Option<Event> {
    let name = v.get("hook_event_name").and_then(serde_json::Value::as_str).unwrap_or("");
    let tool_use_id = str_at(v, &["tool_use_id", "generation_id"]).map(str::to_string);
    let dir = match agent {
        Agent::Cursor => v
            .get("workspace_roots")
            .and_then(|r| r.get(0))
            .and_then(serde_json::Value::as_str)
            .or_else(|| str_at(v, &["cwd"])),
        _ => str_at(v, &["cwd"]),
    }
    .map(PathBuf::from);
    let tool_name = str_at(v, &["tool_name"]).unwrap_or("").to_string();
    let input = v.get("tool_input").cloned().unwrap_or(serde_json::Value::Null);
    let (phase, tool, action) = match (agent, name) {
        (Agent::Claude | Agent::Codex, "PreToolUse") | (Agent::Cursor, "preToolUse") => {
            (Phase::Pre, tool_name.clone(), tool_action(&tool_name, &input))
        }
        (Agent::Claude | Agent::Codex, "PostToolUse") | (Agent::Cursor, "postToolUse") => {
            (Phase::Post, tool_name.clone(), tool_action(&tool_name, &input))
        }
        (Agent::Cursor, "afterFileEdit") => {
            let files = str_at(v, &["file_path"])
                .map(|p| vec![FileTouch { path: p.to_string() }])
                .unwrap_or_default();
            (Phase::Post, "afterFileEdit".to_string(), Action::Edit(files))
        }
        (Agent::Cursor, "afterShellExecution") => (
            Phase::Post,
            "Shell".to_string(),
            Action::Command(str_at(v, &["command"]).unwrap_or("").to_string()),
        ),
        _ => return None,
    };
    Some(Event { phase, tool, dir, action, tool_use_id })
}

/// Runs the hook on one stdin document.
pub fn run_hook(agent: Agent, input: &[u8], env: &HookEnv) -> Result<HookOutcome, HookError> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(HookError::InputTooLarge);
    }
    let json: serde_json::Value =
        serde_json::from_slice(input).map_err(|e| HookError::BadInput(e.to_string(), agent))?;
    let quiet = HookOutcome { exit: 0, stdout: allow_stdout(agent), stderr: String::new() };
    let Some(event) = parse_event(agent, &json) else {
        return Ok(quiet);
    };
    let start = event.dir.clone().unwrap_or_else(|| env.fallback_dir.clone());
    let root = repo_root(&start);
    let config = Config::load_from_worktree(&root)?;
    let ledger = env.ledger.clone().unwrap_or_else(|| root.join(&config.ledger.path));
    let signed_off = env.agent_mutate.as_deref() == Some(SIGNED_OFF);
    let protected = config.protected();
    let mut notes = String::new();

    match (event.phase, &event.action) {
        (Phase::Pre, Action::Edit(files)) => {
            // Paths outside the repository are not part of a pull request.
            let rels: Vec<String> =
                files.iter().filter_map(|f| repo_relative(&root, &start, Path::new(&f.path)).ok()).collect();
            let ledger_rel = repo_relative(&root, &root, &ledger).ok();
            let denials = gate(files.is_empty(), &rels, &protected, ledger_rel.as_deref(), signed_off);
            if denials.is_empty() {
                return Ok(quiet);
            }
            let list: Vec<String> = denials.iter().map(|d| d.why.clone()).collect();
            let reason = format!("retrygate: {} is denied: {}.", event.tool, list.join("; "));
            for d in &denials {
                let payload = payload(&[
                    ("path", d.path.as_deref()),
                    ("decision", Some("denied")),
                    ("protected_by", d.rule.as_deref()),
                    ("tool_use_id", event.tool_use_id.as_deref()),
                ]);
                if let Err(e) = append(&ledger, NewRecord { tool: event.tool.clone(), payload, sha256: None })
                {
                    // Still deny: failing to record must not turn into allowing.
                    notes.push_str(&format!("\nretrygate: could not record the denial: {e}"));
                }
            }
            Ok(deny(agent, &reason, &notes))
        }
        (Phase::Pre, _) => Ok(quiet),
        (Phase::Post, Action::Edit(files)) => {
            for f in files {
                let rel = match repo_relative(&root, &start, Path::new(&f.path)) {
                    Ok(r) => r,
                    Err(why) => {
                        notes.push_str(&format!("retrygate: not recorded: {why}\n"));
                        continue;
                    }
                };
                let abs = root.join(&rel);
                let sha = hash_file(&abs).map_err(|source| HookError::Hash { path: rel.clone(), source })?;
                let is_protected = protected.is_protected(&rel);
                let payload = payload(&[
                    ("path", Some(rel.as_str())),
                    ("tool_use_id", event.tool_use_id.as_deref()),
                    ("signed_off", (is_protected && signed_off).then_some("AGENT_MUTATE")),
                ]);
                append(&ledger, NewRecord { tool: event.tool.clone(), payload, sha256: Some(sha) })?;
            }
            Ok(HookOutcome { stderr: notes, ..quiet })
        }
        (Phase::Post, Action::Command(cmd)) => {
            let payload =
                payload(&[("command", Some(cmd.as_str())), ("tool_use_id", event.tool_use_id.as_deref())]);
            append(&ledger, NewRecord { tool: event.tool.clone(), payload, sha256: None })?;
            Ok(quiet)
        }
        (Phase::Post, Action::Other(path)) => {
            let rel = path.as_deref().and_then(|p| repo_relative(&root, &start, Path::new(p)).ok());
            let payload = payload(&[("path", rel.as_deref()), ("tool_use_id", event.tool_use_id.as_deref())]);
            append(&ledger, NewRecord { tool: event.tool.clone(), payload, sha256: None })?;
            Ok(quiet)
        }
    }
}

/// Why one edit is denied.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Denial {
    path: Option<String>,
    /// The `protected_paths` entry, when that is the reason.
    rule: Option<String>,
    why: String,
}

/// The mutation gate's decision for one edit call, as a pure function:
/// which of the (repository-relative) files it may not touch, and why.
fn gate(
    names_no_file: bool,
    files: &[String],
    protected: &ProtectedPaths,
    ledger: Option<&str>,
    signed_off: bool,
) -> Vec<Denial> {
    if names_no_file {
        return vec![Denial {
            path: None,
            rule: None,
            why: "retrygate cannot tell which file this edit touches (no file path in the tool input), so it cannot check it against the protected paths".into(),
        }];
    }
    let mut out = Vec::new();
    for f in files {
        if Some(f.as_str()) == ledger {
            // Not even a sign-off lets the agent rewrite its own record.
            out.push(Denial {
                path: Some(f.clone()),
                rule: None,
                why: format!("{f} is the tool-call ledger, which only retrygate writes"),
            });
        } else if let Some(rule) = protected.matching(f).filter(|_| !signed_off) {
            out.push(Denial {
                path: Some(f.clone()),
                rule: Some(rule.to_string()),
                why: format!(
                    "{f} is a protected path (protected by \"{rule}\"); a human must sign off: they set AGENT_MUTATE=signed-off for the agent session, or make the edit themselves"
                ),
            });
        }
    }
    out
}

fn payload(fields: &[(&str, Option<&str>)]) -> Value {
    Value::Object(
        fields.iter().filter_map(|(k, v)| v.map(|v| (k.to_string(), Value::Str(v.to_string())))).collect(),
    )
}

fn allow_stdout(agent: Agent) -> String {
    match agent {
        // Cursor expects a JSON answer; an empty object leaves its own
        // permission flow (including "ask") untouched.
        Agent::Cursor => "{}\n".into(),
        Agent::Claude | Agent::Codex => String::new(),
    }
}

fn deny(agent: Agent, reason: &str, notes: &str) -> HookOutcome {
    let stdout = match agent {
        Agent::Cursor => {
            let answer = serde_json::json!({
                "permission": "deny",
                "user_message": reason,
                "agent_message": reason,
            });
            format!("{answer}\n")
        }
        Agent::Claude | Agent::Codex => String::new(),
    };
    HookOutcome { exit: 2, stdout, stderr: format!("{reason}{notes}\n") }
}

/// The repository root containing `dir` (or `dir` itself outside git).
fn repo_root(dir: &Path) -> PathBuf {
    Git::open(dir)
        .and_then(|g| g.run(&["rev-parse", "--show-toplevel"]))
        .ok()
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_claude_codex_and_cursor_events() {
        let claude = json!({"hook_event_name": "PreToolUse", "cwd": "/r", "tool_name": "MultiEdit",
            "tool_input": {"file_path": "/r/app/a.rs", "edits": []}, "tool_use_id": "t1"});
        let e = parse_event(Agent::Claude, &claude).unwrap();
        assert_eq!(e.phase, Phase::Pre);
        assert_eq!(e.action, Action::Edit(vec![FileTouch { path: "/r/app/a.rs".into() }]));
        assert_eq!(e.tool_use_id.as_deref(), Some("t1"));

        let codex = json!({"hook_event_name": "PostToolUse", "cwd": "/r", "tool_name": "apply_patch",
            "tool_input": {"command": "*** Begin Patch\n*** Delete File: x\n*** End Patch\n"}});
        let e = parse_event(Agent::Codex, &codex).unwrap();
        assert_eq!(e.action, Action::Edit(vec![FileTouch { path: "x".into() }]));

        let cursor = json!({"hook_event_name": "afterShellExecution", "workspace_roots": ["/w"], "command": "ls", "cwd": "/elsewhere"});
        let e = parse_event(Agent::Cursor, &cursor).unwrap();
        assert_eq!((e.dir, e.action), (Some(PathBuf::from("/w")), Action::Command("ls".into())));

        assert!(parse_event(Agent::Claude, &json!({"hook_event_name": "Stop"})).is_none());
        assert!(
            parse_event(Agent::Cursor, &json!({"hook_event_name": "PreToolUse"})).is_none(),
            "Cursor spells it preToolUse"
        );
    }

    #[test]
    fn the_gate_denies_protected_files_unknown_targets_and_the_ledger() {
        let p = ProtectedPaths::new(&["app/".into()]);
        let files = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let l = Some(".tool_ledger.jsonl");
        assert!(gate(false, &files(&["src/a.rs"]), &p, l, false).is_empty());
        let d = gate(false, &files(&["src/a.rs", "app/b.py"]), &p, l, false);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].path.as_deref(), d[0].rule.as_deref()), (Some("app/b.py"), Some("app/")));
        assert!(gate(false, &files(&["app/b.py"]), &p, l, true).is_empty(), "signed off");
        let d = gate(false, &files(&[".tool_ledger.jsonl"]), &p, l, true);
        assert!(d[0].why.contains("only retrygate writes"), "{d:?}");
        let d = gate(true, &[], &p, l, true);
        assert!(d[0].why.contains("cannot tell which file"), "{d:?}");
    }

    #[test]
    fn shell_commands_may_arrive_as_argv() {
        let a = tool_action("shell", &json!({"command": ["bash", "-lc", "cargo test"]}));
        assert_eq!(a, Action::Command("bash -lc cargo test".into()));
    }

    #[test]
    fn malformed_input_is_an_error_not_an_allow() {
        let env = HookEnv { agent_mutate: None, ledger: None, fallback_dir: PathBuf::from(".") };
        let err = run_hook(Agent::Claude, b"{not json", &env).unwrap_err();
        assert!(err.to_string().contains("the hook input is not JSON"), "{err}");
    }
}
