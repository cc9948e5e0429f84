//! The crate-wide index of write requests, for client-wide retry policies.
//!
//! A retry installed on a client (reqwest-middleware's
//! `RetryTransientMiddleware`, a tower `RetryLayer` or `impl Policy`,
//! octocrab's retry config) covers every request sent through that client,
//! and real crates build the client in one file and send from many others,
//! often through a wrapper (`fn post(&self, ..)`). So when a changed file
//! holds such a policy, the analyzer looks for POST and PATCH requests in the
//! whole crate at the head: the changed files, and the unchanged files of the
//! same crate read from the head tree.
//!
//! The index is built only when a client-wide policy that is not limited to
//! idempotent methods is in the change, and only once per crate. Files are
//! prefiltered by text (most have no `post(`/`patch(`/`Method::POST`) before
//! they are parsed. Test code (`tests/`, `benches/`, `examples/`,
//! `#[cfg(test)]`, `#[test]`) sends no production traffic and is not indexed.
//! Both the base and the head policy see the same index, so an unchanged
//! policy reports nothing; a new policy, or one that loses its method gate,
//! does.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use syn::visit::Visit;

use super::syntax::line_of;
use crate::changeset::git::{Blob, Git};

/// Text every indexed request site contains: a method call `.post(..)` or
/// `.patch(..)` (the dot checked by [`may_write`]) or the path
/// `Method::POST`/`Method::PATCH`. A `"POST"` string is not a site (the index
/// reads method calls and paths only), so it does not make a file worth
/// parsing.
///
/// kube's `Api::create(&PostParams, &obj)` and `create_subresource` send a
/// POST (kube-client's `Request::create`), so a `PostParams` argument to a
/// `create*` call is a site too; `replace*` with `PostParams` is a PUT.
const WRITE_TOKENS: &[&str] = &["post(", "patch(", "Method::POST", "Method::PATCH", "PostParams"];

/// The most bytes of unchanged files read from the head tree per scan, and
/// the largest file read: past these the index is partial and says so.
pub(crate) const MAX_INDEX_BYTES: u64 = 64 * 1024 * 1024;
/// The largest unchanged file the index reads (see [`MAX_INDEX_BYTES`]).
pub const MAX_INDEX_FILE_BYTES: u64 = 2 * 1024 * 1024;

fn write_tokens() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasick::new(WRITE_TOKENS)
            .unwrap_or_else(|e| panic!("write token patterns are constant and valid: {e}"))
    })
}

/// Where the head tree is, when the change came from git.
#[derive(Debug, Clone)]
pub(crate) struct HeadCommit {
    pub(crate) git: Git,
    pub(crate) rev: String,
}

/// The write requests of one crate: method -> first `path:line` seen.
#[derive(Debug, Default, Clone)]
pub(crate) struct CrateWrites {
    pub(crate) sites: BTreeMap<String, String>,
    /// Set when some files were past the size limits (a bound we chose).
    pub(crate) partial: bool,
    /// Set when git could not give some files of the tree it listed: not a
    /// bound we chose, so the policy's finding cannot be trusted to be
    /// complete and the gate must block.
    pub(crate) unread: bool,
}

/// Whether a path is test, bench or example code, which is not indexed.
pub(crate) fn is_test_path(path: &str) -> bool {
    let p = format!("/{path}");
    ["/tests/", "/benches/", "/examples/", "/test/", "/fuzz/"].iter().any(|d| p.contains(d))
}

/// The crate a file belongs to: the deepest folder above it holding a
/// `Cargo.toml` (the repository root when none does).
pub(crate) fn crate_root<'m>(path: &str, manifests: &'m [String]) -> &'m str {
    manifests
        .iter()
        .filter(|dir| dir.is_empty() || path.starts_with(&format!("{dir}/")))
        .max_by_key(|dir| dir.len())
        .map_or("", String::as_str)
}

/// Every `.rs` file and every crate folder of the head tree.
pub(crate) struct TreeListing {
    /// (path, blob id). Sizes are asked of git only for the files the index
    /// reads: `ls-tree -l` would look up the size of every blob in the tree,
    /// a tenth of a second on a tree of 4,000 loose objects.
    pub(crate) rust_files: Vec<(String, String)>,
    /// Folders holding a `Cargo.toml` (`""` for the root).
    pub(crate) manifests: Vec<String>,
}

pub(crate) fn list_tree(tree: &HeadCommit) -> Option<TreeListing> {
    let out = tree.git.run_bytes(&["ls-tree", "-r", "-z", "--full-tree", &tree.rev]).ok()?;
    let mut rust_files = Vec::new();
    let mut manifests = Vec::new();
    for entry in out.split(|b| *b == 0) {
        let Ok(entry) = std::str::from_utf8(entry) else { continue };
        // `<mode> blob <id>\t<path>`
        let Some((meta, path)) = entry.split_once('\t') else { continue };
        let mut parts = meta.split_whitespace();
        let (Some(_mode), Some(kind), Some(id)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if kind != "blob" {
            continue;
        }
        if path == "Cargo.toml" || path.ends_with("/Cargo.toml") {
            manifests.push(path.strip_suffix("Cargo.toml").unwrap_or("").trim_end_matches('/').to_string());
        } else if path.ends_with(".rs") && !is_test_path(path) {
            rust_files.push((path.to_string(), id.to_string()));
        }
    }
    Some(TreeListing { rust_files, manifests })
}

/// (crate root, path, write sites) of one file.
type FileWrites = (String, String, Vec<(String, u32)>);

/// What the index knows of a changed file.
pub(crate) enum Changed<'a> {
    /// The head was parsed; these are its write sites.
    Sites(&'a [(String, u32)]),
    /// The head was not parsed (no retry words); its text.
    Text(&'a str),
    Deleted,
}

/// Indexes the crates in `roots`: `changed` holds, for every changed file,
/// the write sites its head model already found (`None`: deleted), so that
/// only unchanged files are read from the tree and parsed.
pub(crate) fn index_crates(
    roots: &[String],
    tree: Option<(&HeadCommit, &TreeListing)>,
    changed: &HashMap<&str, Changed<'_>>,
) -> HashMap<String, CrateWrites> {
    let mut out: HashMap<String, CrateWrites> = HashMap::new();
    let manifests: &[String] = tree.map_or(&[], |(_, l)| l.manifests.as_slice());
    let in_roots = |path: &str| -> Option<String> {
        let root = crate_root(path, manifests);
        roots.iter().any(|r| r == root).then(|| root.to_string())
    };
    // Changed files: their models hold the sites already.
    let mut found: Vec<FileWrites> = Vec::new();
    let mut texts: Vec<(String, String, Cow<'_, str>)> = Vec::new();
    for (path, c) in changed {
        let Some(root) = in_roots(path) else { continue };
        if is_test_path(path) {
            continue;
        }
        match c {
            Changed::Sites(w) if !w.is_empty() => found.push((root, path.to_string(), w.to_vec())),
            Changed::Text(t) if may_write(t) => texts.push((root, path.to_string(), Cow::Borrowed(*t))),
            _ => {}
        }
    }
    // Unchanged files of the same crates, from the head tree.
    if let Some((tree, listing)) = tree {
        let candidates: Vec<(String, &String, &String)> = listing
            .rust_files
            .iter()
            .filter(|(path, _)| !changed.contains_key(path.as_str()))
            .filter_map(|(path, id)| in_roots(path).map(|root| (root, path, id)))
            .collect();
        let ids: Vec<String> = candidates.iter().map(|(_, _, id)| (*id).clone()).collect();
        let read = tree.git.blob_sizes(&ids).and_then(|sizes| {
            let mut wanted = Vec::new();
            let mut sized = Vec::new();
            let mut budget = MAX_INDEX_BYTES;
            for ((root, path, id), size) in candidates.iter().zip(sizes) {
                match size {
                    Some(size) if size <= MAX_INDEX_FILE_BYTES && size <= budget => {
                        budget -= size;
                        wanted.push((root.clone(), (*path).clone()));
                        sized.push(((*id).clone(), size));
                    }
                    Some(_) => out.entry(root.clone()).or_default().partial = true,
                    None => out.entry(root.clone()).or_default().unread = true,
                }
            }
            tree.git.read_sized(&sized).map(|blobs| (wanted, blobs))
        });
        match read {
            Ok((wanted, blobs)) => {
                for ((root, path), blob) in wanted.into_iter().zip(blobs) {
                    match blob {
                        Blob::Bytes(b) => {
                            if may_write(&b) {
                                if let Ok(text) = String::from_utf8(b) {
                                    texts.push((root, path, Cow::Owned(text)));
                                }
                            }
                        }
                        _ => out.entry(root).or_default().unread = true,
                    }
                }
            }
            Err(_) => {
                for (root, _, _) in candidates {
                    out.entry(root).or_default().unread = true;
                }
            }
        }
    }
    for r in roots {
        out.entry(r.clone()).or_default();
    }
    // Parse the prefiltered unchanged files in parallel; then take paths in
    // sorted order so that the example site is the same from run to run.
    found.par_extend(
        texts.par_iter().map(|(root, path, text)| (root.clone(), path.clone(), write_sites(text))),
    );
    found.sort_by(|a, b| a.1.cmp(&b.1));
    for (root, path, sites) in found {
        let entry = out.entry(root).or_default();
        for (method, line) in sites {
            entry.sites.entry(method).or_insert_with(|| format!("{path}:{line}"));
        }
    }
    out
}

/// Whether a text may hold a write request (the prefilter): `Method::POST`
/// or `Method::PATCH`, or `post(`/`patch(` after a dot (whitespace and line
/// breaks between them allowed, as in a builder chain). A file that only
/// defines `fn post(..)` or calls `repost(..)` has no site and is not parsed.
pub(crate) fn may_write(text: impl AsRef<[u8]>) -> bool {
    let text = text.as_ref();
    write_tokens().find_iter(text).any(|m| {
        text[m.start()..].starts_with(b"Method")
            || text[m.start()..].starts_with(b"PostParams")
            || text[..m.start()].iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b'.')
    })
}

/// POST/PATCH request sites of one file, outside test code, in line order.
fn write_sites(text: &str) -> Vec<(String, u32)> {
    let Ok(file) = super::parse::parse_file(text) else { return Vec::new() };
    let sites = write_sites_of(&file);
    proc_macro2::extra::invalidate_current_thread_spans();
    sites
}

/// POST/PATCH request sites of a parsed file, outside test code, in line order.
pub(crate) fn write_sites_of(file: &syn::File) -> Vec<(String, u32)> {
    let mut v = WriteSites(Vec::new());
    v.visit_file(file);
    v.0.sort_by_key(|(_, l)| *l);
    v.0
}

struct WriteSites(Vec<(String, u32)>);

/// Whether an argument is kube's `PostParams` (`&PostParams::default()`,
/// `&pp` is not told: only the type named in the argument counts).
fn names_post_params(e: &syn::Expr) -> bool {
    let text = quote::ToTokens::to_token_stream(e).to_string();
    text.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "PostParams")
}

fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let p = a.path();
        if p.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        // `#[cfg(test)]`
        p.is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

impl<'ast> Visit<'ast> for WriteSites {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test_attr(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test_attr(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if (m.method == "post" || m.method == "patch") && !m.args.is_empty() {
            self.0.push((m.method.to_string().to_ascii_uppercase(), line_of(&m.method)));
        }
        // kube: `api.create(&PostParams::default(), &obj)` is a POST.
        let creates = m.method == "create" || m.method == "create_subresource";
        if creates && m.args.iter().any(names_post_params) {
            self.0.push(("POST".to_string(), line_of(&m.method)));
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let n = p.segments.len();
        if n >= 2 && p.segments[n - 2].ident == "Method" {
            let v = &p.segments[n - 1].ident;
            if v == "POST" || v == "PATCH" {
                self.0.push((v.to_string(), line_of(v)));
            }
        }
        syn::visit::visit_path(self, p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_may_write_only_through_a_method_call_or_a_method_path() {
        for text in [
            "client.post(url).send()",
            "self.http\n            .patch(&url)",
            "Request::builder().method(http::Method::POST)",
        ] {
            assert!(may_write(text), "{text}");
        }
        for text in ["fn post(&self, url: &str) {}", "repost(x)", "let m = \"POST\";", "post (x)"] {
            assert!(!may_write(text), "{text}");
        }
    }

    #[test]
    fn a_kube_create_with_post_params_is_a_post_and_a_replace_is_not() {
        let text = "fn f(api: Api<Job>) {\n api.create(&PostParams::default(), &job);\n api.replace_subresource(\"s\", n, &PostParams::default(), b);\n cache.create(&key);\n}\n";
        assert!(may_write(text));
        assert_eq!(write_sites(text), vec![("POST".to_string(), 2)]);
    }

    #[test]
    fn the_prefilter_agrees_with_the_sites_it_gates() {
        let text = "fn post(&self) {}\nfn f(c: C) { c\n  .post(u); }\n";
        assert!(may_write(text));
        assert_eq!(write_sites(text), vec![("POST".to_string(), 3)]);
    }
}
