//! Writes v2 records: one locked, whole-line append per record.
//!
//! Agents run tools in parallel, so two hook processes may append at once.
//! Each append takes an exclusive advisory lock on the ledger file itself
//! (`fs4`, i.e. `flock`/`LockFileEx`), reads the last line to link the chain,
//! writes the new line with one `write` on an `O_APPEND` descriptor, syncs,
//! and unlocks. Readers (`verify`) take a shared lock, so they never see a
//! line being written.
//!
//! A crash mid-append can leave a partial last line without its newline.
//! The next append (which holds the lock, so no writer is mid-line) repairs
//! it: a partial line that is a whole record gets its newline; anything else
//! is cut off and reported, and the chain continues from the last whole
//! record. Until then `verify` reports the partial line as an interrupted
//! write.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::lines::ReadLimits;
use super::pyjson::{self, Value};
use super::record::Record;

/// A record to append; `seq`, `prev`, `ts` and `digest` are filled in.
#[derive(Debug, Clone)]
pub struct NewRecord {
    /// The tool the agent called (`Bash`, `Edit`, ...).
    pub tool: String,
    /// Must be a JSON object.
    pub payload: Value,
    /// For edits: the file's content hash after the edit (`None` = deleted).
    /// Set it and `payload.path` together.
    pub sha256: Option<Option<String>>,
}

/// What an append wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Appended {
    /// The record's place in the chain (0 for the first).
    pub seq: u64,
    /// Its SHA-256, which the next record names as `prev`.
    pub digest: String,
    /// The line written, without its newline.
    pub(crate) line: String,
    /// Bytes of an interrupted earlier write that were cut off first.
    pub removed_partial_bytes: u64,
}

/// Why an append failed; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    #[error("cannot write the ledger {path}: {source}; check the path and that the directory is writable")]
    /// The ledger file could not be opened, read or written.
    Io {
        /// The ledger file.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    #[error("the last line of {path} is longer than {limit} bytes, so the chain cannot be continued; run `retrygate ledger verify --ledger {path}` and repair the ledger")]
    /// The last line is too long to be a record, so its digest is unknown.
    LastLineTooLong {
        /// The ledger file.
        path: PathBuf,
        /// The longest line a record may be, in bytes.
        limit: usize,
    },
    #[error(
        "the payload must be a JSON object, got {0}; pass e.g. --payload '{{\"command\": \"cargo test\"}}'"
    )]
    /// The payload is JSON but not an object; holds the type it is.
    PayloadNotObject(&'static str),
    #[error("the record is {0} bytes, over the one-line limit; keep file contents out of payloads")]
    /// The record would be longer than one ledger line may be; its size.
    TooLarge(usize),
}

/// Hex SHA-256 of the file at `path`, streamed; `None` when it does not
/// exist. Only a regular file is read: the file is opened non-blocking (so
/// a FIFO cannot hang the open) and refused unless it is a regular file (a
/// FIFO or a device would block or never end).
pub fn hash_file(path: &Path) -> io::Result<Option<String>> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = match OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        let what = crate::bounded::kind_of(&meta);
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is a {what}, not a regular file; only regular files are hashed (a {what} may block or never end)"),
        ));
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(Some(hex::encode(hasher.finalize())))
}

/// Appends `record` to the ledger at `path` (created if missing).
pub fn append(path: &Path, record: NewRecord) -> Result<Appended, AppendError> {
    append_at(path, record, now())
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// [`append`] with a given clock reading (tests).
pub(crate) fn append_at(path: &Path, record: NewRecord, ts_now: f64) -> Result<Appended, AppendError> {
    let mut done = append_all_at(path, vec![record], ts_now)?;
    done.pop().ok_or(AppendError::TooLarge(0))
}

/// Appends several records under one lock, with one write and one sync:
/// what a hook call that edited many files needs (one append per record
/// re-reads the ledger's tail and syncs each time, which took 34 s for
/// 5,000 files). Either every record is written or none is.
pub(crate) fn append_all(path: &Path, records: Vec<NewRecord>) -> Result<Vec<Appended>, AppendError> {
    append_all_at(path, records, now())
}

fn append_all_at(path: &Path, records: Vec<NewRecord>, ts_now: f64) -> Result<Vec<Appended>, AppendError> {
    if let Some(r) = records.iter().find(|r| !matches!(r.payload, Value::Object(_))) {
        return Err(AppendError::PayloadNotObject(r.payload.type_name()));
    }
    if records.is_empty() {
        return Ok(Vec::new());
    }
    let io_err = |source| AppendError::Io { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io_err)?;
    }
    let mut file = OpenOptions::new().read(true).append(true).create(true).open(path).map_err(io_err)?;
    fs4::fs_std::FileExt::lock_exclusive(&file).map_err(io_err)?;
    let result = append_locked(path, &mut file, records, ts_now);
    // Closing the descriptor releases the lock too; unlocking first keeps the
    // window short when the caller holds the file longer.
    let _ = fs4::fs_std::FileExt::unlock(&file);
    result
}

struct Tail {
    /// The last whole line (without newline), if any.
    last: Option<Vec<u8>>,
    removed_partial_bytes: u64,
}

fn append_locked(
    path: &Path,
    file: &mut File,
    records: Vec<NewRecord>,
    ts_now: f64,
) -> Result<Vec<Appended>, AppendError> {
    let io_err = |source| AppendError::Io { path: path.to_path_buf(), source };
    let limit = ReadLimits::default().max_line_bytes;
    let tail = repair_and_read_tail(path, file, limit)?;
    let last =
        tail.last.as_deref().and_then(|b| std::str::from_utf8(b).ok()).and_then(|t| Record::parse(0, t).ok());
    let first_seq = match last.as_ref().and_then(|r| r.seq) {
        Some(s) => s + 1,
        None => count_lines(file).map_err(io_err)? + 1,
    };
    let mut prev = tail.last.as_ref().map(|b| hex::encode(Sha256::digest(b)));
    // Never go backwards in time, even if the clock does: verify checks it.
    let ts = match last.as_ref() {
        Some(r) if r.ts > ts_now => r.ts,
        _ => ts_now,
    };
    let mut bytes = Vec::new();
    let mut out = Vec::with_capacity(records.len());
    for (seq, record) in (first_seq..).zip(records) {
        let digest = pyjson::digest(&record.payload);
        let mut members = vec![
            ("v".to_string(), Value::Int("2".into())),
            ("seq".to_string(), Value::Int(seq.to_string())),
            ("ts".to_string(), Value::Float(ts)),
            ("tool".to_string(), Value::Str(record.tool)),
            ("payload".to_string(), record.payload),
            ("digest".to_string(), Value::Str(digest.clone())),
            ("prev".to_string(), prev.take().map_or(Value::Null, Value::Str)),
        ];
        if let Some(sha) = record.sha256 {
            members.push(("sha256".to_string(), sha.map_or(Value::Null, Value::Str)));
        }
        let line = pyjson::dumps(&Value::Object(members));
        if line.len() > limit {
            return Err(AppendError::TooLarge(line.len()));
        }
        prev = Some(hex::encode(Sha256::digest(line.as_bytes())));
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        out.push(Appended { seq, digest, line, removed_partial_bytes: tail.removed_partial_bytes });
    }
    // One buffer, one write on an O_APPEND descriptor, under the lock.
    file.write_all(&bytes).map_err(io_err)?;
    file.sync_data().map_err(io_err)?;
    Ok(out)
}

/// Finds the last whole line, first repairing an interrupted write.
fn repair_and_read_tail(path: &Path, file: &mut File, limit: usize) -> Result<Tail, AppendError> {
    let io_err = |source| AppendError::Io { path: path.to_path_buf(), source };
    let mut removed = 0u64;
    loop {
        let len = file.metadata().map_err(io_err)?.len();
        if len == 0 {
            return Ok(Tail { last: None, removed_partial_bytes: removed });
        }
        let window = len.min(limit as u64 + 2);
        file.seek(SeekFrom::Start(len - window)).map_err(io_err)?;
        let mut buf = Vec::with_capacity(window as usize);
        Read::by_ref(file).take(window).read_to_end(&mut buf).map_err(io_err)?;
        let whole_file = window == len;
        if buf.last() == Some(&b'\n') {
            let body = &buf[..buf.len() - 1];
            return match body.iter().rposition(|&b| b == b'\n') {
                Some(i) => Ok(Tail { last: Some(body[i + 1..].to_vec()), removed_partial_bytes: removed }),
                None if whole_file => Ok(Tail { last: Some(body.to_vec()), removed_partial_bytes: removed }),
                None => Err(AppendError::LastLineTooLong { path: path.to_path_buf(), limit }),
            };
        }
        // No newline at the end: an interrupted write, or a hand-written file.
        let start = match buf.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None if whole_file => 0,
            None => return Err(AppendError::LastLineTooLong { path: path.to_path_buf(), limit }),
        };
        let partial = &buf[start..];
        let whole_record = std::str::from_utf8(partial).ok().is_some_and(|t| Record::parse(0, t).is_ok());
        if whole_record {
            file.write_all(b"\n").map_err(io_err)?;
        } else {
            let keep = len - (buf.len() - start) as u64;
            removed += len - keep;
            file.set_len(keep).map_err(io_err)?;
        }
    }
}

fn count_lines(file: &mut File) -> io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let read = file.read(&mut buf)?;
        if read == 0 {
            return Ok(n);
        }
        n += buf[..read].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

/// `path` (absolute, or relative to `base`) as a path relative to the
/// repository `root`, with `/` separators. Symbolic links in the existing
/// part of the path are resolved first, so `link/x` cannot hide `app/x`.
pub fn repo_relative(root: &Path, base: &Path, path: &Path) -> Result<String, String> {
    let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    let lexical = lexical_normalize(&joined);
    // Resolve the deepest ancestor that exists; the rest is appended as is.
    let mut existing = lexical.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    let resolved = loop {
        match existing.canonicalize() {
            Ok(c) => break c,
            Err(_) => match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    existing = parent.to_path_buf();
                }
                _ => break existing.clone(),
            },
        }
    };
    let mut full = resolved;
    for part in rest.iter().rev() {
        full.push(part);
    }
    let root = root.canonicalize().unwrap_or_else(|_| lexical_normalize(root));
    let rel = full
        .strip_prefix(&root)
        .map_err(|_| format!("{} is outside the repository {}", joined.display(), root.display()))?;
    let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.is_empty() {
        return Err(format!("{} is the repository root, not a file", joined.display()));
    }
    Ok(parts.join("/"))
}

fn lexical_normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::verify::verify;

    fn rec(tool: &str, payload: &str) -> NewRecord {
        NewRecord { tool: tool.into(), payload: pyjson::parse(payload).unwrap(), sha256: None }
    }

    #[test]
    fn builds_a_chain_that_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.jsonl");
        let a = append_at(&path, rec("Bash", r#"{"command": "cargo test"}"#), 10.0).unwrap();
        let mut edit = rec("Write", r#"{"path": "src/a.rs"}"#);
        edit.sha256 = Some(Some("ab".repeat(32)));
        let b = append_at(&path, edit, 9.0).unwrap();
        assert_eq!((a.seq, b.seq), (1, 2));
        assert!(a.line.starts_with(r#"{"v": 2, "seq": 1, "ts": 10.0, "tool": "Bash""#), "{}", a.line);
        assert!(a.line.contains(r#""prev": null"#));
        assert!(b.line.contains("\"ts\": 10.0"), "clock went back, ts must not: {}", b.line);
        let report = verify(&path, None).unwrap();
        assert!(report.valid, "{:?}", report.problems);
        assert_eq!(report.format.as_deref(), Some("v2"));
    }

    #[test]
    fn continues_a_v1_ledger_with_line_numbers_as_seq() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.jsonl");
        let payload = pyjson::parse(r#"{"path": "a"}"#).unwrap();
        let v1 = format!(
            "{{\"ts\": 1.0, \"tool\": \"read_file\", \"payload\": {}, \"digest\": \"{}\"}}\n",
            pyjson::dumps(&payload),
            pyjson::digest(&payload)
        );
        std::fs::write(&path, v1.repeat(3)).unwrap();
        let a = append_at(&path, rec("Bash", r#"{"command": "ls"}"#), 2.0).unwrap();
        assert_eq!(a.seq, 4);
        let report = verify(&path, None).unwrap();
        assert_eq!(report.format.as_deref(), Some("mixed"));
        assert!(report.valid, "{:?}", report.problems);
    }

    #[test]
    fn repairs_an_interrupted_write_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.jsonl");
        append_at(&path, rec("Bash", r#"{"command": "a"}"#), 1.0).unwrap();
        let whole = std::fs::read(&path).unwrap();
        let mut torn = whole.clone();
        torn.extend_from_slice(br#"{"v": 2, "seq": 2, "ts": 2.0, "tool": "Ba"#);
        std::fs::write(&path, &torn).unwrap();
        let report = verify(&path, None).unwrap();
        assert!(!report.valid);
        assert_eq!(report.problems[0].line, Some(2));
        assert!(report.problems[0].message.contains("the last line is incomplete"), "{:?}", report.problems);
        assert!(report.problems[0].message.contains("the 1 line before it is whole"));
        let b = append_at(&path, rec("Bash", r#"{"command": "b"}"#), 3.0).unwrap();
        assert_eq!((b.seq, b.removed_partial_bytes), (2, (torn.len() - whole.len()) as u64));
        let report = verify(&path, None).unwrap();
        assert!(report.valid, "{:?}", report.problems);
        assert_eq!(report.records, 2);
    }

    #[test]
    fn a_whole_last_record_without_newline_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.jsonl");
        std::fs::write(
            &path,
            "{\"ts\": 1.0, \"tool\": \"read_file\", \"payload\": {}, \"digest\": \"44136fa355b3678a\"}",
        )
        .unwrap();
        append_at(&path, rec("Bash", r#"{"command": "b"}"#), 3.0).unwrap();
        let report = verify(&path, None).unwrap();
        assert!(report.valid, "{:?}", report.problems);
        assert_eq!(report.records, 2);
    }

    #[test]
    fn refuses_a_payload_that_is_not_an_object() {
        let dir = tempfile::tempdir().unwrap();
        let err = append_at(&dir.path().join("l"), rec("x", "[1]"), 1.0).unwrap_err();
        assert!(err.to_string().contains("must be a JSON object, got an array"), "{err}");
    }

    #[test]
    fn repo_relative_resolves_and_refuses_outside_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("app")).unwrap();
        assert_eq!(repo_relative(root, root, Path::new("app/new.rs")).unwrap(), "app/new.rs");
        assert_eq!(repo_relative(root, &root.join("app"), Path::new("../x/./y.rs")).unwrap(), "x/y.rs");
        let abs = root.join("app/z.rs");
        assert_eq!(repo_relative(root, Path::new("/"), &abs).unwrap(), "app/z.rs");
        let err = repo_relative(root, root, Path::new("../../etc/passwd")).unwrap_err();
        assert!(err.contains("outside the repository"), "{err}");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("app"), root.join("link")).unwrap();
            assert_eq!(repo_relative(root, root, Path::new("link/f.rs")).unwrap(), "app/f.rs");
        }
    }
}
