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
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::analyze::reads::why_read;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use syn::visit::Visit;

use super::syntax::{line_of, BodyFacts};
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
    /// Writes through a client value the index cannot tell.
    pub(crate) sites: BTreeMap<String, String>,
    /// Writes through a value typed as reqwest's own `Client`: a middleware,
    /// tower or octocrab retry is installed on another type and cannot
    /// carry them; reqwest's built-in retry can.
    pub(crate) plain_sites: BTreeMap<String, String>,
    /// POSTs whose endpoint says they are reads ([`crate::analyze::reads`]),
    /// sent through a client value the index cannot tell: why, with where.
    pub(crate) reads: BTreeSet<String>,
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
    let mut rust_files = Vec::new();
    let mut manifests = Vec::new();
    for (path, id) in tree.git.tree_files(&tree.rev).ok()? {
        if path == "Cargo.toml" || path.ends_with("/Cargo.toml") {
            manifests.push(path.strip_suffix("Cargo.toml").unwrap_or("").trim_end_matches('/').to_string());
        } else if path.ends_with(".rs") && !is_test_path(&path) {
            rust_files.push((path, id));
        }
    }
    Some(TreeListing { rust_files, manifests })
}

/// (crate root, path, write sites) of one file.
type FileWrites = (String, String, Writes);

/// What the index knows of a changed file.
pub(crate) enum Changed<'a> {
    /// The head was parsed; these are its write sites.
    Sites(&'a Writes),
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
            Changed::Sites(w) if !w.sites.is_empty() || !w.plain_fns.is_empty() => {
                found.push((root, path.to_string(), (*w).clone()))
            }
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
    // A function of the crate returns reqwest's own `Client` when every
    // definition of that name in the crate's indexed files does.
    let mut returns: HashMap<(&str, &str), (bool, bool)> = HashMap::new();
    for (root, _, w) in &found {
        for f in &w.plain_fns {
            returns.entry((root, f)).or_default().0 = true;
        }
        for f in &w.other_fns {
            returns.entry((root, f)).or_default().1 = true;
        }
    }
    let plain: std::collections::HashSet<(String, String)> = returns
        .into_iter()
        .filter(|(_, (plain, other))| *plain && !*other)
        .map(|((root, f), _)| (root.to_string(), f.to_string()))
        .collect();
    for (root, path, writes) in found {
        for site in writes.sites {
            let plain_fn = |f: &String| plain.contains(&(root.clone(), f.clone()));
            let entry = out.entry(root.clone()).or_default();
            if let (Some(why), Carrier::Unknown | Carrier::Returned(_)) = (&site.read, &site.carrier) {
                if !matches!(&site.carrier, Carrier::Returned(f) if plain_fn(f)) {
                    entry.reads.insert(format!("{why} (sent at {path}:{})", site.line));
                }
                continue;
            }
            let into = match &site.carrier {
                Carrier::PlainReqwest => &mut entry.plain_sites,
                Carrier::Returned(f) if plain_fn(f) => &mut entry.plain_sites,
                Carrier::Unknown | Carrier::Returned(_) => &mut entry.sites,
                // A client built in the sending function with no retry: no
                // retry installed elsewhere covers it.
                Carrier::BuiltWithoutRetry => continue,
            };
            into.entry(site.method).or_insert_with(|| format!("{path}:{}", site.line));
        }
    }
    out
}

/// The requests of one file a client-wide policy may carry: `facts`
/// without a POST or PATCH whose every site in the file goes through a
/// client the policy cannot be installed on. `on_reqwest_client`: the
/// policy is reqwest's own built-in retry, which a plain `Client` carries.
pub(crate) fn carried_by_policy(facts: &BodyFacts, writes: &Writes, on_reqwest_client: bool) -> BodyFacts {
    let mut out = facts.clone();
    for method in ["POST", "PATCH"] {
        let lines: Vec<u32> =
            facts.write_lines.iter().filter(|(m, _)| m == method).map(|(_, l)| *l).collect();
        let elsewhere = |line: &u32| {
            let at: Vec<&WriteSite> =
                writes.sites.iter().filter(|w| w.method == method && w.line == *line).collect();
            !at.is_empty() && at.iter().all(|w| cannot_carry(w, writes, on_reqwest_client))
        };
        if !lines.is_empty() && lines.iter().all(elsewhere) {
            out.methods.remove(method);
        }
    }
    out
}

/// Whether a write site goes through a client no client-wide retry of this
/// kind is on: one built on the spot without a retry, or reqwest's own
/// `Client` (a field, binding or parameter of that type, or what a function
/// of the file that returns one gives) when the policy is on another type.
fn cannot_carry(w: &WriteSite, writes: &Writes, on_reqwest_client: bool) -> bool {
    match &w.carrier {
        Carrier::BuiltWithoutRetry => true,
        Carrier::PlainReqwest => !on_reqwest_client,
        Carrier::Returned(f) => {
            !on_reqwest_client && writes.plain_fns.contains(f) && !writes.other_fns.contains(f)
        }
        Carrier::Unknown => false,
    }
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

/// What one file holds for the index: its write requests, and the names of
/// its functions that return reqwest's own `Client` (and of those that
/// return something else), to tell a request through `let c = f()?`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Writes {
    pub(crate) sites: Vec<WriteSite>,
    pub(crate) plain_fns: Vec<String>,
    pub(crate) other_fns: Vec<String>,
}

/// One POST or PATCH request of a file, and what sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WriteSite {
    pub(crate) method: String,
    pub(crate) line: u32,
    pub(crate) carrier: Carrier,
    /// Why this POST is a read, when its endpoint says so: it then adds no
    /// write to the policy that covers it, only the reason, as evidence.
    pub(crate) read: Option<String>,
}

/// The client value a request is sent through, as far as the file tells.
/// A client-wide retry covers only requests sent through the client it is
/// installed on; the last two kinds of value cannot be that client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Carrier {
    /// Anything else: a field or binding of another type, a value returned
    /// by a function. It may be the retrying client.
    Unknown,
    /// A field, parameter or binding typed as reqwest's `Client` (or
    /// `reqwest::blocking::Client`).
    PlainReqwest,
    /// A binding of the sending function built there from reqwest's or
    /// reqwest-middleware's builder with nothing that retries
    /// (`let c = Client::builder().user_agent(..).build()?`).
    BuiltWithoutRetry,
    /// A binding initialised by a call of this function of the crate
    /// (`let c = default_client()?`): what it returns decides
    /// ([`Writes::plain_fns`]).
    Returned(String),
}

/// POST/PATCH request sites of one file, outside test code, in line order.
fn write_sites(text: &str) -> Writes {
    let Ok(file) = super::parse::parse_file(text) else { return Writes::default() };
    let sites = write_sites_of(&file);
    proc_macro2::extra::invalidate_current_thread_spans();
    sites
}

/// POST/PATCH request sites of a parsed file, outside test code, in line order.
pub(crate) fn write_sites_of(file: &syn::File) -> Writes {
    let mut v =
        WriteSites { sites: Vec::new(), types: FileTypes::of(file), self_ty: None, locals: HashMap::new() };
    v.visit_file(file);
    v.sites.sort_by_key(|s| s.line);
    Writes { sites: v.sites, plain_fns: v.types.plain_fns, other_fns: v.types.other_fns }
}

/// What the file says about client types: the names reqwest's `Client` and
/// reqwest-middleware's `ClientBuilder` are imported under, and the fields
/// of its structs.
#[derive(Default)]
struct FileTypes {
    reqwest_client: Vec<String>,
    middleware_builder: Vec<String>,
    fields: HashMap<String, HashMap<String, String>>,
    /// Functions returning reqwest's `Client` (in a `Result` or `Option`
    /// or not), and functions returning anything else.
    plain_fns: Vec<String>,
    other_fns: Vec<String>,
    /// Return types of the functions, read before the imports are all known.
    returns: Vec<(String, String)>,
}

impl FileTypes {
    fn of(file: &syn::File) -> FileTypes {
        struct Collect<'t>(&'t mut FileTypes);
        impl<'ast> Visit<'ast> for Collect<'_> {
            fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
                let mut leaves = Vec::new();
                use_leaves(&u.tree, String::new(), &mut leaves);
                for (path, name) in leaves {
                    let path = path.trim_start_matches("::");
                    if matches!(path, "reqwest::Client" | "reqwest::blocking::Client") {
                        self.0.reqwest_client.push(name);
                    } else if path == "reqwest_middleware::ClientBuilder" {
                        self.0.middleware_builder.push(name);
                    }
                }
            }
            fn visit_item_struct(&mut self, st: &'ast syn::ItemStruct) {
                let fields = st
                    .fields
                    .iter()
                    .filter_map(|f| Some((f.ident.as_ref()?.to_string(), tokens(&f.ty))))
                    .collect();
                self.0.fields.insert(st.ident.to_string(), fields);
            }
            fn visit_signature(&mut self, sig: &'ast syn::Signature) {
                let ret = match &sig.output {
                    syn::ReturnType::Type(_, ty) => tokens(ty),
                    syn::ReturnType::Default => String::new(),
                };
                self.0.returns.push((sig.ident.to_string(), ret));
            }
        }
        let mut t = FileTypes::default();
        Collect(&mut t).visit_file(file);
        for (name, ret) in std::mem::take(&mut t.returns) {
            let inner = ["Result<", "anyhow::Result<", "Option<"]
                .iter()
                .find_map(|w| ret.strip_prefix(w))
                .map_or(ret.as_str(), |r| r.split(',').next().unwrap_or(r).trim_end_matches('>'));
            if t.is_reqwest_client(inner) {
                t.plain_fns.push(name);
            } else {
                t.other_fns.push(name);
            }
        }
        t
    }

    /// Whether a type (as tokens without spaces) is reqwest's `Client`,
    /// behind a reference or an `Arc`/`Rc`/`Box`.
    fn is_reqwest_client(&self, ty: &str) -> bool {
        let mut t = ty.trim_start_matches('&').trim_start_matches("mut");
        for wrapper in ["Arc<", "std::sync::Arc<", "Rc<", "Box<"] {
            if let Some(inner) = t.strip_prefix(wrapper).and_then(|r| r.strip_suffix('>')) {
                t = inner;
            }
        }
        let t = t.trim_start_matches("::");
        matches!(t, "reqwest::Client" | "reqwest::blocking::Client")
            || self.reqwest_client.iter().any(|n| n == t)
    }

    /// Whether `e` is a client built from reqwest's or reqwest-middleware's
    /// builder (or `Client::new()`) with no retry word anywhere in it, and
    /// every middleware it adds made on the spot (`.with(Auth::default())`,
    /// not `.with(mw)`, which may be a retry).
    fn built_without_retry(&self, e: &syn::Expr) -> bool {
        let text = tokens(e).to_ascii_lowercase();
        if text.contains("retr") || text.contains("backoff") {
            return false;
        }
        let mut root = e;
        loop {
            match root {
                syn::Expr::MethodCall(m) => {
                    let adds =
                        matches!(m.method.to_string().as_str(), "with" | "with_arc" | "with_init" | "layer");
                    if adds && !m.args.iter().all(|a| matches!(a, syn::Expr::Call(_) | syn::Expr::Struct(_)))
                    {
                        return false;
                    }
                    root = &m.receiver;
                }
                syn::Expr::Try(t) => root = &t.expr,
                syn::Expr::Await(a) => root = &a.base,
                syn::Expr::Paren(p) => root = &p.expr,
                _ => break,
            }
        }
        let syn::Expr::Call(call) = root else { return false };
        let syn::Expr::Path(func) = &*call.func else { return false };
        let segs: Vec<String> = func.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let Some((ctor, ty)) = segs.split_last() else { return false };
        let ty = ty.join("::");
        let client = matches!(ctor.as_str(), "new" | "builder" | "default") && self.is_reqwest_client(&ty);
        let builder = ctor == "new"
            && (matches!(ty.as_str(), "reqwest_middleware::ClientBuilder" | "reqwest::ClientBuilder")
                || self.middleware_builder.contains(&ty));
        client || builder
    }
}

/// The function a value comes from: `f()`, `f(..)?`, `f().await`,
/// `f().expect(..)`, `f().into_diagnostic()?` (error plumbing around one
/// call of a plain function name).
fn called_fn(e: &syn::Expr) -> Option<String> {
    match e {
        // `f()` or `crate::client::f()`: the function's own name (types'
        // associated functions, `Client::new()`, are not followed).
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) => {
                let segs = &p.path.segments;
                let last = segs.last()?;
                let module_path = segs
                    .iter()
                    .take(segs.len() - 1)
                    .all(|s| s.ident.to_string().chars().all(|c| !c.is_ascii_uppercase()));
                module_path.then(|| last.ident.to_string())
            }
            _ => None,
        },
        syn::Expr::Try(t) => called_fn(&t.expr),
        syn::Expr::Await(a) => called_fn(&a.base),
        syn::Expr::Paren(p) => called_fn(&p.expr),
        syn::Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "unwrap" | "expect" | "into_diagnostic" | "map_err" | "context" | "with_context"
            ) =>
        {
            called_fn(&m.receiver)
        }
        _ => None,
    }
}

/// `(full path, name in scope)` of every leaf of a `use` tree.
fn use_leaves(tree: &syn::UseTree, prefix: String, out: &mut Vec<(String, String)>) {
    let join = |name: &str| if prefix.is_empty() { name.to_string() } else { format!("{prefix}::{name}") };
    match tree {
        syn::UseTree::Path(p) => use_leaves(&p.tree, join(&p.ident.to_string()), out),
        syn::UseTree::Name(n) => out.push((join(&n.ident.to_string()), n.ident.to_string())),
        syn::UseTree::Rename(r) => out.push((join(&r.ident.to_string()), r.rename.to_string())),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_leaves(t, prefix.clone(), out)),
        syn::UseTree::Glob(_) => {}
    }
}

/// A node's tokens without spaces.
fn tokens<T: quote::ToTokens>(node: &T) -> String {
    node.to_token_stream().to_string().chars().filter(|c| !c.is_whitespace()).collect()
}

/// A parameter's or binding's written type and initialiser.
type Local<'ast> = (Option<String>, Option<&'ast syn::Expr>);

struct WriteSites<'ast> {
    sites: Vec<WriteSite>,
    types: FileTypes,
    /// The type of `self` in the `impl` being visited.
    self_ty: Option<String>,
    /// The sending function's parameters and `let` bindings. A name bound
    /// twice is `None` (shadowed: which one sends is not told).
    locals: HashMap<String, Option<Local<'ast>>>,
}

impl<'ast> WriteSites<'ast> {
    fn push(&mut self, method: &str, line: u32, receiver: Option<&syn::Expr>) {
        let carrier = receiver.map_or(Carrier::Unknown, |r| self.carrier(r));
        self.sites.push(WriteSite { method: method.to_string(), line, carrier, read: None });
    }

    /// The path a request is sent to: written in the call, or given to the
    /// local it names (once: a name bound twice is not told).
    fn target_path(&self, target: &syn::Expr) -> Option<String> {
        super::ops::target_path(target).or_else(|| {
            let name = super::ops::local_name(target)?;
            match self.locals.get(&name) {
                Some(Some((_, Some(init)))) => super::ops::target_path(init),
                _ => None,
            }
        })
    }

    fn carrier(&self, receiver: &syn::Expr) -> Carrier {
        let mut r = receiver;
        loop {
            match r {
                syn::Expr::MethodCall(m) if matches!(m.method.to_string().as_str(), "clone" | "as_ref") => {
                    r = &m.receiver;
                }
                syn::Expr::Reference(x) => r = &x.expr,
                syn::Expr::Paren(x) => r = &x.expr,
                _ => break,
            }
        }
        match r {
            syn::Expr::Field(f) => {
                let (syn::Expr::Path(base), syn::Member::Named(field)) = (&*f.base, &f.member) else {
                    return Carrier::Unknown;
                };
                let ty = base
                    .path
                    .is_ident("self")
                    .then_some(self.self_ty.as_ref())
                    .flatten()
                    .and_then(|s| self.types.fields.get(s))
                    .and_then(|fields| fields.get(&field.to_string()));
                match ty {
                    Some(ty) if self.types.is_reqwest_client(ty) => Carrier::PlainReqwest,
                    _ => Carrier::Unknown,
                }
            }
            syn::Expr::Path(p) => {
                let Some(name) = p.path.get_ident() else { return Carrier::Unknown };
                match self.locals.get(&name.to_string()) {
                    Some(Some((Some(ty), _))) if self.types.is_reqwest_client(ty) => Carrier::PlainReqwest,
                    Some(Some((_, Some(init)))) if self.types.built_without_retry(init) => {
                        Carrier::BuiltWithoutRetry
                    }
                    Some(Some((None, Some(init)))) => {
                        called_fn(init).map_or(Carrier::Unknown, Carrier::Returned)
                    }
                    _ => Carrier::Unknown,
                }
            }
            // `reqwest::Client::new().post(url)`: built on the spot.
            r if self.types.built_without_retry(r) => Carrier::BuiltWithoutRetry,
            // `default_client()?.post(url)`: what the function returns.
            r => called_fn(r).map_or(Carrier::Unknown, Carrier::Returned),
        }
    }

    fn visit_fn(&mut self, sig: &'ast syn::Signature, block: &'ast syn::Block) {
        let outer = std::mem::take(&mut self.locals);
        for input in &sig.inputs {
            if let syn::FnArg::Typed(t) = input {
                if let syn::Pat::Ident(i) = &*t.pat {
                    self.bind(i.ident.to_string(), Some(tokens(&t.ty)), None);
                }
            }
        }
        struct Lets<'s, 'ast>(&'s mut WriteSites<'ast>);
        impl<'ast> Visit<'ast> for Lets<'_, 'ast> {
            fn visit_local(&mut self, l: &'ast syn::Local) {
                let (pat, ty) = match &l.pat {
                    syn::Pat::Type(t) => (&*t.pat, Some(tokens(&t.ty))),
                    p => (p, None),
                };
                if let syn::Pat::Ident(i) = pat {
                    self.0.bind(i.ident.to_string(), ty, l.init.as_ref().map(|i| &*i.expr));
                }
                syn::visit::visit_local(self, l);
            }
            fn visit_item(&mut self, _: &'ast syn::Item) {}
        }
        Lets(self).visit_block(block);
        syn::visit::visit_block(self, block);
        self.locals = outer;
    }

    fn bind(&mut self, name: String, ty: Option<String>, init: Option<&'ast syn::Expr>) {
        self.locals.entry(name).and_modify(|l| *l = None).or_insert(Some((ty, init)));
    }
}

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

impl<'ast> Visit<'ast> for WriteSites<'ast> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test_attr(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test_attr(&f.attrs) {
            self.visit_fn(&f.sig, &f.block);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let outer = std::mem::replace(&mut self.self_ty, ty);
        syn::visit::visit_item_impl(self, i);
        self.self_ty = outer;
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_attr(&f.attrs) {
            self.visit_fn(&f.sig, &f.block);
        }
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if (m.method == "post" || m.method == "patch") && !m.args.is_empty() {
            self.push(&m.method.to_string().to_ascii_uppercase(), line_of(&m.method), Some(&m.receiver));
            if m.method == "post" {
                let read = m.args.first().and_then(|t| self.target_path(t)).and_then(|p| why_read(&p));
                if let Some(site) = self.sites.last_mut() {
                    site.read = read;
                }
            }
        }
        // kube: `api.create(&PostParams::default(), &obj)` is a POST.
        let creates = m.method == "create" || m.method == "create_subresource";
        if creates && m.args.iter().any(names_post_params) {
            self.push("POST", line_of(&m.method), None);
        }
        // `client.request(Method::POST, url)`: the method path is a site
        // sent through this receiver (its path is not counted again).
        if m.method == "request" {
            if let Some(syn::Expr::Path(p)) = m.args.first() {
                if let Some(v) = method_path(&p.path) {
                    self.push(&v.to_string(), line_of(v), Some(&m.receiver));
                    self.visit_expr(&m.receiver);
                    m.args.iter().skip(1).for_each(|a| self.visit_expr(a));
                    return;
                }
            }
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if let Some(v) = method_path(p) {
            self.push(&v.to_string(), line_of(v), None);
        }
        syn::visit::visit_path(self, p);
    }
}

/// `POST` or `PATCH` of a `Method::POST` / `http::Method::PATCH` path.
fn method_path(p: &syn::Path) -> Option<&syn::Ident> {
    let n = p.segments.len();
    let v = &p.segments.last()?.ident;
    (n >= 2 && p.segments[n - 2].ident == "Method" && (v == "POST" || v == "PATCH")).then_some(v)
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
        assert_eq!(
            write_sites(text).sites.iter().map(|s| (s.method.as_str(), s.line)).collect::<Vec<_>>(),
            [("POST", 2)]
        );
    }

    #[test]
    fn the_prefilter_agrees_with_the_sites_it_gates() {
        let text = "fn post(&self) {}\nfn f(c: C) { c\n  .post(u); }\n";
        assert!(may_write(text));
        assert_eq!(
            write_sites(text).sites.iter().map(|s| (s.method.as_str(), s.line)).collect::<Vec<_>>(),
            [("POST", 3)]
        );
    }

    #[test]
    fn a_request_through_a_plain_or_a_locally_built_client_is_told() {
        let text = "use reqwest::Client;\nuse std::sync::Arc;\n\
            pub struct Api { client: Client, other: Shared }\n\
            impl Api {\n\
              fn a(&self) { self.client.post(u); }\n\
              fn b(&self) { self.other.post(u); }\n\
              fn c(&self) { let c = reqwest_middleware::ClientBuilder::new(Client::new()).with(Auth::default()).build(); c.post(u); }\n\
              fn d(&self, mw: M) { let c = reqwest_middleware::ClientBuilder::new(Client::new()).with(mw).build(); c.post(u); }\n\
              fn e(&self) { let c = Client::builder().retry(policy()).build()?; c.post(u); }\n\
              fn f(&self, h: &Client) { h.post(u); }\n\
              fn g(&self) { let c = make(); c.post(u); }\n\
              fn h(&self) { reqwest::Client::new().post(u); }\n\
              fn i(&self) { self.client.request(Method::POST, u); }\n\
            }\n";
        let writes = write_sites(text);
        let carriers: Vec<(u32, Carrier)> =
            writes.sites.iter().map(|s| (s.line, s.carrier.clone())).collect();
        assert_eq!(
            carriers,
            [
                (5, Carrier::PlainReqwest),
                (6, Carrier::Unknown),
                (7, Carrier::BuiltWithoutRetry),
                // A middleware handed in may be a retry; a retry word is one.
                (8, Carrier::Unknown),
                (9, Carrier::Unknown),
                (10, Carrier::PlainReqwest),
                (11, Carrier::Returned("make".into())),
                (12, Carrier::BuiltWithoutRetry),
                (13, Carrier::PlainReqwest),
            ]
        );
        // What `make` returns is told where it is defined (any file of the crate).
        let text = "fn make() -> Result<reqwest::Client, reqwest::Error> { Client::builder().build() }\nfn other() -> Api { Api }\n";
        let writes = write_sites(text);
        assert_eq!(
            (writes.plain_fns, writes.other_fns),
            (vec!["make".to_string()], vec!["other".to_string()])
        );
    }
}
