//! Reading untrusted files without trusting their size.
//!
//! A pull request, an event payload or a downloaded artifact may name a FIFO
//! (which blocks forever), a device such as `/dev/zero` (whose metadata says
//! 0 bytes and which never ends) or simply a huge file. Every file retrygate
//! reads from such a source goes through [`read_regular`]: it refuses what is
//! not a regular file *before* opening it for reading (opening a FIFO blocks),
//! and reads at most `limit` bytes whatever the metadata claims.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a bounded read failed. Its `Display` is one line that names the file
/// and says what to do.
#[derive(Debug)]
pub enum BoundedReadError {
    /// The file does not exist.
    NotFound(PathBuf),
    /// A FIFO, socket, device or directory: never read, because it may block
    /// or never end.
    NotRegular {
        /// The file as the caller named it.
        path: PathBuf,
        /// What it is instead ("a FIFO", "a directory", ...).
        what: &'static str,
    },
    /// More than `limit` bytes.
    TooLarge {
        /// The file as the caller named it.
        path: PathBuf,
        /// The bound in bytes that it went past.
        limit: u64,
    },
    /// Not valid UTF-8 (only from [`read_regular_string`]).
    NotUtf8 {
        /// The file as the caller named it.
        path: PathBuf,
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// Any other I/O error.
    Io {
        /// The file as the caller named it.
        path: PathBuf,
        /// What the operating system said.
        error: std::io::Error,
    },
}

impl BoundedReadError {
    /// True when the file simply does not exist (callers often fall back to
    /// a default then).
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, BoundedReadError::NotFound(_))
    }
}

impl fmt::Display for BoundedReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundedReadError::NotFound(p) => write!(f, "{}: no such file", p.display()),
            BoundedReadError::NotRegular { path, what } => write!(
                f,
                "{}: is a {what}, not a regular file; retrygate reads only regular files (a {what} may block or never end)",
                path.display()
            ),
            BoundedReadError::TooLarge { path, limit } => write!(
                f,
                "{}: larger than the {} bytes retrygate reads from such a file; it is refused, not truncated",
                path.display(),
                limit
            ),
            BoundedReadError::NotUtf8 { path, offset } => {
                write!(f, "{}: not UTF-8 text (invalid byte at offset {offset})", path.display())
            }
            BoundedReadError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for BoundedReadError {}

/// What kind of non-regular file `meta` describes, for messages (also used
/// by the ledger hook, which hashes a file it must not block on).
pub(crate) fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else {
        "special file"
    }
}

/// Checks that `path` (after following symlinks) is a regular file, without
/// opening it.
pub fn ensure_regular(path: &Path) -> Result<std::fs::Metadata, BoundedReadError> {
    let meta = std::fs::metadata(path).map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            BoundedReadError::NotFound(path.to_path_buf())
        } else {
            BoundedReadError::Io { path: path.to_path_buf(), error }
        }
    })?;
    if !meta.is_file() {
        return Err(BoundedReadError::NotRegular { path: path.to_path_buf(), what: kind_of(&meta) });
    }
    Ok(meta)
}

/// Reads a regular file of at most `limit` bytes.
pub(crate) fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, BoundedReadError> {
    let meta = ensure_regular(path)?;
    if meta.len() > limit {
        return Err(BoundedReadError::TooLarge { path: path.to_path_buf(), limit });
    }
    let io = |error| BoundedReadError::Io { path: path.to_path_buf(), error };
    let file = std::fs::File::open(path).map_err(io)?;
    // The file may have been swapped or grown since the metadata was read:
    // the limit is enforced on what is actually read.
    let mut buf = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut buf).map_err(io)?;
    if buf.len() as u64 > limit {
        return Err(BoundedReadError::TooLarge { path: path.to_path_buf(), limit });
    }
    Ok(buf)
}

/// [`read_regular`] for UTF-8 text.
pub(crate) fn read_regular_string(path: &Path, limit: u64) -> Result<String, BoundedReadError> {
    let bytes = read_regular(path, limit)?;
    String::from_utf8(bytes).map_err(|e| BoundedReadError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Reads at most `limit` bytes from a stream (standard input, a socket);
/// more is an error rather than a truncation.
pub fn read_stream<R: Read>(reader: R, limit: u64, name: &str) -> Result<Vec<u8>, BoundedReadError> {
    let mut buf = Vec::new();
    reader
        .take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|error| BoundedReadError::Io { path: PathBuf::from(name), error })?;
    if buf.len() as u64 > limit {
        return Err(BoundedReadError::TooLarge { path: PathBuf::from(name), limit });
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "hello").unwrap();
        assert_eq!(read_regular_string(&p, 5).unwrap(), "hello");
    }

    #[test]
    fn refuses_a_file_over_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "hello!").unwrap();
        let err = read_regular(&p, 5).unwrap_err();
        assert!(err.to_string().contains("larger than the 5 bytes"), "{err}");
    }

    #[test]
    fn refuses_a_device_whose_metadata_says_zero_bytes() {
        let err = read_regular(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(err.to_string().contains("character device, not a regular file"), "{err}");
    }

    #[test]
    fn refuses_a_fifo_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_regular(&p, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("is a FIFO"), "{err}");
    }

    #[test]
    fn refuses_a_directory_and_reports_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_regular(dir.path(), 10).unwrap_err().to_string().contains("is a directory"));
        let missing = read_regular(&dir.path().join("nope"), 10).unwrap_err();
        assert!(missing.is_not_found());
        assert!(missing.to_string().ends_with("nope: no such file"));
    }

    #[test]
    fn a_stream_over_the_limit_is_an_error() {
        let err = read_stream(&b"abcdef"[..], 3, "standard input").unwrap_err();
        assert!(err.to_string().starts_with("standard input: larger than the 3 bytes"), "{err}");
        assert_eq!(read_stream(&b"abc"[..], 3, "stdin").unwrap(), b"abc");
    }
}
