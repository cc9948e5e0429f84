//! Test helper: real git repositories in temporary directories.
//!
//! ```ignore
//! mod common;
//! use common::Repo;
//!
//! let repo = Repo::new();                       // `git init` on branch `main`
//! repo.write("src/lib.rs", "fn a() {}\n");
//! let base = repo.commit("base");               // returns the commit id
//! repo.branch("feature");                      // `git checkout -b feature`
//! repo.write("src/lib.rs", "fn b() {}\n");
//! let head = repo.commit("change");
//! let cs = retrygate::changeset::ChangeSet::from_git(repo.path(), "main", "feature").unwrap();
//! ```
//!
//! Every git call runs with the user's and the system's git configuration
//! switched off and a fixed identity, so a developer's `~/.gitconfig`
//! (signing, hooks, default branch) cannot change what a test sees.

// Each test crate uses a different part of this helper.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The checkout client before the incident (`retrygate demo`'s base).
pub(crate) const BEFORE: &str = include_str!("../../../examples/checkout-incident/before.rs");
/// The agent's "make checkout faster" patch (`retrygate demo`'s first push).
pub(crate) const AGENT_PATCH: &str = include_str!("../../../examples/checkout-incident/agent_patch.rs");

/// A git repository in a temporary directory, removed when dropped.
pub(crate) struct Repo {
    dir: tempfile::TempDir,
}

impl Default for Repo {
    fn default() -> Self {
        Repo::new()
    }
}

impl Repo {
    /// `git init` with `main` as the initial branch and a test identity.
    pub(crate) fn new() -> Repo {
        let dir = tempfile::tempdir().expect("create a temp dir");
        let repo = Repo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        // Also in the repository's own config, for git run without this
        // helper (the binary under test, a test's own Command).
        repo.git(&["config", "user.name", "retrygate test"]);
        repo.git(&["config", "user.email", "test@retrygate.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    /// `git clone ARGS... file://<source> <new temp dir>`: e.g.
    /// `Repo::clone_from(&origin, &["--depth", "1"])` for a shallow clone.
    pub(crate) fn clone_from(source: &Repo, args: &[&str]) -> Repo {
        let dir = tempfile::tempdir().expect("create a temp dir");
        let url = format!("file://{}", source.path().display());
        let mut cmd = git_command(dir.path());
        cmd.arg("clone").arg("-q").args(args).arg(&url).arg(dir.path());
        check(cmd.output().expect("run git clone"), &format!("clone {args:?} {url}"));
        Repo { dir }
    }

    /// The working tree's root.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The absolute path of `rel` inside the working tree.
    pub(crate) fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `contents` to `rel` (creating parent directories); not staged
    /// until [`Repo::commit`].
    pub(crate) fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Repo {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent directories");
        }
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        self
    }

    /// Deletes `rel` from the working tree.
    pub(crate) fn remove(&self, rel: &str) -> &Repo {
        let path = self.join(rel);
        std::fs::remove_file(&path).unwrap_or_else(|e| panic!("remove {}: {e}", path.display()));
        self
    }

    /// `git mv from to`.
    pub(crate) fn rename(&self, from: &str, to: &str) -> &Repo {
        if let Some(parent) = self.join(to).parent() {
            std::fs::create_dir_all(parent).expect("create parent directories");
        }
        self.git(&["mv", from, to]);
        self
    }

    /// Stages everything (`git add -A`) and commits; returns the new commit id.
    pub(crate) fn commit(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", msg]);
        self.head()
    }

    /// Creates branch `name` at `HEAD` and checks it out (`git checkout -b`).
    pub(crate) fn branch(&self, name: &str) -> &Repo {
        self.git(&["checkout", "-q", "-b", name]);
        self
    }

    /// Checks out an existing branch or commit.
    pub(crate) fn checkout(&self, rev: &str) -> &Repo {
        self.git(&["checkout", "-q", rev]);
        self
    }

    /// The full id of `HEAD`.
    pub(crate) fn head(&self) -> String {
        self.rev("HEAD")
    }

    /// The full commit id `rev` names.
    pub(crate) fn rev(&self, rev: &str) -> String {
        self.git(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
    }

    /// Runs git in the repository; panics with git's stderr if it fails.
    /// Returns stdout, trimmed.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        check(out, &args.join(" "))
    }

    /// Runs git in the repository and returns the raw output, success or not.
    pub(crate) fn git_output(&self, args: &[&str]) -> Output {
        let mut cmd = git_command(self.path());
        cmd.args(args).output().unwrap_or_else(|e| panic!("run git {args:?}: {e}"))
    }
}

/// A `git` command isolated from the user's and system's configuration.
fn git_command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "retrygate test")
        .env("GIT_AUTHOR_EMAIL", "test@retrygate.invalid")
        .env("GIT_COMMITTER_NAME", "retrygate test")
        .env("GIT_COMMITTER_EMAIL", "test@retrygate.invalid")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    cmd
}

fn check(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "git {what} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `git ARGS` in `dir` with the isolated configuration of [`Repo`], for
/// tests that lay out a directory by hand; panics with git's stderr.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir).args(args).output().expect("run git");
    check(out, &args.join(" "))
}

/// Writes `text` to `dir/rel`, creating parent directories.
pub(crate) fn write(dir: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("a relative path has a parent")).expect("create dirs");
    std::fs::write(p, text).expect("write file");
}

/// A real GitHub payload from `tests/fixtures/github/` (see its README for
/// where each came from), parsed.
/// The `.rs` fixture files under `tests/fixtures/<dir>`, sorted by name.
pub(crate) fn rust_fixtures(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    paths.sort();
    paths
}

pub(crate) fn github_fixture(name: &str) -> serde_json::Value {
    let path = format!("{}/tests/fixtures/github/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Runs a program this test has just copied or written. Another test thread
/// that forks while the copy's file is still open for writing hands that
/// descriptor to its child until the child execs, and running the file in
/// that moment fails with ETXTBSY ("Text file busy"): a race of the test
/// harness's threads, not of retrygate, so it is waited out.
pub(crate) fn output_of_fresh_executable(cmd: &mut Command) -> Output {
    for _ in 0..100 {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.expect("the copied program runs"),
        }
    }
    panic!("the copied program stayed busy (ETXTBSY) for 2 s: {cmd:?}")
}

/// Two kinds of tests that must not run at the same time: those that judge
/// clients' timing (replays whose checks read milliseconds between requests)
/// and those that keep every core busy for tens of seconds (fixture sweeps,
/// scale and fuzz tests). Tests of one kind share the room; the other kind
/// waits at the door; tests of neither kind run beside both. On 2 cores,
/// six busy tests stretched the built-in clients' sleeps. (The replays of
/// third-party clients run in a process of their own, scripts/test.sh.)
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Room {
    /// Judges real clients' timing.
    Timed,
    /// Keeps the cores busy.
    Busy,
}

static ROOM: std::sync::Mutex<(Option<Room>, usize)> = std::sync::Mutex::new((None, 0));
static ROOM_FREED: std::sync::Condvar = std::sync::Condvar::new();

/// Held while a test is in its [`Room`]; leaving frees the room for the
/// other kind once the last test of this kind is out.
pub(crate) struct InRoom;

/// Waits until no test of the other kind is running, then enters.
pub(crate) fn enter(room: Room) -> InRoom {
    let mut state = ROOM.lock().unwrap_or_else(|e| e.into_inner());
    while matches!(state.0, Some(other) if other != room) {
        state = ROOM_FREED.wait(state).unwrap_or_else(|e| e.into_inner());
    }
    state.0 = Some(room);
    state.1 += 1;
    InRoom
}

impl Drop for InRoom {
    fn drop(&mut self) {
        let mut state = ROOM.lock().unwrap_or_else(|e| e.into_inner());
        state.1 -= 1;
        if state.1 == 0 {
            state.0 = None;
            ROOM_FREED.notify_all();
        }
    }
}

/// `retrygate scan --format json` of `repo`'s `main..HEAD`: the exit code
/// and the parsed report (a panic naming the output when it is not JSON).
pub(crate) fn scan_json(repo: &Repo) -> (Option<i32>, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", "HEAD", "--format", "json"])
        .output()
        .expect("run retrygate");
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout));
    });
    (out.status.code(), json)
}

/// The error findings of kind `kind` in a scan report.
pub(crate) fn errors_of<'a>(json: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["kind"] == kind && f["severity"] == "error")
        .collect()
}

/// Scans a one-crate repository (a `svc` Cargo.toml) whose `files_base`
/// (path, text) are committed on `main` and `files_head` on a branch over
/// them: the exit code and the report.
pub(crate) fn scan_crate_change(
    files_base: &[(&str, &str)],
    files_head: &[(&str, &str)],
) -> (Option<i32>, serde_json::Value) {
    let repo = Repo::new();
    repo.write("Cargo.toml", "[package]\nname = \"svc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    for (p, t) in files_base {
        repo.write(p, t);
    }
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "change"]);
    for (p, t) in files_head {
        repo.write(p, t);
    }
    repo.commit("change");
    scan_json(&repo)
}
