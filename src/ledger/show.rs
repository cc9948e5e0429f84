//! The ledger as a timeline: one line per tool call with its ISO time, tool,
//! digest and what it touched, the incident timeline a maintainer pastes
//! into a postmortem. Lines that are not records are shown as such (run
//! `verify` for the reasons); `show` itself judges nothing.

use std::io::{self, BufRead};

use serde::Serialize;

use super::lines::{LineReader, Next, ReadLimits};
use super::pyjson::{self, Value};
use super::record::Record;

/// Longest summary shown for a record without a path.
const SUMMARY_CHARS: usize = 100;

/// One timeline entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub(crate) line: u64,
    /// RFC 3339 UTC time with milliseconds; `null` for an unreadable line.
    pub(crate) time: Option<String>,
    pub(crate) ts: Option<f64>,
    pub(crate) tool: Option<String>,
    pub(crate) digest: Option<String>,
    /// The file an edit touched, or the path the payload names.
    pub path: Option<String>,
    /// A one-line summary: the command, or the payload in short.
    pub(crate) summary: String,
    /// v2 content hash after an edit (`"deleted"` when the edit removed the file).
    pub(crate) sha256: Option<String>,
    /// The mutation gate's decision recorded with the call (`"denied"`).
    pub(crate) decision: Option<String>,
    /// Set when the line is not a readable record.
    pub error: Option<String>,
}

/// Reads the timeline from a ledger stream into memory (tests, small
/// ledgers); the command line streams with [`for_each`] instead.
#[cfg(test)]
pub(crate) fn timeline<R: BufRead>(reader: R, limits: ReadLimits) -> io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for_each(reader, limits, |e| {
        out.push(e);
        Ok(())
    })?;
    Ok(out)
}

/// Calls `f` with each timeline entry in order, holding one line at a time:
/// memory stays bounded by the longest line, whatever the ledger's length.
pub fn for_each<R: BufRead>(
    reader: R,
    limits: ReadLimits,
    mut f: impl FnMut(Entry) -> io::Result<()>,
) -> io::Result<()> {
    let mut lines = LineReader::new(reader, limits);
    loop {
        let line = match lines.next_line()? {
            Next::Line(l) => l,
            Next::LimitReached { bytes_read } => {
                return f(unreadable(
                    0,
                    format!("stopped after {bytes_read} bytes: the ledger is over the size limit"),
                ));
            }
            Next::End => return Ok(()),
        };
        let n = line.number;
        let parsed = match line.bytes.as_deref().map(std::str::from_utf8) {
            None => Err(format!("line of {} bytes is over the size limit", line.len)),
            Some(Err(_)) => Err("not UTF-8 text".to_string()),
            Some(Ok(text)) => Record::parse(n, text).map_err(|e| e.message),
        };
        f(match parsed {
            Ok(r) => entry(&r),
            Err(e) => unreadable(n, e),
        })?;
    }
}

fn unreadable(line: u64, error: String) -> Entry {
    Entry {
        line,
        time: None,
        ts: None,
        tool: None,
        digest: None,
        path: None,
        summary: String::new(),
        sha256: None,
        decision: None,
        error: Some(error),
    }
}

fn entry(r: &Record) -> Entry {
    let path = r.edit_path().or_else(|| r.named_paths().into_iter().next()).map(str::to_string);
    let summary = match r.payload.get("command").and_then(Value::as_str) {
        Some(cmd) => one_line(cmd),
        None => one_line(&pyjson::dumps(&r.payload)),
    };
    Entry {
        line: r.line,
        time: iso_time(r.ts),
        ts: Some(r.ts),
        tool: Some(r.tool.clone()),
        digest: Some(r.digest.clone()),
        path,
        summary,
        sha256: r.sha256.as_ref().map(|s| s.clone().unwrap_or_else(|| "deleted".into())),
        decision: r.payload.get("decision").and_then(Value::as_str).map(str::to_string),
        error: None,
    }
}

/// Unix seconds as RFC 3339 with milliseconds; `None` before 1970 or past
/// what `SystemTime` holds.
pub(crate) fn iso_time(ts: f64) -> Option<String> {
    // Up to the year 9999, what RFC 3339 can write.
    if !(0.0..253_402_300_800.0).contains(&ts) {
        return None;
    }
    let t = std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs_f64(ts))?;
    Some(humantime::format_rfc3339_millis(t).to_string())
}

/// A summary on one line (controls and bidi overrides shown escaped, as
/// everywhere: `crate::text::one_line`), cut to `SUMMARY_CHARS`.
fn one_line(s: &str) -> String {
    crate::text::truncate(&crate::text::one_line(s.trim()), SUMMARY_CHARS - 1)
}

/// Renders the timeline as aligned text.
#[cfg(test)]
pub(crate) fn render_text(entries: &[Entry]) -> String {
    let tool_width = entries.iter().map(tool_width).max().unwrap_or(4);
    entries.iter().map(|e| render_line(e, tool_width)).collect()
}

/// The width an entry's tool name takes in the text timeline's tool column.
pub fn tool_width(e: &Entry) -> usize {
    e.tool.as_ref().map_or(4, |t| t.chars().count())
}

/// One entry as a line of the text timeline, its tool padded to `tool_width`.
pub fn render_line(e: &Entry, tool_width: usize) -> String {
    match &e.error {
        Some(err) => format!("{:>5}  (unreadable: {err}; run `retrygate ledger verify`)\n", e.line),
        None => {
            let mut what = match (&e.path, &e.sha256) {
                (Some(p), Some(h)) if h == "deleted" => format!("{p} (deleted)"),
                (Some(p), Some(h)) => format!("{p} (sha256 {})", &h[..h.len().min(12)]),
                (Some(p), None) => p.clone(),
                (None, _) => e.summary.clone(),
            };
            if let Some(d) = &e.decision {
                what.push_str(&format!(" [{d}]"));
            }
            format!(
                "{:>5}  {}  {:<tool_width$}  {}  {what}\n",
                e.line,
                e.time.as_deref().unwrap_or("(no time)               "),
                e.tool.as_deref().unwrap_or(""),
                e.digest.as_deref().unwrap_or(""),
            )
        }
    }
}

/// One entry as an element of the JSON timeline array, indented the way
/// `serde_json::to_string_pretty` indents a whole array.
pub fn render_json_element(e: &Entry) -> io::Result<String> {
    let pretty = serde_json::to_string_pretty(e).map_err(io::Error::other)?;
    Ok(pretty.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_time_tool_digest_and_what() {
        let text = concat!(
            "{\"ts\": 1764410004.625, \"tool\": \"edit_file\", \"payload\": {\"path\": \"clients/checkout.py\", \"bytes\": 1834}, \"digest\": \"1dd7502ccd19576a\"}\n",
            "{\"ts\": 1764410007.625, \"tool\": \"run_tests\", \"payload\": {\"command\": \"pytest -q\\ntests/unit\", \"exit_code\": 0}, \"digest\": \"886783c99c385ab6\"}\n",
            "not json\n",
            "{\"v\": 2, \"seq\": 4, \"ts\": 1764410008.0, \"tool\": \"Edit\", \"payload\": {\"path\": \"app/x.py\", \"decision\": \"denied\"}, \"digest\": \"0000000000000000\", \"prev\": null}\n",
        );
        let entries = timeline(text.as_bytes(), ReadLimits::default()).unwrap();
        assert_eq!(entries.len(), 4);
        assert_eq!(entries[0].time.as_deref(), Some("2025-11-29T09:53:24.625Z"));
        assert_eq!(entries[0].path.as_deref(), Some("clients/checkout.py"));
        assert_eq!(entries[1].summary, "pytest -q\\ntests/unit", "the line break shown as an escape");
        assert!(entries[2].error.as_deref().unwrap().contains("not valid JSON"));
        let shown = render_text(&entries);
        assert!(
            shown.contains("2025-11-29T09:53:24.625Z  edit_file  1dd7502ccd19576a  clients/checkout.py"),
            "{shown}"
        );
        assert!(shown.contains("    3  (unreadable: not valid JSON"), "{shown}");
        assert!(shown.contains("Edit       0000000000000000  app/x.py [denied]"), "{shown}");
    }

    #[test]
    fn streamed_json_is_what_a_whole_array_would_print() {
        let text = "{\"ts\": 1764410004.625, \"tool\": \"edit_file\", \"payload\": {\"path\": \"a.py\"}, \"digest\": \"1dd7502ccd19576a\"}\nnot json\n";
        let entries = timeline(text.as_bytes(), ReadLimits::default()).unwrap();
        let streamed: Vec<String> = entries.iter().map(|e| render_json_element(e).unwrap()).collect();
        let streamed = format!("[\n{}\n]", streamed.join(",\n"));
        assert_eq!(streamed, serde_json::to_string_pretty(&entries).unwrap());
    }

    #[test]
    fn long_payloads_are_cut_to_one_line() {
        let s = one_line(&"x".repeat(500));
        assert_eq!(s.chars().count(), SUMMARY_CHARS);
        assert!(s.ends_with('…'));
        assert_eq!(iso_time(-1.0), None);
        assert_eq!(iso_time(f64::INFINITY), None);
    }
}
