//! The Rust analyzer: parses both versions of every changed `.rs` file with
//! syn, reduces each retry site to a normalised [`policy::Policy`], matches
//! base and head sites by enclosing item and order, and reports what got
//! more dangerous.
//!
//! - [`bounds`]: the depth limit and the stack every parse runs on;
//! - [`parse`]: guarded parsing (depth limit, located errors);
//! - [`sites`]: finding retry sites, timeouts and dropped builder setters;
//! - [`libs`]: what each retry crate's constructors, defaults and setters mean;
//! - [`includes`]: non-`.rs` files compiled as Rust (`#[path]`, `include!`);
//! - [`eval`]: constants, `let` bindings and `Duration` arithmetic;
//! - [`compare`]: the decisions (which finding kind a change is);
//! - [`testitems`]: the lines of `#[cfg(test)]` items and `#[test]` functions;
//! - this module: prefiltering, matching base with head, and placing findings.

pub mod bounds;
pub mod compare;
pub mod eval;
pub mod includes;
pub mod libs;
pub mod parse;
pub mod policy;
pub mod sites;
pub mod syntax;
pub mod testitems;

use std::collections::HashMap;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;

use super::{Analyzer, FileResult};
use crate::changeset::FileChange;
use crate::finding::{Finding, Kind, Note};
use compare::Change;
use sites::{FileModel, Site};

/// Text that any retry site, timeout or retry builder contains. A file whose
/// base and head both lack all of these is not parsed at all.
const RETRY_TOKENS: &[&str] = &[
    "retr",
    "backoff",
    "backon",
    "jitter",
    "attempt",
    "timeout",
    "sleep",
    ".send(",
    "idempoten",
    "exponential",
    "fibonacci",
    "constantbuilder",
    "fixedinterval",
    "tpsbudget",
];

fn retry_tokens() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(RETRY_TOKENS)
            .unwrap_or_else(|e| panic!("retry token patterns are constant and valid: {e}"))
    })
}

/// Whether `path` names a Rust source file: `.rs` in any case (`client.RS`
/// is Rust to rustc on a case-insensitive file system, and to a `#[path]`).
pub fn is_rust_path(path: &str) -> bool {
    path.len() >= 3 && path.as_bytes()[path.len() - 3..].eq_ignore_ascii_case(b".rs")
}

/// Whether a text may contain retry code worth parsing.
pub fn is_retry_relevant(text: &str) -> bool {
    retry_tokens().is_match(text)
}

/// The syn-based analyzer for `.rs` files.
#[derive(Debug, Default)]
pub struct RustAnalyzer;

impl RustAnalyzer {
    pub fn new() -> Self {
        RustAnalyzer
    }
}

/// Both sides of one file, modelled.
struct Modelled<'f> {
    file: &'f FileChange,
    base: Option<FileModel>,
    head: Option<FileModel>,
    notes: Vec<Note>,
}

impl Analyzer for RustAnalyzer {
    fn name(&self) -> &str {
        "the Rust analyzer"
    }

    fn wants(&self, path: &str) -> bool {
        is_rust_path(path)
    }

    fn extra(&self, cs: &crate::changeset::ChangeSet) -> super::Extra {
        includes::included(cs)
    }

    fn analyze(&self, file: &FileChange) -> FileResult {
        self.analyze_set(&[file])
    }

    fn analyze_set(&self, files: &[&FileChange]) -> FileResult {
        let modelled: Vec<Modelled> = files.par_iter().map(|f| model_file(f)).collect();
        let mut result = FileResult::default();
        let mut leftovers: Vec<(usize, Vec<usize>, Vec<usize>)> = Vec::new();
        for (fi, m) in modelled.iter().enumerate() {
            result.notes.extend(m.notes.iter().cloned());
            if let Some(head) = &m.head {
                result.notes.extend(uncomputable_counts(m.file, head));
            }
            let (Some(base), Some(head)) = (m.base.as_ref(), m.head.as_ref()) else {
                // One side absent: every site is unmatched for now.
                let b = m.base.as_ref().map_or(0, |x| x.sites.len());
                let h = m.head.as_ref().map_or(0, |x| x.sites.len());
                leftovers.push((fi, (0..b).collect(), (0..h).collect()));
                if let Some(head) = &m.head {
                    discarded(m.file, &FileModel::default(), head, &mut result.findings);
                }
                continue;
            };
            let (pairs, lb, lh) = match_sites(&base.sites, &head.sites);
            for (bi, hi) in pairs {
                place(
                    m.file,
                    &head.sites[hi],
                    compare::compare_sites(Some(&base.sites[bi].policy), &head.sites[hi].policy),
                    &mut result.findings,
                );
            }
            leftovers.push((fi, lb, lh));
            if !base.sites.is_empty() || !head.sites.is_empty() {
                timeouts(m.file, base, head, &mut result.findings);
            }
            discarded(m.file, base, head, &mut result.findings);
        }
        cross_file(&modelled, &leftovers, &mut result.findings);
        result
    }
}

/// Changed retry sites whose count is written out but cannot be computed
/// (`with_max_times(limit())`, a shift of an unknown name): the gate cannot
/// tell whether it went up, so a person must look.
fn uncomputable_counts(file: &FileChange, head: &FileModel) -> Vec<Note> {
    head.sites
        .iter()
        .filter(|s| s.policy.attempts.value == policy::Attempts::Unknown && file.touches(s.line, s.end_line))
        // A setter or constructor was given a count (`.with_max_times(..)`,
        // `RetryConfig::Simple(n)`); a library whose count lives elsewhere
        // (tower's Policy impl) says so in words instead.
        .filter(|s| s.policy.attempts.why.contains("(..)") || s.policy.attempts.why.contains("(n)"))
        .map(|s| {
            Note::blocking(
                Some(&file.path),
                format!(
                    "line {}: the retry count given to `{}` is computed in a way retrygate cannot evaluate; a maintainer checks how many attempts it allows before signing off (or write it as a literal or a `const`)",
                    s.line, s.policy.attempts.why
                ),
            )
        })
        .collect()
}

/// Prefilters, parses and models both sides of one file.
fn model_file(file: &FileChange) -> Modelled<'_> {
    let mut m = Modelled { file, base: None, head: None, notes: Vec::new() };
    let base = file.base.text();
    let head = file.head.text();
    if !base.is_some_and(is_retry_relevant) && !head.is_some_and(is_retry_relevant) {
        // Neither side mentions anything retry-like: nothing to compare.
        m.base = base.map(|_| FileModel::default());
        m.head = head.map(|_| FileModel::default());
        return m;
    }
    for (side, text, slot) in [("base", base, &mut m.base), ("head", head, &mut m.head)] {
        let Some(text) = text else { continue };
        match parse::parse_file(text) {
            Ok(ast) => *slot = Some(sites::model(&ast, text)),
            Err(e) => {
                m.notes.push(Note::blocking(
                    Some(&file.path),
                    format!("could not parse the {side} version ({e}); retry findings in this file may be missing"),
                ));
                // Compare against nothing rather than guess.
                *slot = Some(FileModel::default());
            }
        }
    }
    // Spans keep every parsed source alive in a thread-local map; the models
    // hold plain line numbers, so release it before the next file.
    proc_macro2::extra::invalidate_current_thread_spans();
    m
}

/// Pairs base and head sites: by item and library in order, then by item in
/// order, then by library in order (a renamed function), then the rest in
/// order when both sides have the same number left.
fn match_sites(base: &[Site], head: &[Site]) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
    let mut used_b = vec![false; base.len()];
    let mut used_h = vec![false; head.len()];
    let mut pairs = Vec::new();
    let passes: [&dyn Fn(&Site) -> String; 3] = [
        &|s: &Site| format!("{}\u{0}{}", s.item, s.policy.lib.id()),
        &|s: &Site| s.item.clone(),
        &|s: &Site| s.policy.lib.id().to_string(),
    ];
    for key in passes {
        let mut queue: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, s) in base.iter().enumerate().rev() {
            if !used_b[i] {
                queue.entry(key(s)).or_default().push(i);
            }
        }
        for (j, s) in head.iter().enumerate() {
            if used_h[j] {
                continue;
            }
            if let Some(i) = queue.get_mut(&key(s)).and_then(Vec::pop) {
                used_b[i] = true;
                used_h[j] = true;
                pairs.push((i, j));
            }
        }
    }
    let mut lb: Vec<usize> = (0..base.len()).filter(|&i| !used_b[i]).collect();
    let mut lh: Vec<usize> = (0..head.len()).filter(|&j| !used_h[j]).collect();
    if !lb.is_empty() && lb.len() == lh.len() {
        pairs.extend(lb.drain(..).zip(lh.drain(..)));
    }
    (pairs, lb, lh)
}

/// Sites left unmatched in their own file: a function moved to another file
/// is matched there by name and library; what is still unmatched is new.
fn cross_file(modelled: &[Modelled], leftovers: &[(usize, Vec<usize>, Vec<usize>)], out: &mut Vec<Finding>) {
    let short = |s: &Site| {
        let name = s.item.rsplit("::").next().unwrap_or(&s.item).to_string();
        format!("{name}\u{0}{}", s.policy.lib.id())
    };
    let mut pool: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    for (fi, lb, _) in leftovers.iter().rev() {
        if let Some(base) = &modelled[*fi].base {
            for &i in lb.iter().rev() {
                pool.entry(short(&base.sites[i])).or_default().push((*fi, i));
            }
        }
    }
    for (fi, _, lh) in leftovers {
        let m = &modelled[*fi];
        let Some(head) = &m.head else { continue };
        for &j in lh {
            let site = &head.sites[j];
            let from_elsewhere = pool
                .get_mut(&short(site))
                .and_then(|v| v.iter().position(|(bf, _)| bf != fi).map(|p| v.remove(p)));
            let base_policy =
                from_elsewhere.and_then(|(bf, bi)| modelled[bf].base.as_ref().map(|b| &b.sites[bi].policy));
            place(m.file, site, compare::compare_sites(base_policy, &site.policy), out);
        }
    }
}

fn timeouts(file: &FileChange, base: &FileModel, head: &FileModel, out: &mut Vec<Finding>) {
    let mut queue: HashMap<(String, String), Vec<usize>> = HashMap::new();
    for (i, t) in base.timeouts.iter().enumerate().rev() {
        queue.entry((t.item.clone(), t.setter.clone())).or_default().push(i);
    }
    let mut leftover_base: HashMap<String, Vec<usize>> = HashMap::new();
    let mut unmatched_head = Vec::new();
    for t in &head.timeouts {
        match queue.get_mut(&(t.item.clone(), t.setter.clone())).and_then(Vec::pop) {
            Some(i) => emit_timeout(file, &base.timeouts[i], t, out),
            None => unmatched_head.push(t),
        }
    }
    for (i, t) in base.timeouts.iter().enumerate().rev() {
        if queue.get(&(t.item.clone(), t.setter.clone())).is_some_and(|v| v.contains(&i)) {
            leftover_base.entry(t.setter.clone()).or_default().push(i);
        }
    }
    // Moved within the file (another function): match by setter in order.
    for t in unmatched_head {
        if let Some(i) = leftover_base.get_mut(&t.setter).and_then(Vec::pop) {
            emit_timeout(file, &base.timeouts[i], t, out);
        }
    }
}

fn emit_timeout(file: &FileChange, b: &sites::TimeoutSite, h: &sites::TimeoutSite, out: &mut Vec<Finding>) {
    if let Some(c) = compare::compare_timeouts(b, h) {
        out.push(to_finding(file, "client", c, h.line, h.line));
    }
}

/// Setter statements whose result is dropped, new in the head.
fn discarded(file: &FileChange, base: &FileModel, head: &FileModel, out: &mut Vec<Finding>) {
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    for d in &base.discarded {
        *seen.entry((d.item.clone(), d.setter.clone(), d.receiver.clone())).or_default() += 1;
    }
    for d in &head.discarded {
        let key = (d.item.clone(), d.setter.clone(), d.receiver.clone());
        match seen.get_mut(&key) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                let lib = d.lib.map_or("builder", |l| l.id());
                let c = Change {
                    kind: Kind::SettingDiscarded,
                    severity: Kind::SettingDiscarded.default_severity(),
                    aspect: "setter-discarded",
                    message: format!(
                        "`{}.{}(..);` drops the builder it returns, so the setting never takes effect; write `let {} = {}.{}(..);` or chain it",
                        d.receiver, d.setter, d.receiver, d.receiver, d.setter
                    ),
                    base: None,
                    head: Some(serde_json::json!({"setter": d.setter})),
                };
                out.push(to_finding(file, lib, c, d.line, d.line));
            }
        }
    }
}

fn place(file: &FileChange, site: &Site, changes: Vec<Change>, out: &mut Vec<Finding>) {
    for c in changes {
        out.push(to_finding(file, site.policy.lib.id(), c, site.line, site.end_line));
    }
}

fn to_finding(file: &FileChange, lib: &str, c: Change, line: u32, end_line: u32) -> Finding {
    let mut f = Finding::new(c.kind, format!("rust/{lib}-{}", c.aspect), &file.path, line)
        .lines(line, end_line)
        .severity(c.severity)
        .message(c.message);
    f.base = c.base;
    f.head = c.head;
    f
}

/// The retry sites of one version of a file, for callers that judge a
/// version on its own (the gate's `limits.max_attempts`). Text that cannot
/// contain a retry is not parsed; a parse error is returned as text. Parsing
/// runs on a thread with the analysis stack, so a caller on a main thread is
/// as safe as `scan`.
pub fn sites_in(text: &str) -> Result<Vec<Site>, String> {
    if !is_retry_relevant(text) {
        return Ok(Vec::new());
    }
    bounds::on_analysis_stack(|| {
        let parsed =
            parse::parse_file(text).map(|ast| sites::model(&ast, text).sites).map_err(|e| e.to_string());
        proc_macro2::extra::invalidate_current_thread_spans();
        parsed
    })
}
