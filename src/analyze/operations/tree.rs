//! The unchanged files of the head tree the operation model reads beside
//! the change's own: the rest of a Go package in which the change builds a
//! retrying client (the requests sent through it may be written there), and
//! the definitions of retry helpers and decorators the change's added lines
//! use but no changed file defines. Each is read once, within a budget
//! (docs/limits.md), and joins both revisions with its one text.

use super::data;
use super::syntax;
use super::MAX_FILE_BYTES;
use crate::analyze::rules::helpers::RepoHead;
use crate::analyze::trees::grammar::Grammar;
use crate::changeset::FileChange;

/// The most unchanged files of one Go package read for a client-wide
/// policy, and their bytes in all; past them the rest of the package is not
/// read (a policy there covers what was read).
const MAX_SIBLINGS: usize = 64;
const MAX_SIBLING_BYTES: usize = 4 * 1024 * 1024;

/// The unchanged non-test Go files of each package in which the change
/// builds a client-wide retry policy (a line it added names one), read from
/// the head tree: the requests sent through that client may be written
/// there.
pub(crate) fn package_siblings(
    tree: &RepoHead,
    files: &[&FileChange],
    data: &data::Data,
) -> Result<Vec<(String, String)>, String> {
    let names: Vec<&str> = data
        .wrappers
        .iter()
        .filter(|w| w.form.iter().any(|f| f == "client") && w.languages.iter().any(|l| l == "go"))
        .flat_map(|w| w.names.iter().map(|n| syntax::last_segment(n)))
        .collect();
    let changed: std::collections::HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut dirs: Vec<&str> = Vec::new();
    for f in files {
        if Grammar::of_path(&f.path) != Some(Grammar::Go) {
            continue;
        }
        let Some(text) = f.head.text() else { continue };
        let builds = text
            .lines()
            .enumerate()
            .any(|(i, l)| f.is_added(i as u32 + 1) && names.iter().any(|n| l.contains(n)));
        if builds {
            let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    let mut out = Vec::new();
    let mut bytes = 0usize;
    for dir in dirs {
        let spec = if dir.is_empty() { ".".to_string() } else { format!("{dir}/") };
        let listing =
            tree.git.run(&["ls-tree", "--name-only", &tree.rev, "--", &spec]).map_err(|e| e.to_string())?;
        let mut n = 0;
        for path in listing.lines() {
            if !path.ends_with(".go") || path.ends_with("_test.go") || changed.contains(path) {
                continue;
            }
            n += 1;
            if n > MAX_SIBLINGS || bytes > MAX_SIBLING_BYTES {
                break;
            }
            let blob =
                tree.git.read_blob_at(&tree.rev, path, MAX_FILE_BYTES as u64).map_err(|e| e.to_string())?;
            if let Some(crate::changeset::git::Blob::Bytes(b)) = blob {
                if let Ok(text) = String::from_utf8(b) {
                    bytes += text.len();
                    out.push((path.to_string(), text));
                }
            }
        }
    }
    Ok(out)
}

/// The most unchanged files read for helper definitions, and their bytes.
const MAX_HELPER_FILES: usize = 16;
const MAX_HELPER_BYTES: usize = 4 * 1024 * 1024;
/// Files naming one of the names looked for that are read at most.
const MAX_NAMING_READS: usize = 200;

/// Names the change's added lines use as a retry helper or decorator
/// (`@with_retries(..)`, `retryOnFailure(() => ..)`, `utils.retry_call(..)`)
/// that none of the changed files defines; the unchanged files of the
/// head tree that define one, read with their grammar.
pub(crate) fn helper_definitions(
    tree: &RepoHead,
    files: &[&FileChange],
    changed: &std::collections::HashSet<&str>,
) -> Result<Vec<(String, Grammar, String)>, String> {
    // A call (`name(`) or a decorator without arguments (`@name`).
    static USE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(|@(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]*)",
        )
        .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let retry_word = |name: &str| {
        syntax::words(name).iter().any(|w| {
            matches!(w.as_str(), "retry" | "retries" | "retrying" | "retryable" | "retried" | "backoff")
        })
    };
    let mut names: Vec<String> = Vec::new();
    for f in files {
        if Grammar::of_path(&f.path).is_none() {
            continue;
        }
        let Some(text) = f.head.text() else { continue };
        for (i, line) in text.lines().enumerate() {
            if !f.is_added(i as u32 + 1) {
                continue;
            }
            for m in USE.captures_iter(line) {
                let Some(name) = m.get(1).or_else(|| m.get(2)).map(|x| x.as_str()) else { continue };
                if name.len() >= 5 && retry_word(name) && !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
    }
    // Defined in a changed file: read already.
    let defines = |text: &str, name: &str| {
        let pattern = format!(
            r"(?m)^\s*(?:export\s+)?(?:(?:pub|public|private|protected|static|async|def|function|func|fun|sub|const|let|var|val)\s+)+(?:\([^)]*\)\s*)?{}\b",
            regex::escape(name)
        );
        regex::Regex::new(&pattern).is_ok_and(|re| re.is_match(text))
    };
    names.retain(|n| !files.iter().any(|f| f.head.text().is_some_and(|t| defines(t, n))));
    names.truncate(32);
    if names.is_empty() {
        return Ok(Vec::new());
    }
    read_naming(tree, &names, changed, |text| names.iter().any(|n| defines(text, n)))
}

/// The unchanged files of the head tree that name one of `names` and that
/// `keep` accepts, read with their grammar, within the helper budget.
fn read_naming(
    tree: &RepoHead,
    names: &[String],
    changed: &std::collections::HashSet<&str>,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<(String, Grammar, String)>, String> {
    let words: Vec<&str> = names.iter().map(String::as_str).collect();
    let listed = crate::analyze::trees::dependents::grep_files(tree, &words)?;
    let prefix = format!("{}:", tree.rev);
    let mut out = Vec::new();
    let mut bytes = 0usize;
    let mut reads = 0usize;
    for line in listed.lines() {
        let path = line.strip_prefix(&prefix).unwrap_or(line);
        if changed.contains(path) || out.len() >= MAX_HELPER_FILES || bytes > MAX_HELPER_BYTES {
            continue;
        }
        // A short or common name is in many files: only so many are read.
        reads += 1;
        if reads > MAX_NAMING_READS {
            break;
        }
        let Some(g) = Grammar::of_path(path) else { continue };
        let blob =
            tree.git.read_blob_at(&tree.rev, path, MAX_FILE_BYTES as u64).map_err(|e| e.to_string())?;
        let Some(crate::changeset::git::Blob::Bytes(b)) = blob else { continue };
        let Ok(text) = String::from_utf8(b) else { continue };
        if keep(&text) {
            bytes += text.len();
            out.push((path.to_string(), g, text));
        }
    }
    Ok(out)
}

/// Functions of the changed files that take the HTTP method or a request
/// as a parameter (`def invoke(self, method, url)`, `func (c *Client)
/// Do(ctx context.Context, r *http.Request)`), when the file names a retry;
/// the unchanged files of the head tree that call one of them with a write
/// method (`invoke(method="POST", ..)`) or a request built with one, or
/// with a read method. Without them a sender handed its method sends any
/// method (judged a write), and one handed a request built elsewhere is of
/// unknown method.
pub(crate) fn method_callers(
    tree: &RepoHead,
    files: &[&FileChange],
    changed: &std::collections::HashSet<&str>,
) -> Result<Vec<(String, Grammar, String)>, String> {
    static DEF: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?m)^\s*(?:export\s+)?(?:(?:pub|public|private|protected|internal|static|async|def|function|func|fun|override|suspend)\s+)+(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:<[^>()]*>)?\s*\(([^)]*)\)",
        )
        .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let mut names: Vec<String> = Vec::new();
    for f in files {
        if Grammar::of_path(&f.path).is_none() {
            continue;
        }
        let Some(text) = f.head.text().filter(|t| syntax::names_a_retry(t)) else { continue };
        for c in DEF.captures_iter(text) {
            let (Some(name), Some(params)) = (c.get(1), c.get(2)) else { continue };
            let takes_method = params.as_str().split(',').any(|p| {
                p.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(syntax::carries_method_or_request)
            });
            if takes_method && name.as_str().len() >= 2 && !names.iter().any(|n| n == name.as_str()) {
                names.push(name.as_str().to_string());
            }
        }
    }
    names.truncate(32);
    if names.is_empty() {
        return Ok(Vec::new());
    }
    read_naming(tree, &names, changed, |text| {
        names.iter().any(|n| {
            super::front::write_method_passed(text, n).is_some() || super::front::read_method_passed(text, n)
        })
    })
}
