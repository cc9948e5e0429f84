//! A project's own retry helpers, resolved through their definitions in the
//! repository: `send_with_retry(req)`, `resilient(lambda: s.post(..))`, a
//! `@own_retry(...)` decorator, a shared `appFetch` that starts retrying.
//!
//! The YAML rules recognise a helper by its name (`*retry*`). This module
//! resolves any name: when the change sends a write (POST or PATCH) through a
//! call or decorator, the helper's definition is looked up in the changed
//! files and then in the rest of the head tree, and if every definition of
//! that name retries (a loop that counts attempts, a retry library, a retry
//! decorator), the write is `retry-non-idempotent`. The other direction: a
//! definition the change made retrying (`appFetch = fetchRetry(fetch)`) is
//! reported when the repository sends writes through it.
//!
//! Findings carry the id of the pack's `retry-helper-write` rule (its
//! severity, kind and message), so `rules.disable` and `rules test` treat
//! both ways of finding a helper as that one rule.
//!
//! Cost: nothing is masked unless the raw text near an added line holds a
//! write word (or, in Python, a decorator); the head tree is read only when
//! a name is left unresolved by the changed files, only files of that
//! language, and only up to [`tree::MAX_TREE_BYTES`]; the files read are
//! prefiltered by the names being resolved before they are masked.

pub(crate) mod syntax;
pub(crate) mod tree;

use std::collections::{BTreeMap, HashMap, HashSet};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder};

use super::lang::Language;
use super::mask::{mask, View};
use super::spec::{Rule, RuleSet};
use crate::analyze::testcode::ScanPaths;
use crate::analyze::FileResult;
use crate::changeset::FileChange;
use crate::finding::{Finding, Note, Severity};
use syntax::{Code, Family};
pub(crate) use tree::RepoHead;

/// Helper names per family.
type Names = HashMap<Family, HashSet<String>>;

/// Lines around each added range whose raw text the prefilter reads.
const MARGIN_LINES: u32 = 3;

/// Longest write line kept to recognise the same write elsewhere.
const MAX_TEXT: usize = 240;

/// A write sent through a named helper on one side of one file.
#[derive(Debug, Clone)]
struct Through {
    helper: String,
    verb: &'static str,
    line: u32,
    /// Whether the call (or decorator) or its write is on an added line.
    touched: bool,
    /// The helper and the line of the write, without whitespace: the same
    /// text elsewhere (code moved between files, or a copy of an unchanged
    /// file) is not a new write.
    text: String,
    /// What the write is, whatever builder sends it or where it moved
    /// within its function: `f:NAME` (the enclosing function) and, when
    /// the target is a string literal, `t:"path"` (the request's target).
    identity: Vec<String>,
    /// The call (or decorator), the verb, and the end of the arguments (or body).
    span: (usize, usize, usize),
    /// Why this POST is a read, when its endpoint says so ([`read_endpoint`]).
    read: Option<ReadWhy>,
}

/// Why a POST was judged a read, and whether that rests on the request
/// (its endpoint) or only on the name of the function that sends it.
#[derive(Debug, Clone, PartialEq)]
struct ReadWhy {
    why: String,
    /// Judged by a name the change can choose: the finding is lowered to a
    /// warning that says so, never to a note.
    by_name: bool,
}

/// A write the change newly sends through a retrying helper.
#[derive(Debug)]
struct NewWrite {
    path: String,
    line: u32,
    verb: &'static str,
    helper: String,
    site: String,
    /// The first and last line of the helper's body, where known.
    body: Option<(u32, u32)>,
    read: Option<ReadWhy>,
    /// In a function whose name the base of its file never wrote: new
    /// code, not a write that ran once now sent through a retry.
    new_code: bool,
    /// The helper retries only failures after which nothing was written.
    refused_only: bool,
}

/// Whether a definition's body names failures to retry and all of them are
/// ones after which the server wrote nothing (`ECONNREFUSED`, a connect
/// timeout, 429): a write sent through it is not sent twice.
fn refused_only(code: &Code, body: (usize, usize)) -> bool {
    let text = code.text.get(body.0..body.1.min(code.text.len())).unwrap_or(&[]);
    let conditions = crate::analyze::operations::front::classify(&String::from_utf8_lossy(text));
    !conditions.is_empty() && !conditions.iter().any(|c| c.after_write())
}

/// Why a POST whose target is `target` is a read: its path (a string
/// literal, or the string a name was last given above the write) ends in
/// a read segment ([`crate::analyze::reads`]). `None` when the target cannot be told or
/// names anything else: a POST whose endpoint cannot be told is a write.
fn read_endpoint(code: &Code, target: &str, write_at: usize) -> Option<String> {
    let (path, how) = endpoint_of(code, target, write_at)?;
    let path_only = path.split(['?', '#']).next().unwrap_or("");
    let segment = crate::analyze::reads::read_segment(path_only)?;
    Some(format!("its endpoint{how} `{path_only}` ends in `/{segment}`, a read sent as POST with a body"))
}

/// The endpoint a POST's target names, when the code writes it (a string
/// literal, or the string a name was last given above the write), and how
/// it was found (` (`name`)` for a name).
fn endpoint_of(code: &Code, target: &str, write_at: usize) -> Option<(String, String)> {
    let literal = |t: &str| -> Option<String> {
        let t = t.trim_start_matches(['f', 'r', 'b']);
        let q = t.chars().next().filter(|c| matches!(c, '"' | '\'' | '`'))?;
        let inner = t.strip_prefix(q)?;
        Some(inner[..inner.find(q)?].to_string())
    };
    let (path, how) = match literal(target) {
        Some(p) => (p, String::new()),
        None if target.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !target.is_empty() => {
            // The nearest `name = "..."` above the write, within the function's reach.
            let from = write_at.saturating_sub(4000);
            let above = std::str::from_utf8(&code.text[from..write_at]).ok()?;
            let assigned = above
                .match_indices(target)
                .filter(|(i, _)| {
                    let before = above[..*i].chars().next_back();
                    !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                })
                .filter_map(|(i, _)| {
                    let rest = above[i + target.len()..].trim_start();
                    let value = rest.strip_prefix('=').filter(|r| !r.starts_with('='))?.trim_start();
                    literal(value)
                })
                .last()?;
            (assigned, format!(" (`{target}`)"))
        }
        None => return None,
    };
    Some((path, how))
}

/// What is known of a helper name in one language.
#[derive(Debug, Default, Clone)]
struct Resolved {
    /// `path:line` of each definition found, whether it retries, and
    /// whether the failures it names are only ones after which nothing was
    /// written (refused connections, rate limiting, conflicts).
    defs: Vec<(String, bool, bool)>,
}

impl Resolved {
    fn retrying_site(&self) -> Option<&str> {
        (!self.defs.is_empty() && self.defs.iter().all(|(_, r, _)| *r)).then(|| self.defs[0].0.as_str())
    }

    /// Every definition retries only failures after which nothing was
    /// written.
    fn refused_only(&self) -> bool {
        !self.defs.is_empty() && self.defs.iter().all(|(_, _, only)| *only)
    }
}

/// One changed file, prepared.
struct Prepared<'f> {
    file: &'f FileChange,
    family: Family,
    masked_head: Vec<u8>,
    /// A write word (or a Python decorator) near an added line: calls and
    /// decorators are read.
    writes_near: bool,
    /// A retry word near an added line: definitions are read.
    retry_near: bool,
}

fn write_words() -> &'static AhoCorasick {
    static AC: std::sync::OnceLock<AhoCorasick> = std::sync::OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(["post", "patch"])
            .unwrap_or_else(|e| panic!("constant patterns: {e}"))
    })
}

fn retry_words() -> &'static AhoCorasick {
    static AC: std::sync::OnceLock<AhoCorasick> = std::sync::OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(["retr", "attempt", "backoff"])
            .unwrap_or_else(|e| panic!("constant patterns: {e}"))
    })
}

/// The raw text of the head near its added lines.
fn near_added(file: &FileChange) -> Vec<&str> {
    let Some(text) = file.head.text() else { return Vec::new() };
    let starts: Vec<usize> =
        std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|p| p + 1)).collect();
    let at = |line: u32| starts.get(line.saturating_sub(1) as usize).copied().unwrap_or(text.len());
    file.added
        .iter()
        .map(|&(a, b)| {
            &text[at(a.saturating_sub(MARGIN_LINES).max(1))..at(b.saturating_add(MARGIN_LINES + 1))]
        })
        .collect()
}

/// The target of the write whose verb is at `verb_at`: the argument after
/// the verb (`http.MethodPost, "projects"`) or the first one of the call the
/// verb names (`s.post("/orders", ...)`), without whitespace.
fn write_target(code: &Code, verb_at: usize, end: usize) -> Option<String> {
    let text = code.text;
    let mut i = verb_at;
    while i < end && (text[i].is_ascii_alphanumeric() || matches!(text[i], b'_' | b'.' | b'"' | b'\'')) {
        i += 1;
    }
    while i < end && text[i].is_ascii_whitespace() {
        i += 1;
    }
    if i >= end || !matches!(text[i], b',' | b'(') {
        return None;
    }
    let from = i + 1;
    let mut depth = 0usize;
    let mut j = from;
    while j < end {
        match text[j] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => break,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => break,
            _ => {}
        }
        j += 1;
    }
    let arg: String = text[from..j].iter().filter(|c| !c.is_ascii_whitespace()).map(|&c| c as char).collect();
    (!arg.is_empty() && arg.len() <= MAX_TEXT).then_some(arg)
}

/// Whether `text` holds `word` as a whole identifier.
fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// An identity as compared across files: a function is one of its file
/// (`Create` is a common name), a literal target is the same anywhere.
fn scoped(path: &str, id: &str) -> String {
    if id.starts_with("f:") {
        format!("{path}|{id}")
    } else {
        id.to_string()
    }
}

/// Each write's identity (see [`Through::identity`]).
fn identities(family: Family, code: &Code, writes: &[(usize, usize, usize)]) -> Vec<Vec<String>> {
    let defs = syntax::definitions_where(family, code, &|_| true, &|_, body| {
        writes.iter().any(|&(at, _, _)| at >= body.0 && at < body.1)
    });
    writes
        .iter()
        .map(|&(at, verb_at, end)| {
            let mut id = Vec::new();
            let inner =
                defs.iter().filter(|d| at >= d.body.0 && at < d.body.1).min_by_key(|d| d.body.1 - d.body.0);
            if let Some(d) = inner {
                id.push(format!("f:{}", d.name));
            }
            if let Some(t) = write_target(code, verb_at, end).filter(|t| t.starts_with(['"', '\'', '`'])) {
                id.push(format!("t:{t}"));
            }
            id
        })
        .collect()
}

/// Writes sent through calls and decorators in `code`.
fn throughs(family: Family, code: &Code, touched: &dyn Fn(u32) -> bool) -> Vec<Through> {
    let mut out = throughs_only(family, code, touched);
    let spans: Vec<(usize, usize, usize)> = out.iter().map(|t| t.span).collect();
    for (t, id) in out.iter_mut().zip(identities(family, code, &spans)) {
        t.identity = id;
    }
    out
}

/// [`throughs`] without their identities (for unchanged files, where only
/// the text is compared).
fn throughs_only(family: Family, code: &Code, touched: &dyn Fn(u32) -> bool) -> Vec<Through> {
    let mut out = Vec::new();
    let line_at = |at: usize| -> String {
        let from = memchr::memrchr(b'\n', &code.text[..at]).map_or(0, |p| p + 1);
        let to = memchr::memchr(b'\n', &code.text[at..]).map_or(code.text.len(), |p| at + p);
        let line: Vec<u8> =
            code.text[from..to].iter().copied().filter(|c| !c.is_ascii_whitespace()).take(MAX_TEXT).collect();
        String::from_utf8_lossy(&line).into_owned()
    };
    // The helper, where it is applied (the call's line and the one above
    // it, so that a generic call line names its place; or the decorated
    // function's first line) and the write's line.
    let above = |at: usize| match memchr::memrchr(b'\n', &code.text[..at]) {
        Some(nl) => {
            line_at(nl.saturating_sub(1).max(memchr::memrchr(b'\n', &code.text[..nl]).map_or(0, |p| p + 1)))
        }
        None => String::new(),
    };
    let text_of = |helper: &str, site: usize, write: usize| {
        format!("{helper}|{}|{}|{}", above(site), line_at(site), line_at(write))
    };
    for call in syntax::calls(code, &|_| true) {
        let writes: Vec<(usize, &'static str)> = code
            .writes_in(call.args.0, call.args.1)
            .iter()
            .copied()
            .filter(|&(w, _)| !code.sent_before_the_call(call.args.0, w))
            .collect();
        let Some(&(first, verb)) = writes.first() else { continue };
        let line = code.lines.of(call.at);
        let t = touched(line) || writes.iter().any(|&(w, _)| touched(code.lines.of(w)));
        let text = text_of(&call.name, call.at, first);
        let span = (call.at, first, call.args.1);
        let read = t.then(|| read_of(family, code, first, call.args.1, None)).flatten();
        out.push(Through {
            helper: call.name,
            verb,
            line,
            touched: t,
            text,
            identity: Vec::new(),
            span,
            read,
        });
    }
    if family == Family::Python {
        for syntax::Decorated { name, at, def_at, body } in syntax::decorated(code) {
            let writes = code.writes_in(body.0, body.1);
            let Some(&(first, verb)) = writes.first() else { continue };
            let line = code.lines.of(at);
            let t = touched(line) || writes.iter().any(|&(w, _)| touched(code.lines.of(w)));
            let text = text_of(&name, def_at, first);
            let span = (at, first, body.1);
            let read = t.then(|| read_of(family, code, first, body.1, Some(def_at))).flatten();
            out.push(Through {
                helper: name,
                verb,
                line,
                touched: t,
                text,
                identity: Vec::new(),
                span,
                read,
            });
        }
    }
    out
}

/// Whether every write token from `first` to `end` is one POST to a read
/// endpoint, or one sent by a function named as a read, and why. `retried`
/// is the decorated function the retry wraps (its name is the retry's, not
/// the sender's): the function around it is the one that sends.
///
/// The request decides first: a written endpoint that ends in a read
/// segment reads, and one whose last segment names a change writes,
/// whatever the sender is called (`def update_by_query` posting to
/// `/_update_by_query`). Otherwise the sender's name may say it reads, and
/// that judgement is marked as one resting on a name.
fn read_of(family: Family, code: &Code, first: usize, end: usize, retried: Option<usize>) -> Option<ReadWhy> {
    let writes = code.writes_in(first, end);
    if writes.len() != 1 || writes[0].1 != "POST" {
        return None;
    }
    let endpoint = write_target(code, first, end).and_then(|t| Some((endpoint_of(code, &t, first)?, t)));
    if let Some((_, target)) = &endpoint {
        if let Some(why) = read_endpoint(code, target, first) {
            return Some(ReadWhy { why, by_name: false });
        }
    }
    if endpoint.is_some_and(|((path, _), _)| crate::analyze::reads::names_a_change(&path)) {
        return None;
    }
    sender_named_as_read(family, code, first, retried).map(|why| ReadWhy { why, by_name: true })
}

/// The innermost function around `at` (other than `retried`), when its name
/// says it reads ([`crate::analyze::reads::why_read_name`]). A class is not
/// a sender: `class Query` says nothing about what its methods send.
fn sender_named_as_read(family: Family, code: &Code, at: usize, retried: Option<usize>) -> Option<String> {
    let around = |_: usize, body: (usize, usize)| body.0 <= at && at < body.1;
    let sender = syntax::definitions_where(family, code, &|_| true, &around)
        .into_iter()
        .filter(|d| !retried.is_some_and(|r| (d.at..=d.at + d.name.len()).contains(&r)))
        .filter(|d| !syntax::is_class(code, d))
        .max_by_key(|d| d.body.0)?;
    crate::analyze::reads::why_read_name(&sender.name)
}

/// Definitions and callers of the names being resolved, gathered file by file.
struct Index<'n> {
    wanted: &'n HashMap<Family, HashSet<String>>,
    became: &'n HashMap<Family, HashSet<String>>,
    resolved: HashMap<(Family, String), Resolved>,
    /// Writes sent through each helper the change made retrying (`path:line (VERB)`).
    callers: HashMap<(Family, String), Vec<String>>,
    /// The Python methods among the names made retrying, with the file that
    /// defines each: only `self.name(..)` there calls them.
    methods: HashMap<(Family, String), String>,
    /// Writes through the wanted helpers in unchanged files ([`Through::text`]).
    elsewhere: HashSet<(Family, String)>,
    /// The files that define each name made retrying.
    defined_in: Definers,
    /// The first and last line of each definition's body, by `path:line`
    /// of the definition (for the operation model's reading of the same
    /// retry, [`crate::analyze::helper_writes_read_by_the_model`]).
    spans: HashMap<String, (u32, u32)>,
}

/// The files that define each name made retrying.
type Definers = HashMap<(Family, String), Vec<String>>;

/// Whether a file at `caller` whose import lines are `imports` can reach
/// the module defined at `definer`: Go code of the same directory (one
/// package), or an import naming the definer's module (its file stem, or
/// its directory for an `index`/`__init__`/`mod` file, or a Go package's
/// directory).
fn reaches_module(family: Family, caller: &str, imports: &str, definer: &str) -> bool {
    let dir = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let (ddir, cdir) = (dir(definer), dir(caller));
    if family == Family::Go && ddir == cdir {
        return true;
    }
    let file = definer.rsplit('/').next().unwrap_or(definer);
    let stem = file.split('.').next().unwrap_or(file);
    // The module, and the two folders above it (an import through a
    // package's barrel, `from './lib'`, names a folder), `src` aside.
    let mut names: Vec<&str> = ddir.rsplit('/').filter(|d| !d.is_empty() && *d != "src").take(2).collect();
    if family != Family::Go && !matches!(stem, "index" | "__init__" | "mod" | "main") {
        names.push(stem);
    }
    names.iter().any(|m| crate::analyze::rust::program::names_word(imports, m))
}

impl Index<'_> {
    fn scan(&mut self, family: Family, path: &str, code: &Code, imports: &str, unchanged: bool) {
        if let Some(names) = self.wanted.get(&family) {
            for d in syntax::definitions(family, code, &|n| names.contains(n)) {
                let site = format!("{path}:{}", code.lines.of(d.at));
                let only = d.retrying && refused_only(code, d.body);
                self.spans.insert(
                    site.clone(),
                    (code.lines.of(d.body.0), code.lines.of(d.body.1.saturating_sub(1))),
                );
                self.resolved.entry((family, d.name)).or_default().defs.push((site, d.retrying, only));
            }
            if unchanged {
                for t in
                    throughs_only(family, code, &|_| false).into_iter().filter(|t| names.contains(&t.helper))
                {
                    self.elsewhere.insert((family, t.text));
                }
            }
        }
        if let Some(names) = self.became.get(&family) {
            let bodies: Vec<(String, (usize, usize))> =
                syntax::definitions(family, code, &|n| names.contains(n))
                    .into_iter()
                    .map(|d| (d.name, d.body))
                    .collect();
            for c in syntax::calls(code, &|n| names.contains(n)) {
                // A call inside the helper's own definition is not a caller;
                // a call inside another definition that became retrying (the
                // class around the helper) is.
                if bodies.iter().any(|(n, (a, b))| *n == c.name && c.at >= *a && c.at < *b) {
                    continue;
                }
                // A caller in another file reaches the helper only through
                // an import that names the helper's module (or its package,
                // in Go): a namesake in an unrelated app is another function.
                if let Some(definers) = self.defined_in.get(&(family, c.name.clone())) {
                    if !definers.iter().any(|d| d == path || reaches_module(family, path, imports, d)) {
                        continue;
                    }
                }
                if let Some(defined_in) = self.methods.get(&(family, c.name.clone())) {
                    let before = &code.text[..c.at];
                    if defined_in != path || !(before.ends_with(b"self.") || before.ends_with(b"cls.")) {
                        continue;
                    }
                }
                if let Some(&(w, verb)) = code.writes_in(c.args.0, c.args.1).first() {
                    let site = format!("{path}:{} ({verb})", code.lines.of(w));
                    self.callers.entry((family, c.name)).or_default().push(site);
                }
            }
        }
    }
}

/// Whether head lines `a..=b` include an added line (a binary search over
/// the sorted added ranges).
fn touches(file: &FileChange, a: u32, b: u32) -> bool {
    let k = file.added.partition_point(|&(_, end)| end < a);
    file.added.get(k).is_some_and(|&(start, _)| start <= b)
}

fn is_test(paths: &ScanPaths, path: &str) -> bool {
    paths.test_pattern(path).is_some()
}

/// What helper resolution found.
#[derive(Debug, Default)]
pub(crate) struct Resolution {
    pub(crate) result: FileResult,
    /// `(path, line)` of writes through a helper that are moved or copied
    /// code (the same call is in a changed file's base or an unchanged
    /// file): a name-based `retry-helper-write` finding there is dropped too.
    pub(crate) stale: HashSet<(String, u32)>,
}

/// The name (after `<pack>/`) of the rule whose id, kind, severity and
/// message a resolved helper's finding carries.
const HELPER_RULE: &str = "retry-helper-write";

/// Each family's `<pack>/retry-helper-write` rule, keyed by [`Family`]: a
/// rule is found by the parts of its id, never by building an id string.
struct HelperRules<'r>(HashMap<Family, &'r Rule>);

impl<'r> HelperRules<'r> {
    fn of(set: &'r RuleSet) -> HelperRules<'r> {
        let mut rules = HashMap::new();
        for rule in &set.rules {
            let Some((pack, name)) = rule.id.split_once('/') else { continue };
            let Some(family) = Family::ALL.into_iter().find(|f| f.pack() == pack) else { continue };
            if name == HELPER_RULE {
                rules.entry(family).or_insert(rule);
            }
        }
        HelperRules(rules)
    }

    fn get(&self, family: Family) -> Option<&'r Rule> {
        self.0.get(&family).copied()
    }
}

/// The language and family of a path, when helper resolution reads it.
fn family_of(path: &str) -> Option<(Language, Family)> {
    let lang = Language::of_path(path)?;
    Some((lang, Family::of(lang)?))
}

/// Step 1: the changed files (outside test code, in a family whose pack
/// has the helper rule) whose added lines are near a write word (or a
/// Python decorator), or near a retry word for the other direction.
fn prepare<'f>(files: &[&'f FileChange], rules: &HelperRules<'_>, tests: &ScanPaths) -> Vec<Prepared<'f>> {
    let mut prepared = Vec::new();
    for &file in files {
        let Some((lang, family)) = family_of(&file.path) else { continue };
        if rules.get(family).is_none() || file.added.is_empty() || is_test(tests, &file.path) {
            continue;
        }
        let Some(head) = file.head.text() else { continue };
        let near = near_added(file);
        let writes_near =
            near.iter().any(|t| write_words().is_match(t) || (family == Family::Python && t.contains('@')));
        let retry_near = near.iter().any(|t| retry_words().is_match(t));
        if !writes_near && !retry_near {
            continue;
        }
        let masked_head = mask(head, &lang.syntax(), View::Code);
        prepared.push(Prepared { file, family, masked_head, writes_near, retry_near });
    }
    prepared
}

/// The writes through a helper of one prepared file, head and base.
struct FileWrites {
    /// Index into the prepared files.
    at: usize,
    head: Vec<Through>,
    base: Vec<Through>,
}

/// What [`writes_through`] found.
#[derive(Default)]
struct Sent {
    files: Vec<FileWrites>,
    /// The helper names a touched write is sent through, to resolve.
    wanted: HashMap<Family, HashSet<String>>,
}

/// Step 2: writes sent through a helper, on both sides of each prepared
/// file with a touched one, and the helper names to resolve.
fn writes_through(prepared: &[Prepared<'_>], codes: &[Code]) -> Sent {
    let mut sent = Sent::default();
    for (at, p) in prepared.iter().enumerate().filter(|(_, p)| p.writes_near) {
        let head = throughs(p.family, &codes[at], &|l| p.file.is_added(l));
        if !head.iter().any(|t| t.touched) {
            continue;
        }
        let base = match (p.file.base.text(), family_of(&p.file.path)) {
            (Some(b), Some((lang, _))) => {
                let m = mask(b, &lang.syntax(), View::Code);
                throughs(p.family, &Code::new(&m), &|_| false)
            }
            _ => Vec::new(),
        };
        for t in head.iter().filter(|t| t.touched) {
            sent.wanted.entry(p.family).or_default().insert(t.helper.clone());
        }
        sent.files.push(FileWrites { at, head, base });
    }
    sent
}

/// Step 3: definitions the change made retrying (the other direction):
/// a touched head definition that retries, of a name every base definition
/// of which did not. A new definition (or one moved here from another
/// file) did not change behaviour. The base is masked only for a file with
/// such a head definition.
fn made_retrying(prepared: &[Prepared<'_>], codes: &[Code]) -> Vec<(usize, syntax::Def)> {
    let mut became = Vec::new();
    for (at, p) in prepared.iter().enumerate().filter(|(_, p)| p.retry_near) {
        let code = &codes[at];
        let edited = |above: usize, body: (usize, usize)| {
            touches(p.file, code.lines.of(above), code.lines.of(body.1.saturating_sub(1)))
        };
        let touched: Vec<syntax::Def> = syntax::definitions_where(p.family, code, &|_| true, &edited)
            .into_iter()
            .filter(|d| d.retrying)
            .collect();
        let Some(base) = p.file.base.text().filter(|_| !touched.is_empty()) else { continue };
        let Some((lang, _)) = family_of(&p.file.path) else { continue };
        let names: HashSet<&str> = touched.iter().map(|d| d.name.as_str()).collect();
        let m = mask(base, &lang.syntax(), View::Code);
        let base_code = Code::new(&m);
        // name -> whether every base definition of it did not retry.
        let mut plain: HashMap<String, bool> = HashMap::new();
        for bd in syntax::definitions(p.family, &base_code, &|n| names.contains(n)) {
            let e = plain.entry(bd.name).or_insert(true);
            *e = *e && !bd.retrying;
        }
        for d in touched {
            if plain.get(&d.name).copied().unwrap_or(false) {
                became.push((at, d));
            }
        }
    }
    became
}

/// What the bases of the changed files already sent (step 4a).
#[derive(Default)]
struct BaseWrites {
    /// Writes through the wanted helpers ([`Through::text`]): code moved
    /// from there is not new.
    through: HashSet<(Family, String)>,
    /// The identities of writes through any helper: a head write with one
    /// of them was there (moved, or sent through another builder of the
    /// same client), whatever helper sent it.
    through_ids: HashSet<(Family, &'static str, String)>,
    /// The identities of every write, helper or not: a head write with one
    /// of them is an existing write newly sent through a helper (reported
    /// where it is), not a brand-new one.
    any_ids: HashSet<(Family, &'static str, String)>,
}

/// Step 4a: the writes of the bases of the changed files in a family with
/// a wanted helper.
fn base_writes(files: &[&FileChange], wanted: &HashMap<Family, HashSet<String>>) -> BaseWrites {
    let mut out = BaseWrites::default();
    for file in files {
        let Some((lang, family)) = family_of(&file.path) else { continue };
        let (Some(names), Some(base)) = (wanted.get(&family), file.base.text()) else { continue };
        if !write_words().is_match(base) {
            continue;
        }
        let m = mask(base, &lang.syntax(), View::Code);
        let base_code = Code::new(&m);
        let writes = base_code.writes_in(0, m.len());
        let spans: Vec<(usize, usize, usize)> = writes.iter().map(|&(w, _)| (w, w, m.len())).collect();
        for (&(_, verb), ids) in writes.iter().zip(identities(family, &base_code, &spans)) {
            for id in ids {
                out.any_ids.insert((family, verb, scoped(&file.path, &id)));
            }
        }
        for t in throughs(family, &base_code, &|_| false) {
            for id in &t.identity {
                out.through_ids.insert((family, t.verb, scoped(&file.path, id)));
            }
            if names.contains(&t.helper) {
                out.through.insert((family, t.text));
            }
        }
    }
    out
}

/// Step 4b: definitions and callers in every changed head file (outside
/// test code) of a family with a name to resolve.
fn index_changed<'n>(
    files: &[&FileChange],
    prepared: &[Prepared<'_>],
    codes: &[Code],
    (wanted, became): (&'n Names, &'n Names),
    (methods, defined_in): (HashMap<(Family, String), String>, Definers),
    tests: &ScanPaths,
) -> Index<'n> {
    let mut index = Index {
        wanted,
        became,
        resolved: HashMap::new(),
        callers: HashMap::new(),
        methods,
        elsewhere: HashSet::new(),
        defined_in,
        spans: HashMap::new(),
    };
    for file in files {
        let Some((lang, family)) = family_of(&file.path) else { continue };
        if is_test(tests, &file.path) || (!wanted.contains_key(&family) && !became.contains_key(&family)) {
            continue;
        }
        let Some(head) = file.head.text() else { continue };
        match prepared.iter().position(|p| p.file.path == file.path) {
            Some(i) => index.scan(family, &file.path, &codes[i], &tree::imports_of(head), false),
            None => index.scan(
                family,
                &file.path,
                &Code::new(&mask(head, &lang.syntax(), View::Code)),
                &tree::imports_of(head),
                false,
            ),
        }
    }
    index
}

/// Step 4c: the names the head tree must be read for: wanted names no
/// changed file defines, and every name made retrying (its callers may be
/// anywhere).
fn unresolved(index: &Index<'_>) -> HashMap<Family, Vec<String>> {
    let mut m: HashMap<Family, Vec<String>> = HashMap::new();
    for (family, names) in index.wanted {
        for n in names {
            if !index.resolved.contains_key(&(*family, n.clone())) {
                m.entry(*family).or_default().push(n.clone());
            }
        }
    }
    for (family, names) in index.became {
        m.entry(*family).or_default().extend(names.iter().cloned());
    }
    m
}

/// Step 4d: the unchanged files of the head tree that mention a name of
/// `unresolved`, indexed. A partial read is an info note; a git failure is
/// not a bound we chose, so it is a blocking note: a write sent through an
/// unread helper cannot pass unseen.
fn index_tree(
    index: &mut Index<'_>,
    tree: &RepoHead,
    unresolved: &HashMap<Family, Vec<String>>,
    changed: &HashSet<&str>,
    tests: &ScanPaths,
) -> Option<Note> {
    match tree::read(tree, unresolved, changed, &|p| is_test(tests, p)) {
        Ok(read) => {
            for f in read.files {
                index.scan(f.family, &f.path, &Code::new(&f.masked), &f.imports, true);
            }
            read.partial.then(|| Note::info(
                None,
                "some files of the head tree were too large to read while resolving retry helpers; a helper defined there may be missed",
            ))
        }
        Err(e) => Some(Note::blocking(
            None,
            format!("could not read the head tree to resolve retry helpers ({e}); check that the head commit is in the repository, then run retrygate again"),
        )),
    }
}

/// Step 5a: writes newly sent through a helper that retries, grouped: new
/// writes through the helpers of one file the change left alone (the
/// builders of one client) are one group; an existing write newly sent
/// through a retry is its own group, at its line. Writes that are moved or
/// copied code go to `stale` instead.
fn new_writes(
    prepared: &[Prepared<'_>],
    sent: Vec<FileWrites>,
    before: &BaseWrites,
    index: &Index<'_>,
    changed: &HashSet<&str>,
    stale: &mut HashSet<(String, u32)>,
) -> BTreeMap<(Family, String), Vec<NewWrite>> {
    let mut groups: BTreeMap<(Family, String), Vec<NewWrite>> = BTreeMap::new();
    for FileWrites { at, head, base } in sent {
        let p = &prepared[at];
        let count = |ts: &[Through]| {
            let mut m: BTreeMap<(String, &str), usize> = BTreeMap::new();
            for t in ts {
                *m.entry((t.helper.clone(), t.verb)).or_default() += 1;
            }
            m
        };
        let (base_count, head_count) = (count(&base), count(&head));
        let mut reported: BTreeMap<(String, &str), usize> = BTreeMap::new();
        for t in head.iter().filter(|t| t.touched) {
            let key = (t.helper.clone(), t.verb);
            let excess = head_count[&key].saturating_sub(base_count.get(&key).copied().unwrap_or(0));
            let seen = (p.family, t.text.clone());
            let was_there = t
                .identity
                .iter()
                .any(|id| before.through_ids.contains(&(p.family, t.verb, scoped(&p.file.path, id))));
            if was_there || before.through.contains(&seen) || index.elsewhere.contains(&seen) {
                stale.insert((p.file.path.clone(), t.line));
                continue;
            }
            let done = reported.entry(key).or_default();
            if *done >= excess {
                continue;
            }
            let resolved = index.resolved.get(&(p.family, t.helper.clone()));
            let Some(site) = resolved.and_then(Resolved::retrying_site) else {
                continue;
            };
            let only = resolved.is_some_and(Resolved::refused_only);
            *done += 1;
            let client = site.rsplit_once(':').map_or(site, |(file, _)| file).to_string();
            let brand_new = !t
                .identity
                .iter()
                .any(|id| before.any_ids.contains(&(p.family, t.verb, scoped(&p.file.path, id))));
            // Only brand-new writes through a client the change left alone
            // (or added) are listed together; an existing write newly sent
            // through a retry is reported where it is.
            // A read is reported where it is, as a note that says why.
            // A client new in the change with writes new beside it is one
            // new design: one finding that lists its writes.
            let client_new = prepared.iter().any(|q| q.file.path == client && q.file.base.text().is_none());
            let group = if brand_new && (!changed.contains(client.as_str()) || client_new) && t.read.is_none()
            {
                client
            } else {
                format!("{}:{}", p.file.path, t.line)
            };
            // A new function in a file the base had; a new file's writes
            // through a retrying client block like changed ones.
            let new_code = p.file.base.text().is_some_and(|base_text| {
                brand_new
                    && t.identity
                        .iter()
                        .filter_map(|id| id.strip_prefix("f:"))
                        .any(|f| !names_word(base_text, f))
            });
            groups.entry((p.family, group)).or_default().push(NewWrite {
                path: p.file.path.clone(),
                line: t.line,
                verb: t.verb,
                helper: t.helper.clone(),
                site: site.to_string(),
                body: index.spans.get(site).copied(),
                read: t.read.clone(),
                new_code,
                refused_only: only,
            });
        }
    }
    groups
}

/// Step 5b: one group of new writes as one finding of `rule`.
fn new_write_finding(rule: &Rule, client: &str, writes: &[NewWrite]) -> Option<Finding> {
    let first = writes.first()?;
    let what = if writes.len() == 1 {
        format!("a {} through `{}`, which retries (defined at {})", first.verb, first.helper, first.site)
    } else {
        let shown: Vec<String> = writes
            .iter()
            .take(5)
            .map(|w| format!("{}:{} ({} through `{}`)", w.path, w.line, w.verb, w.helper))
            .collect();
        let more = if writes.len() > 5 { format!(" and {} more", writes.len() - 5) } else { String::new() };
        format!(
            "{} new writes through the retrying client defined in {client}: {}{more}",
            writes.len(),
            shown.join(", ")
        )
    };
    let head = if writes.len() == 1 {
        serde_json::json!({ "helper": first.helper, "method": first.verb, "definition": first.site, "definition_lines": first.body })
    } else {
        let listed: Vec<serde_json::Value> = writes
            .iter()
            .map(|w| {
                serde_json::json!({ "path": w.path, "line": w.line, "helper": w.helper, "method": w.verb, "definition": w.site, "definition_lines": w.body })
            })
            .collect();
        serde_json::json!({ "writes": listed })
    };
    let f = Finding::new(rule.kind, &rule.id, &first.path, first.line)
        .severity(rule.severity)
        .message(rule.message.replace("{match}", &what))
        .head(head);
    // New functions that send through the project's retrying client are
    // new code: said, for the reviewer reading it, not blocked on (as the
    // operation model does with a new retry in a new function).
    let f = if writes.iter().all(|w| w.new_code) && f.severity == Severity::Error {
        let message = format!(
            "{} (in a function the base did not have: new code, so a warning; review what it retries)",
            f.message
        );
        f.severity(Severity::Warning).message(message)
    } else {
        f
    };
    let f = if writes.iter().all(|w| w.refused_only) && f.severity == Severity::Error {
        let message = format!(
            "{} (the helper retries only failures after which the server wrote nothing: refused connections, rate limiting, conflicts; a warning: check it never fires on timeouts or dropped connections)",
            f.message
        );
        f.severity(Severity::Warning).message(message)
    } else {
        f
    };
    Some(match writes.iter().map(|w| w.read.as_ref()).collect::<Option<Vec<_>>>() {
        Some(reads) if writes.len() == 1 && reads.iter().all(|r| !r.by_name) => {
            let why = reads.first().map(|r| r.why.as_str()).unwrap_or_default();
            let was = if f.severity == Severity::Error { "an error" } else { "a warning" };
            let message = format!("{}; judged a read: {why}: a note instead of {was}", f.message);
            f.severity(Severity::Note).message(message)
        }
        // A name the change can choose lowers an error one step, where
        // the maintainer sees it, and never to a note.
        Some(reads) if writes.len() == 1 => {
            let why = reads.first().map(|r| r.why.as_str()).unwrap_or_default();
            let message = format!(
                "{}; judged a read only by a name ({why}), not by anything the request says: a warning instead of an error; check what the request does",
                f.message
            );
            let severity = f.severity.min(Severity::Warning);
            f.severity(severity).message(message)
        }
        _ => f,
    })
}

/// Step 6: a helper the change made retrying, with the writes sent through
/// it, as one finding at the added line that made it retry.
fn became_finding(p: &Prepared<'_>, code: &Code, d: &syntax::Def, sites: &[String], rule: &Rule) -> Finding {
    let (a, b) = (code.lines.of(d.above), code.lines.of(d.body.1.saturating_sub(1)));
    let raw = p.file.head.text().unwrap_or("");
    let line = (a..=b)
        .filter(|&l| p.file.is_added(l))
        .find(|&l| retry_words().is_match(raw.lines().nth(l as usize - 1).unwrap_or("")))
        .or_else(|| (a..=b).find(|&l| p.file.is_added(l)))
        .unwrap_or(a);
    let mut sites = sites.to_vec();
    sites.sort();
    sites.dedup();
    let shown: Vec<&str> = sites.iter().take(3).map(String::as_str).collect();
    let more = if sites.len() > 3 { format!(" and {} more", sites.len() - 3) } else { String::new() };
    let what =
        format!("`{}` now retries, and writes are sent through it: {}{more}", d.name, shown.join(", "));
    Finding::new(rule.kind, &rule.id, &p.file.path, line)
        .severity(rule.severity)
        .message(rule.message.replace("{match}", &what))
        .head(serde_json::json!({
            "helper": d.name,
            "writes": sites,
            "definition": format!("{}:{}", p.file.path, code.lines.of(d.at)),
            "definition_lines": (code.lines.of(d.body.0), b),
        }))
}

/// Resolves the helpers the change sends writes through (and the helpers it
/// made retrying) and reports them under each pack's `retry-helper-write`,
/// in named steps: [`prepare`], [`writes_through`], [`made_retrying`],
/// [`base_writes`], [`index_changed`], [`unresolved`], [`index_tree`],
/// [`new_writes`] with [`new_write_finding`], and [`became_finding`].
pub(crate) fn resolve(set: &RuleSet, files: &[&FileChange], tree: Option<&RepoHead>) -> Resolution {
    let mut res = Resolution::default();
    let rules = HelperRules::of(set);
    let tests = ScanPaths::defaults();
    let prepared = prepare(files, &rules, &tests);
    if prepared.is_empty() {
        return res;
    }
    // Each prepared head's bracket and line index, built once for every step.
    let codes: Vec<Code> = prepared.iter().map(|p| Code::new(&p.masked_head)).collect();
    let sent = writes_through(&prepared, &codes);
    let became = made_retrying(&prepared, &codes);
    if sent.files.is_empty() && became.is_empty() {
        return res;
    }
    let mut became_names: HashMap<Family, HashSet<String>> = HashMap::new();
    let mut methods: HashMap<(Family, String), String> = HashMap::new();
    let mut defined_in: Definers = HashMap::new();
    for (at, d) in &became {
        let family = prepared[*at].family;
        became_names.entry(family).or_default().insert(d.name.clone());
        defined_in.entry((family, d.name.clone())).or_default().push(prepared[*at].file.path.clone());
        if family == Family::Python && syntax::is_python_method(&codes[*at], d) {
            methods.insert((family, d.name.clone()), prepared[*at].file.path.clone());
        }
    }
    let before = base_writes(files, &sent.wanted);
    let mut index =
        index_changed(files, &prepared, &codes, (&sent.wanted, &became_names), (methods, defined_in), &tests);
    let changed: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let unresolved = unresolved(&index);
    if let Some(tree) = tree.filter(|_| !unresolved.is_empty()) {
        res.result.notes.extend(index_tree(&mut index, tree, &unresolved, &changed, &tests));
    }
    for ((family, client), writes) in
        new_writes(&prepared, sent.files, &before, &index, &changed, &mut res.stale)
    {
        let Some(rule) = rules.get(family) else { continue };
        res.result.findings.extend(new_write_finding(rule, &client, &writes));
    }
    for (at, d) in &became {
        let p = &prepared[*at];
        let Some(rule) = rules.get(p.family) else { continue };
        let Some(sites) = index.callers.get(&(p.family, d.name.clone())) else { continue };
        res.result.findings.push(became_finding(p, &codes[*at], d, sites, rule));
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pack with the Python helper rule (under `id`) and an unrelated rule.
    fn set_with(id: &str) -> RuleSet {
        let yaml = format!(
            "rules:\n  - id: {id}\n    kind: retry-non-idempotent\n    severity: error\n    languages: [python]\n    message: \"a write is now sent through a retry helper: {{match}}\"\n    pattern: 'never_matches_anything_zz\\('\n    when: added\n    docs: {{ what: w, why: y, example: e, use_instead: u }}\n  - id: python/other\n    kind: retry-non-idempotent\n    severity: warning\n    languages: [python]\n    message: \"m\"\n    pattern: 'never_matches_either_zz\\('\n    when: added\n    docs: {{ what: w, why: y, example: e, use_instead: u }}\n"
        );
        RuleSet::load(&[("t.yml".into(), yaml)]).unwrap()
    }

    const RETRYING: &str = "import time\n\n\ndef resilient(fn):\n    for attempt in range(5):\n        try:\n            return fn()\n        except IOError:\n            time.sleep(attempt)\n    return fn()\n";
    const PLAIN: &str = "def resilient(fn):\n    return fn()\n";
    const GET: &str =
        "from app.net import resilient\n\n\ndef create(s, o):\n    return resilient(lambda: s.get('/orders'))\n";
    const POST: &str =
        "from app.net import resilient\n\n\ndef create(s, o):\n    return resilient(lambda: s.post('/orders', json=o))\n";

    fn change(path: &str, base: Option<&str>, head: &str) -> FileChange {
        FileChange::from_texts(path, base, Some(head))
    }

    fn codes<'p>(prepared: &'p [Prepared<'_>]) -> Vec<Code<'p>> {
        prepared.iter().map(|p| Code::new(&p.masked_head)).collect()
    }

    #[test]
    fn the_helper_rule_is_found_by_family_never_by_a_near_id() {
        let set = set_with("python/retry-helper-write");
        let rules = HelperRules::of(&set);
        assert_eq!(rules.get(Family::Python).map(|r| r.id.as_str()), Some("python/retry-helper-write"));
        assert!(rules.get(Family::Js).is_none());
        for near in ["python/retry-helper-writes", "pythonx/retry-helper-write", "ruby/retry-helper-write"] {
            let set = set_with(near);
            assert!(HelperRules::of(&set).0.is_empty(), "{near}");
        }
    }

    #[test]
    fn prepare_keeps_a_file_with_a_write_near_an_added_line_and_drops_test_code_and_quiet_files() {
        let set = set_with("python/retry-helper-write");
        let rules = HelperRules::of(&set);
        let tests = ScanPaths::defaults();
        let orders = change("app/orders.py", Some(GET), POST);
        let in_tests = change("tests/test_orders.py", Some(GET), POST);
        let quiet = change("app/names.py", Some("x = 1\n"), "x = 1\ny = 2\n");
        let go = change("app/orders.go", Some("package a\n"), "package a\nfunc f() { c.Post(u) }\n");
        let prepared = prepare(&[&orders, &in_tests, &quiet, &go], &rules, &tests);
        let kept: Vec<(&str, bool)> =
            prepared.iter().map(|p| (p.file.path.as_str(), p.writes_near)).collect();
        assert_eq!(kept, [("app/orders.py", true)]);
    }

    #[test]
    fn writes_through_names_the_helper_of_a_touched_write_only() {
        let set = set_with("python/retry-helper-write");
        let rules = HelperRules::of(&set);
        let tests = ScanPaths::defaults();
        let touched = change("app/orders.py", Some(GET), POST);
        // The write line is unchanged; only a comment was added at the top.
        let untouched = change("app/old.py", Some(POST), &format!("# post it\n{POST}"));
        let prepared = prepare(&[&touched, &untouched], &rules, &tests);
        assert_eq!(prepared.len(), 2);
        let sent = writes_through(&prepared, &codes(&prepared));
        let files: Vec<&str> = sent.files.iter().map(|f| prepared[f.at].file.path.as_str()).collect();
        assert_eq!(files, ["app/orders.py"]);
        assert_eq!(sent.wanted[&Family::Python], HashSet::from(["resilient".to_string()]));
        // The head sends a POST through it; the base sent a GET, not a write.
        assert_eq!((sent.files[0].head.len(), sent.files[0].base.len()), (1, 0));
    }

    #[test]
    fn made_retrying_is_a_plain_definition_that_now_retries_not_a_new_one() {
        let set = set_with("python/retry-helper-write");
        let rules = HelperRules::of(&set);
        let tests = ScanPaths::defaults();
        let became = change("app/net.py", Some(PLAIN), RETRYING);
        let new = change("app/other.py", Some("x = 1\n"), &format!("x = 1\n{RETRYING}"));
        let prepared = prepare(&[&became, &new], &rules, &tests);
        let found: Vec<(&str, String)> = made_retrying(&prepared, &codes(&prepared))
            .into_iter()
            .map(|(at, d)| (prepared[at].file.path.as_str(), d.name))
            .collect();
        assert_eq!(found, [("app/net.py", "resilient".to_string())]);
    }

    #[test]
    fn base_writes_hold_the_base_write_through_a_wanted_helper_and_its_identities() {
        let orders = change("app/orders.py", Some(POST), &format!("{POST}\n# more\n"));
        let wanted = HashMap::from([(Family::Python, HashSet::from(["resilient".to_string()]))]);
        let before = base_writes(&[&orders], &wanted);
        assert_eq!(before.through.len(), 1);
        assert!(before.through_ids.contains(&(Family::Python, "POST", "app/orders.py|f:create".into())));
        assert!(
            before.any_ids.contains(&(Family::Python, "POST", "t:'/orders'".into())),
            "{:?}",
            before.any_ids
        );
        // A family with no wanted helper reads nothing.
        assert!(base_writes(&[&orders], &HashMap::new()).through.is_empty());
    }

    #[test]
    fn a_name_defined_in_a_changed_file_is_resolved_and_an_undefined_one_is_left_for_the_tree() {
        let tests = ScanPaths::defaults();
        let wanted = HashMap::from([(Family::Python, HashSet::from(["resilient".to_string()]))]);
        let none = HashMap::new();
        let net = change("app/net.py", Some(RETRYING), &format!("{RETRYING}\n# touched\n"));
        let index =
            index_changed(&[&net], &[], &[], (&wanted, &none), (HashMap::new(), HashMap::new()), &tests);
        assert_eq!(
            index.resolved[&(Family::Python, "resilient".to_string())].retrying_site(),
            Some("app/net.py:4")
        );
        assert!(unresolved(&index).is_empty());
        let elsewhere = change("app/other.py", Some("x = 1\n"), "x = 2\n");
        let index = index_changed(
            &[&elsewhere],
            &[],
            &[],
            (&wanted, &none),
            (HashMap::new(), HashMap::new()),
            &tests,
        );
        assert_eq!(unresolved(&index)[&Family::Python], ["resilient"]);
    }

    #[test]
    fn a_git_failure_reading_the_tree_is_a_blocking_note() {
        let dir = tempfile::tempdir().unwrap();
        let status =
            std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap();
        assert!(status.success());
        let tree = RepoHead { git: crate::changeset::Git::open(dir.path()).unwrap(), rev: "f".repeat(40) };
        let wanted = HashMap::from([(Family::Python, HashSet::from(["resilient".to_string()]))]);
        let none = HashMap::new();
        let mut index = index_changed(
            &[],
            &[],
            &[],
            (&wanted, &none),
            (HashMap::new(), HashMap::new()),
            &ScanPaths::defaults(),
        );
        let unresolved = unresolved(&index);
        let note =
            index_tree(&mut index, &tree, &unresolved, &HashSet::new(), &ScanPaths::defaults()).unwrap();
        assert!(note.blocking, "{note:?}");
        assert!(
            note.message.starts_with("could not read the head tree to resolve retry helpers ("),
            "{note:?}"
        );
    }

    #[test]
    fn a_post_to_a_read_endpoint_is_a_read_and_any_other_a_write() {
        let read = |src: &str| {
            let m = mask(src, &Language::Python.syntax(), View::Code);
            let code = Code::new(&m);
            let (at, _) = code.writes_in(0, code.text.len())[0];
            read_of(Family::Python, &code, at, code.text.len(), None)
        };
        assert!(
            read("c.post('/v1/datasets/logs/query', json=q)\n").is_some_and(|w| w.why.contains("`/query`"))
        );
        assert!(read("path = f'/v1/datasets/{id}/_search'\nc.post(path, content=p)\n")
            .is_some_and(|w| w.why.contains("(`path`)")));
        assert!(read("c.post('/v1/table/t/describe/', json={})\n").is_some());
        for write in [
            "c.post('/v1/orders', json=o)\n",
            "c.post(url, json=o)\n",
            "path = '/v1/query'\npath = '/v1/orders'\nc.post(path)\n",
            "c.post('/v1/queryable', json=o)\n",
            "def ingest(c, o):\n    c.post(url, json=o)\n",
            "class Query:\n    c.post(url, json=o)\n",
        ] {
            assert_eq!(read(write), None, "{write}");
        }
        // The function that sends it says so by its name.
        let why = read("def apl_query(c, q):\n    c.post(url, json=q)\n");
        assert!(why.is_some_and(|w| w.by_name && w.why.contains("`apl_query`, a function named as a read")));
        // A written endpoint that names a change decides over the sender's name.
        assert!(read(
            "def update_by_query(c, i, q):\n    c.post(f'http://es:9200/{i}/_update_by_query', json=q)\n"
        )
        .is_none());
        // One that says nothing either way leaves it to the name, marked so.
        assert!(read("def apl_query(c, q):\n    c.post('/v1/datasets/_apl', json=q)\n")
            .is_some_and(|w| w.by_name));
        assert!(read("c.post('/v1/datasets/logs/query', json=q)\n").is_some_and(|w| !w.by_name));
    }

    fn write(line: u32) -> NewWrite {
        NewWrite {
            path: "app/orders.py".into(),
            line,
            verb: "POST",
            helper: "send".into(),
            site: "app/net.py:4".into(),
            body: None,
            read: None,
            new_code: false,
            refused_only: false,
        }
    }

    #[test]
    fn a_write_through_a_helper_that_retries_only_refused_connections_is_a_warning_that_says_so() {
        let set = set_with("python/retry-helper-write");
        let rule = HelperRules::of(&set).get(Family::Python).unwrap();
        let only = NewWrite { refused_only: true, ..write(5) };
        let f = new_write_finding(rule, "app/net.py", &[only]).unwrap();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.message.contains("retries only failures after which the server wrote nothing"),
            "{}",
            f.message
        );
        let f = new_write_finding(rule, "app/net.py", &[write(5)]).unwrap();
        assert_eq!(f.severity, Severity::Error);
    }

    #[test]
    fn a_body_that_names_only_refusals_is_refused_only_and_one_that_names_timeouts_is_not() {
        let refused = b"def send(b):\n    for i in range(3):\n        try:\n            return post(b)\n        except ConnectionRefusedError:\n            sleep(1)\n";
        let code = Code::new(refused);
        assert!(refused_only(&code, (0, refused.len())));
        let timeouts = b"def send(b):\n    for i in range(3):\n        try:\n            return post(b)\n        except (ConnectionRefusedError, TimeoutError):\n            sleep(1)\n";
        let code = Code::new(timeouts);
        assert!(!refused_only(&code, (0, timeouts.len())));
        let none = b"def send(b):\n    for i in range(3):\n        try:\n            return post(b)\n        except Exception:\n            sleep(1)\n";
        let code = Code::new(none);
        assert!(!refused_only(&code, (0, none.len())));
    }

    #[test]
    fn one_new_write_is_named_and_many_are_listed_five_at_most() {
        let set = set_with("python/retry-helper-write");
        let rule = HelperRules::of(&set).get(Family::Python).unwrap();
        let one = new_write_finding(rule, "app/net.py", &[write(5)]).unwrap();
        assert_eq!(
            one.message,
            "a write is now sent through a retry helper: a POST through `send`, which retries (defined at app/net.py:4)"
        );
        let many: Vec<NewWrite> = (1..=6).map(write).collect();
        let f = new_write_finding(rule, "app/net.py", &many).unwrap();
        assert_eq!(
            f.message,
            "a write is now sent through a retry helper: 6 new writes through the retrying client defined in app/net.py: \
             app/orders.py:1 (POST through `send`), app/orders.py:2 (POST through `send`), app/orders.py:3 (POST through `send`), \
             app/orders.py:4 (POST through `send`), app/orders.py:5 (POST through `send`) and 1 more"
        );
        assert_eq!(f.head.as_ref().unwrap()["writes"].as_array().unwrap().len(), 6);
        assert!(new_write_finding(rule, "app/net.py", &[]).is_none());
    }

    #[test]
    fn resolve_reports_a_write_through_a_retrying_helper_under_the_packs_rule_and_not_a_plain_one() {
        let set = set_with("python/retry-helper-write");
        let orders = change("app/orders.py", Some(GET), POST);
        let net = change("app/net.py", Some(RETRYING), &format!("{RETRYING}\n# touched\n"));
        let found = resolve(&set, &[&orders, &net], None).result.findings;
        let got: Vec<(&str, &str, u32)> =
            found.iter().map(|f| (f.rule.as_str(), f.path.as_str(), f.line)).collect();
        assert_eq!(got, [("python/retry-helper-write", "app/orders.py", 5)]);
        let plain = change("app/net.py", Some(PLAIN), &format!("{PLAIN}\n# touched\n"));
        assert!(resolve(&set, &[&orders, &plain], None).result.findings.is_empty());
        // A pack without the helper rule gets nothing, whatever it holds.
        let other = set_with("python/retry-helper-writes");
        assert!(resolve(&other, &[&orders, &net], None).result.findings.is_empty());
    }

    #[test]
    fn resolve_reports_a_helper_made_retrying_with_the_writes_sent_through_it_and_not_with_reads_only() {
        let set = set_with("python/retry-helper-write");
        let net = change("app/net.py", Some(PLAIN), RETRYING);
        let orders = change("app/orders.py", Some(POST), &format!("{POST}\n# touched\n"));
        let found = resolve(&set, &[&net, &orders], None).result.findings;
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].path, "app/net.py");
        assert_eq!(
            found[0].message,
            "a write is now sent through a retry helper: `resilient` now retries, and writes are sent through it: app/orders.py:5 (POST)"
        );
        let reads = change("app/orders.py", Some(GET), &format!("{GET}\n# touched\n"));
        assert!(resolve(&set, &[&net, &reads], None).result.findings.is_empty());
    }

    /// A namesake of the helper in a file that imports neither it nor its
    /// module is another function: its writes are not sent through it.
    #[test]
    fn a_namesake_in_a_file_that_does_not_import_the_helper_is_not_its_caller() {
        let set = set_with("python/retry-helper-write");
        let net = change("app/net.py", Some(PLAIN), RETRYING);
        let other = "from tools.local import resilient\n\n\ndef create(s, o):\n    return resilient(lambda: s.post('/orders', json=o))\n";
        let unrelated = change("tools/orders.py", Some(other), &format!("{other}\n# touched\n"));
        assert!(resolve(&set, &[&net, &unrelated], None).result.findings.is_empty());
        // Through the module, not the name: `from app import net` .. `net.resilient(..)`.
        let by_module = "from app import net\n\n\ndef create(s, o):\n    return resilient(lambda: s.post('/orders', json=o))\n";
        let caller = change("app/orders.py", Some(by_module), &format!("{by_module}\n# touched\n"));
        assert_eq!(resolve(&set, &[&net, &caller], None).result.findings.len(), 1);
    }
}
