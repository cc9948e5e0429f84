//! Retry settings outside Rust read from syntax trees (tree-sitter): each
//! retry library's settings found where its data file says they are
//! ([`sites`]), each value followed from where it is written to where the
//! library takes it ([`eval`], over the bindings of [`defs`]), and the
//! effective setting of every site compared between base and head.
//!
//! - [`grammar`]: which grammar reads a path (Python, JavaScript,
//!   TypeScript and TSX, Go, Java);
//! - [`defs`]: what a file binds and imports;
//! - [`eval`]: a value and the trail of places it was followed through;
//! - [`sites`]: the library sites of a file.
//!
//! A regression is reported at the line that caused it: the deepest place
//! of the trail that the change wrote (a constant in another file of the
//! change, an object spread, a default argument), with the library call it
//! reaches named in the message. A setting the base could compute and the
//! head cannot is a blocking note naming the expression: fail closed.
//!
//! - [`dependents`]: unchanged files of the head tree that import a
//!   changed file, so a constant edited in one file is followed to the
//!   retry of another;
//! - [`requests`]: a write newly sent through a library that retries
//!   every method (go-retryablehttp's `NewRequest`);
//! - [`retry_after`]: a retry that reached code reading the Retry-After
//!   header in the base and reaches none in the head (no library data:
//!   the header is the same in every language).
//!
//! What is not read here: languages without a grammar yet (Kotlin, Ruby,
//! C#, PHP: the token floor and the rule packs read them).

pub(crate) mod defs;
pub(crate) mod dependents;
pub(crate) mod eval;
pub(crate) mod grammar;
pub(crate) mod requests;
pub(crate) mod retry_after;
pub(crate) mod sites;

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::json;

use super::knobs::compare::{self, Judgement, Worse};
use super::{Analyzer, FileResult};
use crate::changeset::FileChange;
use crate::finding::{Finding, Kind, KindDoc, Note, Severity};
use defs::{FileTree, Index};
use eval::{Loc, World};
use grammar::Grammar;
use sites::Site;

/// The library settings read from syntax trees, as an analyzer.
#[derive(Debug, Default)]
pub struct TreesAnalyzer {
    /// The repository and head commit, for the unchanged files that read
    /// what the change redefines ([`dependents`]); `None` for a change
    /// built from texts.
    head: Option<crate::analyze::rules::helpers::RepoHead>,
    /// The same for the base (the merge base the change starts from).
    base: Option<crate::analyze::rules::helpers::RepoHead>,
}

impl TreesAnalyzer {
    /// The analyzer for a change read from git: it also reads the head
    /// tree's files that import a changed file.
    pub fn for_changeset(cs: &crate::changeset::ChangeSet) -> TreesAnalyzer {
        let is_commit = |rev: &str| rev.len() >= 40 && rev.bytes().any(|b| b != b'0');
        let at = |rev: &str| {
            is_commit(rev)
                .then(|| crate::changeset::Git::open(&cs.repo).ok())
                .flatten()
                .map(|git| crate::analyze::rules::helpers::RepoHead { git, rev: rev.to_string() })
        };
        TreesAnalyzer { head: at(&cs.head), base: at(&cs.merge_base) }
    }
}

/// Every shape this analyzer reports, with its documentation (`retrygate
/// rules list` and docs/rules.md show them).
pub const CHECKS: &[(&str, Kind, KindDoc)] = &[
    (
        "tree/retry-count-raised",
        Kind::RetryCountRaised,
        KindDoc {
            what: "A retry library's count (an option such as `retries`, `total`, `maxAttempts`, a call such as `stop_after_attempt(n)`), followed through names, imports, spreads, class fields and defaults to the value it computes, is higher in the head than in the base.",
            why: "Every extra attempt is another request from every client at the moment the dependency is failing; the change is often one binding away from the call (a constant in another file, an options object spread into the call).",
            example: "export const LIMITS = { retries: 3 }  ->  { retries: 10 }   (used as pRetry(fn, LIMITS) in another file)",
            use_instead: "Keep the count at 3 attempts or fewer; add a retry budget instead of attempts.",
        },
    ),
    (
        "tree/retry-unbounded",
        Kind::RetryUnbounded,
        KindDoc {
            what: "A retry library's count went from a number to no limit (`stop_never`, infinity, `-1`), or a holder lost its count and the library's default is unlimited.",
            why: "An unbounded retry never stops adding load to a dependency that is down.",
            example: "@retry(stop=stop_after_attempt(5))  ->  @retry(stop=stop_never)",
            use_instead: "Keep a finite count, and a deadline over all attempts.",
        },
    ),
    (
        "tree/jitter-removed",
        Kind::JitterRemoved,
        KindDoc {
            what: "A retry library's wait went from a jittering constructor or option to one that does not jitter, where the wait is built (also when it is assigned to a name and passed in elsewhere).",
            why: "Without jitter, clients that failed together retry together, in waves that keep an overloaded dependency down.",
            example: "wait_rule = wait_random_exponential(max=60)  ->  wait_rule = wait_exponential(max=60)",
            use_instead: "Keep a jittered wait (full jitter).",
        },
    ),
    (
        "tree/retry-non-idempotent",
        Kind::RetryNonIdempotent,
        KindDoc {
            what: "A retry library's methods option (urllib3's `allowed_methods` or its older spelling `method_whitelist`), followed to its value, now lets POST or PATCH be retried: set to none (every method) or to a list that names a write, where the base retried idempotent methods only.",
            why: "A retried write after a lost answer is applied twice: a second charge, a duplicate order.",
            example: "ANY = None; Retry(total=3, method_whitelist=ANY)   (base: Retry(total=3))",
            use_instead: "Keep the default (idempotent methods), or send an Idempotency-Key the server honours before retrying writes.",
        },
    ),
    (requests::RULE, Kind::RetryNonIdempotent, requests::DOC),
    (
        retry_after::RULE,
        Kind::RetryAfterIgnored,
        KindDoc {
            what: "A retry that reached code reading the `Retry-After` header in the base (in its own body, through helpers of its file, or through a function or class of another file) reaches none in the head, while the retry is still there. The header is found as a string on the syntax tree; a reading moved into a helper the head still calls is not reported.",
            why: "The server's wait is replaced by the client's own backoff, which is usually shorter: every client retries into the rate limit it was just told about (RFC 9110 10.2.3, RFC 6585 4).",
            example: "retryWithBackoff() used getRetryAfterDelayMs(err) (headers['retry-after'])  ->  the helper is deleted and only the exponential delay is left",
            use_instead: "Keep reading Retry-After (seconds and HTTP-date) in the retry and wait at least that long, with jitter on top.",
        },
    ),
    (
        "tree/timeout-lowered",
        Kind::TimeoutLowered,
        KindDoc {
            what: "A retry library's per-attempt or total timeout, followed to its value, is lower in the head.",
            why: "A shorter timeout under a retry turns slow answers into more attempts.",
            example: "Retry(total=3, timeout=30)  ->  Retry(total=3, timeout=5)",
            use_instead: "Keep the timeout above the dependency's slow answers, and bound the retries over all attempts.",
        },
    ),
];

impl Analyzer for TreesAnalyzer {
    fn name(&self) -> &str {
        "the syntax-tree analyzer"
    }

    fn wants(&self, path: &str) -> bool {
        Grammar::of_library_path(path).is_some()
    }

    fn analyze(&self, file: &FileChange) -> FileResult {
        self.analyze_set(&[file])
    }

    fn analyze_set(&self, files: &[&FileChange]) -> FileResult {
        let mut out = FileResult::default();
        out.findings = retry_after::check(files, self.base.as_ref(), self.head.as_ref(), &mut out.notes);
        // A change that names no retry library in a tree language has no
        // site to compare: nothing is parsed.
        let uses_one = files.iter().any(|f| {
            let Some(g) = Grammar::of_library_path(&f.path) else { return false };
            [f.base.text(), f.head.text()].into_iter().flatten().any(|t| {
                super::knobs::libraries::LIBRARIES.0.iter().any(|l| l.used_by(g.library_language(), t))
            })
        });
        if !uses_one && self.head.is_none() {
            return out;
        }
        let (mut base, base_notes) = parse_side(files, |f| f.base.text());
        let (mut head, head_notes) = parse_side(files, |f| f.head.text());
        out.notes.extend(base_notes.into_iter().chain(head_notes));
        // Unchanged files that import a changed one join both revisions.
        // The two revisions are indexed once, and again only when importers
        // joined them.
        let mut worlds = (
            World { files: base.iter().map(Index::of).collect() },
            World { files: head.iter().map(Index::of).collect() },
        );
        let sources = changed_constants(files, &worlds.0, &worlds.1);
        let mut deps = Vec::new();
        if let Some(tree) = self.head.as_ref().filter(|_| !sources.is_empty()) {
            let changed: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
            match dependents::read(tree, &sources, &changed) {
                Ok((found, partial)) => {
                    deps = found;
                    if partial {
                        out.notes.push(Note::info(None, "some files of the head tree were too large, too many or not UTF-8 while following changed settings to the retries that import them; a retry there may be missed"));
                    }
                }
                Err(e) => out.notes.push(Note::blocking(None, format!("could not read the head tree to follow changed settings to the retries that import them ({e}); check that the head commit is in the repository, then run retrygate again"))),
            }
        }
        // No file of the change uses a retry library and none imports what
        // it changed: there is no site to compare.
        if !uses_one && deps.is_empty() {
            return out;
        }
        // Unchanged modules a changed file imports (shared retry defaults
        // spread into a call): the same text on both sides.
        if let Some(tree) = self.head.as_ref().filter(|_| uses_one) {
            let changed: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
            let known: HashSet<String> = deps.iter().map(|d| d.path.clone()).collect();
            match dependents::imported(tree, files, &changed) {
                Ok(found) => deps.extend(found.into_iter().filter(|d| !known.contains(&d.path))),
                Err(e) => out.notes.push(Note::blocking(None, format!("could not read the head tree for the modules the change imports its retry settings from ({e}); check that the head commit is in the repository, then run retrygate again"))),
            }
        }
        if !deps.is_empty() {
            drop(worlds);
            for d in deps {
                if let (Ok(b), Ok(h)) =
                    (FileTree::new(&d.path, d.grammar, &d.text), FileTree::new(&d.path, d.grammar, &d.text))
                {
                    base.push(b);
                    head.push(h);
                } else {
                    out.notes.push(Note::blocking(
                        Some(&d.path),
                        "could not build a syntax tree of this file, which imports a setting the change redefines; its retry settings were not compared: review it by hand and sign off",
                    ));
                }
            }
            worlds = (
                World { files: base.iter().map(Index::of).collect() },
                World { files: head.iter().map(Index::of).collect() },
            );
        }
        let (base_world, head_world) = worlds;
        let (base_sites, _) = all_sites(&base_world);
        let (head_sites, unread) = all_sites(&head_world);
        let by_path: HashMap<&str, &FileChange> = files.iter().map(|f| (f.path.as_str(), *f)).collect();
        // Fail closed: a changed file's head that could not be read
        // through, where it holds retry code, blocks with where and why.
        // Only where the change wrote: an old unparsed region is no news.
        let mut said = HashSet::new();
        for (at, why) in unread {
            let changed_here = by_path.get(at.path.as_str()).is_some_and(|f| f.is_added(at.line));
            if changed_here && said.insert(at.path.clone()) {
                out.notes.push(Note::blocking(
                    Some(&at.path),
                    format!("line {}: {why}, so a retry setting there may not have been compared; review it by hand and sign off", at.line),
                ));
            }
        }
        let added = |l: &Loc| by_path.get(l.path.as_str()).is_some_and(|f| f.is_added(l.line));
        out.findings.extend(requests::check(&base_sites, &head_sites, &added, self.head.as_ref()));
        for (h, b) in pair(&base_sites, &head_sites) {
            let (b, h) = (&base_sites[b], &head_sites[h]);
            // Requests the library sends are new or not, not better or worse.
            if h.sends || b.sends {
                continue;
            }
            // Where the change wrote the head's value: the deepest place
            // followed that is an added line, else the site itself.
            let cause = h.value.trail.iter().rev().find(|l| added(l)).cloned();
            let touched = cause.is_some() || added(&h.at);
            if let (Some(bw), Some(hw)) = (b.writes, h.writes) {
                if !bw && hw && (touched || by_path.contains_key(h.at.path.as_str())) {
                    out.findings.push(methods_finding(b, h, cause.unwrap_or_else(|| h.at.clone())));
                }
                continue;
            }
            match compare::judge(h.knob, &b.value.value, &h.value.value) {
                Judgement::Worse(w) if touched || by_path.contains_key(h.at.path.as_str()) => {
                    out.findings.push(finding(w, b, h, cause.unwrap_or_else(|| h.at.clone())));
                }
                Judgement::Unknown if touched => {
                    let at = cause.unwrap_or_else(|| h.at.clone());
                    out.notes.push(Note::blocking(
                        Some(&at.path),
                        format!(
                            "line {}: {}'s `{}` (at {}:{}) was {} and is now {}, which retrygate cannot compute; write it as a number or a constant the code names, or have a maintainer sign off after checking it does not exceed {}",
                            at.line,
                            h.library,
                            h.name,
                            h.at.path,
                            h.at.line,
                            b.value.value.show(),
                            h.value.value.show(),
                            b.value.value.show()
                        ),
                    ));
                }
                _ => {}
            }
        }
        out
    }
}

/// The changed files whose file-level bindings changed to a value the
/// evaluator computes: the files whose importers may have changed
/// behaviour without being changed themselves.
pub(crate) fn changed_constants<'a>(
    files: &[&'a FileChange],
    bw: &World<'_>,
    hw: &World<'_>,
) -> Vec<&'a FileChange> {
    let mut out = Vec::new();
    for f in files {
        let Some(h) = hw.files.iter().position(|ix| ix.file.path == f.path) else { continue };
        let b = bw.files.iter().position(|ix| ix.file.path == f.path);
        let changed = hw.files[h].defs.iter().any(|(name, defs)| {
            let Some(hd) = defs.iter().rev().find(|d| d.scope.is_none()) else { return false };
            let head_text = hw.files[h].file.text_of(hd.value);
            let base_text = b.and_then(|b| {
                bw.files[b]
                    .defs
                    .get(name)
                    .and_then(|ds| ds.iter().rev().find(|d| d.scope.is_none()))
                    .map(|d| bw.files[b].file.text_of(d.value))
            });
            // A value the evaluator computes, or a list of methods (which
            // it does not compute, but a methods option reads by its words).
            base_text.is_some_and(|t| t != head_text)
                && (hw.eval(h, hd.value, 0).value.is_known() || names_a_write(head_text))
        });
        if changed {
            out.push(*f);
        }
    }
    out
}

/// Whether a binding's text names a write method (a methods list).
fn names_a_write(text: &str) -> bool {
    let t = text.to_ascii_uppercase();
    t.contains("POST") || t.contains("PATCH")
}

/// The parsed files of one side; a side that cannot be parsed is a
/// blocking note (its sites could not be compared).
fn parse_side<'a>(
    files: &[&'a FileChange],
    text: impl Fn(&'a FileChange) -> Option<&'a str>,
) -> (Vec<FileTree>, Vec<Note>) {
    let mut trees = Vec::new();
    let mut notes = Vec::new();
    for f in files {
        let (Some(g), Some(t)) = (Grammar::of_library_path(&f.path), text(f)) else { continue };
        match FileTree::new(&f.path, g, t) {
            Ok(tree) => trees.push(tree),
            Err(e) => notes.push(Note::blocking(
                Some(&f.path),
                format!("could not build a syntax tree ({e}); its retry settings were not compared: review it by hand and sign off"),
            )),
        }
    }
    (trees, notes)
}

fn all_sites(world: &World<'_>) -> (Vec<Site>, Vec<sites::Unread>) {
    let mut out = Vec::new();
    let mut unread = Vec::new();
    for i in 0..world.files.len() {
        let libs = sites::libraries_of(world, i);
        let (s, u) = sites::sites(world, i, &libs);
        out.extend(s);
        unread.extend(u);
    }
    (out, unread)
}

/// `(head, base)` index pairs: sites of one identity in one file pair in
/// order; what is left pairs across files by identity alone (code moved to
/// another file), when that identity is left once on each side.
fn pair(base: &[Site], head: &[Site]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut by_key: HashMap<(&str, &str), VecDeque<usize>> = HashMap::new();
    for (i, b) in base.iter().enumerate() {
        by_key.entry((b.at.path.as_str(), b.identity.as_str())).or_default().push_back(i);
    }
    let mut left_head = Vec::new();
    for (i, h) in head.iter().enumerate() {
        match by_key.get_mut(&(h.at.path.as_str(), h.identity.as_str())).and_then(|q| q.pop_front()) {
            Some(b) => out.push((i, b)),
            None => left_head.push(i),
        }
    }
    let mut left_base: HashMap<&str, Vec<usize>> = HashMap::new();
    for q in by_key.values() {
        for &b in q {
            left_base.entry(base[b].identity.as_str()).or_default().push(b);
        }
    }
    let mut head_count: HashMap<&str, usize> = HashMap::new();
    for &i in &left_head {
        *head_count.entry(head[i].identity.as_str()).or_default() += 1;
    }
    let mut used = HashSet::new();
    for i in left_head {
        let id = head[i].identity.as_str();
        if let Some(bs) = left_base.get(id) {
            if bs.len() == 1 && head_count.get(id) == Some(&1) && used.insert(bs[0]) {
                out.push((i, bs[0]));
            }
        }
    }
    out
}

fn finding(w: Worse, b: &Site, h: &Site, at: Loc) -> Finding {
    let (bv, hv) = (b.value.value.show(), h.value.value.show());
    let lib = &h.library;
    let what = if h.constructor || b.constructor {
        format!("`{}` ({lib}'s jittered wait) replaced by `{}`, which does not jitter", b.name, h.name)
    } else if let Some(src) = h.default_source.as_deref().filter(|_| b.default_source.is_none()) {
        format!("{lib}'s `{}` went from {bv} to {hv}: the option was removed and the library's default applies ({src})", h.name)
    } else if let Some(src) = b.default_source.as_deref().filter(|_| h.default_source.is_none()) {
        format!("{lib}'s `{}` set to {hv} where the library's default was {bv} ({src})", h.name)
    } else {
        match w {
            Worse::CountRaised => format!("{lib}'s `{}` raised from {bv} to {hv}", h.name),
            Worse::Unbounded => format!("{lib}'s `{}` went from {bv} to {hv}: no limit on retries", h.name),
            Worse::JitterOff => format!("{lib}'s `{}` turned jitter off ({bv} -> {hv})", h.name),
            Worse::TimeoutLowered => format!("{lib}'s `{}` lowered from {bv} to {hv}", h.name),
        }
    };
    let reach = if at == h.at {
        String::new()
    } else {
        format!("; it reaches the {lib} call at {}:{}", h.at.path, h.at.line)
    };
    Finding {
        kind: w.kind(),
        rule: tree_rule(w).to_string(),
        severity: Severity::Error,
        path: at.path.clone(),
        line: at.line,
        end_line: at.line,
        message: format!("{what}{reach} (followed on the syntax tree; read from the library's data)"),
        base: Some(json!({ "name": b.name, "value": bv })),
        head: Some(json!({ "name": h.name, "value": hv })),
        fix: None,
    }
}

/// A methods option that now lets writes be retried.
fn methods_finding(b: &Site, h: &Site, at: Loc) -> Finding {
    let lib = &h.library;
    let base = match &b.default_source {
        Some(src) => format!("left out (idempotent methods only: {src})"),
        None => b.value.value.show(),
    };
    let head = h.value.value.show();
    let reach = if at == h.at {
        String::new()
    } else {
        format!("; it reaches the {lib} call at {}:{}", h.at.path, h.at.line)
    };
    Finding {
        kind: Kind::RetryNonIdempotent,
        rule: "tree/retry-non-idempotent".to_string(),
        severity: Severity::Error,
        path: at.path.clone(),
        line: at.line,
        end_line: at.line,
        message: format!(
            "{lib}'s `{}` went from {base} to {head}: POST and PATCH are now retried, and a retry after a lost answer can apply a write twice{reach} (followed on the syntax tree; read from the library's data)",
            h.name
        ),
        base: Some(json!({ "name": b.name, "value": base })),
        head: Some(json!({ "name": h.name, "value": head })),
        fix: None,
    }
}

fn tree_rule(w: Worse) -> &'static str {
    match w {
        Worse::CountRaised => "tree/retry-count-raised",
        Worse::Unbounded => "tree/retry-unbounded",
        Worse::JitterOff => "tree/jitter-removed",
        Worse::TimeoutLowered => "tree/timeout-lowered",
    }
}
