//! `retrygate ledger hook claude|codex|cursor`: the agent's tool layer.
//!
//! The agent runs this command around its tool calls with the call as JSON
//! on stdin. After a call (Claude Code and Codex `PostToolUse`; Cursor
//! `postToolUse`, `afterFileEdit`, `afterShellExecution`) it appends v2
//! records: one per file an edit touched, with the file's SHA-256 on disk,
//! or one with the shell command. Before a call (`PreToolUse`, Cursor
//! `preToolUse`) it is the mutation gate: an edit to a protected path
//! (`protected_paths` of the repository's `.github/retrygate.yml`), to the
//! gate's own config or rules, or to an agent's hook settings is denied
//! unless `AGENT_MUTATE=signed-off`, and the denied attempt is recorded too.
//!
//! What the agent controls is not trusted:
//! - the config comes from the **committed `HEAD`**, never the working tree,
//!   so writing `protected_paths: []` (or another `ledger.path`) into the
//!   file changes nothing until a person commits it;
//! - the repository is found from each **file's own path** (the nearest
//!   enclosing `.git`, and every repository around it for the gate), not from
//!   the event's `cwd`, which may be `/`, a parent folder, a missing folder
//!   or another repository;
//! - paths are resolved **through the filesystem** one component at a time,
//!   so `link/../x.py` follows `link` as the kernel would, and a dangling
//!   symlink is judged by where a write through it would land;
//! - the event is read with a size cap ([`MAX_INPUT_BYTES`]) into values that
//!   keep only the fields used ([`super::hook_input`]), and a call naming
//!   more than [`MAX_FILES_PER_CALL`] files is denied outright, so the hook
//!   answers well within the agents' hook timeouts (Codex: 10 s).
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

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::append::{append, append_all, hash_file, AppendError, NewRecord};
use super::hook_input::{self, Loose};
use super::patch::{parse_patch, touched};
use super::pyjson::Value;
use crate::changeset::git::Blob;
use crate::changeset::Git;
use crate::config::{Config, ConfigError, ProtectedPaths, CONFIG_PATH, MAX_CONFIG_BYTES};

/// The value of `AGENT_MUTATE` that lifts the mutation gate.
pub(crate) const SIGNED_OFF: &str = "signed-off";

/// Hook input larger than this is refused. A real event is a few KB; a
/// `Write` carries the whole file, and a few MB covers any source file an
/// agent writes in one call.
pub const MAX_INPUT_BYTES: usize = 8 << 20;

/// A call naming more files than this is denied (before) or refused
/// (after) without looking at each: checking 200,000 files took 30 s, past
/// the agents' hook timeouts (Codex documents 10 s). Split such a patch.
pub(crate) const MAX_FILES_PER_CALL: usize = 5_000;

/// Most symbolic links followed while resolving one path (Linux's own
/// limit is 40).
const MAX_SYMLINK_HOPS: usize = 40;

/// Files an agent may not edit without a sign-off whatever the config says:
/// the agents' hook settings, which could switch this hook off. Compared
/// without regard to ASCII case (case-insensitive filesystems).
pub(crate) const HOOK_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".cursor/hooks.json",
];

/// Folders of hook settings (GitHub Copilot CLI's `.github/hooks/*.json`).
pub(crate) const HOOK_SETTING_DIRS: &[&str] = &[".github/hooks/"];

/// Which agent's wire format to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code's hook JSON (also read from Copilot CLI's hook files).
    Claude,
    /// OpenAI Codex CLI's hook JSON.
    Codex,
    /// Cursor's hook JSON.
    Cursor,
}

/// Whether the agent may go ahead with the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookDecision {
    /// Let the call run (the binary exits 0).
    Allow,
    /// Refuse it: the binary exits 2, the agents' "block" code.
    Deny,
}

/// What the process should do: the decision and the text for stdout/stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookOutcome {
    /// Go ahead or refuse.
    pub decision: HookDecision,
    /// The reply in the agent's wire format.
    pub stdout: String,
    /// What a person reads when the call is refused.
    pub stderr: String,
}

/// Inputs from the environment, passed in so tests need not set env vars.
#[derive(Debug, Clone)]
pub struct HookEnv {
    /// `AGENT_MUTATE`.
    pub agent_mutate: Option<String>,
    /// `--ledger`; otherwise the config's `ledger.path` under the repository root.
    pub ledger: Option<PathBuf>,
    /// Where relative paths start when the input names no directory (the
    /// process cwd).
    pub fallback_dir: PathBuf,
}

/// Why the hook could not do its job (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("the hook input is not JSON ({0}); run this command only as a {1:?} hook (see docs/ledger.md)")]
    /// Standard input is not the agent's hook JSON: the parse error, and
    /// the agent it was read as.
    BadInput(String, Agent),
    #[error("{0}; a hook event is a few KB, so this is not one (see docs/ledger.md, \"Limits\")")]
    /// Standard input is larger than any hook event.
    InputTooLarge(String),
    #[error("{0}")]
    /// The repository's config is invalid.
    Config(#[from] crate::config::ConfigError),
    #[error("cannot read {CONFIG_PATH} at HEAD of {repo}: {detail}")]
    /// The config at HEAD could not be read from git.
    Git {
        /// The repository's root.
        repo: String,
        /// What git said.
        detail: String,
    },
    #[error(transparent)]
    /// The record could not be appended.
    Append(#[from] AppendError),
    #[error("cannot hash {path}: {source}")]
    /// An edited file could not be read to hash it.
    Hash {
        /// The edited file.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    #[error("the call names {0} files, more than the {MAX_FILES_PER_CALL} the hook records in one call; nothing was recorded, so the gate will find these edits unexplained")]
    /// The call names more files than one call may record; how many.
    TooManyFiles(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Pre,
    Post,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    /// The files an edit touches, as the agent named them.
    Edit(Vec<String>),
    Command(String),
    Other(Option<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    phase: Phase,
    tool: String,
    /// Where relative paths start: `cwd`, and for Cursor every workspace root.
    dirs: Vec<PathBuf>,
    action: Action,
    tool_use_id: Option<String>,
}

const EDIT_TOOLS: [&str; 8] =
    ["Write", "Edit", "MultiEdit", "NotebookEdit", "StrReplace", "Delete", "TabWrite", "apply_patch"];

/// Shell tools, recorded with their command. Claude Code on Windows runs
/// commands through `PowerShell`.
const SHELL_TOOLS: [&str; 6] = ["Bash", "PowerShell", "Shell", "shell", "exec_command", "local_shell"];

/// The action a generic `tool_name`/`tool_input` call performs.
fn tool_action(tool: &str, input: &Loose) -> Action {
    if tool == "apply_patch" {
        let patch = input.str_at(&["command", "patch", "input"]).unwrap_or("");
        return Action::Edit(touched(&parse_patch(patch)).into_iter().map(|t| t.path).collect());
    }
    if EDIT_TOOLS.contains(&tool) {
        let files = input.str_at(&["file_path", "notebook_path", "path", "target_file"]);
        return Action::Edit(files.map(|p| vec![p.to_string()]).unwrap_or_default());
    }
    if SHELL_TOOLS.contains(&tool) {
        if let Some(cmd) = input.str_at(&["command", "cmd"]) {
            return Action::Command(cmd.to_string());
        }
        if let Some(argv) = input.get("command").and_then(Loose::as_strs) {
            return Action::Command(argv.join(" "));
        }
        return Action::Command(String::new());
    }
    Action::Other(input.str_at(&["file_path", "path"]).map(str::to_string))
}

/// Reads the agent's event; `None` for events the hook does not act on.
fn parse_event(agent: Agent, v: &Loose) -> Option<Event> {
    let name = v.str_at(&["hook_event_name"]).unwrap_or("");
    let tool_use_id = v.str_at(&["tool_use_id", "generation_id"]).map(str::to_string);
    let mut dirs: Vec<PathBuf> = Vec::new();
    if agent == Agent::Cursor {
        if let Some(roots) = v.get("workspace_roots").and_then(Loose::as_strs) {
            dirs.extend(roots.iter().filter(|r| !r.is_empty()).map(PathBuf::from));
        }
    }
    if let Some(cwd) = v.str_at(&["cwd"]).filter(|c| !c.is_empty()) {
        dirs.push(PathBuf::from(cwd));
    }
    let tool_name = v.str_at(&["tool_name"]).unwrap_or("").to_string();
    let input = v.get("tool_input").cloned().unwrap_or_default();
    let (phase, tool, action) = match (agent, name) {
        (Agent::Claude | Agent::Codex, "PreToolUse") | (Agent::Cursor, "preToolUse") => {
            (Phase::Pre, tool_name.clone(), tool_action(&tool_name, &input))
        }
        (Agent::Claude | Agent::Codex, "PostToolUse") | (Agent::Cursor, "postToolUse") => {
            (Phase::Post, tool_name.clone(), tool_action(&tool_name, &input))
        }
        (Agent::Cursor, "afterFileEdit") => {
            let files = v.str_at(&["file_path"]).map(|p| vec![p.to_string()]).unwrap_or_default();
            (Phase::Post, "afterFileEdit".to_string(), Action::Edit(files))
        }
        (Agent::Cursor, "afterShellExecution") => (
            Phase::Post,
            "Shell".to_string(),
            Action::Command(v.str_at(&["command"]).unwrap_or("").to_string()),
        ),
        _ => return None,
    };
    Some(Event { phase, tool, dirs, action, tool_use_id })
}

/// A repository the hook acts in: its root, the config committed at its
/// `HEAD`, and the matcher and ledger that follow from it.
struct Repo {
    root: PathBuf,
    config: Config,
    protected: ProtectedPaths,
    ledger: PathBuf,
    /// The ledger's path relative to `root`, when it is inside.
    ledger_rel: Option<String>,
}

/// Where a file the agent named lands, and the repositories around it.
#[derive(Debug, Clone)]
struct Located {
    /// The file as the agent named it (for messages).
    named: String,
    /// Every repository root that contains the file, innermost first.
    roots: Vec<PathBuf>,
    /// The resolved absolute path.
    real: PathBuf,
}

/// Opens repositories once per hook call.
struct Repos<'a> {
    env: &'a HookEnv,
    open: HashMap<PathBuf, Repo>,
    /// Directory -> the roots enclosing it, innermost first.
    roots_of: HashMap<PathBuf, Vec<PathBuf>>,
}

impl<'a> Repos<'a> {
    fn new(env: &'a HookEnv) -> Repos<'a> {
        Repos { env, open: HashMap::new(), roots_of: HashMap::new() }
    }

    fn get(&mut self, root: &Path) -> Result<&Repo, HookError> {
        if !self.open.contains_key(root) {
            let config = config_at_head(root)?;
            let protected = config.protected()?;
            let ledger = self.env.ledger.clone().unwrap_or_else(|| root.join(&config.ledger.path));
            let ledger_rel = resolve(&ledger).ok().and_then(|l| rel_to(root, &l));
            let repo = Repo { root: root.to_path_buf(), config, protected, ledger, ledger_rel };
            self.open.insert(root.to_path_buf(), repo);
        }
        Ok(&self.open[root])
    }

    /// The repository roots around `dir` (a resolved directory), innermost
    /// first: every ancestor holding a `.git` entry (a directory, or the
    /// file of a worktree or submodule).
    fn roots_around(&mut self, dir: &Path) -> Vec<PathBuf> {
        if let Some(r) = self.roots_of.get(dir) {
            return r.clone();
        }
        let mut out = Vec::new();
        if dir.join(".git").symlink_metadata().is_ok() {
            out.push(dir.to_path_buf());
        }
        if let Some(parent) = dir.parent() {
            out.extend(self.roots_around(parent));
        }
        self.roots_of.insert(dir.to_path_buf(), out.clone());
        out
    }

    /// Where `named` lands, trying each directory a relative path may start
    /// from. `Err` when it cannot be resolved at all.
    fn locate(&mut self, named: &str, dirs: &[PathBuf]) -> Result<Vec<Located>, String> {
        let path = Path::new(named);
        let starts: Vec<PathBuf> = if path.is_absolute() {
            vec![PathBuf::new()]
        } else if dirs.is_empty() {
            vec![self.env.fallback_dir.clone()]
        } else {
            dirs.to_vec()
        };
        let mut out = Vec::new();
        for start in starts {
            let joined = if path.is_absolute() {
                path.to_path_buf()
            } else {
                if !start.is_dir() {
                    return Err(format!(
                        "{named} is relative and the directory it is relative to, {}, does not exist",
                        start.display()
                    ));
                }
                start.join(path)
            };
            let real = resolve(&joined)?;
            let roots = match real.parent() {
                Some(parent) => self.roots_around(parent),
                None => Vec::new(),
            };
            out.push(Located { named: named.to_string(), roots, real });
        }
        Ok(out)
    }
}

/// `path` made absolute and resolved through the filesystem, component by
/// component, as the kernel would open it: a symlink is replaced by its
/// target (even a dangling one: a write through it creates the target), and
/// `..` goes up from where the path really is, not from its text. Parts that
/// do not exist yet are taken as written.
pub(crate) fn resolve(path: &Path) -> Result<PathBuf, String> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?.join(path)
    };
    // Components still to walk, last on top.
    let mut todo: Vec<OsString> = Vec::new();
    push_components(&mut todo, &abs);
    let mut cur = PathBuf::from("/");
    let mut hops = 0;
    let mut missing = false;
    while let Some(part) = todo.pop() {
        if part == ".." {
            cur.pop();
            continue;
        }
        let next = cur.join(&part);
        if missing {
            cur = next;
            continue;
        }
        match next.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(format!("{}: too many levels of symbolic links", path.display()));
                }
                let target = std::fs::read_link(&next)
                    .map_err(|e| format!("cannot read the symbolic link {}: {e}", next.display()))?;
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                push_components(&mut todo, &target);
            }
            Ok(_) => cur = next,
            Err(e)
                if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) =>
            {
                missing = true;
                cur = next;
            }
            Err(e) => return Err(format!("cannot look at {}: {e}", next.display())),
        }
    }
    Ok(cur)
}

/// Pushes the parts of `p` onto `todo` so that its first part is on top.
fn push_components(todo: &mut Vec<OsString>, p: &Path) {
    for c in p.components().rev() {
        match c {
            Component::Normal(n) => todo.push(n.to_os_string()),
            Component::ParentDir => todo.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

/// `path` (resolved) relative to `root` (resolved), `/`-separated.
fn rel_to(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The config committed at `HEAD` of the repository at `root`; the defaults
/// when `HEAD` has none (or there is no commit yet). The working tree's
/// copy is never read: the agent can write it.
fn config_at_head(root: &Path) -> Result<Config, HookError> {
    let err = |detail: String| HookError::Git { repo: root.display().to_string(), detail };
    let git = Git::open(root).map_err(|e| err(e.to_string()))?;
    let source = format!("{CONFIG_PATH} (committed at HEAD)");
    match git.read_blob_at("HEAD", CONFIG_PATH, MAX_CONFIG_BYTES as u64).map_err(|e| err(e.to_string()))? {
        None | Some(Blob::Missing) => Ok(Config::default()),
        Some(Blob::TooLarge(size)) => Err(ConfigError::too_large(&source, Some(size)).into()),
        Some(Blob::Bytes(b)) => {
            let text = String::from_utf8(b).map_err(|_| err("the file is not UTF-8".into()))?;
            Ok(Config::from_yaml_str(&text, &source)?)
        }
    }
}

/// Runs the hook on one stdin document (already size-capped by the caller;
/// checked again here).
pub fn run_hook(agent: Agent, input: &[u8], env: &HookEnv) -> Result<HookOutcome, HookError> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(HookError::InputTooLarge(format!(
            "hook input over the {} MiB limit; refusing to read it",
            MAX_INPUT_BYTES >> 20
        )));
    }
    let json = hook_input::parse(input).map_err(|e| HookError::BadInput(e, agent))?;
    if !matches!(json, Loose::Map(_)) {
        return Err(HookError::BadInput("not a JSON object".into(), agent));
    }
    let quiet =
        HookOutcome { decision: HookDecision::Allow, stdout: allow_stdout(agent), stderr: String::new() };
    let Some(event) = parse_event(agent, &json) else {
        return Ok(quiet);
    };
    let signed_off = env.agent_mutate.as_deref() == Some(SIGNED_OFF);
    let mut repos = Repos::new(env);
    let mut notes = String::new();

    match (event.phase, &event.action) {
        (Phase::Pre, Action::Edit(files)) => {
            let mut denials: Vec<(Option<PathBuf>, Denial)> = Vec::new();
            if files.is_empty() {
                denials.push((None, Denial::unknown_target()));
            } else if files.len() > MAX_FILES_PER_CALL {
                denials.push((None, Denial::too_many(files.len())));
            }
            // A call refused as a whole is not looked at file by file.
            let to_check: &[String] = if denials.is_empty() { files } else { &[] };
            for f in to_check {
                let located = match repos.locate(f, &event.dirs) {
                    Ok(l) => l,
                    Err(why) => {
                        denials.push((None, Denial::unresolvable(f, &why)));
                        continue;
                    }
                };
                for loc in located {
                    for root in &loc.roots {
                        let repo = repos.get(root)?;
                        let Some(rel) = rel_to(&repo.root, &loc.real) else { continue };
                        if let Some(d) = gate(&rel, &loc.named, repo, signed_off) {
                            denials.push((Some(root.clone()), d));
                        }
                    }
                }
            }
            if denials.is_empty() {
                return Ok(quiet);
            }
            let mut list: Vec<String> = denials.iter().map(|(_, d)| d.why.clone()).collect();
            list.dedup();
            let reason = format!("retrygate: {} is denied: {}.", event.tool, list.join("; "));
            for (root, d) in &denials {
                let root = match root {
                    Some(r) => Some(r.clone()),
                    // No file to place it by: the repository of the event's directory.
                    None => event.dirs.iter().chain([&env.fallback_dir]).find_map(|dir| {
                        resolve(dir).ok().and_then(|r| repos.roots_around(&r).into_iter().next())
                    }),
                };
                let Some(root) = root else { continue };
                let ledger = match repos.get(&root) {
                    Ok(r) => r.ledger.clone(),
                    Err(e) => {
                        notes.push_str(&format!("\nretrygate: could not record the denial: {e}"));
                        continue;
                    }
                };
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
            if files.len() > MAX_FILES_PER_CALL {
                return Err(HookError::TooManyFiles(files.len()));
            }
            // Records per ledger, written at the end with one append each.
            let mut batches: Vec<(PathBuf, Vec<NewRecord>)> = Vec::new();
            for f in files {
                let located = match repos.locate(f, &event.dirs) {
                    Ok(l) => l,
                    Err(why) => {
                        notes.push_str(&format!("retrygate: not recorded: {why}\n"));
                        continue;
                    }
                };
                // Of several candidates (a relative path and several
                // workspace roots), the one that exists is the one written.
                let Some(loc) = located
                    .iter()
                    .find(|l| l.real.symlink_metadata().is_ok() && !l.roots.is_empty())
                    .or_else(|| located.iter().find(|l| !l.roots.is_empty()))
                else {
                    notes.push_str(&format!("retrygate: not recorded: {f} is outside any git repository\n"));
                    continue;
                };
                let repo = repos.get(&loc.roots[0])?;
                let Some(rel) = rel_to(&repo.root, &loc.real) else { continue };
                let sha =
                    hash_file(&loc.real).map_err(|source| HookError::Hash { path: rel.clone(), source })?;
                let is_protected = repo.protected.is_protected(&rel) || is_gate_file(&rel, &repo.config);
                let payload = payload(&[
                    ("path", Some(rel.as_str())),
                    ("tool_use_id", event.tool_use_id.as_deref()),
                    ("signed_off", (is_protected && signed_off).then_some("AGENT_MUTATE")),
                ]);
                let record = NewRecord { tool: event.tool.clone(), payload, sha256: Some(sha) };
                match batches.iter_mut().find(|(l, _)| *l == repo.ledger) {
                    Some((_, b)) => b.push(record),
                    None => batches.push((repo.ledger.clone(), vec![record])),
                }
            }
            for (ledger, records) in batches {
                append_all(&ledger, records)?;
            }
            Ok(HookOutcome { stderr: notes, ..quiet })
        }
        (Phase::Post, Action::Command(_) | Action::Other(_)) => {
            let Some(root) =
                event.dirs.iter().chain([&env.fallback_dir]).find_map(|dir| {
                    resolve(dir).ok().and_then(|r| repos.roots_around(&r).into_iter().next())
                })
            else {
                let why = "retrygate: not recorded: the event's directory is in no git repository\n";
                return Ok(HookOutcome { stderr: why.into(), ..quiet });
            };
            let fields: Vec<(&str, Option<String>)> = match &event.action {
                Action::Command(cmd) => vec![("command", Some(cmd.clone()))],
                Action::Other(path) => {
                    let rel = path.as_deref().and_then(|p| {
                        let loc = repos.locate(p, &event.dirs).ok()?;
                        loc.iter().find_map(|l| rel_to(&root, &l.real))
                    });
                    vec![("path", rel)]
                }
                Action::Edit(_) => Vec::new(),
            };
            let repo = repos.get(&root)?;
            let mut all: Vec<(&str, Option<&str>)> = fields.iter().map(|(k, v)| (*k, v.as_deref())).collect();
            all.push(("tool_use_id", event.tool_use_id.as_deref()));
            append(
                &repo.ledger,
                NewRecord { tool: event.tool.clone(), payload: payload(&all), sha256: None },
            )?;
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

impl Denial {
    fn unknown_target() -> Denial {
        Denial {
            path: None,
            rule: None,
            why: "retrygate cannot tell which file this edit touches (no file path in the tool input), so it cannot check it against the protected paths".into(),
        }
    }

    fn too_many(n: usize) -> Denial {
        Denial {
            path: None,
            rule: None,
            why: format!(
                "the call names {n} files, more than the {MAX_FILES_PER_CALL} retrygate checks within the hook's time limit; split it into smaller edits"
            ),
        }
    }

    fn unresolvable(named: &str, why: &str) -> Denial {
        Denial {
            path: Some(named.to_string()),
            rule: None,
            why: format!("retrygate cannot tell where {named} is ({why}), so it cannot check it against the protected paths"),
        }
    }
}

/// Whether `rel` is the gate's own config or rules, or an agent's hook
/// settings: edits that could switch the gate off.
fn is_gate_file(rel: &str, config: &Config) -> bool {
    let lower = rel.to_ascii_lowercase();
    lower == CONFIG_PATH
        || HOOK_SETTINGS.contains(&lower.as_str())
        || HOOK_SETTING_DIRS.iter().any(|d| lower.starts_with(d))
        || config.rules.extra.iter().any(|d| {
            let d = d.trim_start_matches("./").trim_end_matches('/');
            !d.is_empty() && (rel == d || rel.starts_with(&format!("{d}/")))
        })
}

/// The mutation gate's decision for one file (repository-relative `rel` in
/// `repo`), as a pure function of the file, the repository's committed
/// config and the sign-off.
fn gate(rel: &str, named: &str, repo: &Repo, signed_off: bool) -> Option<Denial> {
    if Some(rel) == repo.ledger_rel.as_deref() {
        // Not even a sign-off lets the agent rewrite its own record.
        return Some(Denial {
            path: Some(rel.to_string()),
            rule: None,
            why: format!("{rel} is the tool-call ledger, which only retrygate writes"),
        });
    }
    if signed_off {
        return None;
    }
    let shown = if named.ends_with(rel) { rel.to_string() } else { format!("{named} (which is {rel})") };
    if is_gate_file(rel, &repo.config) {
        return Some(Denial {
            path: Some(rel.to_string()),
            rule: None,
            why: format!(
                "{shown} configures the gate or the agent's hooks; a human must sign off: they set AGENT_MUTATE=signed-off for the agent session, or make the edit themselves"
            ),
        });
    }
    repo.protected.matching(rel).map(|rule| Denial {
        path: Some(rel.to_string()),
        rule: Some(rule.to_string()),
        why: format!(
            "{shown} is a protected path (protected by \"{rule}\"); a human must sign off: they set AGENT_MUTATE=signed-off for the agent session, or make the edit themselves"
        ),
    })
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
    HookOutcome { decision: HookDecision::Deny, stdout, stderr: format!("{reason}{notes}\n") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(agent: Agent, v: serde_json::Value) -> Option<Event> {
        parse_event(agent, &hook_input::parse(v.to_string().as_bytes()).unwrap())
    }

    #[test]
    fn reads_claude_codex_and_cursor_events() {
        use serde_json::json;
        let claude = json!({"hook_event_name": "PreToolUse", "cwd": "/r", "tool_name": "MultiEdit",
            "tool_input": {"file_path": "/r/app/a.rs", "edits": []}, "tool_use_id": "t1"});
        let e = event(Agent::Claude, claude).unwrap();
        assert_eq!(e.phase, Phase::Pre);
        assert_eq!(e.action, Action::Edit(vec!["/r/app/a.rs".into()]));
        assert_eq!(e.tool_use_id.as_deref(), Some("t1"));

        let codex = json!({"hook_event_name": "PostToolUse", "cwd": "/r", "tool_name": "apply_patch",
            "tool_input": {"command": "*** Begin Patch\n*** Delete File: x\n*** End Patch\n"}});
        let e = event(Agent::Codex, codex).unwrap();
        assert_eq!(e.action, Action::Edit(vec!["x".into()]));

        let cursor = json!({"hook_event_name": "afterShellExecution", "workspace_roots": ["/w", "/v"], "command": "ls", "cwd": "/elsewhere"});
        let e = event(Agent::Cursor, cursor).unwrap();
        assert_eq!(e.dirs, [PathBuf::from("/w"), PathBuf::from("/v"), PathBuf::from("/elsewhere")]);
        assert_eq!(e.action, Action::Command("ls".into()));

        let ps = json!({"hook_event_name": "PostToolUse", "cwd": "/r", "tool_name": "PowerShell",
            "tool_input": {"command": "Get-ChildItem"}});
        assert_eq!(event(Agent::Claude, ps).unwrap().action, Action::Command("Get-ChildItem".into()));

        assert!(event(Agent::Claude, json!({"hook_event_name": "Stop"})).is_none());
        assert!(
            event(Agent::Cursor, json!({"hook_event_name": "PreToolUse"})).is_none(),
            "Cursor spells it preToolUse"
        );
    }

    #[test]
    fn shell_commands_may_arrive_as_argv() {
        let input = hook_input::parse(br#"{"command": ["bash", "-lc", "cargo test"]}"#).unwrap();
        assert_eq!(tool_action("shell", &input), Action::Command("bash -lc cargo test".into()));
    }

    #[test]
    fn gate_files_are_the_config_the_rules_and_hook_settings() {
        let c = Config {
            rules: crate::config::Rules { extra: vec!["./lint/rules/".into()], ..Default::default() },
            ..Config::default()
        };
        for f in [
            ".github/retrygate.yml",
            ".claude/settings.json",
            ".Claude/Settings.local.json",
            ".codex/hooks.json",
            ".cursor/hooks.json",
            ".github/hooks/pre.json",
            "lint/rules/x.yml",
        ] {
            assert!(is_gate_file(f, &c), "{f}");
        }
        for f in ["src/a.rs", ".claude/commands/x.md", ".github/workflows/ci.yml", "lint/rulesx"] {
            assert!(!is_gate_file(f, &c), "{f}");
        }
    }

    #[test]
    fn resolve_follows_symlinks_before_dotdot_and_dangling_links_to_their_target() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(d.join("app/sub")).unwrap();
        std::os::unix::fs::symlink(d.join("app/sub"), d.join("deep")).unwrap();
        std::fs::create_dir_all(d.join("docs")).unwrap();
        // Relative to the link's own folder, as the kernel reads it.
        std::os::unix::fs::symlink("../app/new.py", d.join("docs/dangling")).unwrap();
        assert_eq!(resolve(&d.join("deep/../x.py")).unwrap(), d.join("app/x.py"));
        assert_eq!(resolve(&d.join("docs/dangling")).unwrap(), d.join("app/new.py"));
        assert_eq!(resolve(&d.join("missing/../y.py")).unwrap(), d.join("y.py"));
        std::os::unix::fs::symlink(d.join("loop"), d.join("loop")).unwrap();
        assert!(resolve(&d.join("loop/x")).unwrap_err().contains("too many levels of symbolic links"));
    }

    #[test]
    fn malformed_input_is_an_error_not_an_allow() {
        let env = HookEnv { agent_mutate: None, ledger: None, fallback_dir: PathBuf::from(".") };
        let err = run_hook(Agent::Claude, b"{not json", &env).unwrap_err();
        assert!(err.to_string().contains("the hook input is not JSON"), "{err}");
        let err = run_hook(Agent::Claude, b"[1, 2]", &env).unwrap_err();
        assert!(err.to_string().contains("not a JSON object"), "{err}");
    }
}
