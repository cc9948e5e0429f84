//! Coverage: which operations the change's retry findings are about, and
//! whether the replay called them (docs/replay.md, "Coverage").
//!
//! A replay can pass every check and still say nothing about the change: a
//! harness that calls `GET /cart` shows nothing about the retry a pull
//! request raised around `POST /refunds`. So every changed retry is named
//! as an operation where the scan's evidence allows it, and matched against
//! the operations the replay's clients called (the report's timelines).
//!
//! The scan records no structured method and URL on a finding, so the
//! operation is derived here from what the finding does carry, by pure
//! functions (no I/O; the gate hands in the head's text):
//!
//! 1. its message, when it names one (`POST /refunds`);
//! 2. else the head's source at the finding: its lines, and the block they
//!    open (the following lines indented deeper, up to
//!    [`MAX_BLOCK_LINES`]), so a finding on a retry loop's header reads the
//!    request inside the loop. There an HTTP method (a call such as
//!    `.post(`, `requests.get(`, `http.Get(`, or a token such as
//!    `Method::POST`, `"PATCH"`, `http.MethodPut`) is paired with the
//!    nearest string literal that holds a URL path (`"https://host/refunds"`,
//!    `"/refunds/{id}"`, `f"{BASE}/refunds"`: a host or a leading
//!    placeholder is the base URL and is dropped);
//! 3. when the message names methods (`wraps a POST request`), only
//!    operations of those methods are kept.
//!
//! What none of this names is listed by its `path:line` as "an operation the
//! replay could not be matched to", never dropped. A named operation is
//! called when the replay called the same method on a path that ends with
//! the same segments (a `{id}` of the code matches any one segment): the base
//! URL a client is configured with is usually unknown to the scan.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Kind, Severity};

/// How far past a finding's own lines its block is read: a retry loop's
/// body, not the rest of a long function.
pub(crate) const MAX_BLOCK_LINES: usize = 40;

/// Lines of a finding's own range that are read (a finding may span a
/// whole function).
pub(crate) const MAX_RANGE_LINES: usize = 40;

/// Bytes of one window that are read: a minified line must not make every
/// finding on it cost a megabyte of matching.
pub(crate) const MAX_WINDOW_BYTES: usize = 8 << 10;

/// Methods, and URL literals, paired in one window: a retry block holds a
/// few requests, and the pairing is quadratic in these.
pub(crate) const MAX_EVENTS: usize = 64;

/// Retry findings matched against the replay; the rest are counted in one
/// line. A change with more has bigger problems than coverage, and the
/// verdict must not take minutes on a generated file.
pub(crate) const MAX_FINDINGS: usize = 2000;

/// Operations of the replay matched against (a report is the pull
/// request's file, and could list millions); past it, an operation may be
/// said to be never called, which is the side that blocks.
pub(crate) const MAX_CALLED: usize = 2000;

/// Operations the one-line "The replay called ..." names.
const CALLED_SHOWN: usize = 10;

/// The methods and URL paths read at each finding's lines, by (file,
/// line, end line).
type Windows<'f> = HashMap<(&'f str, u32, u32), Vec<(String, String)>>;

/// How far (in bytes) a method may be from the URL it is paired with: the
/// same call, written over a few lines.
const MAX_PAIR_DISTANCE: usize = 200;

/// Operations or locations a one-line reason names before "and N more".
const NAMED_IN_REASON: usize = 3;

/// The methods an operation may have.
const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// A call such as `.post(`, `requests.get(`, Go's `http.Get(`.
static CALL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\b(get|post|put|patch|delete|head|options)\s*\(").ok());
/// A method named as a token: `Method::POST`, `"PATCH"`, `method: 'PUT'`,
/// Go's `http.MethodPost`.
static TOKEN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\b|\bMethod(Get|Post|Put|Patch|Delete|Head|Options)\b",
    )
    .ok()
});
/// A string literal on one line: "...", '...' or `...`.
static LITERAL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`\n]*`"#).ok());
/// An operation written out in a message: `POST /refunds`.
static NAMED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (/[A-Za-z0-9_\-./{}:~%$]*)").ok()
});

/// One operation (or, unnamed, one place) whose retry the change touched,
/// and whether the replay called it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ChangedOperation {
    /// `METHOD /normalised/path`; `None` when the scan's evidence names no
    /// operation (then `locations` has the one place).
    pub(crate) operation: Option<String>,
    /// `path:line` of each finding about it.
    pub(crate) locations: Vec<String>,
    /// The kinds of those findings.
    pub(crate) kinds: Vec<Kind>,
    /// Whether the replay called it (never, for an unnamed one).
    pub(crate) exercised: bool,
}

/// What a coverage line says, in the order the lines are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LineKind {
    /// A named operation the replay never called.
    NeverCalled,
    /// A changed retry whose operation the scan could not name.
    Unmatched,
    /// A named operation the replay called.
    Called,
}

/// What the replay covered of the change (`evidence.replay.coverage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Coverage {
    /// `replay.require_coverage` of the base config: an unexercised named
    /// operation blocks an agent's pull request (`replay-coverage`).
    pub(crate) required: bool,
    /// The operations the replay's clients called, recomputed from the
    /// report's timelines.
    pub(crate) called: Vec<String>,
    /// Every operation whose retry the change touched.
    pub(crate) changed: Vec<ChangedOperation>,
    /// Retry findings past [`MAX_FINDINGS`], not matched.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) not_read: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Coverage {
    /// Matches the change's retry findings against the operations the
    /// replay called. `head_text` gives a head file's text by path.
    pub(crate) fn of<'a>(
        findings: &[Finding],
        head_text: &dyn Fn(&str) -> Option<&'a str>,
        mut called: Vec<String>,
        required: bool,
    ) -> Coverage {
        called.truncate(MAX_CALLED);
        let retries: Vec<&Finding> = findings.iter().filter(|f| is_changed_retry(f)).collect();
        let mut not_read = retries.len().saturating_sub(MAX_FINDINGS);
        // Each file is split into lines once, and findings on the same
        // lines are read once.
        let mut files: HashMap<&str, Option<Vec<&'a str>>> = HashMap::new();
        let mut windows: Windows<'_> = HashMap::new();
        let mut changed = Changed::default();
        for f in retries.into_iter().take(MAX_FINDINGS) {
            let lines =
                files.entry(&f.path).or_insert_with(|| head_text(&f.path).map(|t| t.lines().collect()));
            let pairs = windows.entry((&f.path, f.line, f.end_line)).or_insert_with(|| {
                lines.as_deref().map(|l| pairs_in(&window(l, f.line, f.end_line))).unwrap_or_default()
            });
            let ops = operations_of(f, pairs);
            if ops.is_empty() {
                changed.add(None, f);
            }
            for op in ops {
                changed.add(Some(op), f);
            }
        }
        not_read += changed.dropped;
        let mut changed = changed.list;
        // Split once: every changed operation is matched against all of them.
        let split_called: Vec<(&str, Vec<&str>)> = called.iter().filter_map(|e| split(e)).collect();
        for c in &mut changed {
            c.exercised = c
                .operation
                .as_deref()
                .and_then(split)
                .is_some_and(|op| split_called.iter().any(|e| split_matches(&op, e)));
        }
        Coverage { required, called, changed, not_read }
    }

    /// The named operations the replay did not call.
    pub(crate) fn unexercised(&self) -> impl Iterator<Item = &ChangedOperation> {
        self.changed.iter().filter(|c| c.operation.is_some() && !c.exercised)
    }

    /// One line per changed operation, for the comment and the terminal:
    /// those the replay never called, those it could not be matched to, and
    /// those it called, each with what it is.
    pub(crate) fn lines(&self) -> Vec<(LineKind, String)> {
        let mut out = Vec::new();
        for c in &self.changed {
            let whose = format!("whose retry this change {}", phrases(&c.kinds));
            let at = list(&c.locations, NAMED_IN_REASON);
            out.push(match (&c.operation, c.exercised) {
                (Some(op), false) => {
                    (LineKind::NeverCalled, format!("the replay never called {op} ({at}), {whose}"))
                }
                (Some(op), true) => (LineKind::Called, format!("the replay called {op} ({at}), {whose}")),
                (None, _) => (
                    LineKind::Unmatched,
                    format!(
                        "an operation the replay could not be matched to ({at}), {whose}: the scan names no HTTP method and URL path there"
                    ),
                ),
            });
        }
        if self.not_read > 0 {
            out.push((
                LineKind::Unmatched,
                format!(
                    "{} more changed {} not matched: the gate matches the first {MAX_FINDINGS}",
                    self.not_read,
                    if self.not_read == 1 { "retry was" } else { "retries were" }
                ),
            ));
        }
        // What needs a look first.
        out.sort_by_key(|(k, _)| *k);
        out
    }

    /// `GET /cart, POST /orders`, or `nothing` when no request arrived.
    pub(crate) fn called_list(&self) -> String {
        if self.called.is_empty() {
            "nothing (no request reached the server)".to_string()
        } else {
            list(&self.called, CALLED_SHOWN)
        }
    }

    /// The one-line reason when a named operation was not called, or
    /// `None`: "the replay never called 2 operations whose retry this
    /// change touched: POST /refunds (src/refunds.rs:40), ...".
    pub(crate) fn reason(&self) -> Option<String> {
        let missing: Vec<String> = self
            .unexercised()
            .filter_map(|c| c.operation.as_ref().map(|op| format!("{op} ({})", list(&c.locations, 1))))
            .collect();
        if missing.is_empty() {
            return None;
        }
        Some(format!(
            "the replay never called {} whose retry this change touched: {}",
            crate::text::plural(missing.len(), "operation", "operations"),
            list(&missing, NAMED_IN_REASON)
        ))
    }
}

/// A finding about a retry's behaviour, which names an operation the
/// replay should have run: not the policy's own (the gate's config, a
/// protected path), not a note.
fn is_changed_retry(f: &Finding) -> bool {
    f.severity >= Severity::Warning && !matches!(f.kind, Kind::GateConfigChanged | Kind::ProtectedPath)
}

/// The changed operations in the order they were found, with an index by
/// key (linear in the findings, whatever their number).
#[derive(Default)]
struct Changed {
    list: Vec<ChangedOperation>,
    /// `op:METHOD /path` or `at:path:line` -> index in `list`.
    index: HashMap<String, usize>,
    /// Operations past the cap on the list.
    dropped: usize,
}

impl Changed {
    fn add(&mut self, op: Option<String>, f: &Finding) {
        // Each finding names at most MAX_EVENTS operations; the list stays
        // within what the matching below can afford.
        if self.list.len() >= MAX_FINDINGS && !self.index.is_empty() {
            let known = match &op {
                Some(o) => self.index.contains_key(&format!("op:{o}")),
                None => false,
            };
            if !known {
                self.dropped += 1;
                return;
            }
        }
        // The first line only: a loop's whole range says less than where it starts.
        let loc = if f.line == 0 { f.path.clone() } else { format!("{}:{}", f.path, f.line) };
        // Named operations are one entry however many findings name them; an
        // unnamed one is its place.
        let key = match &op {
            Some(o) => format!("op:{o}"),
            None => format!("at:{loc}"),
        };
        match self.index.get(&key) {
            Some(&i) => {
                let c = &mut self.list[i];
                // Shown lists are short; the JSON keeps a bounded few.
                if !c.locations.contains(&loc) && c.locations.len() < MAX_EVENTS {
                    c.locations.push(loc);
                }
                if !c.kinds.contains(&f.kind) {
                    c.kinds.push(f.kind);
                }
            }
            None => {
                self.index.insert(key, self.list.len());
                self.list.push(ChangedOperation {
                    operation: op,
                    locations: vec![loc],
                    kinds: vec![f.kind],
                    exercised: false,
                });
            }
        }
    }
}

/// `a, b, c and 2 more`.
fn list(items: &[String], shown: usize) -> String {
    let head: Vec<&str> = items.iter().take(shown).map(String::as_str).collect();
    match items.len().saturating_sub(shown) {
        0 => head.join(", "),
        more => format!("{} and {more} more", head.join(", ")),
    }
}

/// What each kind did to the retry, after "whose retry this change".
fn phrase(k: Kind) -> &'static str {
    match k {
        Kind::RetryCountRaised => "raised",
        Kind::JitterRemoved => "stripped of jitter",
        Kind::RetryNonIdempotent => "extended to a write without an Idempotency-Key",
        Kind::TimeoutLowered => "gave a lower timeout",
        Kind::RetryAfterIgnored => "made ignore Retry-After",
        Kind::RetryUnbounded => "made unbounded",
        Kind::RetryAmplified => "multiplied across layers",
        Kind::RetryOverLimit => "left over limits.max_attempts",
        Kind::SettingDiscarded => "left with a discarded setting",
        Kind::RetryWithoutJitter => "added without jitter",
        Kind::GateConfigChanged | Kind::ProtectedPath => "changed",
    }
}

/// `raised, stripped of jitter and made unbounded`.
fn phrases(kinds: &[Kind]) -> String {
    let all: Vec<&str> = kinds.iter().map(|k| phrase(*k)).collect();
    match all.as_slice() {
        [] => "changed".to_string(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The operations one finding is about, named as the replay names them;
/// `pairs` are the methods and URL paths read at it in the head's source.
pub(crate) fn operations_of(f: &Finding, pairs: &[(String, String)]) -> Vec<String> {
    // What the scan wrote itself comes first.
    let Some(named) = NAMED.as_ref() else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for c in named.captures_iter(&f.message) {
        if let Some(op) = c.get(2).and_then(|p| path_of(p.as_str())).map(|p| operation(&c[1], &p)) {
            push_unique(&mut out, op);
        }
    }
    if !out.is_empty() {
        return out;
    }
    let methods = methods_named(&f.message);
    for (method, path) in pairs {
        if methods.is_empty() || methods.contains(method) {
            push_unique(&mut out, operation(method, path));
        }
    }
    out
}

fn push_unique(out: &mut Vec<String>, op: String) {
    if !out.contains(&op) {
        out.push(op);
    }
}

/// `METHOD /path` with the replay's normalisation (identifiers read as
/// `{id}`), so the two sides compare equal.
fn operation(method: &str, path: &str) -> String {
    crate::replay::compare::operation_name(method, path)
}

/// The methods a message names as words (`a POST request`).
fn methods_named(message: &str) -> Vec<String> {
    let Some(token) = TOKEN.as_ref() else { return Vec::new() };
    let mut out = Vec::new();
    for m in token.find_iter(message) {
        let method = method_of(m.as_str());
        if !out.contains(&method) {
            out.push(method);
        }
    }
    out
}

/// `MethodPost` -> `POST`, `post` -> `POST`.
fn method_of(word: &str) -> String {
    word.strip_prefix("Method").unwrap_or(word).to_ascii_uppercase()
}

/// The finding's lines (at most [`MAX_RANGE_LINES`]) and the block they
/// open: the lines after them indented deeper than the first (blank lines
/// too), at most [`MAX_BLOCK_LINES`] of them; at most [`MAX_WINDOW_BYTES`]
/// in all. Line 0 (the whole file) has none.
fn window(lines: &[&str], line: u32, end_line: u32) -> String {
    let start = line as usize;
    let end = (end_line.max(line) as usize).min(lines.len()).min(start.saturating_add(MAX_RANGE_LINES));
    if start == 0 || start > lines.len() {
        return String::new();
    }
    let indent = |l: &str| l.len() - l.trim_start().len();
    let first = indent(lines[start - 1]);
    let mut stop = end;
    while stop < lines.len() && stop < end + MAX_BLOCK_LINES {
        let l = lines[stop];
        if !l.trim().is_empty() && indent(l) <= first {
            break;
        }
        stop += 1;
    }
    let mut text = lines[start - 1..stop].join("\n");
    if text.len() > MAX_WINDOW_BYTES {
        let mut cut = MAX_WINDOW_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Event {
    /// `.post(`: its URL follows.
    Call,
    /// `Method::POST`: its URL may come before or after.
    Token,
}

/// Each HTTP method in `text` paired with the URL path of its request.
fn pairs_in(text: &str) -> Vec<(String, String)> {
    let (Some(call), Some(token), Some(literal)) = (CALL.as_ref(), TOKEN.as_ref(), LITERAL.as_ref()) else {
        return Vec::new();
    };
    // (start, end, method, kind)
    let mut methods: Vec<(usize, usize, String, Event)> = Vec::new();
    for c in call.captures_iter(text).take(MAX_EVENTS) {
        if let (Some(all), Some(m)) = (c.get(0), c.get(1)) {
            methods.push((all.start(), all.end(), method_of(m.as_str()), Event::Call));
        }
    }
    for m in token.find_iter(text).take(MAX_EVENTS) {
        // `GET(` is already a call.
        if !methods.iter().any(|(s, e, _, _)| m.start() >= *s && m.start() < *e) {
            methods.push((m.start(), m.end(), method_of(m.as_str()), Event::Token));
        }
    }
    methods.sort_by_key(|m| m.0);
    // (start, end, path)
    let paths: Vec<(usize, usize, String)> = literal
        .find_iter(text)
        .filter_map(|l| {
            let s = l.as_str();
            let inner = s.get(1..s.len().saturating_sub(1))?;
            path_of(inner).map(|p| (l.start(), l.end(), p))
        })
        .take(MAX_EVENTS)
        .collect();
    let mut used = vec![false; paths.len()];
    let mut out = Vec::new();
    for (i, (start, end, method, kind)) in methods.iter().enumerate() {
        let next_method = methods.get(i + 1).map_or(usize::MAX, |m| m.0);
        let prev_method = i.checked_sub(1).and_then(|p| methods.get(p)).map_or(0, |m| m.1);
        let after = paths.iter().enumerate().find(|(j, (s, _, _))| {
            !used[*j] && *s >= *end && *s < next_method && s - end <= MAX_PAIR_DISTANCE
        });
        // `fetch("/refunds", {method: "POST"})`: a token's URL may come first.
        let before = || {
            paths.iter().enumerate().rev().find(|(j, (_, e, _))| {
                !used[*j] && *e <= *start && *e >= prev_method && start - e <= MAX_PAIR_DISTANCE
            })
        };
        let found = match kind {
            Event::Call => after,
            Event::Token => after.or_else(before),
        };
        if let Some((j, (_, _, path))) = found {
            used[j] = true;
            out.push((method.clone(), path.clone()));
        }
    }
    out
}

/// The URL path a string literal holds, or `None`: `https://host/a/b?q` ->
/// `/a/b`; `/a/{id}`; `{base}/a`, `${BASE}/a`, `%s/a` -> `/a` (the base URL
/// is not known here). Placeholders in the path become `{id}`.
fn path_of(lit: &str) -> Option<String> {
    let s = lit.trim();
    let rest = if let Some(i) = s.find("://") {
        let after = &s[i + 3..];
        after.find('/').map_or("/", |j| &after[j..])
    } else if s.starts_with('/') {
        s
    } else {
        // A base URL as a placeholder, then the path.
        let end = if s.starts_with('{') || s.starts_with("${") {
            s.find('}').map(|i| i + 1)
        } else if s.starts_with('%') {
            Some(2.min(s.len()))
        } else {
            None
        }?;
        let rest = s.get(end..)?;
        if !rest.starts_with('/') {
            return None;
        }
        rest
    };
    let path = rest.split(['?', '#']).next().unwrap_or("");
    // A comment or a file name is not a URL path.
    if path.starts_with("//")
        || !path.chars().all(|c| c.is_ascii_alphanumeric() || "/-._~{}:$%<>@+".contains(c))
    {
        return None;
    }
    let segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let placeholder = s.contains(['{', '$', '%', '<']) || s.starts_with(':');
            if placeholder {
                "{id}".to_string()
            } else {
                s.to_string()
            }
        })
        .collect();
    Some(format!("/{}", segs.join("/")))
}

/// `POST /a/b` -> (`POST`, [`a`, `b`]).
fn split(op: &str) -> Option<(&str, Vec<&str>)> {
    let (m, p) = op.split_once(' ')?;
    Some((m, p.split('/').filter(|s| !s.is_empty()).collect()))
}

/// Whether the replay's `called` operation is the change's `changed` one:
/// the same method, and a path that ends with the changed path's segments
/// (the changed side's `{id}` matches any one segment; the root matches
/// only the root).
fn split_matches((cm, cp): &(&str, Vec<&str>), (em, ep): &(&str, Vec<&str>)) -> bool {
    if cm != em || !METHODS.contains(cm) {
        return false;
    }
    if cp.is_empty() {
        return ep.is_empty();
    }
    if ep.len() < cp.len() {
        return false;
    }
    let tail = &ep[ep.len() - cp.len()..];
    // The changed side's `{id}` is a placeholder of the code; the called
    // side's is a number or a UUID the client sent, which a literal segment
    // of the code is not.
    cp.iter().zip(tail).all(|(c, e)| c == e || *c == "{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operation_matches(changed: &str, called: &str) -> bool {
        match (split(changed), split(called)) {
            (Some(c), Some(e)) => split_matches(&c, &e),
            _ => false,
        }
    }

    fn finding(kind: Kind, line: u32, message: &str) -> Finding {
        Finding::new(kind, "rust/x", "src/refunds.rs", line).message(message)
    }

    /// [`operations_of`] with the pairs read from `text` at the finding.
    fn ops(f: &Finding, text: Option<&str>) -> Vec<String> {
        let lines: Vec<&str> = text.map(|t| t.lines().collect()).unwrap_or_default();
        operations_of(f, &pairs_in(&window(&lines, f.line, f.end_line)))
    }

    const LOOP: &str = "const MAX_RETRIES: u32 = 6;\n\nfn refund(c: &Client, id: u64) {\n    for attempt in 0..=MAX_RETRIES {\n        match c.post(format!(\"{}/refunds/{id}\", BASE)).send() {\n            Ok(r) => return,\n            Err(_) => sleep(D),\n        }\n    }\n    let cart = c.get(\"https://shop.example/cart\").send();\n}\n";

    #[test]
    fn a_finding_on_a_loop_header_names_the_request_in_its_block() {
        let f = finding(Kind::RetryCountRaised, 4, "retries raised from 2 to 6");
        assert_eq!(ops(&f, Some(LOOP)), ["POST /refunds/{id}"]);
        // The constant's line opens no block: no operation.
        let f = finding(Kind::RetryCountRaised, 1, "retries raised from 2 to 6");
        assert!(ops(&f, Some(LOOP)).is_empty());
        // The whole file (line 0) is no window either.
        assert!(ops(&finding(Kind::RetryCountRaised, 0, "x"), Some(LOOP)).is_empty());
    }

    #[test]
    fn the_message_names_the_operation_or_narrows_the_method() {
        let f = finding(Kind::RetryNonIdempotent, 1, "the retry wraps POST /refunds/42 with no key");
        assert_eq!(ops(&f, None), ["POST /refunds/{id}"]);
        let text = "for i in range(3):\n    requests.get(f\"{BASE}/cart\")\n    requests.post(f\"{BASE}/refunds\", json=r)\n";
        let f = finding(Kind::RetryNonIdempotent, 1, "the retry wraps a POST request");
        assert_eq!(ops(&f, Some(text)), ["POST /refunds"]);
        let f = finding(Kind::RetryCountRaised, 1, "retries raised");
        assert_eq!(ops(&f, Some(text)), ["GET /cart", "POST /refunds"]);
    }

    #[test]
    fn methods_pair_with_their_urls_in_each_language() {
        let cases = [
            ("self.http.post(\"https://shop.example/checkout\").json(o).send()", "POST /checkout"),
            ("resp, err := http.Get(base + \"/orders/\" + id)", "GET /orders"),
            ("req, _ := http.NewRequest(http.MethodPut, url+\"/items/7\", body)", "PUT /items/{id}"),
            ("await fetch(`${base}/refunds`, { method: 'POST' })", "POST /refunds"),
            ("client.request(Method::PATCH, \"/v1/orders/3f2a9c1b00004000\")", "PATCH /v1/orders/{id}"),
            ("axios.delete(\"/carts/:cartId\")", "DELETE /carts/{id}"),
        ];
        for (code, want) in cases {
            let got: Vec<String> = pairs_in(code).into_iter().map(|(m, p)| operation(&m, &p)).collect();
            assert_eq!(got, [want], "{code}");
        }
        // A map lookup and a header name are not requests.
        assert!(pairs_in("let v = headers.get(\"Retry-After\");").is_empty());
        assert!(pairs_in("let f = std::fs::read(\"data file.txt\");").is_empty());
    }

    #[test]
    fn a_changed_operation_matches_a_called_one_by_method_and_path_tail() {
        assert!(operation_matches("POST /refunds", "POST /refunds"));
        assert!(operation_matches("POST /refunds", "POST /v1/refunds"));
        assert!(operation_matches("GET /orders/{id}", "GET /orders/42"));
        assert!(operation_matches("GET /orders/{id}", "GET /orders/{id}"));
        assert!(!operation_matches("POST /refunds", "GET /refunds"));
        assert!(!operation_matches("POST /refunds", "POST /refunds/{id}"));
        assert!(!operation_matches("GET /", "GET /cart"));
        assert!(operation_matches("GET /", "GET /"));
    }

    #[test]
    fn coverage_lines_name_what_was_never_called_and_what_could_not_be_matched() {
        let findings = [
            finding(Kind::RetryCountRaised, 4, "retries raised from 2 to 6"),
            finding(Kind::JitterRemoved, 4, "jitter removed"),
            finding(Kind::RetryCountRaised, 1, "MAX_RETRIES raised from 2 to 6"),
            Finding::new(Kind::GateConfigChanged, "policy/gate", ".github/retrygate.yml", 0),
        ];
        let text = |_: &str| Some(LOOP);
        let c = Coverage::of(&findings, &text, vec!["GET /cart".into()], false);
        let lines: Vec<String> = c.lines().into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            lines,
            [
                "the replay never called POST /refunds/{id} (src/refunds.rs:4), whose retry this change raised and stripped of jitter",
                "an operation the replay could not be matched to (src/refunds.rs:1), whose retry this change raised: the scan names no HTTP method and URL path there",
            ]
        );
        assert_eq!(
            c.reason().as_deref(),
            Some("the replay never called 1 operation whose retry this change touched: POST /refunds/{id} (src/refunds.rs:4)")
        );
        let c = Coverage::of(&findings, &text, vec!["POST /refunds/{id}".into()], true);
        assert_eq!(c.reason(), None);
        let (kind, line) = &c.lines()[1];
        assert_eq!(*kind, LineKind::Called);
        assert!(line.starts_with("the replay called POST /refunds/{id} (src/refunds.rs:4)"), "{line}");
    }

    #[test]
    fn findings_past_the_limit_are_counted_and_a_long_line_is_read_in_bounds() {
        // A minified line of a megabyte with a request in it, and more
        // findings on it than the gate matches.
        let line = format!("{}c.post(\"/refunds\");{}", "x".repeat(100), "y".repeat(1 << 20));
        let findings: Vec<Finding> =
            (0..MAX_FINDINGS + 5).map(|_| finding(Kind::RetryCountRaised, 1, "raised")).collect();
        let text = |_: &str| Some(line.as_str());
        let c = Coverage::of(&findings, &text, vec![], false);
        assert_eq!(c.not_read, 5);
        assert_eq!(c.changed.len(), 1);
        assert_eq!(c.changed[0].operation.as_deref(), Some("POST /refunds"));
        let lines: Vec<String> = c.lines().into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            lines[1],
            format!("5 more changed retries were not matched: the gate matches the first {MAX_FINDINGS}")
        );
    }

    #[test]
    fn the_called_list_is_bounded_and_said_so() {
        let called: Vec<String> = (0..MAX_CALLED + 50).map(|i| format!("GET /items{i}")).collect();
        let findings = [finding(Kind::RetryCountRaised, 4, "raised")];
        let text = |_: &str| Some(LOOP);
        let c = Coverage::of(&findings, &text, called, true);
        assert_eq!(c.called.len(), MAX_CALLED);
        assert!(
            c.called_list().ends_with(&format!("GET /items9 and {} more", MAX_CALLED - 10)),
            "{}",
            c.called_list()
        );
        assert!(c.reason().is_some(), "POST /refunds/{{id}} is not among them");
    }
}
