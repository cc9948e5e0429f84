//! A thin, typed wrapper around the `git` command line.
//!
//! retrygate shells out to `git` rather than linking a git library: the
//! user's git already understands their repository (worktrees, alternates,
//! partial clones), and every failure comes back as git's own words, which we
//! wrap with what to do next.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::ChangeSetError;

/// A repository reached through the `git` binary.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

/// One file of a tree listing ([`Git::tree_blobs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeBlob {
    pub(crate) path: String,
    pub(crate) id: String,
    /// In bytes; `u64::MAX` when git printed something else.
    pub(crate) size: u64,
}

impl Git {
    /// Opens `dir` as a git repository, or says why it is not one.
    pub fn open(dir: &Path) -> Result<Git, ChangeSetError> {
        if !dir.exists() {
            return Err(ChangeSetError::NotARepository {
                dir: dir.to_path_buf(),
                detail: "the directory does not exist".into(),
            });
        }
        let git = Git { dir: dir.to_path_buf() };
        match git.run(&["rev-parse", "--git-dir"]) {
            Ok(_) => Ok(git),
            Err(ChangeSetError::Git { stderr, .. }) => {
                Err(ChangeSetError::NotARepository { dir: dir.to_path_buf(), detail: stderr })
            }
            Err(e) => Err(e),
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.dir);
        // The caller's environment must not redirect us to another repository
        // (these are set inside git hooks) or change what a diff means.
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_EXTERNAL_DIFF",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_COMMON_DIR",
            "GIT_NAMESPACE",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        // `refs/replace/*` can map the head's blob to the base's and hide the
        // change: read the objects the commits really name.
        cmd.env("GIT_NO_REPLACE_OBJECTS", "1");
        cmd
    }

    /// Runs git with `args` and returns its stdout as bytes.
    pub(crate) fn run_bytes(&self, args: &[&str]) -> Result<Vec<u8>, ChangeSetError> {
        let mut cmd = self.command();
        if args.first() == Some(&"grep") {
            // Byte-wise matching: in a UTF-8 locale glibc's regex decodes
            // every character of every file (`-i`, `-w`, `-E`), which made
            // the greps over a large tree most of a scan's time (4x the CPU
            // of the C locale). The patterns are ASCII; only what counts as
            // a letter or a space outside ASCII differs.
            cmd.env("LC_ALL", "C");
        }
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| ChangeSetError::GitMissing { detail: e.to_string() })?;
        if !out.status.success() {
            return Err(ChangeSetError::Git {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(out.stdout)
    }

    /// Runs git with `args` and returns its stdout, trimmed.
    pub fn run(&self, args: &[&str]) -> Result<String, ChangeSetError> {
        let out = self.run_bytes(args)?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// Resolves a revision to a full commit id, or names the revision that
    /// does not exist.
    pub fn resolve_commit(&self, rev: &str) -> Result<String, ChangeSetError> {
        if rev.starts_with('-') {
            return Err(ChangeSetError::UnknownRevision { rev: rev.to_string() });
        }
        let spec = format!("{rev}^{{commit}}");
        match self.run(&["rev-parse", "--verify", "--quiet", "--end-of-options", &spec]) {
            Ok(sha) if !sha.is_empty() => Ok(sha),
            Ok(_) | Err(ChangeSetError::Git { .. }) => {
                Err(ChangeSetError::UnknownRevision { rev: rev.to_string() })
            }
            Err(e) => Err(e),
        }
    }

    pub(crate) fn is_shallow(&self) -> bool {
        self.run(&["rev-parse", "--is-shallow-repository"]).map(|s| s == "true").unwrap_or(false)
    }

    /// The merge base of two commits; `None` when they share no history.
    pub(crate) fn merge_base(&self, a: &str, b: &str) -> Result<Option<String>, ChangeSetError> {
        let out = self
            .command()
            .args(["merge-base", a, b])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| ChangeSetError::GitMissing { detail: e.to_string() })?;
        // `git merge-base` exits 1 with no output when there is no common ancestor.
        match out.status.code() {
            Some(0) => Ok(Some(String::from_utf8_lossy(&out.stdout).trim().to_string())),
            Some(1) if out.stderr.is_empty() => Ok(None),
            _ => Err(ChangeSetError::Git {
                args: format!("merge-base {a} {b}"),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            }),
        }
    }

    /// Every file of `rev`'s whole tree as `(path, object id)`, without
    /// sizes (one `git ls-tree -r`): `-l` would look up the size of every
    /// blob, about a tenth of a second on a tree of 4,000 loose objects, so
    /// callers ask [`Git::blob_sizes`] for the few they read.
    pub(crate) fn tree_files(&self, rev: &str) -> Result<Vec<(String, String)>, ChangeSetError> {
        let listing = self.run_bytes(&["ls-tree", "-r", "-z", "--full-tree", rev])?;
        let mut files = Vec::new();
        for entry in listing.split(|b| *b == 0) {
            let Ok(entry) = std::str::from_utf8(entry) else { continue };
            // `<mode> blob <id>\t<path>`
            let Some((meta, path)) = entry.split_once('\t') else { continue };
            let mut parts = meta.split_whitespace();
            if let (Some(_), Some("blob"), Some(id)) = (parts.next(), parts.next(), parts.next()) {
                files.push((path.to_string(), id.to_string()));
            }
        }
        Ok(files)
    }

    /// Every file of `rev`'s whole tree, with its object id and size (one
    /// `git ls-tree -r -l`); submodules and symlinks' targets are not files.
    pub(crate) fn tree_blobs(&self, rev: &str) -> Result<Vec<TreeBlob>, ChangeSetError> {
        let listing = self.run_bytes(&["ls-tree", "-r", "-l", "-z", "--full-tree", rev])?;
        let mut blobs = Vec::new();
        for entry in listing.split(|b| *b == 0) {
            let Ok(entry) = std::str::from_utf8(entry) else { continue };
            let Some((meta, path)) = entry.split_once('\t') else { continue };
            let mut parts = meta.split_whitespace();
            let (Some(_), Some("blob"), Some(id), Some(size)) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            blobs.push(TreeBlob {
                path: path.to_string(),
                id: id.to_string(),
                size: size.parse().unwrap_or(u64::MAX),
            });
        }
        Ok(blobs)
    }

    /// Reads many objects with one `git cat-file` process. Objects larger than
    /// `max_size` are not read: their entry is `Blob::TooLarge`.
    pub(crate) fn read_blobs(&self, ids: &[String], max_size: u64) -> Result<Vec<Blob>, ChangeSetError> {
        let sizes = self.blob_sizes(ids)?;
        let mut result: Vec<Blob> = Vec::with_capacity(ids.len());
        let mut to_read = Vec::new();
        let mut wanted = Vec::new();
        for (i, size) in sizes.into_iter().enumerate() {
            match size {
                None => result.push(Blob::Missing),
                Some(size) if size > max_size => result.push(Blob::TooLarge(size)),
                Some(size) => {
                    to_read.push(i);
                    wanted.push((ids[i].clone(), size));
                    result.push(Blob::Missing);
                }
            }
        }
        for (slot, blob) in to_read.into_iter().zip(self.read_sized(&wanted)?) {
            result[slot] = blob;
        }
        Ok(result)
    }

    /// The size of each object (one `git cat-file --batch-check`); `None`
    /// for one that does not exist.
    pub(crate) fn blob_sizes(&self, ids: &[String]) -> Result<Vec<Option<u64>>, ChangeSetError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let entries = self.cat_file_batch(ids, true)?;
        Ok(entries
            .into_iter()
            .map(|e| match e {
                CatEntry::Meta(size) => Some(size),
                CatEntry::Missing | CatEntry::Content(_) => None,
            })
            .collect())
    }

    /// Reads objects whose sizes are already known (from [`Git::blob_sizes`]),
    /// in parallel when they are many; the sizes split the work.
    pub(crate) fn read_sized(&self, wanted: &[(String, u64)]) -> Result<Vec<Blob>, ChangeSetError> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self
            .read_contents(wanted)?
            .into_iter()
            .map(|e| match e {
                CatEntry::Content(bytes) => Blob::Bytes(bytes),
                CatEntry::Missing | CatEntry::Meta(_) => Blob::Missing,
            })
            .collect())
    }

    /// The raw bytes of `path` at commit `rev`: `Ok(None)` when the file does
    /// not exist there (or is not a regular blob), `Blob::TooLarge` past
    /// `max_size`. Used where text decoding would lose bytes (content hashes).
    pub fn read_blob_at(&self, rev: &str, path: &str, max_size: u64) -> Result<Option<Blob>, ChangeSetError> {
        let spec = format!("{rev}:{path}");
        let out = self
            .command()
            .args(["rev-parse", "--verify", "--quiet", "--end-of-options", &spec])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| ChangeSetError::GitMissing { detail: e.to_string() })?;
        if !out.status.success() {
            return Ok(None);
        }
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let kind = self.run(&["cat-file", "-t", &id])?;
        if kind != "blob" {
            return Ok(None);
        }
        Ok(self.read_blobs(&[id], max_size)?.into_iter().next())
    }

    /// The contents of `wanted` (id, size), in order. A large read is split
    /// into byte-balanced parts, one `git cat-file` process each, read at the
    /// same time: git inflates objects on one core, and the analysis waits
    /// for the whole change.
    fn read_contents(&self, wanted: &[(String, u64)]) -> Result<Vec<CatEntry>, ChangeSetError> {
        let total: u64 = wanted.iter().map(|(_, size)| size).sum();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let parts = (total / PARALLEL_READ_BYTES).clamp(1, cores.min(MAX_READ_PROCESSES) as u64);
        let ids: Vec<String> = wanted.iter().map(|(id, _)| id.clone()).collect();
        if parts <= 1 {
            return self.cat_file_batch(&ids, false);
        }
        // Cut where each part's running byte total passes its share.
        let share = total.div_ceil(parts);
        let mut cuts = vec![0];
        let mut running = 0;
        for (i, (_, size)) in wanted.iter().enumerate() {
            running += size;
            if running >= share * cuts.len() as u64 && cuts.len() < parts as usize {
                cuts.push(i + 1);
            }
        }
        cuts.push(ids.len());
        cuts.dedup();
        let chunks: Vec<&[String]> = cuts.windows(2).map(|w| &ids[w[0]..w[1]]).collect();
        let results: Vec<Result<Vec<CatEntry>, ChangeSetError>> = std::thread::scope(|scope| {
            let handles: Vec<_> =
                chunks.iter().map(|chunk| scope.spawn(move || self.cat_file_batch(chunk, false))).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(ChangeSetError::Git {
                            args: "cat-file --batch".into(),
                            stderr: "the thread reading its output panicked".into(),
                        })
                    })
                })
                .collect()
        });
        let mut entries = Vec::with_capacity(ids.len());
        for r in results {
            entries.extend(r?);
        }
        Ok(entries)
    }

    fn cat_file_batch(&self, ids: &[String], check_only: bool) -> Result<Vec<CatEntry>, ChangeSetError> {
        let flag = if check_only { "--batch-check" } else { "--batch" };
        let mut child = self
            .command()
            .args(["cat-file", flag])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| ChangeSetError::GitMissing { detail: e.to_string() })?;
        let mut stdin = child.stdin.take().ok_or_else(|| ChangeSetError::Git {
            args: format!("cat-file {flag}"),
            stderr: "could not open stdin".into(),
        })?;
        let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
        // Write from another thread: git starts answering before it has read
        // all requests, and a full pipe on both sides would deadlock.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let stdout = child.stdout.take().ok_or_else(|| ChangeSetError::Git {
            args: format!("cat-file {flag}"),
            stderr: "could not open stdout".into(),
        })?;
        let mut reader = BufReader::with_capacity(1 << 16, stdout);
        let mut entries = Vec::with_capacity(ids.len());
        let io_err = |e: std::io::Error| ChangeSetError::Git {
            args: format!("cat-file {flag}"),
            stderr: e.to_string(),
        };
        for _ in ids {
            let mut header = String::new();
            reader.read_line(&mut header).map_err(io_err)?;
            let header = header.trim_end();
            if header.ends_with(" missing") || header.is_empty() {
                entries.push(CatEntry::Missing);
                continue;
            }
            let size: u64 = header.rsplit(' ').next().and_then(|s| s.parse().ok()).ok_or_else(|| {
                ChangeSetError::Git {
                    args: format!("cat-file {flag}"),
                    stderr: format!("unexpected answer {header:?}"),
                }
            })?;
            if check_only {
                entries.push(CatEntry::Meta(size));
            } else {
                // Read into fresh capacity: zeroing it first would touch
                // every page of a large change one more time.
                let mut buf = Vec::with_capacity(size as usize);
                let got = (&mut reader).take(size).read_to_end(&mut buf).map_err(io_err)?;
                if got as u64 != size {
                    return Err(io_err(std::io::ErrorKind::UnexpectedEof.into()));
                }
                let mut newline = [0u8; 1];
                reader.read_exact(&mut newline).map_err(io_err)?;
                entries.push(CatEntry::Content(buf));
            }
        }
        let _ = writer.join();
        let status = child.wait().map_err(io_err)?;
        if !status.success() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            return Err(ChangeSetError::Git { args: format!("cat-file {flag}"), stderr: err });
        }
        Ok(entries)
    }
}

/// Past this many bytes to read, blob contents are read by more than one
/// `git cat-file` process at a time (one per this many bytes, up to the
/// cores and [`MAX_READ_PROCESSES`]); below it one process is quicker than
/// starting more.
const PARALLEL_READ_BYTES: u64 = 4 * 1024 * 1024;
const MAX_READ_PROCESSES: usize = 4;

enum CatEntry {
    Missing,
    Meta(u64),
    Content(Vec<u8>),
}

/// One object read from the object database.
#[derive(Debug, Clone)]
pub enum Blob {
    /// The object's content.
    Bytes(Vec<u8>),
    /// Bigger than the reader's bound; its size in bytes, content not read.
    TooLarge(u64),
    /// Not in the object database (a partial clone, or a wrong id).
    Missing,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap().status.success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn grep_matches_bytes_whatever_the_locale() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        // In the C locale `é` is not a letter, so `-w` finds `retry` before
        // it; the word `retrying` is still not the word `retry`.
        std::fs::write(dir.path().join("a.rs"), "let retryé = 1;\n").unwrap();
        std::fs::write(dir.path().join("b.rs"), "let retrying = 1;\n").unwrap();
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "x"]);
        let g = Git::open(dir.path()).unwrap();
        let out = g.run_bytes(&["grep", "-l", "-w", "-e", "retry", "HEAD", "--"]).unwrap();
        assert_eq!(String::from_utf8_lossy(&out), "HEAD:a.rs\n");
    }
}
