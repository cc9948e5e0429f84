//! Runs CMD once per client, all released at the same moment, and records
//! how each one ended.
//!
//! Each client is started as `/bin/sh -c 'read; exec "$@"' CMD ARGS...` with
//! its stdin on a pipe: the shell waits on the pipe until every client has
//! been spawned, and closing the pipes releases them together (the moment a
//! real fleet gets its 429s). Each client leads its own process group, so
//! `--timeout` can kill CMD together with anything it started.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::Instant;

/// How much of each client's stdout/stderr the report keeps (the end of it).
const OUTPUT_TAIL: usize = 2048;

/// How one client's CMD ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum ClientExit {
    Exited {
        code: i32,
    },
    Signalled {
        signal: i32,
    },
    /// Still running at `--timeout`; its process group was killed.
    KilledAtTimeout,
}

impl ClientExit {
    /// Exited with code 0.
    pub fn success(&self) -> bool {
        matches!(self, ClientExit::Exited { code: 0 })
    }

    /// "exited with code 1", for messages.
    pub fn describe(&self) -> String {
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
    pub client: usize,
    pub exit: ClientExit,
    /// The last bytes CMD wrote, for the report.
    pub stdout_tail: String,
    pub stderr_tail: String,
}

/// All clients' runs.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub clients: Vec<ClientRun>,
    pub timed_out: bool,
}

/// Finds `program` the way `exec` would: a path if it has a slash, else PATH.
pub fn resolve_program(program: &str) -> anyhow::Result<PathBuf> {
    if program.is_empty() {
        bail!("no command given; pass one after `--`, e.g. `retrygate replay -- curl --retry 5 \"$RETRYGATE_URL\"`");
    }
    let is_exec =
        |p: &Path| p.is_file() && p.metadata().map(|m| m.permissions().mode() & 0o111 != 0).unwrap_or(false);
    if program.contains('/') {
        let p = PathBuf::from(program);
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
pub async fn run_clients(
    cmd: &[String],
    urls: &[String],
    timeout: Duration,
    cwd: Option<&Path>,
) -> anyhow::Result<RunOutcome> {
    let Some(program) = cmd.first() else {
        bail!("no command given; pass one after `--`");
    };
    resolve_program(program)?;

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
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(dir) = cwd {
            c.current_dir(dir);
        }
        let mut child = c.spawn().with_context(|| format!("cannot start client {i} via /bin/sh"))?;
        gates.push(child.stdin.take());
        children.push(child);
    }
    // Release: every shell's `read` sees end-of-file at once.
    drop(gates);
    let deadline = Instant::now() + timeout;

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
        assert!(resolve_program("sh").unwrap().ends_with("sh"));
        assert!(resolve_program("/bin/sh").is_ok());
        let e = resolve_program("retrygate-no-such-tool").unwrap_err().to_string();
        assert_eq!(
            e,
            "command not found: 'retrygate-no-such-tool' is not on PATH; install it or give its full path after `--`"
        );
        let e = resolve_program("./nope/x").unwrap_err().to_string();
        assert!(e.contains("'./nope/x' does not exist"), "{e}");
        let file = tempfile::NamedTempFile::new().unwrap();
        let path = file.path().to_str().unwrap().to_string();
        let e = resolve_program(&path).unwrap_err().to_string();
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
