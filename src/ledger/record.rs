//! One ledger record: its two wire versions, how it is read from a line, and
//! which repository file (if any) it says was edited.
//!
//! v1 (written by existing agent tool layers):
//! `{"ts": 1764410004.625, "tool": "edit_file", "payload": {...}, "digest": "1dd7502ccd19576a"}`
//!
//! v2 (written by `retrygate ledger`): v1 plus `"v": 2`, `"seq"` (the record's
//! 1-based line number), `"prev"` (hex SHA-256 of the previous line's bytes
//! without its newline, `null` on line 1) and, for edits only, `"sha256"` (hex
//! SHA-256 of the file's content after the edit, `null` when the edit deleted
//! the file). An edit record names its file in `payload.path`.

use super::pyjson::{self, Value};

/// A record read from one ledger line.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) line: u64,
    /// 1 or 2.
    pub(crate) version: u8,
    pub(crate) ts: f64,
    pub(crate) tool: String,
    pub(crate) payload: Value,
    pub(crate) digest: String,
    /// v2 only.
    pub(crate) seq: Option<u64>,
    /// v2 only: `Some(None)` is the `null` of the first line.
    pub(crate) prev: Option<Option<String>>,
    /// v2 edits only: `Some(None)` means the edit deleted the file.
    pub(crate) sha256: Option<Option<String>>,
}

/// Why a line is not a record: a message and the fix.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecordError {
    pub(crate) message: String,
    pub(crate) fix: String,
}

fn bad(message: impl Into<String>, fix: &str) -> RecordError {
    RecordError { message: message.into(), fix: fix.to_string() }
}

const FIX_REGENERATE: &str =
    "ledger lines are written by tools, never by hand: restore this line from the agent's own log, or re-record the session with `retrygate ledger hook`";

const V2_KEYS: [&str; 8] = ["v", "seq", "ts", "tool", "payload", "digest", "prev", "sha256"];

impl Record {
    /// Parses one line (already known to be UTF-8) into a record, checking
    /// field types but not the digest or chain (see `verify`).
    pub(crate) fn parse(line: u64, text: &str) -> Result<Record, RecordError> {
        let value = pyjson::parse(text).map_err(|e| {
            bad(format!("not valid JSON: {} (column {})", e.message, e.column), FIX_REGENERATE)
        })?;
        let Value::Object(members) = &value else {
            return Err(bad(
                format!("a record must be a JSON object, found {}", value.type_name()),
                FIX_REGENERATE,
            ));
        };
        let version = match value.get("v") {
            None => 1,
            Some(v) if v.as_u64() == Some(2) => 2,
            Some(other) => {
                return Err(bad(
                    format!("unsupported ledger version {}", pyjson::dumps(other)),
                    "retrygate reads v1 (no \"v\" field) and v2 (\"v\": 2); upgrade retrygate or rewrite the ledger with `retrygate ledger append`",
                ))
            }
        };
        if version == 2 {
            if let Some((k, _)) = members.iter().find(|(k, _)| !V2_KEYS.contains(&k.as_str())) {
                return Err(bad(
                    format!("unknown field \"{k}\" in a v2 record"),
                    "v2 records carry only v, seq, ts, tool, payload, digest, prev and sha256; remove the field",
                ));
            }
        }
        let field = |name: &str| {
            value.get(name).ok_or_else(|| bad(format!("missing field \"{name}\""), FIX_REGENERATE))
        };
        let ts = field("ts")?;
        let ts = match ts {
            Value::Int(_) | Value::Float(_) => ts.as_f64().filter(|t| t.is_finite()).ok_or_else(|| {
                bad(format!("\"ts\" is not a finite number: {}", pyjson::dumps(ts)), FIX_REGENERATE)
            })?,
            other => {
                return Err(bad(
                    format!("\"ts\" must be a number (Unix time), found {}", other.type_name()),
                    FIX_REGENERATE,
                ))
            }
        };
        let tool = field("tool")?
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| bad("\"tool\" must be a non-empty string", FIX_REGENERATE))?
            .to_string();
        let payload = field("payload")?.clone();
        let digest =
            field("digest")?.as_str().ok_or_else(|| bad("\"digest\" must be a string", FIX_REGENERATE))?;
        if digest.len() != 16 || !digest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(bad(
                format!("\"digest\" must be 16 lower-case hex characters, found \"{digest}\""),
                FIX_REGENERATE,
            ));
        }
        let mut record = Record {
            line,
            version,
            ts,
            tool,
            payload,
            digest: digest.to_string(),
            seq: None,
            prev: None,
            sha256: None,
        };
        if version == 2 {
            record.seq = Some(
                field("seq")?
                    .as_u64()
                    .filter(|&s| s >= 1)
                    .ok_or_else(|| bad("\"seq\" must be a positive integer", FIX_REGENERATE))?,
            );
            record.prev = Some(match field("prev")? {
                Value::Null => None,
                Value::Str(s) if is_sha256_hex(s) => Some(s.clone()),
                other => {
                    return Err(bad(
                        format!(
                            "\"prev\" must be null or 64 lower-case hex characters, found {}",
                            pyjson::dumps(other)
                        ),
                        FIX_REGENERATE,
                    ))
                }
            });
            record.sha256 = match value.get("sha256") {
                None => None,
                Some(Value::Null) => Some(None),
                Some(Value::Str(s)) if is_sha256_hex(s) => Some(Some(s.clone())),
                Some(other) => {
                    return Err(bad(
                        format!(
                            "\"sha256\" must be null or 64 lower-case hex characters, found {}",
                            pyjson::dumps(other)
                        ),
                        FIX_REGENERATE,
                    ))
                }
            };
            if record.sha256.is_some() && record.edit_path().is_none() {
                return Err(bad(
                    "an edit record (with \"sha256\") must name its file in payload.path",
                    FIX_REGENERATE,
                ));
            }
        }
        Ok(record)
    }

    /// Every path the payload names (`path`, `file_path`, and the strings in
    /// `paths`), for the "no path escapes the repository" check.
    pub(crate) fn named_paths(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for key in ["path", "file_path"] {
            if let Some(p) = self.payload.get(key).and_then(Value::as_str) {
                out.push(p);
            }
        }
        if let Some(Value::Array(items)) = self.payload.get("paths") {
            out.extend(items.iter().filter_map(Value::as_str));
        }
        out
    }

    /// The repository file this record says was changed, if it is an edit.
    ///
    /// v2: a record with a `sha256` field, naming `payload.path`. v1 has no
    /// marker, so an edit is a record whose tool name says it writes
    /// (`edit`, `write`, `create`, `patch`, `delete`, `remove`, `rename`,
    /// `move`, `replace`) and whose payload names one file.
    pub(crate) fn edit_path(&self) -> Option<&str> {
        let path =
            || self.payload.get("path").or_else(|| self.payload.get("file_path")).and_then(Value::as_str);
        match self.version {
            2 => self.sha256.as_ref().and(path()),
            _ => {
                let tool = self.tool.to_ascii_lowercase();
                const WRITES: [&str; 9] =
                    ["edit", "write", "create", "patch", "delete", "remove", "rename", "move", "replace"];
                if WRITES.iter().any(|w| tool.contains(w)) {
                    path()
                } else {
                    None
                }
            }
        }
    }
}

pub(crate) fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Checks that a recorded path stays inside the repository and returns it
/// normalised (`./a/../b` is `b`); the error says why it does not.
///
/// Only `/` separates components in the result: git paths use `/` on every
/// platform, and on Unix `src\client.rs` is a file of its own, so a record
/// naming it does not explain `src/client.rs`. For the escape checks a `\`
/// counts as a separator too, so `..\x` and `C:\x` are still refused.
pub(crate) fn normalize_repo_path(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    if path.contains('\0') {
        return Err("the path contains a NUL byte".into());
    }
    let p = path.replace('\\', "/");
    let drive = p.len() >= 2 && p.as_bytes()[1] == b':' && p.as_bytes()[0].is_ascii_alphabetic();
    if p.starts_with('/') || drive {
        return Err("the path is absolute; ledgers record paths relative to the repository root".into());
    }
    if normalize_parts(&p, '/').is_none() {
        return Err("the path escapes the repository with '..'".into());
    }
    // A directory reference such as "clients/" or "." is not a file but
    // does not escape either: it normalises to "".
    normalize_parts(path, '/')
        .map(|parts| parts.join("/"))
        .ok_or_else(|| "the path escapes the repository with '..'".into())
}

/// The components of `p` split on `sep`, with `.` dropped and `..` applied;
/// `None` when `..` climbs above the start.
fn normalize_parts(p: &str, sep: char) -> Option<Vec<&str>> {
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split(sep) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_v1_fixture_line() {
        let r = Record::parse(3, r#"{"ts": 1764410004.625, "tool": "edit_file", "payload": {"path": "clients/checkout.py", "bytes": 1834}, "digest": "1dd7502ccd19576a"}"#).unwrap();
        assert_eq!(
            (r.version, r.tool.as_str(), r.edit_path()),
            (1, "edit_file", Some("clients/checkout.py"))
        );
        let read = Record::parse(
            1,
            r#"{"ts": 1, "tool": "read_file", "payload": {"path": "a"}, "digest": "b408f563a785e5af"}"#,
        )
        .unwrap();
        assert_eq!(read.edit_path(), None, "reads explain nothing");
    }

    #[test]
    fn reads_a_v2_line() {
        let line = format!(
            r#"{{"v": 2, "seq": 2, "ts": 5, "tool": "Write", "payload": {{"path": "a.rs"}}, "digest": "0123456789abcdef", "prev": "{}", "sha256": null}}"#,
            "a".repeat(64)
        );
        let r = Record::parse(2, &line).unwrap();
        assert_eq!((r.version, r.seq, r.edit_path()), (2, Some(2), Some("a.rs")));
        assert_eq!(r.sha256, Some(None));
    }

    #[test]
    fn names_what_is_wrong_with_a_bad_record() {
        let cases = [
            ("[1]", "must be a JSON object"),
            (r#"{"tool": "x", "payload": {}, "digest": "0123456789abcdef"}"#, "missing field \"ts\""),
            (
                r#"{"ts": "now", "tool": "x", "payload": {}, "digest": "0123456789abcdef"}"#,
                "\"ts\" must be a number",
            ),
            (
                r#"{"ts": 1, "tool": "", "payload": {}, "digest": "0123456789abcdef"}"#,
                "\"tool\" must be a non-empty string",
            ),
            (r#"{"ts": 1, "tool": "x", "payload": {}, "digest": "XYZ"}"#, "16 lower-case hex"),
            (
                r#"{"v": 3, "ts": 1, "tool": "x", "payload": {}, "digest": "0123456789abcdef"}"#,
                "unsupported ledger version 3",
            ),
            (
                r#"{"v": 2, "seq": 0, "ts": 1, "tool": "x", "payload": {}, "digest": "0123456789abcdef", "prev": null}"#,
                "\"seq\" must be a positive integer",
            ),
            (
                r#"{"v": 2, "seq": 1, "ts": 1, "tool": "x", "payload": {}, "digest": "0123456789abcdef", "prev": "zz"}"#,
                "\"prev\" must be null",
            ),
            (
                r#"{"v": 2, "seq": 1, "ts": 1, "tool": "x", "payload": {}, "digest": "0123456789abcdef", "prev": null, "extra": 1}"#,
                "unknown field \"extra\"",
            ),
            (
                r#"{"v": 2, "seq": 1, "ts": 1, "tool": "x", "payload": {}, "digest": "0123456789abcdef", "prev": null, "sha256": null}"#,
                "must name its file",
            ),
            (r#"{"ts": 1, "tool": "x", "payload": "#, "not valid JSON"),
            (
                r#"{"ts": NaN, "tool": "x", "payload": {}, "digest": "0123456789abcdef"}"#,
                "not a finite number",
            ),
        ];
        for (line, want) in cases {
            let err = Record::parse(1, line).unwrap_err();
            assert!(err.message.contains(want), "{line}: {}", err.message);
            assert!(!err.fix.is_empty());
        }
    }

    #[test]
    fn path_normalisation_rejects_escapes() {
        assert_eq!(normalize_repo_path("./a/../b/c.py").unwrap(), "b/c.py");
        assert_eq!(normalize_repo_path("clients/").unwrap(), "clients");
        // A backslash is part of the name, not a separator: this record
        // names another file than src/client.rs.
        assert_eq!(normalize_repo_path("src\\client.rs").unwrap(), "src\\client.rs");
        assert_eq!(normalize_repo_path("a\\..\\b").unwrap(), "a\\..\\b");
        for (p, want) in [
            ("/etc/passwd", "absolute"),
            ("C:\\x", "absolute"),
            ("../x", "escapes"),
            ("a/../../x", "escapes"),
            ("..\\x", "escapes"),
            ("a\\..\\..\\x", "escapes"),
            ("", "empty"),
        ] {
            let err = normalize_repo_path(p).unwrap_err();
            assert!(err.contains(want), "{p}: {err}");
        }
    }
}
