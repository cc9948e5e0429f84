//! Reads a ledger line by line in bounded memory.
//!
//! A ledger comes from an agent's working tree or a CI artifact, so it may be
//! anything: a 10 MB line, a 1 GB file, binary garbage with no newline at
//! all. [`LineReader`] never holds more than [`ReadLimits::max_line_bytes`] of one
//! line: a longer line is skipped (but still hashed, so the next v2 record's
//! `prev` link can be checked) and reported as too long; reading stops at
//! [`ReadLimits::max_ledger_bytes`].

use std::io::{self, BufRead};

use sha2::{Digest, Sha256};

/// Size bounds for reading a ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Longest line kept in memory and parsed.
    pub max_line_bytes: usize,
    /// Bytes read before verification stops with an error.
    pub max_ledger_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> ReadLimits {
        // A record is a few hundred bytes (payloads carry paths and hashes,
        // never file contents); a day-long agent session writes a few MB.
        ReadLimits { max_line_bytes: 1 << 20, max_ledger_bytes: 64 << 20 }
    }
}

/// One line of the ledger.
#[derive(Debug)]
pub(crate) struct Line {
    /// 1-based line number.
    pub(crate) number: u64,
    /// The line without its `\n`; `None` when it was longer than the limit.
    pub(crate) bytes: Option<Vec<u8>>,
    /// Length in bytes without the `\n`.
    pub(crate) len: u64,
    /// SHA-256 of the line without its `\n` (what a v2 `prev` names).
    pub(crate) sha256: [u8; 32],
    /// Whether the line ended with `\n` (the last line of an interrupted
    /// write does not).
    pub(crate) terminated: bool,
}

/// What the reader produced next.
#[derive(Debug)]
pub(crate) enum Next {
    Line(Line),
    /// The ledger is longer than `max_ledger_bytes`; nothing more is read.
    LimitReached {
        bytes_read: u64,
    },
    End,
}

/// Splits a byte stream into [`Line`]s within [`ReadLimits`].
pub(crate) struct LineReader<R> {
    inner: R,
    limits: ReadLimits,
    number: u64,
    bytes_read: u64,
    done: bool,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(inner: R, limits: ReadLimits) -> LineReader<R> {
        LineReader { inner, limits, number: 0, bytes_read: 0, done: false }
    }

    /// Reads the next line.
    pub(crate) fn next_line(&mut self) -> io::Result<Next> {
        if self.done {
            return Ok(Next::End);
        }
        let mut kept: Option<Vec<u8>> = Some(Vec::new());
        let mut hasher = Sha256::new();
        let mut len: u64 = 0;
        let mut started = false;
        loop {
            if self.bytes_read >= self.limits.max_ledger_bytes {
                self.done = true;
                return Ok(Next::LimitReached { bytes_read: self.bytes_read });
            }
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                self.done = true;
                if !started {
                    return Ok(Next::End);
                }
                self.number += 1;
                return Ok(Next::Line(Line {
                    number: self.number,
                    bytes: kept,
                    len,
                    sha256: hasher.finalize().into(),
                    terminated: false,
                }));
            }
            started = true;
            let budget = (self.limits.max_ledger_bytes - self.bytes_read).min(buf.len() as u64) as usize;
            let window = &buf[..budget];
            let (chunk, newline) = match window.iter().position(|&b| b == b'\n') {
                Some(i) => (&window[..i], true),
                None => (window, false),
            };
            hasher.update(chunk);
            len += chunk.len() as u64;
            if let Some(k) = kept.as_mut() {
                if k.len() + chunk.len() > self.limits.max_line_bytes {
                    kept = None;
                } else {
                    k.extend_from_slice(chunk);
                }
            }
            let consumed = chunk.len() + usize::from(newline);
            self.inner.consume(consumed);
            self.bytes_read += consumed as u64;
            if newline {
                self.number += 1;
                return Ok(Next::Line(Line {
                    number: self.number,
                    bytes: kept,
                    len,
                    sha256: hasher.finalize().into(),
                    terminated: true,
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(data: &[u8], limits: ReadLimits) -> Vec<Next> {
        let mut r = LineReader::new(io::BufReader::with_capacity(7, data), limits);
        let mut out = Vec::new();
        loop {
            let n = r.next_line().unwrap();
            let stop = !matches!(n, Next::Line(_));
            out.push(n);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn splits_lines_and_hashes_them_without_the_newline() {
        let out = read_all(b"abc\n\nxyz", ReadLimits::default());
        assert_eq!(out.len(), 4);
        let Next::Line(first) = &out[0] else { panic!("{out:?}") };
        assert_eq!(first.bytes.as_deref(), Some(&b"abc"[..]));
        assert_eq!(hex::encode(first.sha256), hex::encode(Sha256::digest(b"abc")));
        assert!(first.terminated);
        let Next::Line(last) = &out[2] else { panic!() };
        assert_eq!((last.number, last.terminated), (3, false));
        assert!(matches!(out[3], Next::End));
    }

    #[test]
    fn drops_the_content_of_a_long_line_but_keeps_its_hash_and_the_next_line() {
        let mut data = vec![b'x'; 100];
        data.extend_from_slice(b"\nok\n");
        let limits = ReadLimits { max_line_bytes: 10, max_ledger_bytes: 1000 };
        let out = read_all(&data, limits);
        let Next::Line(long) = &out[0] else { panic!() };
        assert!(long.bytes.is_none());
        assert_eq!(long.len, 100);
        assert_eq!(long.sha256, <[u8; 32]>::from(Sha256::digest(vec![b'x'; 100])));
        let Next::Line(ok) = &out[1] else { panic!() };
        assert_eq!(ok.bytes.as_deref(), Some(&b"ok"[..]));
    }

    #[test]
    fn stops_at_the_ledger_limit() {
        let data = b"0123456789\n0123456789\n0123456789\n";
        let out = read_all(data, ReadLimits { max_line_bytes: 100, max_ledger_bytes: 15 });
        assert!(matches!(out[0], Next::Line(_)));
        assert!(matches!(out[1], Next::LimitReached { bytes_read: 15 }), "{out:?}");
    }
}
