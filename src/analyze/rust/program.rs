//! The program around a change: what a changed file uses that another file
//! of the crate defines, and the unchanged files a changed definition
//! reaches.
//!
//! A retry's behaviour is spread over a crate: the count sits in a `const`
//! of a `config` module, the policy in a helper of a `retry` module, the
//! helper `with_retry(op, max_retries)` in a `util` module. Each changed
//! file is first modelled alone ([`super::sites`]); then this pass
//!
//! 1. **resolves** what those models could not: constants, policy-returning
//!    functions, retry helpers, aliases and `macro_rules!` a retry site needs
//!    and its file does not define ([`super::sites::FileModel::unresolved`]).
//!    Their definitions are looked up by name in the other changed files and
//!    in the crate's unchanged files at the head (one `git grep`), and the
//!    file is modelled again with those files beside it, each side with its
//!    own version of a changed definer;
//! 2. finds the **dependents** of changed definitions: a `const`, `static`,
//!    `type`, `macro_rules!`, or a function that builds or wraps a retry,
//!    declared on lines the change touched. Unchanged files of the same
//!    crate that name one and hold retry code are modelled with the base
//!    definitions and with the head ones, and compared like a changed file.
//!    What got worse is reported at the definition that changed, naming the
//!    retry it affects as evidence;
//! 3. reports a **timeout lowered** where a client is built (a file with no
//!    retry of its own) when retrying code elsewhere in the crate uses that
//!    builder.
//!
//! Everything is bounded: at most [`MAX_NAMES`] names are searched and
//! [`MAX_PROGRAM_FILES`] unchanged files read; past that, a note names what
//! was not followed. Without a git tree (texts given in memory) only the
//! changed files are searched.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use rayon::prelude::*;
use regex::Regex;

use super::crate_index::{self, HeadCommit, TreeListing};
use super::policy::Attempts;
use super::sites::{self, FileModel};
use super::{checks, Modelled};
use crate::changeset::git::Blob;
use crate::changeset::FileChange;
use crate::finding::{Finding, Note};

/// The most names searched for in the crate per change.
pub(crate) const MAX_NAMES: usize = 64;
/// Functions most types declare: a file that calls one is not known to
/// call the changed one.
const CONVENTIONAL_NAMES: &[&str] =
    &["new", "default", "from", "into", "build", "builder", "clone", "try_from"];
/// The most unchanged files read from the head tree per change.
pub(crate) const MAX_PROGRAM_FILES: usize = 64;

/// One file the pass reads beside a modelled one, as text on both sides
/// (an unchanged file has the same text on both). Borrowed: the change set
/// already holds every changed file's text, and copying them all cost a
/// large change tens of megabytes.
#[derive(Debug, Clone, Copy)]
struct Source<'t> {
    path: &'t str,
    base: Option<&'t str>,
    head: Option<&'t str>,
}

/// A declaration on lines the change touched.
#[derive(Debug, Clone)]
struct ChangedDef {
    name: String,
    path: String,
    /// The head line of the declaration (the base line when it is gone).
    line: u32,
}

/// One dependent file: its path, the changed definitions it names, what
/// got worse, where (head line, what is there, the site's library), and
/// whether it holds a retry site (the definitions it names are then linked
/// to a retry).
type Reached<'d> = (
    String,
    Vec<&'d ChangedDef>,
    Vec<checks::Change>,
    Vec<(u32, String, &'static str, String)>,
    Vec<(u32, String, ChangedDef)>,
    bool,
);

/// What the pass adds to the analyzer's result.
#[derive(Default)]
pub(super) struct Outcome {
    pub(crate) findings: Vec<Finding>,
    pub(crate) notes: Vec<Note>,
    /// Changed definitions that an unchanged file with a retry site names.
    pub(crate) reached: BTreeSet<String>,
}

/// `const X`, `static X`, `fn x`, `type X`, `macro_rules! x`, with their
/// leading qualifiers; group 1 is the kind, group 2 the name.
fn decl_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r#"(?m)^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:(?:const|async|unsafe|extern[ \t]+"[^"]*")[ \t]+)*(const|static|fn|type|macro_rules!)[ \t]*(?:mut[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)"#,
        )
        .unwrap_or_else(|e| panic!("the declaration pattern is constant and valid: {e}"))
    })
}

/// A declaration in a text: kind, name, first and last line.
struct Decl<'t> {
    kind: &'t str,
    name: &'t str,
    start: u32,
    end: u32,
}

/// The declarations of a text, each with the lines it spans (to its `;`,
/// or to the brace that closes its body; braces in strings are not told
/// apart, which only widens a span).
fn decls(text: &str) -> Vec<Decl<'_>> {
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let line_at = |byte: usize| line_starts.partition_point(|&s| s <= byte) as u32;
    decl_pattern()
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let (kind, name) = (c.get(1)?.as_str(), c.get(2)?.as_str());
            let rest = &text[whole.end()..];
            let end_byte = match kind {
                "fn" | "macro_rules!" => {
                    let open = rest.find('{')?;
                    let mut depth = 0i32;
                    let mut end = rest.len();
                    for (i, b) in rest.bytes().enumerate().skip(open) {
                        match b {
                            b'{' => depth += 1,
                            b'}' => {
                                depth -= 1;
                                if depth == 0 {
                                    end = i;
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    whole.end() + end
                }
                _ => whole.end() + rest.find(';').unwrap_or(rest.len()),
            };
            Some(Decl { kind, name, start: line_at(whole.start()), end: line_at(end_byte) })
        })
        .collect()
}

/// A field set to a value on its own line (`max_retries: 5,` in a struct
/// literal); group 1 is the field. The value must look like a setting (a
/// number, a constant, a duration), not a local.
fn field_value_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?:^|[{,])[ \t]*([a-z_][a-z0-9_]*)[ \t]*:[ \t]*(?:Some\()?(?:[0-9][0-9_.]*|[A-Z][A-Z0-9_]+|[A-Za-z_:]*Duration::[a-z_]+\([^)]*\)|[a-z_][a-z0-9_.]*\.unwrap_or\((?:[0-9]|[A-Z][A-Z0-9_]+))")
            .unwrap_or_else(|e| panic!("the field value pattern is constant and valid: {e}"))
    })
}

/// A field's default given in an attribute: `#[arg(default_value_t = 5)]`
/// or `#[serde(default = "path::to::f")]`, then the field on the same or a
/// following line; group 1 is the function of a serde default, group 2 the
/// field.
fn field_attr_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"#\[(?:serde|arg)\([^\]]*?(?:default[ \t]*=[ \t]*"(?:[A-Za-z0-9_]*::)*([A-Za-z0-9_]+)"|default_value(?:_t)?[ \t]*=[^\]]*)[^\]]*\)\][\s]*(?:#\[[^\]]*\][\s]*)*(?:pub(?:\([^)]*\))?[ \t]+)?([a-z_][a-z0-9_]*)[ \t]*:"#)
            .unwrap_or_else(|e| panic!("the field attribute pattern is constant and valid: {e}"))
    })
}

/// The text a retry reads beyond its own lines (`seeds`): the declarations
/// of `texts` that it names, and those they name, up to `rounds` steps. A
/// constant, static, type or macro is followed wherever its name appears; a
/// function only where it is called free, or on `self`/`Self`
/// (`policy()`, `self.policy()`), not as a method of another value
/// (`Builder::default()`, `client.get(..)`), whose same-named function in
/// the file is rarely the one called.
pub(super) fn reached_text(texts: &[&str], seeds: Vec<String>, rounds: usize) -> Vec<String> {
    let mut found: Vec<(&str, bool, String)> = Vec::new();
    for t in texts {
        let lines: Vec<&str> = t.lines().collect();
        for d in decls(t) {
            let from = d.start.saturating_sub(1) as usize;
            let to = (d.end as usize).min(lines.len());
            if let Some(body) = lines.get(from..to) {
                found.push((d.name, d.kind == "fn", body.join("\n")));
            }
        }
    }
    let mut out = seeds;
    let mut taken = vec![false; found.len()];
    let mut frontier = 0;
    for _ in 0..rounds {
        let end = out.len();
        for (i, (name, is_fn, body)) in found.iter().enumerate() {
            let named = |t: &String| if *is_fn { calls_fn(t, name) } else { names_word(t, name) };
            if !taken[i] && out[frontier..end].iter().any(named) {
                taken[i] = true;
                out.push(body.clone());
            }
        }
        if out.len() == end {
            break;
        }
        frontier = end;
    }
    out
}

/// Whether `text` calls the function `name` free or on `self`/`Self`.
fn calls_fn(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let before = &text[..i];
        let after = &text[i + name.len()..];
        let word_before = before.chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
        if word_before || !after.trim_start().starts_with('(') {
            return false;
        }
        before.ends_with("self.")
            || before.ends_with("Self::")
            || !(before.ends_with('.') || before.ends_with("::"))
    })
}

/// Fields whose value the change set on the lines `ranges` of `text`: a
/// struct-literal value, an `#[arg(default_value_t)]` default, or a serde default function's
/// body (`changed_fns`), each with its line.
pub(super) fn changed_fields(text: &str, ranges: &[(u32, u32)], changed_fns: &[&str]) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i as u32 + 1;
        if touches(ranges, n, n) {
            for c in field_value_pattern().captures_iter(line) {
                out.push((c[1].to_string(), n));
            }
        }
    }
    let line_at = |byte: usize| text[..byte].matches('\n').count() as u32 + 1;
    for c in field_attr_pattern().captures_iter(text) {
        let (Some(whole), Some(field)) = (c.get(0), c.get(2)) else { continue };
        let (start, end) = (line_at(whole.start()), line_at(whole.end()));
        let by_fn = c.get(1).is_some_and(|f| changed_fns.contains(&f.as_str()));
        if by_fn || (c.get(1).is_none() && touches(ranges, start, end)) {
            out.push((field.as_str().to_string(), start));
        }
    }
    out
}

/// Fields a text sets to one of `consts` (`retries: MAX_RETRIES,`).
fn fields_set_to(text: &str, consts: &[(&str, u32)]) -> Vec<(String, u32)> {
    if consts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for c in field_value_pattern().captures_iter(line) {
            let whole = c.get(0).map_or("", |m| m.as_str());
            if consts.iter().any(|(n, _)| names_word(whole, n)) {
                out.push((c[1].to_string(), i as u32 + 1));
            }
        }
    }
    out
}

/// Whether `ranges` (sorted inclusive line ranges) touch `start..=end`.
fn touches(ranges: &[(u32, u32)], start: u32, end: u32) -> bool {
    let i = ranges.partition_point(|&(_, b)| b < start);
    ranges.get(i).is_some_and(|&(a, _)| a <= end)
}

/// The names a function of this file's models is a retry site of (a
/// policy-returning function, a retry helper).
fn site_fns(m: &Modelled) -> BTreeSet<String> {
    [&m.base, &m.head]
        .into_iter()
        .flatten()
        .flat_map(|fm| fm.sites.iter())
        .filter_map(|s| s.item.rsplit("::").next().map(str::to_string))
        .collect()
}

/// Declarations the change touched in one file, given the declarations of
/// its base and head texts ([`decls`], read once per file for this and for
/// the names the file declares).
fn changed_defs(m: &Modelled, base_decls: Option<&[Decl]>, head_decls: Option<&[Decl]>) -> Vec<ChangedDef> {
    let file = m.file;
    let (base, head) = (file.base.text(), file.head.text());
    let fns = site_fns(m);
    // A function is followed when it is a retry site's, or when its name
    // says it gives a count (`max_retries()`, `attempts()`): a retry that
    // calls it cannot be computed, and its rewrite must not pass unsaid.
    let says_count = |n: &str| {
        let n = n.to_ascii_lowercase();
        n.contains("retr") || n.contains("attempt") || n.contains("tries")
    };
    let wanted = |d: &Decl| d.kind != "fn" || fns.contains(d.name) || says_count(d.name);
    let mut out: Vec<ChangedDef> = Vec::new();
    let mut push = |name: &str, line: u32| {
        if !out.iter().any(|c| c.name == name) {
            out.push(ChangedDef { name: name.to_string(), path: file.path.clone(), line });
        }
    };
    match (base.zip(base_decls), head.zip(head_decls)) {
        (Some((b, base_decls)), Some((h, head_decls))) => {
            for d in head_decls.iter().filter(|d| wanted(d) && touches(&file.added, d.start, d.end)) {
                push(d.name, d.start);
            }
            // Settings kept in struct fields: a default that changed
            // reaches every retry that reads the field.
            let fns: Vec<&str> = head_decls
                .iter()
                .filter(|d| d.kind == "fn" && touches(&file.added, d.start, d.end))
                .map(|d| d.name)
                .collect();
            for (field, line) in changed_fields(h, &file.added, &fns) {
                push(&field, line);
            }
            // A changed constant that is a field's default reaches the
            // retries that read the field (`max_retries: DEFAULT_RETRIES`).
            let consts: Vec<(&str, u32)> = head_decls
                .iter()
                .filter(|d| matches!(d.kind, "const" | "static") && touches(&file.added, d.start, d.end))
                .map(|d| (d.name, d.start))
                .collect();
            for (field, _) in fields_set_to(h, &consts) {
                let line = consts.first().map_or(1, |c| c.1);
                push(&field, line);
            }
            let base_decls: Vec<&Decl> = base_decls.iter().filter(|d| wanted(d)).collect();
            if base_decls.is_empty() {
                return out;
            }
            // The base lines the change replaced or removed.
            let removed = crate::changeset::added_lines(h, b);
            for d in base_decls.iter().filter(|d| touches(&removed, d.start, d.end)) {
                let line = head_decls.iter().find(|h| h.name == d.name).map_or(1, |h| h.start);
                push(d.name, line);
            }
        }
        (Some((_, t)), None) | (None, Some((_, t))) => {
            for d in t.iter().filter(|d| wanted(d)) {
                push(d.name, if head.is_some() { d.start } else { 1 });
            }
        }
        (None, None) => {}
    }
    out
}

/// The folder of the test, bench or example target a file belongs to
/// (`integration/tests/`), or `None` for a library or binary source.
fn target_dir(path: &str) -> Option<&str> {
    ["tests/", "benches/", "examples/"]
        .iter()
        .filter_map(|d| {
            let at = if path.starts_with(d) { Some(0) } else { path.find(&format!("/{d}")).map(|i| i + 1) };
            at.map(|i| &path[..i + d.len()])
        })
        .min_by_key(|p| p.len())
}

/// Whether what `definer` declares can be used by `user`: an integration
/// test, bench or example is its own crate, which no other file imports,
/// so a same-named function there is not the one a library file calls.
fn can_import(user: &str, definer: &str) -> bool {
    target_dir(definer).is_none_or(|d| target_dir(user) == Some(d))
}

/// Whether `text` declares `name`.
fn declares(text: &str, name: &str) -> bool {
    text.contains(name) && (decls(text).iter().any(|d| d.name == name) || declares_type(text, name))
}

/// Whether `text` declares a function `name` (free, a method, `async`,
/// `const`, `pub(crate)`...).
pub(super) fn declares_fn(text: &str, name: &str) -> bool {
    text.contains(name) && decls(text).iter().any(|d| d.kind == "fn" && d.name == name)
}

/// Whether `name` is written as a type is (`CappedBuilder`), not as a
/// constant (`MAX_RETRIES`) or a function (`policy`).
fn is_type_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase()) && name.chars().any(|c| c.is_ascii_lowercase())
}

/// Whether `text` declares a struct `name` (a project's own type whose
/// constructor may wrap a retry library's builder).
fn declares_type(text: &str, name: &str) -> bool {
    struct_names(text).any(|n| n == name)
}

/// The structs a text declares.
fn struct_names(text: &str) -> impl Iterator<Item = &str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?m)^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?struct[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
            .unwrap_or_else(|e| panic!("the struct pattern is constant and valid: {e}"))
    });
    re.captures_iter(text).filter_map(|c| c.get(1).map(|m| m.as_str()))
}

/// The first [`MAX_NAMES`] of `names` that are plain identifiers: only
/// those go into a `git grep` pattern unescaped.
fn plain_identifiers<'a>(names: &[&'a str]) -> Vec<&'a str> {
    names
        .iter()
        .copied()
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .take(MAX_NAMES)
        .collect()
}

/// The unchanged `.rs` files of the head tree, anywhere in the repository,
/// that define a function named one of `names` (each a plain identifier)
/// and say retry, attempt or tries somewhere, with their texts: where a
/// callee's parameter names are read. A file that never names a retry count
/// has no parameter to find, so a name many files define (`new`) reads few.
pub(super) fn function_definers(
    tree: Option<&HeadCommit>,
    names: &[&str],
    changed: &BTreeSet<&str>,
    notes: &mut Vec<Note>,
) -> Vec<(String, String)> {
    let names = plain_identifiers(names);
    if names.is_empty() {
        return Vec::new();
    }
    let decl = format!("fn[[:space:]]+({})([^A-Za-z0-9_]|$)", names.join("|"));
    let args = ["--all-match", "-E", "-e", decl.as_str(), "-e", "retr|attempt|tries"];
    let mut budget = MAX_PROGRAM_FILES;
    Tree { tree, listing: None }.grep(&args, Scope::Workspace, changed, &mut budget, notes)
}

/// The head tree's unchanged files that implement `Default` for one of
/// `types`, with their texts.
pub(super) fn default_impl_definers(
    tree: Option<&HeadCommit>,
    types: &[&str],
    changed: &BTreeSet<&str>,
    notes: &mut Vec<Note>,
) -> Vec<(String, String)> {
    let types = plain_identifiers(types);
    if types.is_empty() {
        return Vec::new();
    }
    let decl =
        format!("impl[[:space:]]+Default[[:space:]]+for[[:space:]]+({})([^A-Za-z0-9_]|$)", types.join("|"));
    let args = ["-E", "-e", decl.as_str()];
    let mut budget = MAX_PROGRAM_FILES;
    Tree { tree, listing: None }.grep(&args, Scope::Workspace, changed, &mut budget, notes)
}

/// Whether `text` names `name` as a whole word.
/// Whether `text` can reach the item `name` of module `module`: it names
/// it, and does not define its own `fn name` unless it also names the
/// module (`reports::client()`, `use crate::reports::client`). A file's
/// own item comes first in Rust's name resolution, so a private `fn
/// client()` beside a retry is not another file's `client()`.
fn reaches_item(text: &str, name: &str, module: &str) -> bool {
    names_word(text, name) && (!defines_fn(text, name) || (!module.is_empty() && names_word(text, module)))
}

/// Whether `text` defines `fn name` (any visibility, async or not).
fn defines_fn(text: &str, name: &str) -> bool {
    text.match_indices("fn ").any(|(i, _)| {
        let rest = &text[i + 3..];
        let before = text[..i].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && rest.starts_with(name)
            && !rest[name.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

/// The module a Rust file is (`src/reports.rs` and `src/reports/mod.rs`
/// are `reports`; `lib.rs` and `main.rs` are the crate root, named by none).
fn module_stem(path: &str) -> String {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or("");
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    match stem {
        "mod" => parts.next().unwrap_or("").to_string(),
        "lib" | "main" => String::new(),
        s => s.to_string(),
    }
}

pub(crate) fn names_word(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

/// Where a search looks: some crates (their roots, in the order their
/// files are taken), or every crate of the repository.
#[derive(Clone, Copy)]
enum Scope<'r> {
    Crates(&'r [&'r str]),
    Workspace,
}

/// The head tree, listed once when the pass first needs it.
struct Tree<'t> {
    tree: Option<&'t HeadCommit>,
    listing: Option<Option<TreeListing>>,
}

impl Tree<'_> {
    fn listing(&mut self) -> Option<&TreeListing> {
        if self.listing.is_none() {
            self.listing = Some(self.tree.and_then(crate_index::list_tree));
        }
        self.listing.as_ref().and_then(Option::as_ref)
    }

    /// Unchanged `.rs` files of `scope` that `git grep` finds with `args`,
    /// read from the head tree (at most `budget` files).
    fn grep(
        &mut self,
        args: &[&str],
        scope: Scope<'_>,
        changed: &BTreeSet<&str>,
        budget: &mut usize,
        notes: &mut Vec<Note>,
    ) -> Vec<(String, String)> {
        let Some(tree) = self.tree else { return Vec::new() };
        // The place of a path's crate in the scope (0 for the workspace).
        let rank = |path: &str, manifests: &_| match scope {
            Scope::Crates(roots) => {
                let root = crate_index::crate_root(path, manifests);
                roots.iter().position(|r| *r == root)
            }
            Scope::Workspace => Some(0),
        };
        // A crate whose every file is in the change has nothing unchanged
        // to search.
        let all_changed = self.listing().is_some_and(|l| {
            l.rust_files
                .iter()
                .filter(|(p, _)| rank(p, &l.manifests).is_some())
                .all(|(p, _)| changed.contains(p.as_str()))
        });
        if all_changed {
            return Vec::new();
        }
        let rev = tree.rev.clone();
        // Only the crates' folders are searched: a change that touches many
        // crates searched the whole tree once per crate (66 times for one
        // real commit, most of its scan's time) and kept the crate's files.
        // A folder whose name a pathspec would read as a pattern is not
        // narrowed; the files outside the crates are dropped below either way.
        let narrowable = |root: &&str| !root.is_empty() && !root.contains(['*', '?', '[', '\\', ':']);
        let specs: Vec<String> = match scope {
            Scope::Crates(roots) if roots.iter().all(narrowable) => {
                roots.iter().map(|root| format!("{root}/*.rs")).collect()
            }
            _ => vec!["*.rs".to_string()],
        };
        let mut cmd: Vec<&str> = vec!["grep", "-l", "-I", "--full-name"];
        cmd.extend_from_slice(args);
        cmd.extend_from_slice(&[rev.as_str(), "--"]);
        cmd.extend(specs.iter().map(String::as_str));
        let out = match tree.git.run_bytes(&cmd) {
            Ok(o) => o,
            Err(crate::changeset::ChangeSetError::Git { stderr, .. }) if stderr.is_empty() => {
                return Vec::new()
            }
            Err(e) => {
                notes.push(Note::blocking(
                    None,
                    format!("could not search the crate for the definitions and uses a retry depends on ({e}); check that the head commit is in the repository, then run retrygate again"),
                ));
                return Vec::new();
            }
        };
        let prefix = format!("{rev}:");
        let Some(listing) = self.listing() else { return Vec::new() };
        let ids: HashMap<&str, &str> =
            listing.rust_files.iter().map(|(p, id)| (p.as_str(), id.as_str())).collect();
        // Crate by crate in the scope's order, each crate's files in path
        // order: what one search per crate would have read, and where the
        // budget would have cut it.
        let text = String::from_utf8_lossy(&out);
        let mut hits: Vec<(usize, &str)> = text
            .lines()
            .map(|line| line.strip_prefix(&prefix).unwrap_or(line))
            .filter(|path| !changed.contains(path))
            .filter_map(|path| rank(path, &listing.manifests).map(|r| (r, path)))
            .collect();
        hits.sort();
        let mut wanted: Vec<(String, String)> = Vec::new();
        for (_, path) in hits {
            let Some(id) = ids.get(path) else { continue };
            if *budget == 0 {
                notes.push(Note::info(
                    Some(path),
                    format!("more than {MAX_PROGRAM_FILES} unchanged files of this crate take part in the retry code this change touches; the rest were not read"),
                ));
                break;
            }
            *budget -= 1;
            wanted.push((path.to_string(), id.to_string()));
        }
        let ids: Vec<String> = wanted.iter().map(|(_, id)| id.clone()).collect();
        let blobs = match tree.git.read_blobs(&ids, crate_index::MAX_INDEX_FILE_BYTES) {
            Ok(b) => b,
            Err(e) => {
                notes.push(Note::blocking(None, format!("could not read files of the crate from the head tree ({e}); run retrygate again in a complete clone")));
                return Vec::new();
            }
        };
        wanted
            .into_iter()
            .zip(blobs)
            .filter_map(|((path, _), blob)| match blob {
                Blob::Bytes(b) => String::from_utf8(b).ok().map(|t| (path, t)),
                _ => None,
            })
            .collect()
    }
}

/// Parses `text` with `definers` beside it on this thread and models it.
fn model_unit(path: &str, text: &str, definers: &[&str]) -> Option<FileModel> {
    let parsed: Vec<syn::File> = definers.iter().filter_map(|d| super::parse::parse_file(d).ok()).collect();
    let refs: Vec<&syn::File> = parsed.iter().collect();
    let model = model_parsed(path, text, &refs);
    drop(parsed);
    proc_macro2::extra::invalidate_current_thread_spans();
    model
}

/// Parses `text` and models it with `definers` (parsed on this thread)
/// beside it; `None` when it does not parse.
fn model_parsed(path: &str, text: &str, definers: &[&syn::File]) -> Option<FileModel> {
    let mut ast = super::parse_rust(path, text).ok()?;
    sites::expand_macros(&mut ast, text, definers);
    Some(sites::model_with(&ast, text, definers))
}

/// Source bytes one batch of [`remodel`] keeps parsed before it lets go
/// of its definers (their trees take many times their text in memory: at
/// 4 MiB the real corpus's scan peaked at 200 MiB, at 1 MiB at 150 MiB, in
/// the same time).
const MAX_BATCH_HELD_BYTES: usize = 1024 * 1024;

/// Models each file of `redo` again, both sides, with the definers found
/// for it. The files of one crate mostly need the same few definers (a
/// `config.rs`, an `error.rs`): parsing them once per file that needs them
/// was most of a large change's scan. So the work is cut into a few
/// batches, each on one thread (a parsed file's spans belong to the thread
/// that parsed it), and a batch parses each definer text once and keeps it
/// until it has held [`MAX_BATCH_HELD_BYTES`] of source. Each model is the
/// one [`model_unit`] gives: the same definers, in the same order.
fn remodel<'t>(
    sources: &[Source<'t>],
    mut redo: Vec<(usize, Vec<Source<'t>>)>,
) -> Vec<(usize, Option<FileModel>, Option<FileModel>)> {
    // Files that need the same definers side by side, so that they fall in
    // the same batch.
    redo.sort_by_cached_key(|(i, found)| (found.iter().map(|d| d.path).collect::<Vec<&'t str>>(), *i));
    let weight = |(i, found): &(usize, Vec<Source>)| {
        let s = &sources[*i];
        let own = s.base.map_or(0, str::len) + s.head.map_or(0, str::len);
        own + found.iter().map(|d| d.base.map_or(0, str::len) + d.head.map_or(0, str::len)).sum::<usize>()
    };
    let total: usize = redo.iter().map(weight).sum();
    // A few batches per thread, so a thread that finishes early takes more.
    let batches = (rayon::current_num_threads() * 2).max(1);
    let per_batch = total / batches + 1;
    let mut cut: Vec<&[(usize, Vec<Source>)]> = Vec::new();
    let (mut start, mut acc) = (0, 0);
    for (k, r) in redo.iter().enumerate() {
        acc += weight(r);
        if acc >= per_batch {
            cut.push(&redo[start..=k]);
            (start, acc) = (k + 1, 0);
        }
    }
    if start < redo.len() {
        cut.push(&redo[start..]);
    }
    cut.par_iter().flat_map_iter(|batch| remodel_batch(sources, batch)).collect()
}

/// One batch of [`remodel`], on the calling thread.
fn remodel_batch<'t>(
    sources: &[Source<'t>],
    batch: &[(usize, Vec<Source<'t>>)],
) -> Vec<(usize, Option<FileModel>, Option<FileModel>)> {
    let mut parsed: HashMap<&'t str, Option<syn::File>> = HashMap::new();
    let mut held = 0usize;
    let mut out = Vec::with_capacity(batch.len());
    for (i, found) in batch {
        let s = &sources[*i];
        let mut side = |text: Option<&str>, pick: fn(&Source<'t>) -> Option<&'t str>| {
            let text = text?;
            let defs: Vec<&str> = found.iter().filter_map(pick).collect();
            for d in &defs {
                parsed.entry(*d).or_insert_with(|| {
                    held += d.len();
                    super::parse::parse_file(d).ok()
                });
            }
            let refs: Vec<&syn::File> =
                defs.iter().filter_map(|d| parsed.get(d).and_then(Option::as_ref)).collect();
            held += text.len();
            model_parsed(s.path, text, &refs)
        };
        let base = side(s.base, |d| d.base);
        let head = side(s.head, |d| d.head);
        out.push((*i, base, head));
        if held > MAX_BATCH_HELD_BYTES {
            parsed.clear();
            proc_macro2::extra::invalidate_current_thread_spans();
            held = 0;
        }
    }
    drop(parsed);
    proc_macro2::extra::invalidate_current_thread_spans();
    out
}

/// Runs the pass over the modelled changed files.
pub(super) fn resolve(tree: Option<&HeadCommit>, modelled: &mut [Modelled]) -> Outcome {
    let mut out = Outcome::default();
    let wants: Vec<BTreeSet<String>> = modelled
        .iter()
        .map(|m| {
            [&m.base, &m.head].into_iter().flatten().flat_map(|fm| fm.unresolved.iter().cloned()).collect()
        })
        .collect();
    let any_wants = wants.iter().any(|w| !w.is_empty());
    // Every changed file's declarations, read once (in parallel: most of a
    // large change is files with no retry at all): the declarations the
    // change touched, and, when a file needs a name it does not define,
    // every name each file declares.
    let per_file: Vec<(Vec<ChangedDef>, BTreeSet<&str>)> = modelled
        .par_iter()
        .map(|m| {
            let base = m.file.base.text().map(decls);
            let head = m.file.head.text().map(decls);
            let defs = changed_defs(m, base.as_deref(), head.as_deref());
            let names: BTreeSet<&str> = if any_wants {
                let structs =
                    [m.file.base.text(), m.file.head.text()].into_iter().flatten().flat_map(struct_names);
                base.iter().chain(head.iter()).flatten().map(|d| d.name).chain(structs).collect()
            } else {
                BTreeSet::new()
            };
            (defs, names)
        })
        .collect();
    let mut defs: Vec<ChangedDef> = Vec::new();
    let mut declared: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, (d, names)) in per_file.into_iter().enumerate() {
        defs.extend(d);
        for n in names {
            declared.entry(n).or_default().push(i);
        }
    }
    if defs.is_empty() && wants.iter().all(BTreeSet::is_empty) {
        return out;
    }
    let changed: BTreeSet<&str> = modelled.iter().map(|m| m.file.path.as_str()).collect();
    let mut tree = Tree { tree, listing: None };
    let mut budget = MAX_PROGRAM_FILES;
    let sources: Vec<Source> = modelled
        .iter()
        .map(|m| {
            let file: &FileChange = m.file;
            Source { path: &file.path, base: file.base.text(), head: file.head.text() }
        })
        .collect();

    // 1. Names the changed files need. Which changed file declares what is
    // read once (a change of thousands of files must not read each file
    // once per name another file needs).
    // Per file: the changed files that declare what it needs, and the names
    // no changed file declares (looked for in the tree, per crate, with
    // one search for all of them).
    let mut needs: Vec<(usize, BTreeSet<usize>, Vec<String>)> = Vec::new();
    let mut manifests: Option<Vec<String>> = None;
    for (i, want) in wants.iter().enumerate() {
        if want.is_empty() {
            continue;
        }
        let mut from_changed: BTreeSet<usize> = BTreeSet::new();
        let mut missing: Vec<String> = Vec::new();
        for n in want.iter().take(MAX_NAMES) {
            let by: Vec<usize> = declared.get(n.as_str()).map_or(Vec::new(), |v| {
                v.iter()
                    .copied()
                    .filter(|&j| j != i && can_import(sources[i].path, sources[j].path))
                    .collect()
            });
            // The file's own crate first, as the search of the tree goes:
            // another crate's changed `LIMIT` is not this crate's unchanged
            // one. Only a type is taken from another crate (a wrapper kept
            // in a shared crate), and then the own crate is searched too.
            let manifests: &[String] = if by.is_empty() {
                &[]
            } else {
                manifests
                    .get_or_insert_with(|| tree.listing().map(|l| l.manifests.clone()).unwrap_or_default())
            };
            let root = |path: &str| crate_index::crate_root(path, manifests);
            let (own, other): (Vec<usize>, Vec<usize>) =
                by.into_iter().partition(|&j| root(sources[i].path) == root(sources[j].path));
            let by = if !own.is_empty() {
                own
            } else {
                missing.push(n.clone());
                if is_type_name(n) {
                    other
                } else {
                    Vec::new()
                }
            };
            // A name many files declare (`new`) says nothing about which one
            // is meant: only a few definers are read.
            if by.len() <= 4 {
                from_changed.extend(by);
            }
        }
        needs.push((i, from_changed, missing));
    }
    let mut from_tree: HashMap<String, Vec<(String, String)>> = HashMap::new();
    if tree.tree.is_some() && needs.iter().any(|(_, _, m)| !m.is_empty()) {
        let mut by_root: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        for (i, _, missing) in &needs {
            let root = tree
                .listing()
                .map(|l| crate_index::crate_root(sources[*i].path, &l.manifests).to_string())
                .unwrap_or_default();
            by_root.entry(root).or_default().extend(missing.iter().map(String::as_str));
        }
        for (root, names) in by_root {
            let names: Vec<&str> = names.into_iter().take(MAX_NAMES).collect();
            let alternation = names.join("|");
            let decl = format!("(const|static|fn|type|struct)[[:space:]]+(mut[[:space:]]+)?({alternation})");
            let mac = format!("macro_rules![[:space:]]*({alternation})");
            let args = ["-w", "-E", "-e", decl.as_str(), "-e", mac.as_str()];
            let mut found =
                tree.grep(&args, Scope::Crates(&[root.as_str()]), &changed, &mut budget, &mut out.notes);
            // A type the crate does not declare may be another crate's of
            // the same workspace (a wrapper kept in a shared `core` crate):
            // those are looked for once more, in every crate.
            let types: Vec<&str> = names
                .iter()
                .copied()
                .filter(|n| is_type_name(n))
                .filter(|n| !found.iter().any(|(_, t)| declares(t, n)))
                .collect();
            if !types.is_empty() && tree.listing().is_some_and(|l| l.manifests.len() > 1) {
                let alternation = types.join("|");
                let decl = format!("struct[[:space:]]+({alternation})");
                let args = ["-w", "-E", "-e", decl.as_str()];
                found.extend(tree.grep(&args, Scope::Workspace, &changed, &mut budget, &mut out.notes));
            }
            from_tree.insert(root, found);
        }
    }
    let mut redo: Vec<(usize, Vec<Source>)> = Vec::new();
    for (i, from_changed, missing) in needs {
        let mut found: Vec<Source> = from_changed.into_iter().map(|j| sources[j]).collect();
        if !missing.is_empty() {
            let root = tree
                .listing()
                .map(|l| crate_index::crate_root(sources[i].path, &l.manifests).to_string())
                .unwrap_or_default();
            for (path, text) in from_tree.get(&root).into_iter().flatten() {
                if missing.iter().any(|n| declares(text, n)) {
                    found.push(Source { path, base: Some(text), head: Some(text) });
                }
            }
        }
        if !found.is_empty() {
            redo.push((i, found));
        }
    }
    for (i, base, head) in remodel(&sources, redo) {
        let m = &mut modelled[i];
        if let (Some(b), Some(_)) = (base, m.base.as_ref()) {
            m.base = Some(keep_writes(b, m.base.take()));
        }
        if let (Some(h), Some(_)) = (head, m.head.as_ref()) {
            m.head = Some(keep_writes(h, m.head.take()));
        }
    }

    // 2. Unchanged files a changed definition reaches.
    if !defs.is_empty() {
        dependents(&defs, &sources, &changed, &mut tree, &mut budget, &mut out);
    }
    out
}

/// A re-modelled side keeps the write sites its first model read (the
/// crate-wide index uses them).
fn keep_writes(mut new: FileModel, old: Option<FileModel>) -> FileModel {
    if let Some(old) = old {
        new.writes = old.writes;
    }
    new
}

/// Models the unchanged files that name a changed definition with the base
/// and the head definitions, and reports what got worse at the definition.
fn dependents(
    defs: &[ChangedDef],
    sources: &[Source],
    changed: &BTreeSet<&str>,
    tree: &mut Tree,
    budget: &mut usize,
    out: &mut Outcome,
) {
    // A name every type declares (`new`, `default`) says nothing about
    // which definition a file that names it uses: such functions are not
    // followed into unchanged files.
    let defs: Vec<&ChangedDef> =
        defs.iter().filter(|d| !CONVENTIONAL_NAMES.contains(&d.name.as_str())).collect();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).take(MAX_NAMES).collect();
    let mut users: Vec<(String, String)> = Vec::new();
    // The name other crates use for each changed crate (`common`).
    let mut idents: BTreeMap<String, String> = BTreeMap::new();
    if tree.tree.is_some() {
        // Each crate is searched for the names its own files changed.
        let mut by_root: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        if let Some(l) = tree.listing() {
            for d in &defs {
                if names.contains(&d.name.as_str()) {
                    let root = crate_index::crate_root(&d.path, &l.manifests).to_string();
                    by_root.entry(root).or_default().insert(d.name.as_str());
                }
            }
        }
        // Neighbouring crates that changed the same names are searched
        // together (a trait renamed in 64 service crates was 64 searches).
        let mut runs: Vec<(&BTreeSet<&str>, Vec<&str>)> = Vec::new();
        for (root, names) in &by_root {
            match runs.last_mut() {
                Some((last, roots)) if *last == names => roots.push(root.as_str()),
                _ => runs.push((names, vec![root.as_str()])),
            }
        }
        for (names, roots) in &runs {
            let mut args: Vec<&str> = vec!["-w", "-F"];
            for n in names.iter() {
                args.push("-e");
                args.push(n);
            }
            users.extend(tree.grep(&args, Scope::Crates(roots), changed, budget, &mut out.notes));
        }
        // A library crate's names reach the other crates of the workspace
        // that name it by path (`common::MAX_ATTEMPTS`, `use
        // common::limits`): a shared limits crate is the usual layout.
        for (root, names) in &by_root {
            let Some(ident) = crate_ident(tree, root, &mut out.notes) else { continue };
            let names: Vec<&str> = names.iter().copied().collect();
            let found = other_crates_naming(tree, &ident, root, &names, changed, budget, &mut out.notes);
            for (path, text) in found {
                if !users.iter().any(|(p, _)| *p == path) {
                    users.push((path, text));
                }
            }
            idents.insert(root.clone(), ident);
        }
    }
    let users: Vec<(String, String)> = users
        .into_iter()
        .filter(|(p, t)| !crate_index::is_test_path(p) && super::is_change_relevant(Some(t), Some(t)))
        .collect();
    if users.is_empty() {
        return;
    }
    // A file uses its own crate's definitions: two crates of a workspace
    // that change a constant of the same name each reach their own files.
    let manifests: Vec<String> = tree.listing().map(|l| l.manifests.clone()).unwrap_or_default();
    // Or another crate's, when it names that crate by path.
    let same_crate = |def: &str, user: &str, text: &str| {
        let root = crate_index::crate_root(def, &manifests);
        root == crate_index::crate_root(user, &manifests)
            || idents.get(root).is_some_and(|ident| names_crate_path(text, ident))
    };
    let results: Vec<Reached> = users
        .par_iter()
        .map(|(path, text)| {
            let mine: Vec<&ChangedDef> = defs
                .iter()
                .copied()
                .filter(|d| names_word(text, &d.name) && same_crate(&d.path, path, text))
                .collect();
            let def_paths: BTreeSet<&str> = mine.iter().map(|d| d.path.as_str()).collect();
            let pick = |head: bool| -> Vec<&str> {
                sources
                    .iter()
                    .filter(|s| def_paths.contains(s.path))
                    .filter_map(|s| if head { s.head } else { s.base })
                    .collect()
            };
            let base = model_unit(path, text, &pick(false));
            let head = model_unit(path, text, &pick(true));
            let (Some(base), Some(head)) = (base, head) else {
                return (path.clone(), mine, Vec::new(), Vec::new(), Vec::new(), false);
            };
            let (pairs, _, _) = super::match_sites(&base.sites, &head.sites);
            let mut changes = Vec::new();
            let mut at = Vec::new();
            let mut unknown: Vec<(u32, String, ChangedDef)> = Vec::new();
            for (bi, hi) in pairs {
                let h = &head.sites[hi];
                // The site's own lines, to tell which changed definition it reads.
                let lines: String = text
                    .lines()
                    .skip(h.line.saturating_sub(1) as usize)
                    .take((h.end_line.saturating_sub(h.line) + 1) as usize)
                    .collect::<Vec<_>>()
                    .join("\n");
                for c in checks::compare_sites(Some(&base.sites[bi].policy), &h.policy) {
                    changes.push(c);
                    at.push((h.line, format!("`{}`", h.item), h.policy.lib.id(), lines.clone()));
                }
                if h.policy.attempts.value == Attempts::Unknown {
                    for d in mine.iter().filter(|d| h.unresolved.contains(&d.name)) {
                        unknown.push((h.line, h.policy.attempts.why.clone(), (*d).clone()));
                    }
                }
            }
            if !head.sites.is_empty() {
                let mut t = super::timeout_changes(&base, &head);
                for (line, c) in t.drain(..) {
                    changes.push(c);
                    at.push((line, "a retrying client".to_string(), checks::CLIENT, String::new()));
                }
            }
            let has_sites = !head.sites.is_empty();
            (path.clone(), mine, changes, at, unknown, has_sites)
        })
        .collect();
    for (path, mine, changes, at, unknown, has_sites) in results {
        if has_sites {
            out.reached.extend(mine.iter().map(|d| d.name.clone()));
        }
        // An unknown count is not an unchanged one: the retry reads a
        // definition the change rewrote, and retrygate cannot compute it.
        for (line, why, d) in unknown {
            out.notes.push(Note::blocking(
                Some(&d.path),
                format!(
                    "line {}: `{}` changed here, and the retry at {path}:{line} computes its attempt count ({why}) from it, which retrygate cannot compute; a maintainer checks how many attempts it allows now before signing off",
                    d.line, d.name
                ),
            ));
        }
        let Some(first) = mine.first() else { continue };
        for (c, (line, what, lib, lines)) in changes.into_iter().zip(at) {
            // The definition the site names, when it names one; else the first.
            let def = mine.iter().find(|d| names_word(&lines, &d.name)).unwrap_or(first);
            let mut c = c;
            c.message = format!(
                "`{}` changed at {}:{}: {} (affects the retry at {path}:{line}, {what})",
                def.name, def.path, def.line, c.message
            );
            out.findings.push(super::to_finding_at(&def.path, lib, c, def.line, def.line));
        }
    }
}

/// The name other crates of the workspace write for the library crate at
/// `root` (`crates/common` -> `common`): its `[lib] name`, else its package
/// name, with `-` read as `_`. `None` for a crate with no library target
/// (nothing can name a binary's items) or a workspace root with no package.
/// A manifest git cannot read is a blocking note: the crate's users in
/// other crates would otherwise go unsearched in silence.
fn crate_ident(tree: &mut Tree, root: &str, notes: &mut Vec<Note>) -> Option<String> {
    let head = tree.tree?;
    // A folder with no manifest (a repository of loose files) is no crate.
    if !tree.listing().is_some_and(|l| l.manifests.iter().any(|m| m == root)) {
        return None;
    }
    let has_lib = tree.listing().is_some_and(|l| {
        let lib = if root.is_empty() { "src/lib.rs".to_string() } else { format!("{root}/src/lib.rs") };
        l.rust_files.iter().any(|(p, _)| *p == lib)
    });
    let manifest = if root.is_empty() { "Cargo.toml".to_string() } else { format!("{root}/Cargo.toml") };
    let spec = format!("{}:{manifest}", head.rev);
    let text = match head.git.run_bytes(&["cat-file", "blob", spec.as_str()]) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            notes.push(Note::blocking(
                Some(&manifest),
                format!("could not read this manifest from the head tree ({e}), so the other crates of the workspace that use this crate's changed definitions were not searched; run retrygate again in a complete clone"),
            ));
            return None;
        }
    };
    let explicit = manifest_lib_name(&text);
    if !has_lib && explicit.is_none() {
        return None;
    }
    let name = explicit.or_else(|| manifest_section_name(&text, "package"))?;
    Some(name.replace('-', "_"))
}

/// The `[lib] name` of a manifest, when it sets one.
fn manifest_lib_name(text: &str) -> Option<String> {
    manifest_section_name(text, "lib")
}

/// The `name = "..."` of a manifest's `[section]`.
fn manifest_section_name(text: &str, section: &str) -> Option<String> {
    let header = format!("[{section}]");
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == header;
            continue;
        }
        if !inside {
            continue;
        }
        let Some(rest) = t.strip_prefix("name") else { continue };
        let Some(value) = rest.trim_start().strip_prefix('=') else { continue };
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        if !value.is_empty() && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            return Some(value.to_string());
        }
    }
    None
}

/// Whether `text` names crate `ident` as the root of a path (`ident::x`,
/// `use ident::{..}`, `::ident::x`), not as part of a longer name.
fn names_crate_path(text: &str, ident: &str) -> bool {
    let pat = format!("{ident}::");
    text.match_indices(&pat)
        .any(|(i, _)| text[..i].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_')))
}

/// The unchanged files of other crates of the workspace that name crate
/// `ident` by path and one of `names`, with their texts.
fn other_crates_naming(
    tree: &mut Tree,
    ident: &str,
    root: &str,
    names: &[&str],
    changed: &BTreeSet<&str>,
    budget: &mut usize,
    notes: &mut Vec<Note>,
) -> Vec<(String, String)> {
    let names = plain_identifiers(names);
    if names.is_empty() || !ident.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Vec::new();
    }
    let path = format!("(^|[^A-Za-z0-9_]){ident}::");
    let named = format!("(^|[^A-Za-z0-9_])({})([^A-Za-z0-9_]|$)", names.join("|"));
    let args = ["--all-match", "-E", "-e", path.as_str(), "-e", named.as_str()];
    let manifests: Vec<String> = tree.listing().map(|l| l.manifests.clone()).unwrap_or_default();
    tree.grep(&args, Scope::Workspace, changed, budget, notes)
        .into_iter()
        .filter(|(p, t)| crate_index::crate_root(p, &manifests) != root && names_crate_path(t, ident))
        .collect()
}

/// Timeouts lowered in changed files that hold no retry of their own: a
/// finding when retrying code of the crate uses what the timeout's item
/// builds (its function or type named in a file with a retry site).
pub(super) fn client_timeouts(tree: Option<&HeadCommit>, modelled: &[Modelled]) -> Outcome {
    let mut out = Outcome::default();
    let mut lowered: Vec<(usize, u32, checks::Change, Vec<String>)> = Vec::new();
    for (i, m) in modelled.iter().enumerate() {
        let (Some(b), Some(h)) = (&m.base, &m.head) else { continue };
        if !b.sites.is_empty() || !h.sites.is_empty() {
            continue;
        }
        for (line, c) in super::timeout_changes(b, h) {
            let Some(t) = h.timeouts.iter().find(|t| t.line == line) else { continue };
            // A timeout tied to a retry where it is set was judged with its
            // file; only one with no tie looks for a retry elsewhere.
            if !matches!(t.tie, sites::TimeoutTie::Unknown | sites::TimeoutTie::Wrapped) {
                continue;
            }
            let item = t.item.clone();
            let mut parts: Vec<String> = item.split("::").map(str::to_string).collect();
            // The function and, for a method, its type.
            let keep = parts.len().min(2);
            let names = parts.split_off(parts.len() - keep);
            // `HttpConfig::default`: the type names the config; `default`
            // is every type's.
            let names =
                names.into_iter().filter(|n| n.len() > 2 && !CONVENTIONAL_NAMES.contains(&n.as_str()));
            lowered.push((i, line, c, names.collect()));
        }
    }
    if lowered.is_empty() {
        return out;
    }
    let changed: BTreeSet<&str> = modelled.iter().map(|m| m.file.path.as_str()).collect();
    let mut tree = Tree { tree, listing: None };
    let mut budget = MAX_PROGRAM_FILES;
    for (i, line, c, names_of) in lowered {
        let path = &modelled[i].file.path;
        // The file itself turns a timeout into a failure that is tried
        // again (`Error::Timeout => SendError::TemporaryFailure`): whatever
        // redelivers on that failure (a queue, a scheduler, another
        // service) re-runs the whole operation after each timeout.
        if let Some(at) = modelled[i].file.head.text().and_then(timeout_made_retryable) {
            let mut c = c;
            c.message = format!(
                "{}; a timeout here becomes a failure that is tried again (line {at}), so a shorter timeout repeats work the server may have completed",
                c.message
            );
            out.findings.push(super::to_finding_at(path, checks::CLIENT, c, line, line));
            continue;
        }
        if names_of.is_empty() {
            continue;
        }
        // Retrying code among the changed files first.
        let module = module_stem(path);
        let calls_this = |text: &str| names_of.iter().any(|n| reaches_item(text, n, &module));
        let mut user: Option<String> = modelled.iter().enumerate().find_map(|(j, m)| {
            let h = m.head.as_ref()?;
            let text = m.file.head.text()?;
            (j != i && !h.sites.is_empty() && calls_this(text))
                .then(|| format!("{}:{}", m.file.path, h.sites[0].line))
        });
        if user.is_none() && tree.tree.is_some() {
            let root = tree
                .listing()
                .map(|l| crate_index::crate_root(path, &l.manifests).to_string())
                .unwrap_or_default();
            let mut args: Vec<&str> = vec!["-w", "-F"];
            for n in &names_of {
                args.push("-e");
                args.push(n);
            }
            let found =
                tree.grep(&args, Scope::Crates(&[root.as_str()]), &changed, &mut budget, &mut out.notes);
            user = found
                .par_iter()
                .filter(|(p, t)| {
                    !crate_index::is_test_path(p) && super::is_retry_relevant(t) && calls_this(t)
                })
                .find_map_first(|(p, t)| {
                    let m = model_unit(p, t, &[])?;
                    m.sites.first().map(|s| format!("{p}:{}", s.line))
                });
        }
        if let Some(at) = user {
            let mut c = c;
            c.message = format!("{}; the client it builds is retried at {at}", c.message);
            out.findings.push(super::to_finding_at(path, checks::CLIENT, c, line, line));
        }
    }
    out
}

/// A match arm that maps a timeout error to a failure the program tries
/// again: the pattern names `Timeout`/`TimedOut`, the value a temporary,
/// transient or retryable kind (`Error::Timeout => SendError::TemporaryFailure`).
fn timeout_arm_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?m)^[^/\n]*\b(?:[A-Za-z_]+::)*(?:Timeout|TimedOut|Elapsed)\b[^=\n]*=>\s*(?:[A-Za-z_]+::)*[A-Za-z_]*(?:Temporary|Transient|Retryable|Retry)[A-Za-z_]*")
            .unwrap_or_else(|e| panic!("the timeout arm pattern is constant and valid: {e}"))
    })
}

/// The line of the first arm of `text` that makes a timeout retryable.
fn timeout_made_retryable(text: &str) -> Option<u32> {
    let m = timeout_arm_pattern().find(text)?;
    Some(text[..m.start()].matches('\n').count() as u32 + 1)
}

/// Whether a line installs a retry policy type on a client: it names the
/// type and a layer or retry call (`RetryLayer::new(Policy::default())`,
/// `.retry(policy)`, `.layer(..)`), and is not the type's own `impl`.
fn installs(line: &str, ty: &str) -> bool {
    let code = line.trim_start();
    names_word(line, ty)
        && !code.starts_with("//")
        && !code.starts_with('*')
        && !line.contains("impl")
        && ["RetryLayer", "retry(", "layer(", "Retry::new(", "with_retry"].iter().any(|w| line.contains(w))
}

/// Whether a line installs a value held in a field or binding declared
/// with the policy type (`retry_config: RetryConfig` declared, then
/// `RetryLayer::new(self.config.retry_config.clone())`).
fn installs_held(line: &str, held: &[String]) -> bool {
    let code = line.trim_start();
    !code.starts_with("//")
        && !code.starts_with('*')
        && ["RetryLayer", "retry(", "layer(", "Retry::new("].iter().any(|w| line.contains(w))
        && held.iter().any(|h| hands_value(line, h))
}

/// Whether a line reads `name` as a value (`cfg.name`, `(name`, `&name`),
/// not calls or declares it (`fn name(`, `name(..)`).
fn hands_value(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + name.len()..].chars().next();
        matches!(before, Some('.' | '(' | '&'))
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '(')
    })
}

/// The names of fields and bindings a text declares with type `ty`
/// (`name: Ty`, `name: Option<Ty>`), for [`installs_held`].
fn held_as(text: &str, ty: &str, out: &mut Vec<String>) {
    for (i, _) in text.match_indices(ty) {
        if !names_word(&text[i..], ty)
            || text[i + ty.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let before = text[..i].trim_end();
        let before = before.strip_suffix("Option<").map(str::trim_end).unwrap_or(before);
        let Some(before) = before.strip_suffix(':') else { continue };
        if before.ends_with(':') {
            continue; // a path (`retry::RetryConfig`), not a declaration
        }
        let name: String = before
            .trim_end()
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit()) && !out.contains(&name) {
            out.push(name);
        }
    }
}

/// A tower `impl Policy` covers a client's requests only where it is
/// installed: a policy type that no product code of the crate puts on a
/// client (only an example or a test does, or nothing yet) is an opt-in
/// that covers nothing, so it is not client-wide on that side. Each side
/// is read in its own texts; unchanged files are the same on both.
pub(super) fn uninstalled_policies(tree: Option<&HeadCommit>, modelled: &mut [Modelled]) -> Vec<Note> {
    let ty_of = |item: &str| -> Option<String> {
        let mut it = item.rsplit("::");
        (it.next() == Some("retry")).then(|| it.next().map(str::to_string)).flatten()
    };
    let is_impl = |s: &sites::Site| s.policy.lib == super::libs::tower::LIB && s.policy.client_wide;
    let mut types: BTreeSet<String> = BTreeSet::new();
    for m in modelled.iter() {
        for fm in [&m.base, &m.head].into_iter().flatten() {
            types.extend(fm.sites.iter().filter(|s| is_impl(s)).filter_map(|s| ty_of(&s.item)));
        }
    }
    let mut notes = Vec::new();
    if types.is_empty() {
        return notes;
    }
    let changed: BTreeSet<&str> = modelled.iter().map(|m| m.file.path.as_str()).collect();
    // Unchanged product files that install one of the types.
    let mut tree = Tree { tree, listing: None };
    let mut budget = MAX_PROGRAM_FILES;
    let mut elsewhere: BTreeSet<String> = BTreeSet::new();
    if tree.tree.is_some() {
        let mut args: Vec<&str> = vec!["-w", "-F"];
        for t in &types {
            args.push("-e");
            args.push(t);
        }
        let roots: BTreeSet<String> = match tree.listing() {
            Some(l) => modelled
                .iter()
                .map(|m| crate_index::crate_root(&m.file.path, &l.manifests).to_string())
                .collect(),
            None => BTreeSet::new(),
        };
        for root in roots {
            for (path, text) in
                tree.grep(&args, Scope::Crates(&[root.as_str()]), &changed, &mut budget, &mut notes)
            {
                if crate_index::is_test_path(&path) {
                    continue;
                }
                for t in &types {
                    let mut held = Vec::new();
                    held_as(&text, t, &mut held);
                    if text.lines().any(|l| installs(l, t) || installs_held(l, &held)) {
                        elsewhere.insert(t.clone());
                    }
                }
            }
        }
    }
    for head in [false, true] {
        fn side<'m>(m: &'m Modelled, head: bool) -> Option<&'m str> {
            if head {
                m.file.head.text()
            } else {
                m.file.base.text()
            }
        }
        let installed: BTreeSet<&String> = types
            .iter()
            .filter(|t| {
                // Fields declared with the type anywhere in the changed files.
                let mut held = Vec::new();
                for m in modelled.iter() {
                    if let Some(text) = side(m, head) {
                        held_as(text, t, &mut held);
                    }
                }
                elsewhere.contains(*t)
                    || modelled.iter().any(|m| {
                        !crate_index::is_test_path(&m.file.path)
                            && side(m, head)
                                .is_some_and(|x| x.lines().any(|l| installs(l, t) || installs_held(l, &held)))
                    })
            })
            .collect();
        for m in modelled.iter_mut() {
            let fm = if head { m.head.as_mut() } else { m.base.as_mut() };
            for s in fm.into_iter().flat_map(|f| f.sites.iter_mut()) {
                if is_impl(s) && ty_of(&s.item).is_some_and(|t| !installed.contains(&t)) {
                    s.policy.client_wide = false;
                    s.policy.methods.clear();
                    s.policy.idempotency_key = false;
                }
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_own_function_shadows_another_modules_of_the_same_name() {
        let own = "fn client() -> reqwest::Client { reqwest::Client::new() }\nasync fn get() { client().get(URL).send().await; }\n";
        assert!(!reaches_item(own, "client", "reports"), "its own `fn client`");
        let via = "use crate::reports;\nfn client() -> X { X }\nasync fn get() { reports::client().get(URL).send().await; }\n";
        assert!(reaches_item(via, "client", "reports"));
        assert!(reaches_item("async fn get() { client().get(URL).send().await; }\n", "client", "reports"));
        assert!(!reaches_item("fn clients() {}\n", "client", "reports"));
        assert_eq!(module_stem("src/reports.rs"), "reports");
        assert_eq!(module_stem("crates/x/src/reports/mod.rs"), "reports");
        assert_eq!(module_stem("src/lib.rs"), "");
    }

    #[test]
    fn a_retry_reaches_the_helpers_it_calls_and_the_constants_they_name() {
        let text = "const BASE: u32 = 2;\nconst MAX_RETRIES: u32 = BASE + 1;\nconst OTHER: u32 = 9;\nfn policy() -> B {\n    B::default().with_max_times(MAX_RETRIES)\n}\nfn default() -> Q {\n    Q { n: OTHER }\n}\n";
        let read = reached_text(&[text], vec![".retry(policy())".to_string()], 3);
        let all = read.join("\n");
        assert!(names_word(&all, "MAX_RETRIES") && names_word(&all, "BASE"), "{all}");
        let read = reached_text(&[text], vec![".retry(B::default())".to_string()], 3);
        assert!(!read.join("\n").contains("OTHER"), "a method of another type is not the file's `default`");
        let one_step = reached_text(&[text], vec![".retry(policy())".to_string()], 1);
        assert!(!one_step.join("\n").contains("BASE + 1"), "steps are bounded");
    }

    #[test]
    fn functions_are_followed_when_called_free_or_on_self() {
        assert!(calls_fn("x.retry(policy())", "policy"));
        assert!(calls_fn("self.policy ()", "policy") && calls_fn("Self::policy()", "policy"));
        assert!(!calls_fn("Builder::policy()", "policy") && !calls_fn("client.policy()", "policy"));
        assert!(!calls_fn("let policy = 3;", "policy") && !calls_fn("my_policy()", "policy"));
    }

    #[test]
    fn declarations_are_found_with_their_spans() {
        let text = "pub const MAX_RETRIES: u32 =\n    3;\npub(crate) async fn with_retry<F>(op: F) {\n    loop {\n    }\n}\nmacro_rules! policy {\n    () => { x };\n}\ntype Policy = backon::ExponentialBuilder;\n";
        let got: Vec<(&str, &str, u32, u32)> =
            decls(text).iter().map(|d| (d.kind, d.name, d.start, d.end)).collect();
        assert_eq!(
            got,
            [
                ("const", "MAX_RETRIES", 1, 2),
                ("fn", "with_retry", 3, 6),
                ("macro_rules!", "policy", 7, 9),
                ("type", "Policy", 10, 10)
            ]
        );
        assert!(declares(text, "with_retry") && !declares(text, "loop"));
    }

    #[test]
    fn a_timeout_mapped_to_a_temporary_failure_is_retryable() {
        let text = "fn f() {}\nmatch err {\n    mail::Error::Io(_) => SendError::TemporaryFailure,\n    mail::Error::Timeout => SendError::TemporaryFailure,\n}\n";
        assert_eq!(timeout_made_retryable(text), Some(4));
        assert_eq!(timeout_made_retryable("match e {\n    Error::Timeout => Failure::Permanent,\n}\n"), None);
        assert_eq!(timeout_made_retryable("// Error::Timeout => Temporary\n"), None, "a comment");
        assert_eq!(
            timeout_made_retryable("Err(e) if e.is_timeout() => Outcome::Retry,\n"),
            None,
            "not a timeout pattern"
        );
    }

    #[test]
    fn changed_fields_are_literal_values_arg_defaults_and_serde_default_functions() {
        let text = "struct Cfg {\n    #[serde(default = \"Cfg::default_retries\")]\n    pub retries: u32,\n    #[arg(long, default_value_t = 5)]\n    attempts: u32,\n}\n\
                    impl Default for Cfg {\n    fn default() -> Self {\n        Cfg {\n            retries: 4,\n            attempts: DEFAULT_ATTEMPTS,\n            name: name.clone(),\n        }\n    }\n}\n";
        let fields = |ranges: &[(u32, u32)], fns: &[&str]| -> Vec<String> {
            changed_fields(text, ranges, fns).into_iter().map(|(f, l)| format!("{f}:{l}")).collect()
        };
        assert_eq!(fields(&[(10, 12)], &[]), ["retries:10", "attempts:11"], "a local is not a setting");
        assert_eq!(fields(&[(4, 4)], &[]), ["attempts:4"], "the #[arg] default");
        assert_eq!(fields(&[], &["default_retries"]), ["retries:2"], "the serde default function changed");
        assert!(fields(&[(1, 1)], &[]).is_empty());
        assert_eq!(
            changed_fields("Self { delay: 5, retries: MAX_R }\nfn f(a: u32, b: T) {}\n", &[(1, 2)], &[])
                .len(),
            2
        );
        let read = changed_fields(
            "    count: opts.count.unwrap_or(3) + 1,\n    name: opts.name.unwrap_or(x),\n",
            &[(1, 2)],
            &[],
        );
        assert_eq!(read, [("count".to_string(), 1)]);
        let set: Vec<String> =
            fields_set_to(text, &[("DEFAULT_ATTEMPTS", 1)]).into_iter().map(|(f, _)| f).collect();
        assert_eq!(set, ["attempts"]);
        assert!(fields_set_to(text, &[("OTHER", 1)]).is_empty());
    }

    #[test]
    fn a_field_declared_with_the_policy_type_installs_it_when_layered() {
        let mut held = Vec::new();
        held_as("struct Cfg {\n    retry_config: RetryConfig,\n    other: Option<RetryConfig>,\n    x: retry::RetryConfig,\n}\nfn f(p: RetryConfigs) {}", "RetryConfig", &mut held);
        assert_eq!(held, ["retry_config", "other"]);
        assert!(installs_held("let l = RetryLayer::new(self.config.retry_config.clone());", &held));
        assert!(!installs_held("let c = self.config.retry_config.clone();", &held), "not put in a layer");
        assert!(!installs_held("let l = RetryLayer::new(self.config.backoff.clone());", &held));
        let held = vec!["retry".to_string()];
        assert!(
            !installs_held("    fn retry(&mut self, req: &mut Req) -> Option<F> {", &held),
            "its own method"
        );
        assert!(installs_held("let l = RetryLayer::new(settings.retry.clone());", &held));
    }

    #[test]
    fn a_line_installs_a_policy_when_it_puts_the_type_in_a_layer_or_retry() {
        assert!(installs(".option_layer(RetryLayer::new(RetryPolicy::server_retry()))", "RetryPolicy"));
        assert!(installs("let svc = ServiceBuilder::new().retry(RetryPolicy::default());", "RetryPolicy"));
        assert!(!installs("impl Policy<Req, Res, E> for RetryPolicy {", "RetryPolicy"));
        assert!(!installs("let p = RetryPolicy::new(3);", "RetryPolicy"));
        assert!(
            !installs("//!     .layer(RetryLayer::new(RetryPolicy::default()))", "RetryPolicy"),
            "a doc example"
        );
        assert!(!installs(".layer(RetryLayer::new(OtherPolicy))", "RetryPolicy"));
    }

    #[test]
    fn an_integration_test_target_is_imported_by_nobody_else() {
        assert_eq!(target_dir("sim/tests/integration/mod.rs"), Some("sim/tests/"));
        assert_eq!(target_dir("tests/a.rs"), Some("tests/"));
        assert_eq!(target_dir("src/attests/a.rs"), None, "a folder named like one is not one");
        assert!(!can_import("src/client.rs", "tests/sim/mod.rs"));
        assert!(can_import("tests/sim/run.rs", "tests/sim/mod.rs"));
        assert!(!can_import("other/tests/a.rs", "tests/sim/mod.rs"));
        assert!(can_import("tests/a.rs", "src/policy.rs"));
    }

    #[test]
    fn only_camel_case_names_are_looked_for_as_types_across_the_workspace() {
        assert!(is_type_name("CappedBuilder") && is_type_name("Policy"));
        assert!(!is_type_name("MAX_RETRIES") && !is_type_name("policy") && !is_type_name("X"));
    }

    #[test]
    fn a_struct_declaration_is_a_declaration_of_its_name() {
        let text = "pub(crate) struct Capped {\n    inner: B,\n}\nstruct Other;\n";
        assert!(declares(text, "Capped") && declares(text, "Other"));
        assert!(!declares(text, "Cap"));
        assert_eq!(struct_names(text).collect::<Vec<_>>(), ["Capped", "Other"]);
    }

    #[test]
    fn a_crate_is_named_by_its_lib_name_else_its_package_name() {
        let manifest =
            "[package]\nname = \"shared-limits\"\nversion = \"0.1.0\"\n\n[dependencies]\nname = \"x\"\n";
        assert_eq!(manifest_section_name(manifest, "package").as_deref(), Some("shared-limits"));
        assert_eq!(manifest_lib_name(manifest), None);
        let with_lib = "[lib]\nname = 'limits_core'\npath = \"src/lib.rs\"\n[package]\nname = \"limits\"\n";
        assert_eq!(manifest_lib_name(with_lib).as_deref(), Some("limits_core"));
        assert_eq!(manifest_section_name("[workspace]\nmembers = [\"a\"]\n", "package"), None);
        assert_eq!(manifest_section_name("[package]\nname = \"a b\"\n", "package"), None);
    }

    #[test]
    fn a_crate_is_named_by_path_only_as_a_path_root() {
        assert!(names_crate_path("x.with_max_times(common::MAX_ATTEMPTS)", "common"));
        assert!(names_crate_path("use common::{limits, MAX};", "common"));
        assert!(names_crate_path("::common::limits::HTTP", "common"));
        assert!(!names_crate_path("use crate::my_common::MAX;", "common"));
        assert!(!names_crate_path("let common = 3; common + 1", "common"));
    }

    #[test]
    fn names_are_whole_words() {
        assert!(names_word("config::MAX_RETRIES + 1", "MAX_RETRIES"));
        assert!(!names_word("MAX_RETRIES_CAP", "MAX_RETRIES"));
        assert!(!names_word("OLD_MAX_RETRIES", "MAX_RETRIES"));
    }
}
