//! Runs CMD once per client, all released at the same moment, and records
//! how each one ended.
//!
//! Each client is started as `/bin/sh -c 'read; exec "$@"' CMD ARGS...` with
//! its stdin on a pipe: the shell waits on the pipe until every client has
//! been spawned, and closing the pipes releases them together (the moment a
//! real fleet gets its 429s). Each client leads its own session (and process
//! group), and carries a token in its environment that its descendants
//! inherit: when the replay ends, by `--timeout` or not, everything still
//! running in a client's session or with its token is killed, including a
//! daemon that called `setsid` to leave the session (Linux: found through
//! `/proc`).

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::Instant;

/// How much of each client's stdout/stderr the report keeps (the end of it).
const OUTPUT_TAIL: usize = 2048;

/// How one client's CMD ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum ClientExit {
    /// It exited by itself.
    Exited {
        /// Its exit code.
        code: i32,
    },
    /// A signal ended it.
    Signalled {
        /// The signal's number.
        signal: i32,
    },
    /// Still running at `--timeout`; its process group was killed.
    KilledAtTimeout,
}

impl ClientExit {
    /// Exited with code 0.
    pub(crate) fn success(&self) -> bool {
        matches!(self, ClientExit::Exited { code: 0 })
    }

    /// "exited with code 1", for messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            // The shell's way of saying CMD, or something CMD ran, is not installed.
            ClientExit::Exited { code: 127 } => "exited with code 127 (a command was not found)".to_string(),
            ClientExit::Exited { code } => format!("exited with code {code}"),
            ClientExit::Signalled { signal } => format!("was killed by signal {signal}"),
            ClientExit::KilledAtTimeout => "was killed at the --timeout".to_string(),
        }
    }
}

/// One client's process, as it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRun {
    /// The client's index.
    pub client: usize,
    /// How its command ended.
    pub exit: ClientExit,
    /// The last bytes CMD wrote, for the report.
    pub stdout_tail: String,
    /// The last bytes CMD wrote to stderr.
    pub stderr_tail: String,
}

/// All clients' runs.
#[derive(Debug, Clone)]
pub(crate) struct RunOutcome {
    pub(crate) clients: Vec<ClientRun>,
    pub(crate) timed_out: bool,
}

/// Finds `program` the way `exec` would from `cwd` (the clients' working
/// directory; `None` = ours): a path if it has a slash, else PATH. A
/// relative path is the one under `cwd`, where the clients run it (the base
/// side of a differential replay runs in the base's worktree).
pub(crate) fn resolve_program(program: &str, cwd: Option<&Path>) -> anyhow::Result<PathBuf> {
    if program.is_empty() {
        bail!("no command given; pass one after `--`, e.g. `retrygate replay -- curl --retry 5 \"$RETRYGATE_URL\"`");
    }
    let is_exec =
        |p: &Path| p.is_file() && p.metadata().map(|m| m.permissions().mode() & 0o111 != 0).unwrap_or(false);
    if program.contains('/') {
        let p = match cwd {
            Some(dir) if Path::new(program).is_relative() => dir.join(program),
            _ => PathBuf::from(program),
        };
        if is_exec(&p) {
            return Ok(p);
        }
        let why = if p.exists() { "is not an executable file" } else { "does not exist" };
        bail!("command not found: '{program}' {why}; check the path given after `--`");
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if is_exec(&candidate) {
            return Ok(candidate);
        }
    }
    bail!("command not found: '{program}' is not on PATH; install it or give its full path after `--`")
}

/// Starts `cmd` once per entry of `urls` (client i gets `urls[i]`), releases
/// them together, and waits for all of them or for `timeout`.
pub(crate) async fn run_clients(
    cmd: &[String],
    urls: &[String],
    timeout: Duration,
    cwd: Option<&Path>,
) -> anyhow::Result<RunOutcome> {
    let Some(program) = cmd.first() else {
        bail!("no command given; pass one after `--`");
    };
    resolve_program(program, cwd)?;

    let token = format!("{}-{}", std::process::id(), RUN_COUNTER.fetch_add(1, Ordering::Relaxed));
    let mut children = Vec::new();
    let mut gates = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        let mut c = Command::new("/bin/sh");
        c.arg("-c")
            .arg("read -r _ 2>/dev/null; exec \"$@\" </dev/null")
            .arg("retrygate-replay-client")
            .args(cmd.iter().map(OsStr::new))
            .env("RETRYGATE_URL", url)
            .env("RETRYGATE_CLIENT", i.to_string())
            .env(TOKEN_VAR, &token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of
        // ours; it makes the client a session and process-group leader.
        unsafe {
            c.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        if let Some(dir) = cwd {
            c.current_dir(dir);
        }
        let mut child = c.spawn().with_context(|| format!("cannot start client {i} via /bin/sh"))?;
        gates.push(child.stdin.take());
        children.push(child);
    }
    // Release: every shell's `read` sees end-of-file at once.
    drop(gates);
    // A timeout too far away to add is as good as none.
    let deadline = Instant::now().checked_add(timeout).unwrap_or_else(|| Instant::now() + FAR_FUTURE);

    let mut tasks = Vec::new();
    let mut pgids = Vec::new();
    for (i, mut child) in children.into_iter().enumerate() {
        pgids.push(child.id());
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        tasks.push(tokio::spawn(async move {
            let (status, out, err) = tokio::join!(child.wait(), tail(stdout), tail(stderr));
            (i, status, out, err)
        }));
    }

    let mut results: Vec<Option<ClientRun>> = vec![None; tasks.len()];
    let mut timed_out = false;
    for (i, task) in tasks.iter_mut().enumerate() {
        match tokio::time::timeout_at(deadline, &mut *task).await {
            Ok(joined) => {
                let (_, status, out, err) = joined.context("a client watcher task failed")?;
                let exit = match status {
                    Ok(s) => exit_of(s),
                    Err(e) => bail!("cannot wait for client {i}: {e}"),
                };
                results[i] = Some(ClientRun { client: i, exit, stdout_tail: out, stderr_tail: err });
            }
            Err(_) => {
                timed_out = true;
                break;
            }
        }
    }
    if timed_out {
        for (i, pgid) in pgids.iter().enumerate() {
            if results[i].is_none() {
                if let Some(pgid) = pgid {
                    kill_group(*pgid);
                }
            }
        }
        for (i, task) in tasks.into_iter().enumerate() {
            if results[i].is_some() {
                continue;
            }
            // Killed with SIGKILL: the wait returns promptly. Output pipes held
            // by an escaped grandchild are not waited for beyond a second.
            let (out, err) = match tokio::time::timeout(Duration::from_secs(1), task).await {
                Ok(Ok((_, _, out, err))) => (out, err),
                _ => (String::new(), String::new()),
            };
            results[i] = Some(ClientRun {
                client: i,
                exit: ClientExit::KilledAtTimeout,
                stdout_tail: out,
                stderr_tail: err,
            });
        }
    }
    // Whatever the clients left behind (a backgrounded child, a `setsid`
    // daemon) ends with the replay.
    let sessions: Vec<u32> = pgids.iter().flatten().copied().collect();
    kill_leftovers(&sessions, &token);
    let clients = results
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            r.unwrap_or(ClientRun {
                client: i,
                exit: ClientExit::KilledAtTimeout,
                stdout_tail: String::new(),
                stderr_tail: String::new(),
            })
        })
        .collect();
    Ok(RunOutcome { clients, timed_out })
}

fn exit_of(status: std::process::ExitStatus) -> ClientExit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ClientExit::Exited { code },
        (None, Some(signal)) => ClientExit::Signalled { signal },
        (None, None) => ClientExit::Exited { code: -1 },
    }
}

/// The environment variable that marks a replay's client processes.
const TOKEN_VAR: &str = "RETRYGATE_REPLAY_RUN";
/// Makes each run's token unique within this process.
static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);
/// Stands in for a deadline too far away to compute (a century).
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Kills every process in one of `sessions` (the clients' session ids, which
/// are their pids) or carrying `token` in its environment. Each pass kills
/// what it finds; a few passes catch a child forked while the last one ran.
fn kill_leftovers(sessions: &[u32], token: &str) {
    for &sid in sessions {
        kill_group(sid);
    }
    let marker = format!("{TOKEN_VAR}={token}");
    let me = std::process::id();
    for _ in 0..3 {
        let found = processes_of(sessions, &marker, me);
        if found.is_empty() {
            break;
        }
        for pid in found {
            // SAFETY: kill(2) has no memory effects; `pid` was read from /proc
            // just now and is not this process.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Pids (other than `me`) whose session is in `sessions` or whose
/// environment holds `marker`. Empty where there is no /proc.
fn processes_of(sessions: &[u32], marker: &str, me: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let path = entry.path();
        let in_session = std::fs::read_to_string(path.join("stat")).ok().and_then(|stat| session_of(&stat));
        let marked = || {
            std::fs::read(path.join("environ"))
                .map(|env| env.split(|b| *b == 0).any(|var| var == marker.as_bytes()))
                .unwrap_or(false)
        };
        if in_session.is_some_and(|sid| sessions.contains(&sid)) || marked() {
            out.push(pid);
        }
    }
    out
}

/// The session id in a `/proc/<pid>/stat` line: the 6th field, counted after
/// the command name, which is in parentheses and may hold spaces.
fn session_of(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    // state ppid pgrp session
    after.split_whitespace().nth(3)?.parse().ok()
}

fn kill_group(pgid: u32) {
    // SAFETY: kill(2) has no memory effects; a negative pid names the group
    // we created with process_group(0), whose id is the leader's pid.
    unsafe {
        libc::kill(-(pgid as i32), libc::SIGKILL);
    }
}

/// Reads a stream to its end, keeping the last [`OUTPUT_TAIL`] bytes.
async fn tail<R: AsyncRead + Unpin>(stream: Option<R>) -> String {
    let Some(mut stream) = stream else { return String::new() };
    let mut keep: VecDeque<u8> = VecDeque::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                keep.extend(&buf[..n]);
                while keep.len() > OUTPUT_TAIL {
                    keep.pop_front();
                }
            }
        }
    }
    String::from_utf8_lossy(&keep.into_iter().collect::<Vec<u8>>()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_programs_on_path_and_by_path() {
        assert!(resolve_program("sh", None).unwrap().ends_with("sh"));
        assert!(resolve_program("/bin/sh", None).is_ok());
        let e = resolve_program("retrygate-no-such-tool", None).unwrap_err().to_string();
        assert_eq!(
            e,
            "command not found: 'retrygate-no-such-tool' is not on PATH; install it or give its full path after `--`"
        );
        let e = resolve_program("./nope/x", None).unwrap_err().to_string();
        assert!(e.contains("'./nope/x' does not exist"), "{e}");
        let file = tempfile::NamedTempFile::new().unwrap();
        let path = file.path().to_str().unwrap().to_string();
        let e = resolve_program(&path, None).unwrap_err().to_string();
        assert!(e.contains("is not an executable file"), "{e}");
    }

    #[test]
    fn runs_clients_with_their_environment_and_records_exits() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let cmd: Vec<String> =
            ["sh", "-c", "echo \"$RETRYGATE_CLIENT $RETRYGATE_URL\"; exit $RETRYGATE_CLIENT"]
                .map(String::from)
                .into();
        let urls = vec!["u0".to_string(), "u1".to_string()];
        let out = rt.block_on(run_clients(&cmd, &urls, Duration::from_secs(20), None)).unwrap();
        assert!(!out.timed_out);
        assert_eq!(out.clients[0].exit, ClientExit::Exited { code: 0 });
        assert_eq!(out.clients[1].exit, ClientExit::Exited { code: 1 });
        assert_eq!(out.clients[1].stdout_tail, "1 u1\n");
    }

    #[test]
    fn a_setsid_daemon_does_not_outlive_the_replay() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("daemon-survived");
        // The client exits at once; its daemon leaves the session and the
        // process group, then would touch the marker four seconds later (a
        // margin for the cleanup on a loaded machine: with one second it
        // failed once under load 6 on 2 cores).
        let script = format!(
            "setsid sh -c 'sleep 4; touch \"{}\"' </dev/null >/dev/null 2>&1 & exit 0",
            marker.display()
        );
        let cmd: Vec<String> = vec!["sh".into(), "-c".into(), script];
        let out = rt.block_on(run_clients(&cmd, &["u".to_string()], Duration::from_secs(20), None)).unwrap();
        assert!(!out.timed_out);
        assert_eq!(out.clients[0].exit, ClientExit::Exited { code: 0 });
        std::thread::sleep(Duration::from_millis(4500));
        assert!(!marker.exists(), "the setsid daemon outlived the replay");
    }

    #[test]
    fn an_unaddable_timeout_is_no_timeout_not_a_panic() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let cmd: Vec<String> = vec!["true".into()];
        let out = rt.block_on(run_clients(&cmd, &["u".to_string()], Duration::MAX, None)).unwrap();
        assert_eq!((out.timed_out, &out.clients[0].exit), (false, &ClientExit::Exited { code: 0 }));
    }

    #[test]
    fn the_session_is_read_after_the_command_name() {
        assert_eq!(session_of("42 (a b) c) S 1 42 4242 0 -1"), Some(4242));
        assert_eq!(session_of("garbage"), None);
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("grandchild-survived");
        // The backgrounded grandchild would outlive a kill of the shell alone.
        let script = format!("(sleep 1; touch '{}') & sleep 30; echo never", marker.display());
        let cmd: Vec<String> = vec!["sh".into(), "-c".into(), script];
        let out =
            rt.block_on(run_clients(&cmd, &["u".to_string()], Duration::from_millis(300), None)).unwrap();
        assert!(out.timed_out);
        assert_eq!(out.clients[0].exit, ClientExit::KilledAtTimeout);
        assert!(!out.clients[0].stdout_tail.contains("never"));
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "the grandchild was not killed with its process group");
    }
}
