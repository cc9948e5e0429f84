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
use crate::finding::{Finding, Note};
use syntax::{Code, Family};
pub(crate) use tree::RepoHead;

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
}

/// A write the change newly sends through a retrying helper.
#[derive(Debug)]
struct NewWrite {
    path: String,
    line: u32,
    verb: &'static str,
    helper: String,
    site: String,
}

/// What is known of a helper name in one language.
#[derive(Debug, Default, Clone)]
struct Resolved {
    /// `path:line` of each definition found, and whether it retries.
    defs: Vec<(String, bool)>,
}

impl Resolved {
    fn retrying_site(&self) -> Option<&str> {
        (!self.defs.is_empty() && self.defs.iter().all(|(_, r)| *r)).then(|| self.defs[0].0.as_str())
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
        let writes = code.writes_in(call.args.0, call.args.1);
        let Some(&(first, verb)) = writes.first() else { continue };
        let line = code.lines.of(call.at);
        let t = touched(line) || writes.iter().any(|&(w, _)| touched(code.lines.of(w)));
        let text = text_of(&call.name, call.at, first);
        let span = (call.at, first, call.args.1);
        out.push(Through { helper: call.name, verb, line, touched: t, text, identity: Vec::new(), span });
    }
    if family == Family::Python {
        for syntax::Decorated { name, at, def_at, body } in syntax::decorated(code) {
            let writes = code.writes_in(body.0, body.1);
            let Some(&(first, verb)) = writes.first() else { continue };
            let line = code.lines.of(at);
            let t = touched(line) || writes.iter().any(|&(w, _)| touched(code.lines.of(w)));
            let text = text_of(&name, def_at, first);
            let span = (at, first, body.1);
            out.push(Through { helper: name, verb, line, touched: t, text, identity: Vec::new(), span });
        }
    }
    out
}

/// Definitions and callers of the names being resolved, gathered file by file.
struct Index<'n> {
    wanted: &'n HashMap<Family, HashSet<String>>,
    became: &'n HashMap<Family, HashSet<String>>,
    resolved: HashMap<(Family, String), Resolved>,
    /// Writes sent through each helper the change made retrying (`path:line (VERB)`).
    callers: HashMap<(Family, String), Vec<String>>,
    /// Writes through the wanted helpers in unchanged files ([`Through::text`]).
    elsewhere: HashSet<(Family, String)>,
}

impl Index<'_> {
    fn scan(&mut self, family: Family, path: &str, code: &Code, unchanged: bool) {
        if let Some(names) = self.wanted.get(&family) {
            for d in syntax::definitions(family, code, &|n| names.contains(n)) {
                let site = format!("{path}:{}", code.lines.of(d.at));
                self.resolved.entry((family, d.name)).or_default().defs.push((site, d.retrying));
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
            let bodies: Vec<(usize, usize)> = syntax::definitions(family, code, &|n| names.contains(n))
                .into_iter()
                .map(|d| d.body)
                .collect();
            for c in syntax::calls(code, &|n| names.contains(n)) {
                // A call inside the helper's own definition is not a caller.
                if bodies.iter().any(|&(a, b)| c.at >= a && c.at < b) {
                    continue;
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

/// Resolves the helpers the change sends writes through (and the helpers it
/// made retrying) and reports them under each pack's `retry-helper-write`.
pub(crate) fn resolve(set: &RuleSet, files: &[&FileChange], tree: Option<&RepoHead>) -> Resolution {
    let mut res = Resolution::default();
    let out = &mut res.result;
    let rule_of = |family: Family| -> Option<&Rule> {
        let id = format!("{}/retry-helper-write", family.pack());
        set.rules.iter().find(|r| r.id == id)
    };
    let tests = ScanPaths::defaults();
    // 1. Prepare the changed files whose added lines are near a write word
    //    (or a decorator, or a retry word for the other direction).
    let mut prepared: Vec<Prepared> = Vec::new();
    for file in files {
        let Some(lang) = Language::of_path(&file.path) else { continue };
        let Some(family) = Family::of(lang) else { continue };
        if rule_of(family).is_none() || file.added.is_empty() || is_test(&tests, &file.path) {
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
    if prepared.is_empty() {
        return res;
    }
    // Each prepared head's bracket and line index, built once for every step.
    let codes: Vec<Code> = prepared.iter().map(|p| Code::new(&p.masked_head)).collect();
    // 2. Writes through a helper, on both sides; names to resolve.
    let mut per_file: Vec<(usize, Vec<Through>, Vec<Through>)> = Vec::new();
    let mut wanted: HashMap<Family, HashSet<String>> = HashMap::new();
    for (i, p) in prepared.iter().enumerate().filter(|(_, p)| p.writes_near) {
        let code = &codes[i];
        let head = throughs(p.family, code, &|l| p.file.is_added(l));
        if !head.iter().any(|t| t.touched) {
            continue;
        }
        let base = match p.file.base.text() {
            Some(b) => {
                let lang = Language::of_path(&p.file.path).unwrap_or(Language::Python);
                let m = mask(b, &lang.syntax(), View::Code);
                throughs(p.family, &Code::new(&m), &|_| false)
            }
            None => Vec::new(),
        };
        for t in head.iter().filter(|t| t.touched) {
            wanted.entry(p.family).or_default().insert(t.helper.clone());
        }
        per_file.push((i, head, base));
    }
    // 3. Definitions the change made retrying (the other direction). The
    //    base is masked and its definitions listed once per file, only when
    //    a touched head definition retries.
    let mut became: Vec<(usize, syntax::Def)> = Vec::new();
    for (i, p) in prepared.iter().enumerate().filter(|(_, p)| p.retry_near) {
        let code = &codes[i];
        let edited = |above: usize, body: (usize, usize)| {
            touches(p.file, code.lines.of(above), code.lines.of(body.1.saturating_sub(1)))
        };
        let touched: Vec<syntax::Def> = syntax::definitions_where(p.family, code, &|_| true, &edited)
            .into_iter()
            .filter(|d| d.retrying)
            .collect();
        let Some(base) = p.file.base.text().filter(|_| !touched.is_empty()) else { continue };
        let names: HashSet<&str> = touched.iter().map(|d| d.name.as_str()).collect();
        let lang = Language::of_path(&p.file.path).unwrap_or(Language::Python);
        let m = mask(base, &lang.syntax(), View::Code);
        let base_code = Code::new(&m);
        // name -> whether every base definition of it did not retry.
        let mut plain: HashMap<String, bool> = HashMap::new();
        for bd in syntax::definitions(p.family, &base_code, &|n| names.contains(n)) {
            let e = plain.entry(bd.name).or_insert(true);
            *e = *e && !bd.retrying;
        }
        // Only a definition that was there and did not retry: a new one
        // (or one moved here from another file) did not change behaviour.
        for d in touched {
            if plain.get(&d.name).copied().unwrap_or(false) {
                became.push((i, d));
            }
        }
    }
    if per_file.is_empty() && became.is_empty() {
        return res;
    }
    // 4. Resolve: definitions in every changed file of the family, then in the tree.
    let became_names: HashMap<Family, HashSet<String>> =
        became.iter().fold(HashMap::new(), |mut m, (i, d)| {
            m.entry(prepared[*i].family).or_default().insert(d.name.clone());
            m
        });
    let mut index = Index {
        wanted: &wanted,
        became: &became_names,
        resolved: HashMap::new(),
        callers: HashMap::new(),
        elsewhere: HashSet::new(),
    };
    // Writes through the wanted helpers in the base of any changed file:
    // code moved from there is not new.
    let mut before: HashSet<(Family, String)> = HashSet::new();
    // The identities of the writes in the bases of the changed files: a
    // head write with one of them was there (moved, or sent through another
    // builder of the same client), whatever helper sent it.
    let mut before_ids: HashSet<(Family, &'static str, String)> = HashSet::new();
    // The identities of every write in those bases, helper or not: a head
    // write with one of them is an existing write newly sent through a
    // helper (reported where it is), not a brand-new one.
    let mut existed: HashSet<(Family, &'static str, String)> = HashSet::new();
    for file in files {
        let Some(lang) = Language::of_path(&file.path) else { continue };
        let Some(family) = Family::of(lang) else { continue };
        let (Some(names), Some(base)) = (wanted.get(&family), file.base.text()) else { continue };
        if !write_words().is_match(base) {
            continue;
        }
        let m = mask(base, &lang.syntax(), View::Code);
        let base_code = Code::new(&m);
        let all: Vec<(usize, usize, usize)> =
            base_code.writes_in(0, m.len()).iter().map(|&(w, _)| (w, w, m.len())).collect();
        for (&(_, verb), ids) in
            base_code.writes_in(0, m.len()).iter().zip(identities(family, &base_code, &all))
        {
            for id in ids {
                existed.insert((family, verb, scoped(&file.path, &id)));
            }
        }
        for t in throughs(family, &base_code, &|_| false) {
            for id in &t.identity {
                before_ids.insert((family, t.verb, scoped(&file.path, id)));
            }
            if names.contains(&t.helper) {
                before.insert((family, t.text));
            }
        }
    }
    let changed: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for file in files {
        let Some(lang) = Language::of_path(&file.path) else { continue };
        let Some(family) = Family::of(lang) else { continue };
        if is_test(&tests, &file.path)
            || (!wanted.contains_key(&family) && !became_names.contains_key(&family))
        {
            continue;
        }
        let Some(head) = file.head.text() else { continue };
        match prepared.iter().position(|p| p.file.path == file.path) {
            Some(i) => index.scan(family, &file.path, &codes[i], false),
            None => {
                index.scan(family, &file.path, &Code::new(&mask(head, &lang.syntax(), View::Code)), false)
            }
        }
    }
    let unresolved: HashMap<Family, Vec<String>> = {
        let mut m: HashMap<Family, Vec<String>> = HashMap::new();
        for (family, names) in &wanted {
            for n in names {
                if !index.resolved.contains_key(&(*family, n.clone())) {
                    m.entry(*family).or_default().push(n.clone());
                }
            }
        }
        for (family, names) in &became_names {
            m.entry(*family).or_default().extend(names.iter().cloned());
        }
        m
    };
    if let Some(tree) = tree.filter(|_| !unresolved.is_empty()) {
        match tree::read(tree, &unresolved, &changed, &|p| is_test(&tests, p)) {
            Ok(read) => {
                if read.partial {
                    out.notes.push(Note::info(
                        None,
                        "some files of the head tree were too large to read while resolving retry helpers; a helper defined there may be missed",
                    ));
                }
                for f in read.files {
                    index.scan(f.family, &f.path, &Code::new(&f.masked), true);
                }
            }
            // A git failure is not a bound we chose: block, so a write sent
            // through an unread helper cannot pass unseen.
            Err(e) => out.notes.push(Note::blocking(
                None,
                format!("could not read the head tree to resolve retry helpers ({e}); check that the head commit is in the repository, then run retrygate again"),
            )),
        }
    }
    // 5. Findings: writes newly sent through a helper that retries. New
    //    writes through the helpers of one file (the builders of one
    //    client) are one finding, listing them, not one per call.
    let mut new_writes: BTreeMap<(Family, String), Vec<NewWrite>> = BTreeMap::new();
    for (i, head, base) in per_file {
        let p = &prepared[i];
        let mut base_count: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for t in &base {
            *base_count.entry((t.helper.as_str(), t.verb)).or_default() += 1;
        }
        let mut head_count: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for t in &head {
            *head_count.entry((t.helper.as_str(), t.verb)).or_default() += 1;
        }
        let mut reported: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for t in head.iter().filter(|t| t.touched) {
            let key = (t.helper.as_str(), t.verb);
            let excess = head_count[&key].saturating_sub(base_count.get(&key).copied().unwrap_or(0));
            let seen = (p.family, t.text.clone());
            let was_there = t
                .identity
                .iter()
                .any(|id| before_ids.contains(&(p.family, t.verb, scoped(&p.file.path, id))));
            if was_there || before.contains(&seen) || index.elsewhere.contains(&seen) {
                res.stale.insert((p.file.path.clone(), t.line));
                continue;
            }
            let done = reported.entry(key).or_default();
            if *done >= excess {
                continue;
            }
            let Some(site) =
                index.resolved.get(&(p.family, t.helper.clone())).and_then(Resolved::retrying_site)
            else {
                continue;
            };
            *done += 1;
            let client = site.rsplit_once(':').map_or(site, |(file, _)| file).to_string();
            let brand_new =
                !t.identity.iter().any(|id| existed.contains(&(p.family, t.verb, scoped(&p.file.path, id))));
            // Only brand-new writes through a client the change left alone
            // are listed together; an existing write newly sent through a
            // retry is reported where it is.
            let group = if brand_new && !changed.contains(client.as_str()) {
                client
            } else {
                format!("{}:{}", p.file.path, t.line)
            };
            new_writes.entry((p.family, group)).or_default().push(NewWrite {
                path: p.file.path.clone(),
                line: t.line,
                verb: t.verb,
                helper: t.helper.clone(),
                site: site.to_string(),
            });
        }
    }
    for ((family, client), writes) in new_writes {
        let Some(rule) = rule_of(family) else { continue };
        let first = &writes[0];
        let what = if writes.len() == 1 {
            format!("a {} through `{}`, which retries (defined at {})", first.verb, first.helper, first.site)
        } else {
            let shown: Vec<String> = writes
                .iter()
                .take(5)
                .map(|w| format!("{}:{} ({} through `{}`)", w.path, w.line, w.verb, w.helper))
                .collect();
            let more =
                if writes.len() > 5 { format!(" and {} more", writes.len() - 5) } else { String::new() };
            format!(
                "{} new writes through the retrying client defined in {client}: {}{more}",
                writes.len(),
                shown.join(", ")
            )
        };
        let listed: Vec<serde_json::Value> = writes
            .iter()
            .map(|w| {
                serde_json::json!({ "path": w.path, "line": w.line, "helper": w.helper, "method": w.verb, "definition": w.site })
            })
            .collect();
        let head = if writes.len() == 1 {
            serde_json::json!({ "helper": first.helper, "method": first.verb, "definition": first.site })
        } else {
            serde_json::json!({ "writes": listed })
        };
        out.findings.push(
            Finding::new(rule.kind, &rule.id, &first.path, first.line)
                .severity(rule.severity)
                .message(rule.message.replace("{match}", &what))
                .head(head),
        );
    }
    // 6. Findings: a helper the change made retrying, with writes sent through it.
    for (i, d) in became {
        let p = &prepared[i];
        let Some(rule) = rule_of(p.family) else { continue };
        let Some(sites) = index.callers.get(&(p.family, d.name.clone())) else { continue };
        let code = &codes[i];
        let (a, b) = (code.lines.of(d.above), code.lines.of(d.body.1.saturating_sub(1)));
        let raw = p.file.head.text().unwrap_or("");
        let line = (a..=b)
            .filter(|&l| p.file.is_added(l))
            .find(|&l| retry_words().is_match(raw.lines().nth(l as usize - 1).unwrap_or("")))
            .or_else(|| (a..=b).find(|&l| p.file.is_added(l)))
            .unwrap_or(a);
        let mut sites = sites.clone();
        sites.sort();
        sites.dedup();
        let shown: Vec<&str> = sites.iter().take(3).map(String::as_str).collect();
        let more = if sites.len() > 3 { format!(" and {} more", sites.len() - 3) } else { String::new() };
        let what =
            format!("`{}` now retries, and writes are sent through it: {}{more}", d.name, shown.join(", "));
        out.findings.push(
            Finding::new(rule.kind, &rule.id, &p.file.path, line)
                .severity(rule.severity)
                .message(rule.message.replace("{match}", &what))
                .head(serde_json::json!({ "helper": d.name, "writes": sites })),
        );
    }
    res
}
