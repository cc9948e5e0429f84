//! `tree/retry-after-dropped`: a file whose retry code read the
//! `Retry-After` header in the base and reads it nowhere in the head, while
//! it still retries.
//!
//! "Reads Retry-After" is decided on the syntax tree, by what the code
//! reaches, not by a line that disappeared: a definition (function, method,
//! class, constant) reads the header when its text holds the header's name
//! as a string, or when it names another definition that does, in its own
//! file or in any file of the same revision (found with one `git grep`).
//! So the reading may sit in a helper two calls away
//! (`retryWithBackoff` → `getDelayDurationAndStatus` →
//! `getRetryAfterDelayMs`) or in a class imported from another module
//! (`_RetryAfterCustomizer().customize_error(..)`), and a reading moved into
//! a shared helper that the head still calls is still a reading.
//!
//! A retry is a definition whose name says retry or backoff. The finding
//! needs the retry still there in the head: under the same name, or under a
//! name the base did not have (a rename); a file that lost its retry lost
//! nothing this check can weigh.

use std::collections::{HashMap, HashSet};

use serde_json::json;
use tree_sitter::Node;

use super::defs::{line_of, FileTree};
use super::grammar::Grammar;
use crate::analyze::knobs::names;
use crate::analyze::rules::helpers::RepoHead;
use crate::changeset::git::Blob;
use crate::changeset::FileChange;
use crate::finding::{Finding, Kind, Note, Severity};

/// The check's rule id.
pub(crate) const RULE: &str = "tree/retry-after-dropped";

/// Other files of a revision read for their Retry-After readers, at most.
const MAX_OTHER_FILES: usize = 40;
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Words that make a definition's name a retry's.
const RETRY_WORDS: &[&str] = &["retry", "retries", "retrying", "retried", "retrier", "backoff"];

/// One named definition of a file and what its text names: a function,
/// a class, a method, or a constant outside any function (a function's
/// own locals and nested helpers are part of its text).
struct Item {
    name: String,
    /// A function or method (not a class or a constant).
    function: bool,
    /// A method, found inside a class: named from other files only through
    /// an object, so no evidence there unless its name says Retry-After.
    method: bool,
    line: u32,
    end_line: u32,
    /// Its text holds the header's name as a string.
    direct: bool,
    /// The identifiers its text uses.
    uses: HashSet<String>,
}

/// What one version of a file says about Retry-After.
struct Reading {
    items: Vec<Item>,
    /// Names of the items that read the header, with the first name each
    /// one reaches it through (itself when direct).
    readers: HashMap<String, String>,
}

/// The check over the files of a change. `base` and `head` are the two
/// revisions in the repository (absent for a change built from texts: then
/// only the change's own files are searched for readers).
pub(crate) fn check(
    files: &[&FileChange],
    base: Option<&RepoHead>,
    head: Option<&RepoHead>,
    notes: &mut Vec<Note>,
) -> Vec<Finding> {
    let candidates: Vec<(&FileChange, Grammar, &str, &str)> = files
        .iter()
        .filter_map(|f| {
            let g = Grammar::of_library_path(&f.path)?;
            let (b, h) = (f.base.text()?, f.head.text()?);
            b.to_ascii_lowercase().contains("retry").then_some((*f, g, b, h))
        })
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let changed: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut out = Vec::new();
    // Readers defined in other files, per revision, read once and only when
    // a file needs them.
    let mut others: [Option<HashMap<Family, HashSet<String>>>; 2] = [None, None];
    for (file, g, base_text, head_text) in candidates {
        let Some(b) = parse(&file.path, g, base_text) else { continue };
        // A file that names the header nowhere can only have read it
        // through something it imported, and then the head stopped using
        // that import: otherwise there is nothing to look up.
        if !mentions_retry_after(base_text) && !drops_an_import(&b, head_text) {
            continue;
        }
        let base_outside = if has_header_string(base_text) {
            HashSet::new()
        } else {
            match outside_readers(&mut others[0], base, files, |f| f.base.text(), &changed, Family::of(g)) {
                Ok(r) => r,
                Err(e) => {
                    notes.push(Note::blocking(Some(&file.path), format!("could not search the base for code reading Retry-After ({e}), so whether this file's retry stopped honouring it is unknown; check it by hand and sign off")));
                    continue;
                }
            }
        };
        let base_r = reading(&b, &base_outside);
        let mut lost: Vec<&Item> = base_r
            .items
            .iter()
            .filter(|i| says_retry(&i.name) && base_r.readers.contains_key(&i.name))
            .collect();
        // The retry itself before an options object that names it.
        lost.sort_by_key(|i| !i.function);
        if lost.is_empty() {
            continue;
        }
        let Some(h) = parse(&file.path, g, head_text) else { continue };
        let head_outside = match outside_readers(
            &mut others[1],
            head,
            files,
            |f| f.head.text(),
            &changed,
            Family::of(g),
        ) {
            Ok(r) => r,
            Err(e) => {
                notes.push(Note::blocking(Some(&file.path), format!("could not search the head for code reading Retry-After ({e}), so whether this file's retry still honours it is unknown; check it by hand and sign off")));
                continue;
            }
        };
        let head_r = reading(&h, &head_outside);
        if !head_r.readers.is_empty() {
            continue;
        }
        let base_names: HashSet<&str> = base_r.items.iter().map(|i| i.name.as_str()).collect();
        let retry_now = |i: &&Item| {
            says_retry(&i.name)
                && (lost.iter().any(|l| l.name == i.name) || !base_names.contains(i.name.as_str()))
        };
        let still: Vec<&Item> = head_r.items.iter().filter(retry_now).collect();
        let Some(at) = still
            .iter()
            .find(|i| lost.iter().any(|l| l.name == i.name))
            .or_else(|| still.iter().find(|i| file.touches(i.line, i.end_line)))
            .or_else(|| still.first())
        else {
            continue;
        };
        let line = (at.line..=at.end_line).find(|&l| file.is_added(l)).unwrap_or(at.line);
        let was = &lost[0];
        let through = base_r.readers.get(&was.name).filter(|t| **t != was.name);
        let how = match through {
            Some(t) => format!("through `{t}`"),
            None => "itself".to_string(),
        };
        out.push(Finding {
            kind: Kind::RetryAfterIgnored,
            rule: RULE.to_string(),
            severity: Severity::Error,
            path: file.path.clone(),
            line,
            end_line: line,
            message: format!(
                "Retry-After no longer honoured: in the base `{}` read the header ({how}); in the head nothing `{}` or the rest of this file reaches reads it, so the server's wait is replaced by the client's own backoff (followed on the syntax tree, across the files of the revision)",
                was.name, at.name
            ),
            base: Some(json!({ "retry": was.name, "reads_retry_after": true })),
            head: Some(json!({ "retry": at.name, "reads_retry_after": false })),
            fix: None,
        });
    }
    out
}

/// Languages whose files can name each other's definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Family {
    Python,
    Script,
    Go,
    Java,
}

impl Family {
    fn of(g: Grammar) -> Family {
        match g {
            Grammar::Python => Family::Python,
            Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx => Family::Script,
            Grammar::Go => Family::Go,
            // Read by the operation model only; never reached here.
            Grammar::Java | Grammar::Kotlin | Grammar::Ruby | Grammar::Php | Grammar::CSharp => Family::Java,
        }
    }

    fn globs(self) -> &'static [&'static str] {
        match self {
            Family::Python => &["*.py"],
            Family::Script => &["*.js", "*.mjs", "*.cjs", "*.jsx", "*.ts", "*.mts", "*.cts", "*.tsx"],
            Family::Go => &["*.go"],
            Family::Java => &["*.java"],
        }
    }
}

/// Whether a file could touch Retry-After at all: the header as a string,
/// or a name made of its words (`_RetryAfterCustomizer`, `retry_after`).
fn mentions_retry_after(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["retry-after", "retryafter", "retry_after"].iter().any(|w| lower.contains(w))
}

/// Whether `text` holds the header's name as a whole string
/// (`"Retry-After"`, `'retry-after'`, `` `retry-after` ``).
fn has_header_string(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let quote = |c: Option<u8>| matches!(c, Some(b'"' | b'\'' | b'`'));
    let bytes = lower.as_bytes();
    lower
        .match_indices("retry-after")
        .any(|(i, m)| quote(i.checked_sub(1).map(|p| bytes[p])) && quote(bytes.get(i + m.len()).copied()))
}

/// Whether a name the base imports is gone from the head's text.
fn drops_an_import(base: &FileTree, head_text: &str) -> bool {
    super::defs::Index::of(base)
        .imports
        .iter()
        .any(|i| !i.local.is_empty() && !head_text.contains(i.local.as_str()))
}

fn says_retry(name: &str) -> bool {
    names::words(name).iter().any(|w| RETRY_WORDS.contains(&w.as_str()))
}

fn parse(path: &str, g: Grammar, text: &str) -> Option<FileTree> {
    FileTree::new(path, g, text).ok()
}

/// The named definitions of a file outside any function: functions,
/// classes and their methods, constants.
fn items(file: &FileTree) -> Vec<Item> {
    let mut out = Vec::new();
    // (node, inside a class)
    let mut stack = vec![(file.tree.root_node(), false)];
    while let Some((n, in_class)) = stack.pop() {
        let found = definition_name(file, n);
        if let Some((name, function)) = &found {
            let text = file.text_of(n);
            out.push(Item {
                name: name.clone(),
                function: *function,
                method: *function && in_class,
                line: line_of(n),
                end_line: u32::try_from(n.end_position().row).unwrap_or(u32::MAX - 1) + 1,
                direct: has_header_string(text),
                uses: identifiers(file, n),
            });
        }
        // A function's body is its own: nothing inside it is an item.
        if found.as_ref().is_some_and(|(_, function)| *function) {
            continue;
        }
        let class =
            matches!(n.kind(), "class_definition" | "class_declaration" | "class" | "class_body") || in_class;
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor).map(|c| (c, class)));
    }
    out.sort_by_key(|i| i.line);
    out
}

/// The name a node defines, and whether it is a function: a function,
/// method or class by its `name`; a function value or a constant by the
/// variable it is bound to.
fn definition_name(file: &FileTree, n: Node<'_>) -> Option<(String, bool)> {
    let by_field = |x: Node<'_>| x.child_by_field_name("name").map(|c| file.text_of(c).to_string());
    let found = match n.kind() {
        "function_definition"
        | "function_declaration"
        | "method_definition"
        | "method_declaration"
        | "constructor_declaration"
        | "generator_function_declaration" => by_field(n).map(|s| (s, true)),
        "class_definition" | "class_declaration" => by_field(n).map(|s| (s, false)),
        // `const getDelay = (e) => ..`, `private static final String H =
        // "Retry-After";`, Go's `const header = "Retry-After"`.
        "variable_declarator" | "const_spec" | "var_spec" => {
            let function = n.child_by_field_name("value").is_some_and(|v| super::defs::is_function(v.kind()));
            by_field(n).map(|s| (s, function))
        }
        // Python's `RETRY_AFTER = "Retry-After"`.
        "assignment" => n
            .child_by_field_name("left")
            .filter(|l| l.kind() == "identifier")
            .map(|l| (file.text_of(l).to_string(), false)),
        _ => None,
    };
    found.filter(|(s, _)| !s.is_empty())
}

/// The identifiers a node's text uses (names, properties, fields, types).
fn identifiers(file: &FileTree, n: Node<'_>) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        match x.kind() {
            "identifier"
            | "property_identifier"
            | "field_identifier"
            | "type_identifier"
            | "shorthand_property_identifier" => {
                out.insert(file.text_of(x).to_string());
            }
            _ => {
                let mut cursor = x.walk();
                stack.extend(x.named_children(&mut cursor));
            }
        }
    }
    out
}

/// Which definitions of `file` read the header, directly, through each
/// other, or through `outside` (readers of other files).
fn reading(file: &FileTree, outside: &HashSet<String>) -> Reading {
    let items = items(file);
    // A reader imported under another name (`get_retry_after as _get`) is
    // used by that name.
    let aliases: HashMap<String, String> = if outside.is_empty() {
        HashMap::new()
    } else {
        super::defs::Index::of(file)
            .imports
            .into_iter()
            .filter(|i| i.local != i.name && outside.contains(&i.name))
            .map(|i| (i.local, i.name))
            .collect()
    };
    let outside_name =
        |u: &String| outside.contains(u).then(|| u.clone()).or_else(|| aliases.get(u).cloned());
    let mut readers: HashMap<String, String> = HashMap::new();
    for i in &items {
        if i.direct {
            readers.insert(i.name.clone(), i.name.clone());
        } else if let Some(o) = i.uses.iter().find_map(outside_name) {
            readers.insert(i.name.clone(), o);
        }
    }
    // Through each other: a few rounds reach any chain a file has.
    for _ in 0..8 {
        let mut grew = false;
        for i in &items {
            if readers.contains_key(&i.name) {
                continue;
            }
            if let Some(u) = i.uses.iter().find(|u| **u != i.name && readers.contains_key(*u)) {
                readers.insert(i.name.clone(), u.clone());
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    Reading { items, readers }
}

/// The names of the definitions that read the header in the files of one
/// revision other than the candidate: the change's own files of that side,
/// and the revision's other files of the same family that hold the header
/// as a string.
fn outside_readers(
    cache: &mut Option<HashMap<Family, HashSet<String>>>,
    tree: Option<&RepoHead>,
    files: &[&FileChange],
    side: impl Fn(&FileChange) -> Option<&str>,
    changed: &HashSet<&str>,
    family: Family,
) -> Result<HashSet<String>, String> {
    if cache.is_none() {
        let mut by_family: HashMap<Family, HashSet<String>> = HashMap::new();
        let mut texts: Vec<(String, Grammar, String)> = files
            .iter()
            .filter_map(|f| {
                let t = side(f)?;
                let g = Grammar::of_library_path(&f.path)?;
                has_header_string(t).then(|| (f.path.clone(), g, t.to_string()))
            })
            .collect();
        if let Some(tree) = tree {
            texts.extend(revision_files(tree, changed)?);
        }
        for (path, g, text) in texts {
            let Some(ft) = parse(&path, g, &text) else { continue };
            let r = reading(&ft, &HashSet::new());
            // Another file names a function, a class or a constant; a
            // method only through an object, where a common method name
            // (`read`, `customize`) would stand for any other.
            let named = r
                .items
                .iter()
                .filter(|i| r.readers.contains_key(&i.name) && (!i.method || mentions_retry_after(&i.name)))
                .map(|i| i.name.clone());
            by_family.entry(Family::of(g)).or_default().extend(named);
        }
        *cache = Some(by_family);
    }
    Ok(cache.as_ref().and_then(|c| c.get(&family)).cloned().unwrap_or_default())
}

/// The files of a revision, outside the change, that hold the header as a
/// string: one `git grep`, then their texts (at most [`MAX_OTHER_FILES`]).
fn revision_files(
    tree: &RepoHead,
    changed: &HashSet<&str>,
) -> Result<Vec<(String, Grammar, String)>, String> {
    let mut args: Vec<&str> = vec!["grep", "-l", "-I", "-i", "-F", "-e", "retry-after", &tree.rev, "--"];
    for f in [Family::Python, Family::Script, Family::Go, Family::Java] {
        args.extend(f.globs());
    }
    let listed = match tree.git.run(&args) {
        Ok(out) => out,
        // No file matched: git grep exits 1 and says nothing.
        Err(crate::changeset::ChangeSetError::Git { stderr, .. }) if stderr.is_empty() => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let prefix = format!("{}:", tree.rev);
    // Tests read the header to assert on it; they are no retry's helper.
    let paths_of_tests = crate::analyze::testcode::ScanPaths::defaults();
    let paths: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .filter(|p| !changed.contains(p) && paths_of_tests.test_pattern(p).is_none())
        .take(MAX_OTHER_FILES)
        .collect();
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let specs: Vec<String> = paths.iter().map(|p| format!("{}:{p}", tree.rev)).collect();
    let mut rev_parse: Vec<&str> = vec!["rev-parse"];
    rev_parse.extend(specs.iter().map(String::as_str));
    let ids: Vec<String> =
        tree.git.run(&rev_parse).map_err(|e| e.to_string())?.lines().map(str::to_string).collect();
    let blobs = tree.git.read_blobs(&ids, MAX_FILE_BYTES).map_err(|e| e.to_string())?;
    Ok(paths
        .into_iter()
        .zip(blobs)
        .filter_map(|(p, b)| {
            let Blob::Bytes(bytes) = b else { return None };
            let g = Grammar::of_library_path(p)?;
            Some((p.to_string(), g, String::from_utf8(bytes).ok()?))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str, text: &str) -> Reading {
        let g = Grammar::of_path(path).unwrap();
        reading(&FileTree::new(path, g, text).unwrap(), &HashSet::new())
    }

    #[test]
    fn the_header_is_a_whole_string_in_any_quote() {
        assert!(has_header_string("h.get('Retry-After')"));
        assert!(has_header_string("headers[\"retry-after\"]"));
        assert!(has_header_string("get(`Retry-After`)"));
        assert!(!has_header_string("h.get('retry-after-ms')"));
        assert!(!has_header_string("// honour Retry-After"));
    }

    #[test]
    fn a_retry_reads_through_a_chain_of_helpers() {
        let r = read(
            "r.ts",
            "export async function retryWithBackoff(fn) { const d = delayOf(fn); }\n\
             function delayOf(e) { return headerDelay(e); }\n\
             function headerDelay(e) { return e.headers['retry-after']; }\n\
             function other() { return 1; }\n",
        );
        assert_eq!(r.readers.get("retryWithBackoff").map(String::as_str), Some("delayOf"));
        assert_eq!(r.readers.get("headerDelay").map(String::as_str), Some("headerDelay"));
        assert!(!r.readers.contains_key("other"));
    }

    #[test]
    fn a_constant_holding_the_header_makes_its_users_readers() {
        let r = read(
            "c.py",
            "RETRY_AFTER = \"Retry-After\"\n\ndef call_with_retries(resp):\n    return resp.headers.get(RETRY_AFTER)\n",
        );
        assert!(r.readers.contains_key("call_with_retries"));
    }

    #[test]
    fn names_say_retry_by_their_words() {
        assert!(says_retry("retryWithBackoff"));
        assert!(says_retry("_retry_cloud_idempotent_operation"));
        assert!(!says_retry("fetchPage"));
    }
}
