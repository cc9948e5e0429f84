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
//! - [`loops`]: which hand-written loops are retries, and their bounds;
//! - [`eval`]: constants, `let` bindings and `Duration` arithmetic;
//! - [`crate_index`]: write requests anywhere in the crate, for client-wide policies;
//! - [`program`]: names defined in other files of the crate, and the unchanged
//!   files a changed definition reaches;
//! - [`ops`]: what operation a retry covers, and when a removed retry and a
//!   new one cover the same one;
//! - [`checks`]: one file per check (`checks/jitter.rs`): its id
//!   (`rust/<lib>-<check>`), its docs, its decision over a base and a head
//!   fact, and its tests; `checks/mod.rs` lists them;
//! - [`fix`]: the edit that puts back what the base had, where one is sure;
//! - [`testitems`]: the lines of `#[cfg(test)]` items and `#[test]` functions;
//! - this module: prefiltering, matching base with head, and placing the
//!   checks' decisions as findings.

pub(crate) mod bounds;
pub mod checks;
pub(crate) mod crate_index;
pub(crate) mod eval;
pub(crate) mod fix;
pub(crate) mod includes;
pub(crate) mod libs;
pub(crate) mod loops;
pub(crate) mod macros;
pub(crate) mod ops;
pub(crate) mod parse;
pub(crate) mod policy;
pub(crate) mod program;
pub(crate) mod sites;
pub(crate) mod syntax;
pub(crate) mod testitems;

use std::collections::{HashMap, VecDeque};
use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use rayon::prelude::*;

use super::{Analyzer, FileResult};
use crate::changeset::git::Git;
use crate::changeset::{ChangeSet, FileChange};
use crate::finding::{Finding, Kind, Note};
use checks::Change;
use sites::{FileModel, Site};

/// Text that any retry site or retry builder contains. A file whose base and
/// head both lack all of these (and, for a file on both sides, all of
/// [`TIMEOUT_TOKENS`]) is not parsed at all.
///
/// `retr` alone would also take every file that says "retrieve" (a third of
/// the files of the real benchmark corpus that matched it); the forms a retry
/// takes in names (`retry`, `Retrying`, `MAX_RETRIES`, `retried`, `Retrier`)
/// are listed instead. A hand loop that retries with no retry word in sight
/// (`Err(e) if e.is_temporary() => continue`, seen in opendal) still names
/// the error class it retries on, so those names are listed too.
pub(crate) const RETRY_TOKENS: &[&str] = &[
    "retry",
    "retries",
    "retried",
    "retrier",
    "backoff",
    "backon",
    "jitter",
    "attempt",
    "sleep",
    ".send(",
    "idempoten",
    "exponential",
    "fibonacci",
    "constantbuilder",
    "fixedinterval",
    "tpsbudget",
    "transient",
    "is_temporary",
];

/// Text every timeout setter contains. A timeout finding compares a file's
/// base with its head, so these words make a file worth parsing only when it
/// has both (an added or deleted file has no timeout to lower; a retry site's
/// own time bound comes with a retry word).
pub(crate) const TIMEOUT_TOKENS: &[&str] = &["timeout"];

/// Text of a write method handed on as a value (`Method::POST`,
/// `Method::PATCH`, `from_bytes(b"POST")`). A file that passes one to a
/// function of the crate need not say retry: the function may be a retry
/// helper in another file (`http::call(c, Method::POST, url)`), and that
/// call is a retry of a write only the program pass can see. Such a file is
/// parsed so the call is followed.
pub(crate) const WRITE_METHOD_TOKENS: &[&str] = &[
    "method::post",
    "method::patch",
    "b\"post\"",
    "b\"patch\"",
    "from_str(\"post\"",
    "from_str(\"patch\"",
    "try_from(\"post\"",
    "try_from(\"patch\"",
];

fn retry_tokens() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| super::any_word(RETRY_TOKENS))
}

fn retry_or_timeout_tokens() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| super::any_word(RETRY_TOKENS.iter().chain(TIMEOUT_TOKENS)))
}

/// Whether `path` names a Rust source file: `.rs` in any case (`client.RS`
/// is Rust to rustc on a case-insensitive file system, and to a `#[path]`).
pub(crate) fn is_rust_path(path: &str) -> bool {
    path.len() >= 3 && path.as_bytes()[path.len() - 3..].eq_ignore_ascii_case(b".rs")
}

/// Whether a text may contain retry code worth parsing.
pub(crate) fn is_retry_relevant(text: &str) -> bool {
    retry_tokens().is_match(text)
}

/// Whether a text names a write method as a value ([`WRITE_METHOD_TOKENS`]).
fn hands_write_method(text: &str) -> bool {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| super::any_word(WRITE_METHOD_TOKENS)).is_match(text)
}

/// Whether a change to a file with these sides is worth parsing: a retry
/// word or a write method handed as a value on either side, or, when both
/// sides exist, a timeout word on either.
pub(crate) fn is_change_relevant(base: Option<&str>, head: Option<&str>) -> bool {
    let writes = base.is_some_and(hands_write_method) || head.is_some_and(hands_write_method);
    writes
        || match (base, head) {
            (Some(b), Some(h)) => {
                retry_or_timeout_tokens().is_match(b) || retry_or_timeout_tokens().is_match(h)
            }
            (Some(t), None) | (None, Some(t)) => is_retry_relevant(t),
            (None, None) => false,
        }
}

/// The syn-based analyzer for `.rs` files.
#[derive(Debug, Default)]
pub struct RustAnalyzer {
    /// The head tree, for the crate-wide index; without it the index covers
    /// the changed files only.
    head_tree: Option<crate_index::HeadCommit>,
}

impl RustAnalyzer {
    /// An analyzer with no head tree: the index covers the changed files only.
    pub fn new() -> Self {
        RustAnalyzer::default()
    }

    /// An analyzer that reads the rest of the head tree of `cs` when a
    /// client-wide retry policy needs the crate-wide index.
    pub(crate) fn for_changeset(cs: &ChangeSet) -> Self {
        let is_commit = cs.head.len() >= 40 && cs.head.bytes().any(|b| b != b'0');
        let head_tree = if is_commit {
            Git::open(&cs.repo).ok().map(|git| crate_index::HeadCommit { git, rev: cs.head.clone() })
        } else {
            None
        };
        RustAnalyzer { head_tree }
    }

    /// Adds the crate's write requests to every client-wide policy that is
    /// not limited to idempotent methods, on both sides alike.
    fn apply_crate_index(&self, modelled: &mut [Modelled]) -> Vec<Note> {
        let wants = |p: &policy::Policy| p.client_wide && !p.method_gated && !p.refusal_only;
        let needs: Vec<usize> = (0..modelled.len())
            .filter(|&i| {
                let m = &modelled[i];
                [&m.base, &m.head].into_iter().flatten().any(|fm| fm.sites.iter().any(|s| wants(&s.policy)))
            })
            .collect();
        if needs.is_empty() {
            return Vec::new();
        }
        let listing = self.head_tree.as_ref().and_then(crate_index::list_tree);
        let mut notes = Vec::new();
        if self.head_tree.is_some() && listing.is_none() {
            // A git failure, not a bound: a POST sent through the policy from
            // an unread file must not pass unseen.
            notes.push(Note::blocking(
                None,
                "could not list the head tree for the crate-wide index, so client-wide retry policies were checked against the changed files only; check that the head commit is in the repository, then run retrygate again",
            ));
        }
        let manifests: &[String] = listing.as_ref().map_or(&[], |l| l.manifests.as_slice());
        let mut roots: Vec<String> = needs
            .iter()
            .map(|&i| crate_index::crate_root(&modelled[i].file.path, manifests).to_string())
            .collect();
        roots.sort();
        roots.dedup();
        let changed: HashMap<&str, crate_index::Changed> = modelled
            .iter()
            .map(|m| {
                let c = match (&m.head, m.head_parsed) {
                    (Some(h), true) => crate_index::Changed::Sites(&h.writes),
                    (Some(_), false) => crate_index::Changed::Text(m.file.head.text().unwrap_or("")),
                    (None, _) => crate_index::Changed::Deleted,
                };
                (m.file.path.as_str(), c)
            })
            .collect();
        let tree = self.head_tree.as_ref().zip(listing.as_ref());
        let index = crate_index::index_crates(&roots, tree, &changed);
        for i in needs {
            let m = &mut modelled[i];
            let root = crate_index::crate_root(&m.file.path, manifests);
            let Some(writes) = index.get(root) else { continue };
            if writes.unread {
                notes.push(Note::blocking(
                    Some(&m.file.path),
                    "git could not read some files of this crate from the head tree, so the client-wide retry policy's write requests may be incomplete; check that the repository is complete (not a partial or shallow clone missing objects), then run retrygate again",
                ));
            }
            if writes.partial {
                notes.push(Note::info(
                    Some(&m.file.path),
                    "some files of this crate were too large to index for the client-wide retry policy; its write requests may be incomplete",
                ));
            }
            for fm in [&mut m.base, &mut m.head].into_iter().flatten() {
                for s in fm.sites.iter_mut().filter(|s| wants(&s.policy)) {
                    // reqwest's built-in retry is installed on reqwest's
                    // own `Client`; every other client-wide retry on another
                    // type, which a plain `Client` is not.
                    let mut sites = writes.sites.clone();
                    if s.policy.lib == libs::reqwest::LIB {
                        for (method, at) in &writes.plain_sites {
                            sites.entry(method.clone()).or_insert_with(|| at.clone());
                        }
                    }
                    let example = sites.get("POST").or_else(|| sites.get("PATCH")).cloned();
                    s.policy.methods.extend(sites.into_keys());
                    s.policy.reads.extend(writes.reads.iter().cloned());
                    if s.policy.write_example.is_none() {
                        s.policy.write_example = example;
                    }
                }
            }
        }
        notes
    }
}

/// Both sides of one file, modelled.
struct Modelled<'f> {
    file: &'f FileChange,
    base: Option<FileModel>,
    head: Option<FileModel>,
    /// Whether the head was parsed (its model's write sites are complete).
    head_parsed: bool,
    notes: Vec<Note>,
    /// The literal numbers passed as call arguments, base then head (empty
    /// for a side that was not parsed).
    arguments: [Vec<checks::count_argument::ArgLiteral>; 2],
    /// The head's struct-literal fields named as retry counts.
    literal_counts: Vec<checks::count_default::LiteralCount>,
}

impl Analyzer for RustAnalyzer {
    fn name(&self) -> &str {
        "the Rust analyzer"
    }

    fn wants(&self, path: &str) -> bool {
        is_rust_path(path)
    }

    fn extra(&self, cs: &crate::changeset::ChangeSet) -> super::Extra {
        let mut extra = includes::included(cs);
        if let Some(tree) = &self.head_tree {
            includes::included_by_unchanged(cs, tree, &mut extra);
        }
        extra
    }

    fn analyze(&self, file: &FileChange) -> FileResult {
        self.analyze_set(&[file])
    }

    fn analyze_set(&self, files: &[&FileChange]) -> FileResult {
        let mut modelled: Vec<Modelled> = files.par_iter().map(|f| model_file(f)).collect();
        let mut result = FileResult::default();
        // The catalogue says which calls write; without it an SDK write
        // under a retry would not be seen, so the scan must not pass.
        if let Err(e) = crate::analyze::operations::data::DATA.as_ref() {
            result.notes.push(Note::blocking(
                None,
                format!("{e}: the catalogue of what calls do could not be read, so writes by SDK and RPC calls under Rust retries were not judged; this is a broken build, reinstall retrygate"),
            ));
        }
        let tree = self.head_tree.as_ref();
        let program = program::resolve(tree, &mut modelled);
        // Before a policy built in one file and retried in another is
        // dropped: the count it reads is linked through it.
        let raised = raised_counts(&modelled);
        let retry_text = if raised.is_empty() { Vec::new() } else { retry_site_text(&modelled) };
        drop_consumed_policies(&mut modelled);
        result.notes.extend(program.notes);
        result.notes.extend(program::uninstalled_policies(tree, &mut modelled));
        let clients = program::client_timeouts(tree, &modelled);
        result.findings.extend(clients.findings);
        result.notes.extend(clients.notes);
        result.notes.extend(self.apply_crate_index(&mut modelled));
        let mut leftovers: Vec<(usize, Vec<usize>, Vec<usize>)> = Vec::new();
        let changed_defs = changed_definitions(modelled.iter().map(|m| m.file));
        for (fi, m) in modelled.iter().enumerate() {
            result.notes.extend(m.notes.iter().cloned());
            if let Some(head) = &m.head {
                result.notes.extend(uncomputable_counts(m.file, head, &changed_defs));
                result.head_policies.extend(head_policies(m.file, head));
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
            let fixes = fix::Fixes::new(m.file);
            for (bi, hi) in pairs {
                place(
                    m.file,
                    Some((&fixes, &base.sites[bi])),
                    &head.sites[hi],
                    checks::compare_sites(Some(&base.sites[bi].policy), &head.sites[hi].policy),
                    &mut result.findings,
                );
            }
            leftovers.push((fi, lb, lh));
            timeouts(m.file, base, head, &fixes, &mut result.findings);
            discarded(m.file, base, head, &mut result.findings);
        }
        cross_file(&modelled, &leftovers, &mut result.findings);
        // What a changed definition does to unchanged files, unless the
        // definition's own file already says it (a policy function
        // compared in place).
        let own = result.findings.len();
        for f in program.findings {
            if !result.findings[..own].iter().any(|d| d.path == f.path && d.kind == f.kind) {
                result.findings.push(f);
            }
        }
        let unlinked = unlinked_counts(&modelled, raised, &retry_text, &program.reached, &result.findings);
        result.findings.extend(unlinked);
        let arguments = raised_arguments(&modelled, tree, &result.findings, &mut result.notes);
        result.findings.extend(arguments);
        let defaults = raised_over_defaults(&modelled, tree, &result.findings, &mut result.notes);
        result.findings.extend(defaults);
        result
    }
}

/// The source lines of the head's retry sites whose attempt count the model
/// computed: a raised count they read is compared there. A site that reads
/// it but whose count is unknown (a project's own backoff type, a field of
/// a parameter) or read as unbounded checks nothing, and a base site that read it is gone; an
/// unknown is not an unchanged, so neither links the count.
fn retry_site_text(modelled: &[Modelled]) -> Vec<String> {
    let site_lines = |text: Option<&str>, fm: Option<&FileModel>| -> Vec<String> {
        let (Some(text), Some(fm)) = (text, fm) else { return Vec::new() };
        if fm.sites.is_empty() {
            return Vec::new();
        }
        let lines: Vec<&str> = text.lines().collect();
        fm.sites
            .iter()
            // An unbounded site that names the count misread its bound
            // (`max.map_or(false, |m| n >= m)`): it compares nothing either.
            .filter(|s| {
                matches!(
                    s.policy.attempts.value,
                    policy::Attempts::Total(_) | policy::Attempts::TimeBounded(_)
                )
            })
            .map(|s| {
                let from = s.line.saturating_sub(1) as usize;
                let to = (s.end_line as usize).min(lines.len());
                lines.get(from..to).map(|l| l.join("\n")).unwrap_or_default()
            })
            .collect()
    };
    modelled.iter().flat_map(|m| site_lines(m.file.head.text(), m.head.as_ref())).collect()
}

/// Retry counts named in the changed files (`const MAX_RETRIES`, a
/// `num_retries` field's value) that went up on a changed line, each with
/// its file's index, before anything is known about what reads them.
fn raised_counts(modelled: &[Modelled]) -> Vec<(usize, checks::count_unlinked::NamedCount, Change)> {
    let mut raised = Vec::new();
    for (i, m) in modelled.iter().enumerate() {
        let (Some(base), Some(head)) = (m.file.base.text(), m.file.head.text()) else { continue };
        if !is_retry_relevant(head) {
            continue;
        }
        let after = checks::count_unlinked::named_counts(head);
        if after.is_empty() {
            continue;
        }
        let before = checks::count_unlinked::named_counts(base);
        for (c, change) in
            checks::count_unlinked::decide(&m.file.path, &before, &after, |l| m.file.touches(l, l), |_| false)
        {
            raised.push((i, c.clone(), change));
        }
    }
    raised
}

/// The raised counts no modelled retry reads: linked means a retry site of
/// a changed file (either side) names it on its lines or in a declaration
/// those lines reach (`retry_text`, through `program::reached_text`), an
/// unchanged file with a retry site names it (`reached`), or a finding is
/// already placed on its line.
fn unlinked_counts(
    modelled: &[Modelled],
    raised: Vec<(usize, checks::count_unlinked::NamedCount, Change)>,
    retry_text: &[String],
    reached: &std::collections::BTreeSet<String>,
    placed: &[Finding],
) -> Vec<Finding> {
    let raised: Vec<_> = raised
        .into_iter()
        .filter(|(i, c, _)| {
            let path = &modelled[*i].file.path;
            !reached.contains(&c.name)
                && !placed.iter().any(|f| &f.path == path && f.line <= c.line && c.line <= f.end_line)
        })
        .collect();
    if raised.is_empty() {
        return Vec::new();
    }
    // What the retries read, through the declarations of the changed files
    // (a policy helper, a constant defined from another), on both sides.
    let texts: Vec<&str> =
        modelled.iter().flat_map(|m| [m.file.base.text(), m.file.head.text()]).flatten().collect();
    let read = program::reached_text(&texts, retry_text.to_vec(), 3);
    raised
        .into_iter()
        .filter(|(_, c, _)| !read.iter().any(|t| program::names_word(t, &c.name)))
        .map(|(i, c, change)| to_finding(modelled[i].file, checks::VALUE, change, c.line, c.line))
        .collect()
}

/// Literal arguments raised on a changed line whose callee's parameter is
/// named for a retry count, and that no finding already covers. The callee
/// is looked for in the changed files (either side) first, then in the
/// head tree's unchanged files.
fn raised_arguments(
    modelled: &[Modelled],
    tree: Option<&crate_index::HeadCommit>,
    placed: &[Finding],
    notes: &mut Vec<Note>,
) -> Vec<Finding> {
    use checks::count_argument as ca;
    let mut raised: Vec<(usize, &ca::ArgLiteral, f64)> = Vec::new();
    for (i, m) in modelled.iter().enumerate() {
        let [base, head] = &m.arguments;
        for (a, was) in ca::raised(base, head, |l| m.file.touches(l, l)) {
            let path = &m.file.path;
            if !placed.iter().any(|f| &f.path == path && f.line <= a.line && a.line <= f.end_line) {
                raised.push((i, a, was));
            }
        }
    }
    if raised.is_empty() {
        return Vec::new();
    }
    let callees: std::collections::BTreeSet<&str> =
        raised.iter().map(|(_, a, _)| a.callee.as_str()).collect();
    // Every text that may define a callee: the changed files' both sides,
    // then the unchanged files the head tree has.
    let mut sources: Vec<(String, String)> = Vec::new();
    for m in modelled {
        for text in [m.file.base.text(), m.file.head.text()].into_iter().flatten() {
            if callees.iter().any(|c| program::declares_fn(text, c)) {
                sources.push((m.file.path.clone(), text.to_string()));
            }
        }
    }
    let missing: Vec<&str> = callees
        .iter()
        .copied()
        .filter(|c| !sources.iter().any(|(_, t)| program::declares_fn(t, c)))
        .collect();
    if !missing.is_empty() {
        let changed: std::collections::BTreeSet<&str> =
            modelled.iter().map(|m| m.file.path.as_str()).collect();
        sources.extend(program::function_definers(tree, &missing, &changed, notes));
    }
    let parsed: Vec<(&str, syn::File)> =
        sources.iter().filter_map(|(p, t)| parse_rust(p, t).ok().map(|f| (p.as_str(), f))).collect();
    let mut out = Vec::new();
    for (i, a, was) in raised {
        let mut sigs = Vec::new();
        let mut at: Vec<&str> = Vec::new();
        for (path, f) in &parsed {
            let found = ca::signatures(f, &a.callee);
            if !found.is_empty() && !at.contains(path) {
                at.push(path);
            }
            sigs.extend(found);
        }
        let Some(param) = ca::parameter(&sigs, a) else { continue };
        let file = modelled[i].file;
        if let Some(change) = ca::decide(&file.path, a, was, &param, &at.join(", ")) {
            out.push(to_finding(file, checks::VALUE, change, a.line, a.line));
        }
    }
    drop(parsed);
    proc_macro2::extra::invalidate_current_thread_spans();
    out
}

/// Retry counts written on a changed line into a struct literal that
/// replaced the type's default, compared with what the type's `Default`
/// impl gives the field: found in the changed files (either side) first,
/// then in the head tree's unchanged files.
fn raised_over_defaults(
    modelled: &[Modelled],
    tree: Option<&crate_index::HeadCommit>,
    placed: &[Finding],
    notes: &mut Vec<Note>,
) -> Vec<Finding> {
    use checks::count_default as cd;
    let mut wanted: Vec<(usize, &cd::LiteralCount)> = Vec::new();
    for (i, m) in modelled.iter().enumerate() {
        let Some(base) = m.file.base.text() else { continue };
        for c in &m.literal_counts {
            let path = &m.file.path;
            // A setter's field is known once its body is read; the base must
            // not have called the setter itself.
            let written = match &c.form {
                cd::Form::Setter(s) => s.as_str(),
                _ => c.field.as_str(),
            };
            if m.file.touches(c.line, c.line)
                && cd::base_took_default(base, &c.ty, written)
                && !placed.iter().any(|f| &f.path == path && f.line <= c.line && c.line <= f.end_line)
            {
                wanted.push((i, c));
            }
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    let types: std::collections::BTreeSet<&str> = wanted.iter().map(|(_, c)| c.ty.as_str()).collect();
    let implements = |text: &str, ty: &str| text.contains(&format!("Default for {ty}"));
    let mut sources: Vec<(String, String)> = Vec::new();
    for m in modelled {
        for text in [m.file.head.text(), m.file.base.text()].into_iter().flatten() {
            if types.iter().any(|t| implements(text, t)) {
                sources.push((m.file.path.clone(), text.to_string()));
            }
        }
    }
    let missing: Vec<&str> =
        types.iter().copied().filter(|t| !sources.iter().any(|(_, s)| implements(s, t))).collect();
    if !missing.is_empty() {
        let changed: std::collections::BTreeSet<&str> =
            modelled.iter().map(|m| m.file.path.as_str()).collect();
        sources.extend(program::default_impl_definers(tree, &missing, &changed, notes));
    }
    let parsed: Vec<(&str, syn::File)> =
        sources.iter().filter_map(|(p, t)| parse_rust(p, t).ok().map(|f| (p.as_str(), f))).collect();
    let mut out = Vec::new();
    for (i, c) in wanted {
        // A setter's field is the one its body assigns, in a file that
        // implements the type's default (where its setters usually are).
        let resolved;
        let c = match &c.form {
            cd::Form::Setter(s) => {
                let Some(field) = parsed.iter().find_map(|(_, f)| cd::setter_field(f, &c.ty, s)) else {
                    continue;
                };
                resolved = cd::LiteralCount { field, ..c.clone() };
                &resolved
            }
            _ => c,
        };
        // Impls that disagree (two crates with a type of one name) decide nothing.
        let found: Vec<(f64, String)> = parsed
            .iter()
            .filter_map(|(p, f)| cd::default_of(f, &c.ty, &c.field).map(|(v, l)| (v, format!("{p}:{l}"))))
            .collect();
        let Some((default, at)) = found.first() else { continue };
        if found.iter().any(|(v, _)| v != default) {
            continue;
        }
        let file = modelled[i].file;
        if let Some(change) = cd::decide(&file.path, c, *default, at) {
            out.push(to_finding(file, checks::VALUE, change, c.line, c.line));
        }
    }
    drop(parsed);
    proc_macro2::extra::invalidate_current_thread_spans();
    out
}

/// Drops the policies built in one file and retried in another: the retry
/// is the site (with its operation), the policy function is not a second
/// one. Each side is read on its own.
fn drop_consumed_policies(modelled: &mut [Modelled]) {
    for head in [false, true] {
        let used: std::collections::BTreeSet<String> = modelled
            .iter()
            .filter_map(|m| if head { m.head.as_ref() } else { m.base.as_ref() })
            .flat_map(|fm| fm.policy_fns.iter().cloned())
            .collect();
        if used.is_empty() {
            continue;
        }
        for m in modelled.iter_mut() {
            let fm = if head { m.head.as_mut() } else { m.base.as_mut() };
            if let Some(fm) = fm {
                fm.sites
                    .retain(|s| !(s.standalone && used.contains(s.item.rsplit("::").next().unwrap_or(""))));
            }
        }
    }
}

/// The head's retry policies with a count or none (the gate's
/// `limits.max_attempts`): a policy bounded by time, or whose count is not
/// known, has no count to compare. Files compiled as Rust under another
/// name (`#[path]`) are left to the findings.
fn head_policies(file: &FileChange, head: &FileModel) -> Vec<super::HeadPolicy> {
    if !is_rust_path(&file.path) {
        return Vec::new();
    }
    head.sites
        .iter()
        .filter_map(|s| {
            let attempts = match s.policy.attempts.value {
                policy::Attempts::Total(n) => Some(n),
                policy::Attempts::Unbounded => None,
                policy::Attempts::TimeBounded(_) | policy::Attempts::Unknown => return None,
            };
            Some(super::HeadPolicy {
                path: file.path.clone(),
                line: s.line,
                end_line: s.end_line,
                attempts,
                lib: s.policy.lib.id().to_string(),
            })
        })
        .collect()
}

/// The retry policies with a count (or none) of one Rust source, read on
/// its own: what the layer model (`analyze::layers::clients`) takes as the
/// application's client layer for files the change did not touch.
pub(crate) fn policies_of(path: &str, text: &str) -> Result<Vec<super::HeadPolicy>, String> {
    if !is_retry_relevant(text) {
        return Ok(Vec::new());
    }
    let mut ast = parse_rust(path, text).map_err(|e| e.to_string())?;
    sites::expand_macros(&mut ast, text, &[]);
    let model = sites::model(&ast, text);
    proc_macro2::extra::invalidate_current_thread_spans();
    Ok(head_policies(&FileChange::from_texts(path, None, Some(text)), &model))
}

/// Changed retry sites whose count is written out but cannot be computed
/// (`with_max_times(limit())`, a shift of an unknown name): the gate cannot
/// tell whether it went up, so a person must look.
///
/// Also a site the change did not touch whose uncomputable count is made of
/// a name the change defines anew (`const fn max_retries() -> u32 { 10 }`,
/// `Settings { retries: 10, .. }`): an unknown value is not an unchanged one.
fn uncomputable_counts(file: &FileChange, head: &FileModel, changed: &ChangedDefs) -> Vec<Note> {
    let mut out = Vec::new();
    for s in head.sites.iter().filter(|s| s.policy.attempts.value == policy::Attempts::Unknown) {
        let hand_loop = s.policy.lib == policy::Lib::HAND_ROLLED;
        // A hand loop's own lines are its whole body: only its header says
        // how it counts.
        let own_change =
            if hand_loop { file.touches(s.line, s.line) } else { file.touches(s.line, s.end_line) };
        if !own_change {
            let moved: Vec<String> = s
                .unresolved
                .iter()
                .filter_map(|n| changed.get(n).map(|at| format!("`{n}` ({at})")))
                .collect();
            if !moved.is_empty() {
                out.push(Note::blocking(
                    Some(&file.path),
                    format!(
                        "line {}: the retry's attempt count ({}) is computed from {}, whose definition this change rewrote, and retrygate cannot compute it; a maintainer checks how many attempts it allows now before signing off",
                        s.line,
                        s.policy.attempts.why,
                        moved.join(", ")
                    ),
                ));
            }
            continue;
        }
        // A setter or constructor was given a count (`.with_max_times(..)`,
        // `RetryConfig::Simple(n)`, see `Fact::count`); a library whose
        // count lives elsewhere (tower's Policy impl) is not flagged.
        if !s.policy.attempts.uncomputed && s.unresolved.is_empty() {
            continue;
        }
        out.push(if !s.unresolved.is_empty() {
                Note::blocking(
                    Some(&file.path),
                    format!(
                        "line {}: the retry's attempt count depends on {} ({}), which retrygate cannot compute; a maintainer checks how many attempts it allows before signing off (or pass a literal or a `const`)",
                        s.line,
                        s.unresolved.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>().join(", "),
                        s.policy.attempts.why
                    ),
                )
            } else {
            Note::blocking(
                Some(&file.path),
                format!(
                    "line {}: the retry count given to `{}` is computed in a way retrygate cannot evaluate; a maintainer checks how many attempts it allows before signing off (or write it as a literal or a `const`)",
                    s.line, s.policy.attempts.why
                ),
            )
        });
    }
    out
}

/// Names the change defines or assigns on an added line of a Rust file,
/// each with its first place (`src/config.rs:12`).
type ChangedDefs = HashMap<String, String>;

fn changed_definitions<'f>(files: impl Iterator<Item = &'f FileChange>) -> ChangedDefs {
    static DEF: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"\b(?:fn|const|static|let)\s+(?:fn\s+|mut\s+)?([A-Za-z_]\w*)|\b([A-Za-z_]\w*)\s*(?::[^:]|=[^=>])",
        )
        .unwrap_or_else(|e| panic!("the definition pattern is constant and valid: {e}"))
    });
    let mut out = ChangedDefs::new();
    for f in files {
        let Some(text) = f.head.text() else { continue };
        for (i, line) in text.lines().enumerate() {
            let n = i as u32 + 1;
            let code = line.split("//").next().unwrap_or("");
            if !f.is_added(n) || code.trim().is_empty() {
                continue;
            }
            for c in DEF.captures_iter(code) {
                if let Some(name) = c.get(1).or(c.get(2)) {
                    out.entry(name.as_str().to_string()).or_insert_with(|| format!("{}:{n}", f.path));
                }
            }
        }
    }
    out
}

/// Prefilters, parses and models both sides of one file.
fn model_file(file: &FileChange) -> Modelled<'_> {
    let mut m = Modelled {
        file,
        base: None,
        head: None,
        head_parsed: false,
        notes: Vec::new(),
        arguments: [Vec::new(), Vec::new()],
        literal_counts: Vec::new(),
    };
    let base = file.base.text();
    let head = file.head.text();
    if !is_change_relevant(base, head) {
        // Neither side mentions anything retry-like: nothing to compare.
        m.base = base.map(|_| FileModel::default());
        m.head = head.map(|_| FileModel::default());
        // A call to a project's own retry helper need not say retry: its
        // numeric arguments are still read when a changed line passes one.
        if let (Some(b), Some(h)) = (base, head) {
            if touches_numeric_argument(file, h) {
                for (text, slot) in [(b, 0), (h, 1)] {
                    if let Ok(ast) = parse_rust(&file.path, text) {
                        m.arguments[slot] = checks::count_argument::argument_literals(&ast);
                    }
                }
                proc_macro2::extra::invalidate_current_thread_spans();
            }
        }
        return m;
    }
    m.head_parsed = head.is_some();
    for (slot, (side, text, model)) in
        [("base", base, &mut m.base), ("head", head, &mut m.head)].into_iter().enumerate()
    {
        let Some(text) = text else { continue };
        match parse_rust(&file.path, text) {
            Ok(mut ast) => {
                m.arguments[slot] = checks::count_argument::argument_literals(&ast);
                if slot == 1 {
                    m.literal_counts = checks::count_default::literal_counts(&ast);
                }
                sites::expand_macros(&mut ast, text, &[]);
                *model = Some(sites::model(&ast, text));
            }
            Err(e) => {
                m.notes.push(Note::blocking(
                    Some(&file.path),
                    format!("could not parse the {side} version ({e}); retry findings in this file may be missing"),
                ));
                // Compare against nothing rather than guess.
                *model = Some(FileModel::default());
            }
        }
    }
    // Spans keep every parsed source alive in a thread-local map; the models
    // hold plain line numbers, so release it before the next file.
    proc_macro2::extra::invalidate_current_thread_spans();
    m
}

/// Whether a line `file` added passes a number to a call (`f(x, 20)`,
/// `usize::MAX)`): only then are the arguments of a file with no retry word
/// worth parsing.
fn touches_numeric_argument(file: &FileChange, head: &str) -> bool {
    static ARG: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
        regex::Regex::new(
            r"[(,]\s*(Some\(\s*)?([0-9][0-9_]*(u8|u16|u32|u64|u128|usize|i32|i64|isize)?|[iu](8|16|32|64|128|size)::MAX)\s*[),]",
        )
        .ok()
    });
    // Without the pattern every file's arguments are read: slower, never blind.
    let Some(arg) = ARG.as_ref() else { return true };
    head.lines().enumerate().any(|(i, line)| {
        let n = i as u32 + 1;
        file.touches(n, n) && arg.is_match(line)
    })
}

/// Parses a file the analyzer reads as Rust. A file that is not `.rs`
/// (pulled in with `include!`) may hold an expression or statements rather
/// than items: it is then read as the body of a function, on the same lines.
fn parse_rust(path: &str, text: &str) -> Result<syn::File, parse::ParseFailure> {
    match parse::parse_file(text) {
        Ok(ast) => Ok(ast),
        Err(e) if !is_rust_path(path) => {
            parse::parse_file(&format!("fn included_source() {{ {text}\n}}")).map_err(|_| e)
        }
        Err(e) => Err(e),
    }
}

/// Pairs base and head sites: unchanged policies by item, then by item and
/// library in order, then by item in
/// order, then by library in order (a renamed function), then the rest in
/// order when both sides have the same number left. The last two never pair
/// sites of different functions that are known to retry different
/// operations ([`ops::known_unrelated`]): deleting one retry and adding an
/// unrelated one is not one retry edited.
fn match_sites(base: &[Site], head: &[Site]) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
    let mut used_b = vec![false; base.len()];
    let mut used_h = vec![false; head.len()];
    let mut pairs = Vec::new();
    // An unchanged policy pairs with itself first: a new policy added in
    // front of an old one in the same function must not take its place.
    let passes: [&dyn Fn(&Site) -> String; 4] = [
        &|s: &Site| format!("{}\u{0}{:?}", s.item, s.policy),
        &|s: &Site| format!("{}\u{0}{}", s.item, s.policy.lib.id()),
        &|s: &Site| s.item.clone(),
        &|s: &Site| s.policy.lib.id().to_string(),
    ];
    for (pass, key) in passes.into_iter().enumerate() {
        // The library pass pairs sites of different functions (a renamed
        // one): not two sites known to retry different operations.
        let across = pass == 3;
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
            let Some(q) = queue.get_mut(&key(s)) else { continue };
            // The queue pops from its end, the first base site in order.
            // Across functions, the first few are tried, so that a file of
            // thousands of unrelated sites stays linear.
            let tried = if across { q.len().min(ACROSS_LOOKAHEAD) } else { q.len().min(1) };
            let Some(at) =
                (q.len() - tried..q.len()).rev().find(|&at| !across || !unrelated(&base[q[at]], s))
            else {
                continue;
            };
            let i = q.remove(at);
            used_b[i] = true;
            used_h[j] = true;
            pairs.push((i, j));
        }
    }
    let mut lb: Vec<usize> = (0..base.len()).filter(|&i| !used_b[i]).collect();
    let mut lh: Vec<usize> = (0..head.len()).filter(|&j| !used_h[j]).collect();
    if !lb.is_empty() && lb.len() == lh.len() {
        let (mut rest_b, mut rest_h) = (Vec::new(), Vec::new());
        for (i, j) in lb.drain(..).zip(lh.drain(..)) {
            if unrelated(&base[i], &head[j]) {
                rest_b.push(i);
                rest_h.push(j);
            } else {
                pairs.push((i, j));
            }
        }
        (lb, lh) = (rest_b, rest_h);
    }
    (pairs, lb, lh)
}

/// How many base sites of a library the renamed-function pass of
/// [`match_sites`] tries for one head site before leaving it unmatched.
const ACROSS_LOOKAHEAD: usize = 8;

/// Whether a base and a head site in different functions are known to
/// retry different operations, so that neither is the other renamed.
fn unrelated(b: &Site, h: &Site) -> bool {
    b.item != h.item && ops::known_unrelated(&ops::Retry::of(b), &ops::Retry::of(h))
}

/// Sites left unmatched in their own file: a function moved to another file
/// is matched there by name and library; what is still unmatched is new.
fn cross_file(modelled: &[Modelled], leftovers: &[(usize, Vec<usize>, Vec<usize>)], out: &mut Vec<Finding>) {
    let short = |s: &Site| {
        let name = s.item.rsplit("::").next().unwrap_or(&s.item).to_string();
        format!("{name}\u{0}{}", s.policy.lib.id())
    };
    // Per name: the files that lost a site of that name, in order, each with
    // its sites in order. Grouping by file keeps the search linear when one
    // file holds thousands of unmatched sites.
    let mut pool: HashMap<String, Vec<(usize, VecDeque<usize>)>> = HashMap::new();
    for (fi, lb, _) in leftovers {
        if let Some(base) = &modelled[*fi].base {
            for &i in lb {
                let groups = pool.entry(short(&base.sites[i])).or_default();
                match groups.last_mut() {
                    Some((f, q)) if f == fi => q.push_back(i),
                    _ => groups.push((*fi, VecDeque::from([i]))),
                }
            }
        }
    }
    let mut new_sites: Vec<(usize, usize)> = Vec::new();
    for (fi, _, lh) in leftovers {
        let m = &modelled[*fi];
        let Some(head) = &m.head else { continue };
        for &j in lh {
            let site = &head.sites[j];
            let from_elsewhere = pool.get_mut(&short(site)).and_then(|groups| {
                let (bf, q) = groups.iter_mut().find(|(bf, q)| bf != fi && !q.is_empty())?;
                q.pop_front().map(|i| (*bf, i))
            });
            let base_policy =
                from_elsewhere.and_then(|(bf, bi)| modelled[bf].base.as_ref().map(|b| &b.sites[bi].policy));
            match base_policy {
                Some(b) => place(m.file, None, site, checks::compare_sites(Some(b), &site.policy), out),
                None => new_sites.push((*fi, j)),
            }
        }
    }
    // The retries the change removed, matched with no new one: a new retry
    // that covers the same operation may have replaced them (`ops`).
    let lost: Vec<(usize, &Site)> = pool
        .values()
        .flat_map(|groups| groups.iter())
        .filter(|(bf, _)| !crate_index::is_test_path(&modelled[*bf].file.path))
        .flat_map(|(bf, q)| {
            q.iter().filter_map(move |&i| modelled[*bf].base.as_ref().map(|b| (*bf, &b.sites[i])))
        })
        .collect();
    let now = if lost.is_empty() || new_sites.is_empty() {
        HashMap::new()
    } else {
        removed_items_now(modelled, &lost)
    };
    let removed: Vec<(ops::Retry, Option<&ops::Ops>)> =
        lost.iter().map(|(bf, s)| (ops::Retry::of(s), now.get(&(*bf, s.item.as_str())))).collect();
    let removed = ops::Removed::new(&removed);
    for (fi, j) in new_sites {
        let m = &modelled[fi];
        let Some(head) = &m.head else { continue };
        let site = &head.sites[j];
        let paired: Vec<&policy::Policy> =
            removed.paired(&ops::Retry::of(site)).into_iter().map(|i| &lost[i].1.policy).collect();
        let mut changes = checks::compare_sites(None, &site.policy);
        // An operation the base ran once, now retried with no limit.
        let unbounded = site.policy.attempts.value == policy::Attempts::Unbounded;
        if let Some(c) = wrapped_operation(m, site)
            .filter(|_| unbounded)
            .and_then(|op| checks::unbounded::wrapped(&site.policy, &op))
        {
            changes.retain(|c| c.kind != Kind::RetryUnbounded);
            changes.push(c);
        }
        // An operation the base ran once, now retried more than a small
        // bound (a read, a connect: writes are `retry-non-idempotent`'s),
        // when no removed retry moved here.
        let judged = changes.iter().any(|c| {
            matches!(c.kind, Kind::RetryNonIdempotent | Kind::RetryUnbounded | Kind::RetryCountRaised)
        });
        let past_small = matches!(site.policy.attempts.value, policy::Attempts::Total(n) if n > crate::analyze::operations::compare::SMALL_NEW_RETRY);
        if !judged && past_small && !site.standalone && paired.is_empty() {
            if let Some(c) =
                wrapped_operation(m, site).and_then(|op| checks::attempts::raised_from_one(&site.policy, &op))
            {
                changes.push(c);
            }
        }
        // The writes the removed retries of the same operation already
        // re-sent: a new retry (a layer that takes over from per-call
        // retries) that keeps retrying them is not a widening. Refusal-only
        // retries do not count: retrying after 5xx too is.
        let mut lost_writes: std::collections::BTreeSet<&str> = paired
            .iter()
            .flat_map(|p| p.unsafe_methods())
            .filter(|m| !syntax::is_unknown_method(m))
            .collect();
        // So did the base's retries of the same library in the same
        // function, unless they are known to cover another operation: a
        // retried POST split into two calls (with a body and without) is
        // the same write retried, not a new one.
        let same_function = m.base.iter().flat_map(|b| b.sites.iter()).filter(|b| {
            b.item == site.item
                && b.policy.lib == site.policy.lib
                && !ops::known_unrelated(&ops::Retry::of(b), &ops::Retry::of(site))
        });
        lost_writes.extend(
            same_function.flat_map(|b| b.policy.unsafe_methods()).filter(|m| !syntax::is_unknown_method(m)),
        );
        if checks::methods::taken_over(&lost_writes, &site.policy) {
            changes.retain(|c| c.kind != Kind::RetryNonIdempotent);
        }
        // Only a retry (not a policy built and handed elsewhere, whose
        // settings may still change on the way) replaces removed retries.
        if let Some(c) = checks::jitter::replaced(&paired)
            .filter(|_| !site.standalone)
            .and_then(|b| checks::jitter::replacing(b, &site.policy))
        {
            changes.retain(|c| c.kind != Kind::RetryWithoutJitter);
            changes.push(c);
        }
        place(m.file, None, site, changes, out);
    }
}

/// The operation a new retry covers that the base version of the same
/// function performed, while the head performs none of the retry's
/// operations outside the retry any more: the retry wraps that call, rather
/// than adding a second path beside a call that is still made once (a
/// reconnect loop after a first connect that still fails fast). Given as
/// the key it shares (`call sync_entries`, `req POST /orders`). Only a
/// retry with no limit, or one past the small bound of a new retry, asks,
/// so the files are parsed again only then.
fn wrapped_operation(m: &Modelled, site: &Site) -> Option<String> {
    if site.ops.is_empty() {
        return None;
    }
    let unbounded = site.policy.attempts.value == policy::Attempts::Unbounded;
    let hand_loop = site.policy.lib == policy::Lib::HAND_ROLLED;
    let (base, head) = (m.file.base.text()?, m.file.head.text()?);
    // A function the base does not define ran nothing once; said by its
    // text, before a parse (a change that adds thousands of retried
    // functions would otherwise parse the file once for each).
    let name = site.item.rsplit("::").next().unwrap_or(&site.item);
    if !crate::analyze::rust::program::names_word(base, name) {
        return None;
    }
    // Each side is parsed once; the spans are released however it ends.
    let found = (|| {
        let head = parse_rust(&m.file.path, head).ok()?;
        // A hand-written loop the model finds no bound for may still give
        // up on a failure it does not read as a bound (a policy's "do not
        // retry" that returns the error): only one that cannot is for ever.
        if hand_loop && unbounded && !loop_never_gives_up(&head, site.line) {
            return None;
        }
        // A library retry's operation is inside its call; a loop's, once
        // the loop is left out.
        let rest = item_ops(&head, &site.item, &|line, _| hand_loop && line == site.line);
        if hand_loop && site.ops.iter().any(|k| rest.contains(k)) {
            return None;
        }
        drop(head);
        // The base ran it outside any loop that goes on whatever fails
        // (such a loop already retried it, for ever).
        let base = parse_rust(&m.file.path, base).ok()?;
        let before = item_ops(&base, &site.item, &|_, body| !loops::can_give_up(body));
        let k = site.ops.iter().find(|k| before.contains(*k))?;
        Some(format!("`{}`", k.split_once(' ').map_or(k.as_str(), |(_, name)| name)))
    })();
    proc_macro2::extra::invalidate_current_thread_spans();
    found
}

/// The operation keys of function `item` in `file`, leaving out the loops
/// `skip` picks by their first line and body.
fn item_ops(file: &syn::File, item: &str, skip: &dyn Fn(u32, &syn::Block) -> bool) -> ops::Ops {
    struct Strip<'s>(&'s dyn Fn(u32, &syn::Block) -> bool);
    impl syn::visit_mut::VisitMut for Strip<'_> {
        fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
            let hit = loop_parts(e).is_some_and(|(line, body)| (self.0)(line, body));
            if hit {
                *e = syn::Expr::Tuple(syn::ExprTuple {
                    attrs: Vec::new(),
                    paren_token: Default::default(),
                    elems: Default::default(),
                });
                return;
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
    }
    let wanted: std::collections::BTreeSet<&str> = [item].into();
    let mut out = ops::Ops::new();
    for (p, block) in sites::item_bodies(file, &wanted) {
        let mut b = block.clone();
        syn::visit_mut::VisitMut::visit_block_mut(&mut Strip(skip), &mut b);
        out.extend(ops::resolve(&p, &syntax::body_facts(&b).ops));
    }
    out
}

/// A loop's first line and body: how a loop site is found again.
fn loop_parts(e: &syn::Expr) -> Option<(u32, &syn::Block)> {
    match e {
        syn::Expr::Loop(l) => Some((l.loop_token.span.start().line as u32, &l.body)),
        syn::Expr::While(w) => Some((w.while_token.span.start().line as u32, &w.body)),
        syn::Expr::ForLoop(f) => Some((f.for_token.span.start().line as u32, &f.body)),
        _ => None,
    }
}

/// Whether the loop of `file` that starts on `line` has no way out on a
/// failure ([`loops::can_give_up`]); `false` when there is none.
fn loop_never_gives_up(file: &syn::File, line: u32) -> bool {
    struct Find {
        line: u32,
        found: Option<bool>,
    }
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_expr(&mut self, e: &'ast syn::Expr) {
            if self.found.is_some() {
                return;
            }
            let body = loop_parts(e).filter(|(line, _)| *line == self.line).map(|(_, body)| body);
            match body {
                Some(b) => self.found = Some(!loops::can_give_up(b)),
                None => syn::visit::visit_expr(self, e),
            }
        }
    }
    let mut f = Find { line, found: None };
    syn::visit::Visit::visit_file(&mut f, file);
    f.found.unwrap_or(false)
}

/// What the functions that held the removed retries do at the head (their
/// operation keys), by (file, item): read again from the head text, since
/// only a change that removes a retry and adds another needs it. A file that
/// is gone or does not parse gives nothing, and nothing is paired through it.
fn removed_items_now<'m>(
    modelled: &'m [Modelled],
    lost: &[(usize, &'m Site)],
) -> HashMap<(usize, &'m str), ops::Ops> {
    let mut wanted: std::collections::BTreeMap<usize, std::collections::BTreeSet<&'m str>> =
        Default::default();
    for (bf, s) in lost {
        wanted.entry(*bf).or_default().insert(s.item.as_str());
    }
    let mut out: HashMap<(usize, &'m str), ops::Ops> = HashMap::new();
    for (bf, items) in wanted {
        let file = modelled[bf].file;
        let Some(text) = file.head.text() else { continue };
        let Ok(ast) = parse_rust(&file.path, text) else { continue };
        for (path, block) in sites::item_bodies(&ast, &items) {
            if let Some(item) = items.get(path.as_str()) {
                let keys = ops::resolve(&path, &syntax::body_facts(block).ops);
                out.entry((bf, *item)).or_default().extend(keys);
            }
        }
        proc_macro2::extra::invalidate_current_thread_spans();
    }
    out
}

/// The timeouts of a file present on both sides that got worse on
/// operations a retry covers: lowered, or newly set where the base set none.
fn timeouts(
    file: &FileChange,
    base: &FileModel,
    head: &FileModel,
    fixes: &fix::Fixes,
    out: &mut Vec<Finding>,
) {
    let has_sites = !base.sites.is_empty() || !head.sites.is_empty();
    let pairs = timeout_pairs(base, head);
    for &(b, h) in &pairs {
        if counts_here(&head.timeouts[h], has_sites) {
            emit_timeout(file, &base.timeouts[b], &head.timeouts[h], fixes, out);
        }
    }
    for h in new_timeouts(base, head, &pairs) {
        let t = &head.timeouts[h];
        if counts_here(t, has_sites) && (t.tie.retried_here() || covered_in_file(head, t)) {
            out.push(to_finding(file, checks::CLIENT, checks::timeout::decide_new(t), t.line, t.line));
        }
    }
}

/// Whether a timeout of a file is judged with the file alone: one tied to
/// a retry where it is set always; one with no tie when the file retries
/// (a client built elsewhere is `program::client_timeouts`' to judge); a
/// timeout layer installed with no retry layer never.
fn counts_here(t: &sites::TimeoutSite, has_sites: bool) -> bool {
    match t.tie {
        sites::TimeoutTie::LayerAlone => false,
        sites::TimeoutTie::Unknown | sites::TimeoutTie::Wrapped => has_sites,
        sites::TimeoutTie::LayerWithRetry | sites::TimeoutTie::BuilderRetries => true,
    }
}

/// Whether a retry of the file covers a newly set timeout: it is set in
/// the retrying function itself, a client-wide policy of the file covers
/// every request, or it is set on a client builder the file's retrying
/// code sends through. A new timeout on some other request of a file that
/// retries elsewhere is not the retry's.
fn covered_in_file(head: &FileModel, t: &sites::TimeoutSite) -> bool {
    if head.sites.iter().any(|s| s.item == t.item) {
        return true;
    }
    // A future wrapped in `timeout(d, fut)` elsewhere may be a lock wait or
    // a sleep: only the retrying function's own is the retry's.
    if t.tie == sites::TimeoutTie::Wrapped {
        return false;
    }
    let on_client = !t.field && (t.op.contains("Client") || t.op.contains("builder"));
    head.sites.iter().any(|s| s.policy.client_wide) || (on_client && !head.sites.is_empty())
}

/// The changed timeouts of a file: lowered, or newly set where the base
/// set none; (head line, change). A timeout layer with no retry layer
/// beside it bounds nothing a retry re-runs, and is left out.
fn timeout_changes(base: &FileModel, head: &FileModel) -> Vec<(u32, Change)> {
    let pairs = timeout_pairs(base, head);
    let counted = |t: &sites::TimeoutSite| t.tie != sites::TimeoutTie::LayerAlone;
    let mut out: Vec<(u32, Change)> = pairs
        .iter()
        .filter(|(_, h)| counted(&head.timeouts[*h]))
        .filter_map(|&(b, h)| {
            checks::timeout::decide(&base.timeouts[b], &head.timeouts[h]).map(|c| (head.timeouts[h].line, c))
        })
        .collect();
    for h in new_timeouts(base, head, &pairs) {
        let t = &head.timeouts[h];
        if counted(t) {
            out.push((t.line, checks::timeout::decide_new(t)));
        }
    }
    out
}

/// Head timeouts the base did not set at all: unpaired, in a function the
/// base already had (an operation that ran with no limit; a new function
/// is new code, not a changed limit), whose setter the base never called
/// there (a base value that could not be read is not "none"), and with no
/// unpaired base timeout in the same function (that one may have been
/// rewritten into this one).
fn new_timeouts(base: &FileModel, head: &FileModel, pairs: &[(usize, usize)]) -> Vec<usize> {
    let mut paired_base = vec![false; base.timeouts.len()];
    let mut paired_head = vec![false; head.timeouts.len()];
    for &(b, h) in pairs {
        paired_base[b] = true;
        paired_head[h] = true;
    }
    head.timeouts
        .iter()
        .enumerate()
        .filter(|(j, t)| {
            !paired_head[*j]
                && base.items.contains(&t.item)
                && !base.timeout_setters.contains(&(t.item.clone(), t.setter.clone()))
                && !base.timeouts.iter().enumerate().any(|(i, b)| !paired_base[i] && b.item == t.item)
        })
        .map(|(j, _)| j)
        .collect()
}

/// Base and head timeouts paired by item and setter, then by setter alone
/// (moved to another function of the file). Within each group, equal
/// values pair first: a timeout still there unchanged is itself, so a new
/// timeout added beside it is new, not the old one lowered; then one that
/// bounds the same operation (a changed timeout is its old self).
fn timeout_pairs(base: &FileModel, head: &FileModel) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut used = vec![false; base.timeouts.len()];
    let mut paired = vec![false; head.timeouts.len()];
    // (same item, same operation bounded, equal value) for each pass, most
    // specific first: unchanged, then changed around the same operation,
    // then moved.
    let passes = [
        (true, true, true),
        (true, false, true),
        (true, true, false),
        (true, false, false),
        (false, false, true),
        (false, false, false),
    ];
    for (by_item, by_op, by_value) in passes {
        let key = |t: &sites::TimeoutSite| {
            (
                by_item.then(|| t.item.clone()),
                by_op.then(|| t.op.clone()),
                t.setter.clone(),
                by_value.then_some(t.ms.to_bits()),
            )
        };
        let mut queue: HashMap<_, VecDeque<usize>> = HashMap::new();
        for (i, t) in base.timeouts.iter().enumerate().filter(|(i, _)| !used[*i]) {
            queue.entry(key(t)).or_default().push_back(i);
        }
        for (j, t) in head.timeouts.iter().enumerate() {
            if paired[j] {
                continue;
            }
            if let Some(i) = queue.get_mut(&key(t)).and_then(VecDeque::pop_front) {
                used[i] = true;
                paired[j] = true;
                pairs.push((i, j));
            }
        }
    }
    pairs
}

fn emit_timeout(
    file: &FileChange,
    b: &sites::TimeoutSite,
    h: &sites::TimeoutSite,
    fixes: &fix::Fixes,
    out: &mut Vec<Finding>,
) {
    if let Some(c) = checks::timeout::decide(b, h) {
        let mut f = to_finding(file, checks::CLIENT, c, h.line, h.line);
        f.fix = fixes.for_timeout(b.line, h.line, b.ms, h.ms);
        out.push(f);
    }
}

/// Setter statements whose result is dropped, new in the head.
fn discarded(file: &FileChange, base: &FileModel, head: &FileModel, out: &mut Vec<Finding>) {
    for (d, c) in checks::setter_discarded::decide(&base.discarded, &head.discarded) {
        let lib = d.lib.map_or(checks::BUILDER, |l| l.id());
        out.push(to_finding(file, lib, c, d.line, d.line));
    }
}

/// Places `changes` at `site`; with the file's fixes and the base site it
/// was matched with, each finding gets the fix that puts the base back.
fn place(
    file: &FileChange,
    fixing: Option<(&fix::Fixes, &Site)>,
    site: &Site,
    changes: Vec<Change>,
    out: &mut Vec<Finding>,
) {
    for c in changes {
        if let Some(f) = at_changed_field(file, site, &c) {
            out.push(f);
            continue;
        }
        let mut f = to_finding(file, site.policy.lib.id(), c, site.line, site.end_line);
        f.fix = fixing.and_then(|(fixes, base)| fixes.for_site(&f, (base.line, base.end_line)));
        out.push(f);
    }
}

/// A count that changed because the default of the field the retry reads
/// changed in the same file (`max_retries: 8` in `impl Default`): reported
/// at that line, the line that caused it, with the retry as evidence.
fn at_changed_field(file: &FileChange, site: &Site, c: &Change) -> Option<Finding> {
    if !matches!(c.kind, Kind::RetryCountRaised | Kind::RetryUnbounded) {
        return None;
    }
    let text = file.head.text()?;
    let why = &site.policy.attempts.why;
    let (field, line) = program::changed_fields(text, &file.added, &[])
        .into_iter()
        .find(|(f, _)| why.contains(&format!(". {f}")) || why.contains(&format!(".{f}")))?;
    let mut c = c.clone();
    c.message = format!(
        "`{field}` changed at line {line}: {} (affects the retry at {}:{}, `{}`)",
        c.message, file.path, site.line, site.item
    );
    Some(to_finding(file, site.policy.lib.id(), c, line, line))
}

fn to_finding(file: &FileChange, lib: &str, c: Change, line: u32, end_line: u32) -> Finding {
    to_finding_at(&file.path, lib, c, line, end_line)
}

fn to_finding_at(path: &str, lib: &str, c: Change, line: u32, end_line: u32) -> Finding {
    let mut f = Finding::new(c.kind, c.check.rule(lib), path, line)
        .lines(line, end_line)
        .severity(c.severity)
        .message(c.message);
    f.base = c.base;
    f.head = c.head;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(base: Option<&str>, head: Option<&str>) -> FileResult {
        let file = FileChange::from_texts("src/lib.rs", base, head);
        RustAnalyzer::new().analyze_set(&[&file])
    }

    /// Unparsable text is the probe: a parsed file gets a blocking note, one
    /// the prefilter passed over gets nothing.
    const BROKEN_WITH_TIMEOUT: &str = "fn f() { let timeout = ; }\n";

    #[test]
    fn a_timeout_word_makes_a_file_worth_parsing_only_when_it_has_both_sides() {
        assert!(scan(None, Some(BROKEN_WITH_TIMEOUT)).notes.is_empty());
        assert!(scan(Some(BROKEN_WITH_TIMEOUT), None).notes.is_empty());
        let both = scan(Some("fn f() {}\n"), Some(BROKEN_WITH_TIMEOUT));
        assert!(
            both.notes.iter().any(|n| n.blocking && n.message.contains("could not parse the head")),
            "{:?}",
            both.notes
        );
    }

    #[test]
    fn retrieve_is_not_a_retry_word_but_the_forms_of_retry_are() {
        assert!(!is_retry_relevant("fn retrieve(&self) -> Item { self.retriever.get() }"));
        for text in ["MAX_RETRIES", "Retrying", "was_retried", "Retrier::new()", "RetryPolicy"] {
            assert!(is_retry_relevant(text), "{text}");
        }
        assert!(!is_change_relevant(None, Some("let t = Duration::from_secs(TIMEOUT);")));
        assert!(is_change_relevant(Some("x"), Some("let t = Duration::from_secs(TIMEOUT);")));
    }

    #[test]
    fn a_write_method_handed_as_a_value_makes_a_file_worth_parsing() {
        assert!(is_change_relevant(Some("f(c, Method::GET)"), Some("f(c, reqwest::Method::POST)")));
        assert!(is_change_relevant(None, Some("http::call(c, Method::PATCH, u)")));
        assert!(is_change_relevant(Some("f(Method::from_bytes(b\"POST\"))"), Some("f(Method::GET)")));
        assert!(!is_change_relevant(Some("f(c, Method::GET)"), Some("f(c, Method::PUT)")));
        assert!(!is_change_relevant(Some("let posts = get_posts();"), Some("let posts = list_posts();")));
        assert!(
            !is_change_relevant(Some("route(\"GET\", h)"), Some("route(\"POST\", h)")),
            "a method in a string is no method handed as a value"
        );
        assert!(is_change_relevant(Some("f(m)"), Some("f(Method::from_str(\"POST\")?)")));
    }

    fn kinds_of(r: &FileResult) -> Vec<Kind> {
        r.findings.iter().map(|f| f.kind).collect()
    }

    /// A default count raised where the loop that reads it is misread as
    /// unbounded (`max.map_or(false, |m| n >= m)`): nothing compared it, so
    /// it is reported as unlinked, not passed.
    #[test]
    fn a_count_read_only_by_a_loop_read_as_unbounded_is_reported() {
        let file = |n: u32| {
            format!(
                "pub struct RetryOptions {{ pub max_retries: Option<usize> }}\n\
                 impl Default for RetryOptions {{\n    fn default() -> Self {{\n        Self {{\n            max_retries: Some({n}),\n        }}\n    }}\n}}\n\
                 pub async fn run<F: Fn() -> Fut, Fut: Future<Output = Result<(), E>>>(f: F, options: &RetryOptions) -> Result<(), E> {{\n    let mut retries = 0;\n    loop {{\n        match f().await {{\n            Ok(r) => return Ok(r),\n            Err(e) => {{\n                if options.max_retries.map_or(false, |max_retries| retries >= max_retries) {{\n                    return Err(e);\n                }}\n                retries += 1;\n                tokio::time::sleep(Duration::from_millis(100)).await;\n            }}\n        }}\n    }}\n}}\n"
            )
        };
        let r = scan(Some(&file(5)), Some(&file(10)));
        assert!(
            r.findings
                .iter()
                .any(|f| f.kind == Kind::RetryCountRaised && f.message.contains("raised from 5 to 10")),
            "{:?}",
            r.findings
        );
        // A loop whose count the model computes compares the raise where
        // it is used: not also said as unlinked.
        let counted = |n: u32| {
            format!(
                "const MAX_RETRIES: u32 = {n};\n\
                 pub async fn run(c: &reqwest::Client) -> Result<(), E> {{\n    for _attempt in 0..MAX_RETRIES {{\n        match c.get(\"https://a.example/x\").send().await {{\n            Ok(_) => return Ok(()),\n            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,\n        }}\n    }}\n    Ok(())\n}}\n"
            )
        };
        let r = scan(Some(&counted(3)), Some(&counted(10)));
        assert!(r.findings.iter().any(|f| f.kind == Kind::RetryCountRaised), "{:?}", r.findings);
        assert!(!r.findings.iter().any(|f| f.rule.contains("count-unlinked")), "{:?}", r.findings);
    }

    #[test]
    fn a_retry_in_another_function_of_the_file_is_the_deleted_one_renamed_unless_it_retries_something_else() {
        let base = "fn prices_v1(c: &C) { (|| c.get(\"https://a.example/prices\").send()).retry(ExponentialBuilder::default().with_jitter()); }\n";
        // Renamed, the same request: one retry that lost its jitter.
        let renamed = "fn prices(c: &C) { (|| c.get(\"https://a.example/prices\").send()).retry(ExponentialBuilder::default()); }\n";
        assert_eq!(kinds_of(&scan(Some(base), Some(renamed))), [Kind::JitterRemoved]);
        // Another request: a new retry, and the deleted one is just gone.
        let other = "fn stock(c: &C) { (|| c.get(\"https://a.example/stock\").send()).retry(ExponentialBuilder::default()); }\n";
        assert_eq!(kinds_of(&scan(Some(base), Some(other))), [Kind::RetryWithoutJitter]);
        // Neither says what it retries: read as one retry renamed, as before.
        let opaque = |name: &str, jitter: &str| {
            format!("fn {name}(op: F) {{ (|| op()).retry(ExponentialBuilder::default(){jitter}); }}\n")
        };
        let r = scan(Some(&opaque("a", ".with_jitter()")), Some(&opaque("b", "")));
        assert_eq!(kinds_of(&r), [Kind::JitterRemoved]);
    }

    /// opendal's multipart copy retries with `continue` on a temporary error
    /// and names no retry, sleep or attempt anywhere in the loop.
    #[test]
    fn a_loop_that_retries_on_a_temporary_error_is_parsed_without_a_retry_word() {
        let head = "async fn copy(&mut self) -> Result<()> {\n    loop {\n        match self.tasks.execute(input.clone()).await {\n            Ok(()) => break,\n            Err(err) if err.is_temporary() => continue,\n            Err(err) => return Err(err),\n        }\n    }\n    Ok(())\n}\n";
        let r = scan(None, Some(head));
        assert!(r.findings.iter().any(|f| f.kind == Kind::RetryUnbounded && f.line == 2), "{:?}", r.findings);
    }
}
