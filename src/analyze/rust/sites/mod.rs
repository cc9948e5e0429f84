//! Finds the retry sites of one Rust file and reduces each to a [`Policy`].
//!
//! A site is a place where a retry happens or is configured: a retry call
//! (`op.retry(b)`, `Retry::spawn(s, op)`, `backoff::future::retry(b, op)`,
//! `RetryTransientMiddleware::new_with_policy(p)`, `client_builder.retry(..)`),
//! a policy built but handed elsewhere (`fn policy() -> ExponentialBuilder`),
//! a hand-rolled retry loop, or a tower `impl Policy`. Each site records the
//! item it sits in (`mod::Type::fn`), so base and head can be matched by item
//! and order rather than by line number.
//!
//! Alongside sites the file model keeps the timeouts set in the file and the
//! builder setters whose result is dropped.
//!
//! This module walks items and function bodies; the parts of the walk live
//! beside it:
//! - [`index`]: constants, helper functions and imported crates, read first;
//! - [`resolve`]: which policy an expression stands for;
//! - [`calls`]: retry calls, timeouts, and policies built but not yet retried;
//! - [`retry_loops`]: hand-written retry loops;
//! - [`discarded`]: by-value setters whose result is dropped.

mod calls;
mod discarded;
mod fields;
mod index;
mod resolve;
mod retry_loops;

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};

use syn::visit::Visit;
use syn::{Expr, ExprMethodCall, Item, Pat, Stmt};

use super::eval::Env;
use super::libs;
use super::policy::{Lib, Policy};
use super::syntax::{body_facts, chain_of, ident_of, line_of, lines_of, BodyFacts, Chain};
pub(crate) use fields::typed_key;
pub(crate) use index::merge_facts;
use index::FileIndex;
use resolve::setter;

/// One retry site.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    /// Enclosing item path, e.g. `checkout::Client::submit`.
    pub(crate) item: String,
    pub(crate) line: u32,
    pub(crate) end_line: u32,
    pub(crate) policy: Policy,
    /// Values the policy needed that could not be computed, as written
    /// (a helper's argument `cfg.retries`): the gate names them.
    pub(crate) unresolved: Vec<String>,
    /// A policy built here and not retried in this file (`fn policy() ->
    /// ExponentialBuilder`): when another file retries it, the retry there
    /// is the site and this one is dropped.
    pub(crate) standalone: bool,
    /// What the retried code sends and calls ([`super::ops`]): a removed
    /// retry and a new one are related only through these.
    pub(crate) ops: super::ops::Ops,
}

/// A timeout set somewhere in the file.
#[derive(Debug, Clone)]
pub(crate) struct TimeoutSite {
    pub(crate) item: String,
    /// The setter: `timeout`, `connect_timeout`, `operation_timeout`, ...
    pub(crate) setter: String,
    pub(crate) ms: f64,
    pub(crate) line: u32,
    /// What it bounds, as tokens: the future of `timeout(d, fut)`, the root
    /// of a builder chain. Pairs a changed timeout with its old self when a
    /// new one sits beside it.
    pub(crate) op: String,
    /// Set as a struct field (`connect_timeout: ..` in a config's
    /// `Default`), not by a call.
    pub(crate) field: bool,
    /// How the timeout is tied to a retry when the file holds no retry
    /// site of its own ([`TimeoutTie`]).
    pub(crate) tie: TimeoutTie,
}

/// What ties a timeout to the operations a retry re-runs, beyond sharing a
/// file with a retry site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TimeoutTie {
    /// Nothing seen here: it counts when its file retries, or when
    /// retrying code of the crate uses what its item builds.
    #[default]
    Unknown,
    /// `tokio::time::timeout(d, fut)`: bounds what that one future does
    /// (a request, or a lock wait), not every request of a client; judged
    /// like [`TimeoutTie::Unknown`], but a client-wide policy does not
    /// make a new one the retry's.
    Wrapped,
    /// A layer (`TimeoutLayer`) installed in a function that installs no
    /// retry layer: it bounds whatever the stack serves (a server's
    /// handlers, often), which no retry here re-runs.
    LayerAlone,
    /// A layer installed in the same function as a retry layer, under or
    /// over it (each attempt, or all of them).
    LayerWithRetry,
    /// A builder's own timeout setter beside its own retry setter
    /// (`.request_timeout(d).request_retries(2)`): the library re-sends
    /// what times out.
    BuilderRetries,
}

impl TimeoutTie {
    /// Whether the timeout bounds operations that a retry re-runs, by what
    /// was seen where it is set.
    pub(crate) fn retried_here(self) -> bool {
        matches!(self, TimeoutTie::LayerWithRetry | TimeoutTie::BuilderRetries)
    }
}

/// A by-value builder setter called as a statement; its result is lost.
#[derive(Debug, Clone)]
pub(crate) struct Discarded {
    pub(crate) item: String,
    pub(crate) setter: String,
    pub(crate) receiver: String,
    pub(crate) lib: Option<Lib>,
    pub(crate) line: u32,
}

/// Everything the analyzer reads from one version of one file.
#[derive(Debug, Default, Clone)]
pub struct FileModel {
    pub(crate) sites: Vec<Site>,
    pub(crate) timeouts: Vec<TimeoutSite>,
    pub(crate) discarded: Vec<Discarded>,
    /// POST/PATCH request sites outside test code (method, line), for the
    /// crate-wide index; read while the tree is at hand so that the index
    /// never parses a changed file a second time.
    pub(crate) writes: super::crate_index::Writes,
    /// Names the file uses and does not define, that a retry site needed
    /// (a constant, a helper returning a policy, a retry helper): the
    /// crate-wide resolution looks for their definitions in other files.
    pub(crate) unresolved: BTreeSet<String>,
    /// Functions whose returned policy a retry site of this file uses.
    pub(crate) policy_fns: BTreeSet<String>,
    /// Every function of the file by item path: a timeout set in one the
    /// base also had, where the base set none, is new on an old operation.
    pub(crate) items: BTreeSet<String>,
    /// (item, setter) of every timeout set in the file, its value read or
    /// not: a timeout whose base value could not be read is not new.
    pub(crate) timeout_setters: BTreeSet<(String, String)>,
}

/// Builds the model of a parsed file; `src` is the text it was parsed from.
pub fn model(file: &syn::File, src: &str) -> FileModel {
    model_with(file, src, &[])
}

/// The `macro_rules!` definitions of `files`, by name (a later file's
/// definition of a name wins, so the file being modelled goes last).
pub(crate) fn macro_rules_of(files: &[&syn::File]) -> HashMap<String, super::macros::MacroRules> {
    let mut index = FileIndex::default();
    for f in files {
        index.collect(&f.items, &mut Vec::new());
    }
    index
        .macros
        .iter()
        .filter_map(|(name, mac)| Some((name.clone(), super::macros::MacroRules::of(mac)?)))
        .collect()
}

/// Expands the `macro_rules!` invocations of `file` with the definitions
/// of `definers` and of `file` itself, so a policy built in a macro is read
/// as the code it expands to.
pub(crate) fn expand_macros(file: &mut syn::File, src: &str, definers: &[&syn::File]) {
    if !src.contains('!') {
        return;
    }
    let mut all: Vec<&syn::File> = definers.to_vec();
    all.push(file);
    let rules = macro_rules_of(&all);
    super::macros::expand_rules(file, &rules);
}

/// The bodies of the functions at `wanted` item paths (as [`Site::item`]
/// spells them: `mod::Type::fn`, a nested function under its outer one),
/// each with its path; a path two impl blocks share gives both bodies.
pub(crate) fn item_bodies<'f>(file: &'f syn::File, wanted: &BTreeSet<&str>) -> Vec<(String, &'f syn::Block)> {
    struct Bodies<'w, 'f> {
        wanted: &'w BTreeSet<&'w str>,
        path: Vec<String>,
        out: Vec<(String, &'f syn::Block)>,
    }
    impl<'f> Bodies<'_, 'f> {
        fn items(&mut self, items: impl IntoIterator<Item = &'f Item>) {
            for item in items {
                self.item(item);
            }
        }

        fn body(&mut self, name: String, block: &'f syn::Block) {
            self.path.push(name);
            let joined = self.path.join("::");
            if self.wanted.contains(joined.as_str()) {
                self.out.push((joined, block));
            }
            self.items(index::nested_items(block));
            self.path.pop();
        }

        fn item(&mut self, item: &'f Item) {
            match item {
                Item::Fn(f) => self.body(f.sig.ident.to_string(), &f.block),
                Item::Impl(i) => {
                    self.path.push(type_name(&i.self_ty));
                    for ii in &i.items {
                        if let syn::ImplItem::Fn(f) = ii {
                            self.body(f.sig.ident.to_string(), &f.block);
                        }
                    }
                    self.path.pop();
                }
                Item::Trait(t) => {
                    self.path.push(t.ident.to_string());
                    for ti in &t.items {
                        if let syn::TraitItem::Fn(syn::TraitItemFn { sig, default: Some(b), .. }) = ti {
                            self.body(sig.ident.to_string(), b);
                        }
                    }
                    self.path.pop();
                }
                Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.path.push(m.ident.to_string());
                        self.items(inner);
                        self.path.pop();
                    }
                }
                _ => {}
            }
        }
    }
    let mut b = Bodies { wanted, path: Vec::new(), out: Vec::new() };
    b.items(&file.items);
    b.out
}

/// Names of Rust's prelude (types, variants and traits every file may use
/// unqualified): a miss on one is not a definition to look for elsewhere.
const PRELUDE_NAMES: &[&str] = &[
    "Ok", "Err", "Some", "None", "Self", "Box", "Vec", "String", "Option", "Result", "Default", "Clone",
    "Iterator", "Into", "From", "ToString", "ToOwned", "Drop", "Fn", "FnMut", "FnOnce",
];

/// Builds the model of a parsed file whose names may be defined in other
/// files of the crate (`definers`, parsed on this thread): their constants,
/// helper functions, aliases and imports resolve names `file` uses but does
/// not define. Only `file`'s own items are walked.
pub(crate) fn model_with(file: &syn::File, src: &str, definers: &[&syn::File]) -> FileModel {
    let mut index = FileIndex::default();
    for d in definers {
        index.collect(&d.items, &mut Vec::new());
    }
    // The file's own definitions win over another file's of the same name.
    index.collect(&file.items, &mut Vec::new());
    // Crates whose names decide between same-named types: a file that
    // names one inline (`tokio_retry::Retry::spawn`) counts as importing it.
    for name in libs::disambiguating_crates() {
        if index::mentions_crate(src, name) {
            index.imports.crates.insert(name.to_string());
        }
    }
    // The constants move into one environment that every function's walk
    // borrows in turn (cloning them per function cost a fifth of a scan).
    let consts = std::mem::take(&mut index.consts);
    let mut field_values = fields::FieldValues::default();
    for d in definers {
        field_values.collect(&d.items);
    }
    field_values.collect(&file.items);
    let (fields, field_numbers) = field_values.finish(&index.fns);
    let mut walker = Walker {
        index: &index,
        env: Some(Env { consts, fields, field_numbers, values: value_fns(&index), ..Env::default() }),
        out: FileModel::default(),
        consumed: HashSet::new(),
        standalone: Vec::new(),
        standalone_keys: HashSet::new(),
        facts_of_fn: HashMap::new(),
        fn_misses: RefCell::new(BTreeSet::new()),
        policy_fns: RefCell::new(BTreeSet::new()),
        helpers: HashMap::new(),
        helper_depth: 0,
    };
    walker.items(&file.items, &mut Vec::new());
    let misses = walker.env.as_ref().map(|e| e.misses.take()).unwrap_or_default();
    let field_misses = walker.env.as_ref().map(|e| e.field_misses.take()).unwrap_or_default();
    let fn_misses = walker.fn_misses.take();
    // The file is parsed already: its writes and the functions that return
    // a plain client are read whether or not it sends (a changed file that
    // only builds clients says what `plain_client()` returns elsewhere).
    let mut model = walker.finish(super::crate_index::write_sites_of(file));
    // Constants matter only where a site's count could not be computed;
    // functions are recorded only where a retry needed them.
    if model.sites.iter().any(|s| s.policy.attempts.value == super::policy::Attempts::Unknown) {
        model.unresolved.extend(misses);
        model.unresolved.extend(field_misses);
    }
    model.unresolved.extend(fn_misses);
    // The prelude's names are never a project's own definitions: searching
    // the workspace for `struct Ok` read every file of a large repository.
    model.unresolved.retain(|n| !PRELUDE_NAMES.contains(&n.as_str()));
    model
}

/// How many jitter-named functions deep [`Walker::random_through`] reads.
const MAX_JITTER_DEPTH: usize = 4;

/// A policy chain not (yet) known to be handed to a retry call.
struct Candidate {
    key: (u32, u32),
    site: Site,
}

struct Walker<'i, 'a> {
    index: &'i FileIndex<'a>,
    /// The file's constants (and, during a function's walk, lent to it).
    env: Option<Env<'a>>,
    out: FileModel,
    /// Root positions of chains that a retry call consumed.
    consumed: HashSet<(u32, u32)>,
    standalone: Vec<Candidate>,
    /// Keys of `standalone`, so that adding one stays O(1) in a file with
    /// tens of thousands of policies.
    standalone_keys: HashSet<(u32, u32)>,
    /// [`body_facts`] of the file's helper functions, computed once each:
    /// every retry that calls a helper would otherwise re-read its body.
    facts_of_fn: HashMap<String, BodyFacts>,
    /// Helper functions called by a retry site and not found.
    fn_misses: RefCell<BTreeSet<String>>,
    /// Functions whose returned policy was resolved for a site.
    policy_fns: RefCell<BTreeSet<String>>,
    /// Whether a function is a retry helper (its body retries), read once.
    helpers: HashMap<String, bool>,
    /// Set while a helper's body is read for one call site: a helper's own
    /// helper calls are not expanded again.
    helper_depth: u32,
}

fn root_key(e: &Expr) -> (u32, u32) {
    let s = syn::spanned::Spanned::span(e).start();
    (s.line as u32, s.column as u32)
}

impl<'i, 'a> Walker<'i, 'a> {
    fn items(&mut self, items: &'a [Item], path: &mut Vec<String>) {
        for item in items {
            self.item(item, path);
        }
    }

    fn item(&mut self, item: &'a Item, path: &mut Vec<String>) {
        {
            match item {
                Item::Fn(f) => {
                    path.push(f.sig.ident.to_string());
                    self.function(&f.block, Some(&f.sig), path);
                    path.pop();
                }
                Item::Impl(i) => {
                    let ty = type_name(&i.self_ty);
                    path.push(ty);
                    let is_tower_policy = i
                        .trait_
                        .as_ref()
                        .and_then(|(_, p, _)| p.segments.last())
                        .is_some_and(|s| s.ident == "Policy");
                    for ii in &i.items {
                        if let syn::ImplItem::Fn(f) = ii {
                            path.push(f.sig.ident.to_string());
                            if is_tower_policy && f.sig.ident == "retry" {
                                self.tower_policy(i, f, path);
                            }
                            // Inside a tower Policy impl, `RetryConfig::Simple(n - 1)`
                            // is the next state of the policy, not a second policy.
                            if !is_tower_policy {
                                self.function(&f.block, Some(&f.sig), path);
                            }
                            path.pop();
                        }
                    }
                    path.pop();
                }
                Item::Trait(t) => {
                    path.push(t.ident.to_string());
                    for ti in &t.items {
                        if let syn::TraitItem::Fn(f) = ti {
                            if let Some(b) = &f.default {
                                path.push(f.sig.ident.to_string());
                                self.function(b, Some(&f.sig), path);
                                path.pop();
                            }
                        }
                    }
                    path.pop();
                }
                Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        path.push(m.ident.to_string());
                        self.items(inner, path);
                        path.pop();
                    }
                }
                Item::Const(c) => {
                    path.push(c.ident.to_string());
                    self.loose_expr(&c.expr, path);
                    path.pop();
                }
                Item::Static(s) => {
                    path.push(s.ident.to_string());
                    self.loose_expr(&s.expr, path);
                    path.pop();
                }
                _ => {}
            }
        }
    }

    /// A constant initialised with a policy (`static P: .. = ..`).
    fn loose_expr(&mut self, e: &'a Expr, path: &[String]) {
        let env = self.lend_env(HashMap::new());
        let mut fw = FnWalker {
            w: self,
            env,
            mutations: HashMap::new(),
            params: HashMap::new(),
            item: path.join("::"),
        };
        fw.visit_expr(e);
        let env = fw.env;
        self.env = Some(env);
    }

    /// The file environment with one function's `let` bindings in it; given
    /// back with `self.env = Some(env)` when the walk is done.
    fn lend_env(&mut self, lets: HashMap<String, Vec<(u32, &'a Expr)>>) -> Env<'a> {
        let mut env = self.env.take().unwrap_or_default();
        env.lets = lets;
        env
    }

    fn function(&mut self, block: &'a syn::Block, sig: Option<&'a syn::Signature>, path: &mut Vec<String>) {
        self.body(block, sig, path);
        // A function declared inside this one is walked as its own item,
        // under this function's path (`outer::inner`).
        for item in index::nested_items(block) {
            self.item(item, path);
        }
    }

    fn body(&mut self, block: &'a syn::Block, sig: Option<&'a syn::Signature>, path: &[String]) {
        let mut lets = LetCollector::default();
        lets.visit_block(block);
        let mut env = self.lend_env(lets.lets);
        let item = path.join("::");
        self.out.items.insert(item.clone());
        let params = sig.map(param_types).unwrap_or_default();
        env.types = params.clone();
        let timeouts_before = self.out.timeouts.len();
        let mut fw = FnWalker { w: self, env, mutations: lets.mutations, params, item };
        fw.visit_block(block);
        fw.bind_layers(block, timeouts_before);
        if let Some(sig) = sig {
            fw.recursive_retry(sig, block);
        }
        for (line, m) in lets.statements {
            fw.discarded_setter(m, line);
        }
        let env = fw.env;
        self.env = Some(env);
    }

    /// tower: `impl Policy<Req, Res, E> for X { fn retry(..) }`.
    fn tower_policy(&mut self, imp: &'a syn::ItemImpl, f: &'a syn::ImplItemFn, path: &[String]) {
        let mut facts = BodyFacts::default();
        for ii in &imp.items {
            if let syn::ImplItem::Fn(g) = ii {
                merge_facts(&mut facts, &body_facts(&g.block));
            }
        }
        let p = libs::tower::policy_impl(&facts);
        let (line, end_line) = lines_of(&f.sig);
        self.out.sites.push(Site {
            item: path.join("::"),
            line,
            end_line,
            policy: p,
            unresolved: Vec::new(),
            standalone: false,
            ops: super::ops::Ops::new(),
        });
    }

    /// Records a function a retry site needed and the file does not define.
    fn miss(&self, name: &str) {
        self.fn_misses.borrow_mut().insert(name.to_string());
    }

    /// What helper function `name` of this file does, read once.
    fn fn_facts(&mut self, name: &str) -> Option<&BodyFacts> {
        if !self.facts_of_fn.contains_key(name) {
            let block = self.index.fns.get(name)?;
            self.facts_of_fn.insert(name.to_string(), body_facts(*block));
        }
        self.facts_of_fn.get(name)
    }

    /// Whether randomness reaches a delay through the jitter-named
    /// functions `names` ([`BodyFacts::jitter_calls`]): a function of the
    /// file randomises when its body does (or a jitter-named function it
    /// calls does, up to [`MAX_JITTER_DEPTH`] calls deep); one the file
    /// does not define is looked for in the crate, and until it is found its
    /// name is trusted, as a library's is.
    fn random_through(&mut self, names: &[String], depth: usize) -> bool {
        for name in names {
            match self.fn_facts(name).map(|f| (f.uses_randomness, f.jitter_calls.clone())) {
                Some((true, _)) => return true,
                Some((false, inner)) => {
                    if depth < MAX_JITTER_DEPTH && self.random_through(&inner, depth + 1) {
                        return true;
                    }
                }
                None => {
                    self.miss(name);
                    return true;
                }
            }
        }
        false
    }

    /// Merges what the named helpers do into `facts`, each name once.
    fn merge_callees(&mut self, facts: &mut BodyFacts, names: Vec<String>) {
        let mut seen = HashSet::new();
        for name in names {
            if seen.insert(name.clone()) {
                if let Some(f) = self.fn_facts(&name) {
                    merge_facts(facts, f);
                }
            }
        }
    }

    fn finish(mut self, writes: super::crate_index::Writes) -> FileModel {
        for mut c in self.standalone {
            if !self.consumed.contains(&c.key) {
                c.site.standalone = true;
                self.out.sites.push(c.site);
            }
        }
        self.out.policy_fns = self.policy_fns.into_inner();
        self.out.writes = writes;
        if self.out.sites.iter().any(|s| s.policy.client_wide && !s.policy.method_gated) {
            let facts = self.index.file_facts();
            for s in &mut self.out.sites {
                if s.policy.client_wide && !s.policy.method_gated {
                    // Only what may be sent through the client it is on.
                    let on_reqwest = s.policy.lib == super::libs::reqwest::LIB;
                    let carried = super::crate_index::carried_by_policy(&facts, &self.out.writes, on_reqwest);
                    s.policy.add_requests(&carried);
                }
            }
        }
        self.out.sites.sort_by(|a, b| (&a.item, a.line).cmp(&(&b.item, b.line)));
        self.out
    }
}

/// A signature's plainly named parameters (`name: Type`), by name, each
/// with the type it holds ([`held_type_name`]).
fn param_types(sig: &syn::Signature) -> HashMap<String, String> {
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => match &*t.pat {
                syn::Pat::Ident(i) => Some((i.ident.to_string(), held_type_name(&t.ty))),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

/// The type a parameter gives access to: `&Arc<Config>` and `Box<Config>`
/// are read as `Config`, since fields are read through the pointer.
fn held_type_name(ty: &syn::Type) -> String {
    const POINTERS: &[&str] = &["Arc", "Rc", "Box"];
    match ty {
        syn::Type::Reference(r) => held_type_name(&r.elem),
        syn::Type::Path(p) => {
            let Some(last) = p.path.segments.last() else { return "_".into() };
            let inner = match &last.arguments {
                syn::PathArguments::AngleBracketed(a)
                    if POINTERS.contains(&last.ident.to_string().as_str()) =>
                {
                    a.args.iter().find_map(|g| match g {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    })
                }
                _ => None,
            };
            inner.map_or_else(|| last.ident.to_string(), held_type_name)
        }
        _ => "_".into(),
    }
}

fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
        syn::Type::Reference(r) => type_name(&r.elem),
        _ => "_".into(),
    }
}

/// The file's functions that take nothing and are one expression
/// (`const fn max_retries() -> usize { 3 }`, `fn request_timeout() ->
/// Duration { Duration::from_millis(300) }`): a call of one is its value.
fn value_fns<'a>(index: &index::FileIndex<'a>) -> HashMap<String, &'a Expr> {
    index
        .fns
        .iter()
        .filter(|(name, _)| index.sigs.get(name.as_str()).is_some_and(|sig| sig.inputs.is_empty()))
        .filter_map(|(name, block)| match block.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => Some((name.clone(), e)),
            _ => None,
        })
        .collect()
}

/// `let` bindings, `var.set_x(..);` mutations, and setter statements of one
/// function body (closures included, nested items excluded).
#[derive(Default)]
pub(super) struct LetCollector<'a> {
    pub(super) lets: HashMap<String, Vec<(u32, &'a Expr)>>,
    pub(super) mutations: HashMap<String, Vec<(u32, &'a ExprMethodCall)>>,
    statements: Vec<(u32, &'a ExprMethodCall)>,
}

impl<'a> Visit<'a> for LetCollector<'a> {
    fn visit_local(&mut self, l: &'a syn::Local) {
        if let (Some(name), Some(init)) = (pat_ident(&l.pat), &l.init) {
            self.lets.entry(name).or_default().push((line_of(l), &init.expr));
        }
        syn::visit::visit_local(self, l);
    }

    fn visit_expr_assign(&mut self, a: &'a syn::ExprAssign) {
        // `backoff = backoff.with_max_times(10);`, under an `if` or not: a
        // builder reassigned is read as a new binding from that line on, so
        // settings applied one statement at a time count. Only a method
        // chain is taken: `attempt = attempt + 1` is a counter, not a policy.
        if let (Some(name), Expr::MethodCall(_)) = (ident_of(&a.left), &*a.right) {
            // The walk is in source order, as [`Env::lookup`]'s binary search needs.
            self.lets.entry(name).or_default().push((line_of(a), &a.right));
        }
        syn::visit::visit_expr_assign(self, a);
    }

    fn visit_stmt(&mut self, s: &'a Stmt) {
        if let Stmt::Expr(Expr::MethodCall(m), Some(_)) = s {
            self.statements.push((line_of(m), m));
            // Only in-place setters change a binding's policy; nothing else
            // is looked up here.
            if libs::any_mutating_setter(&m.method.to_string()) {
                if let Some(var) = ident_of(&m.receiver) {
                    self.mutations.entry(var).or_default().push((line_of(m), m));
                }
            }
        }
        syn::visit::visit_stmt(self, s);
    }

    fn visit_item(&mut self, _: &'a Item) {}
}

fn pat_ident(p: &Pat) -> Option<String> {
    match p {
        Pat::Ident(i) => Some(i.ident.to_string()),
        Pat::Type(t) => pat_ident(&t.pat),
        _ => None,
    }
}

/// Walks one function body.
struct FnWalker<'w, 'i, 'a> {
    w: &'w mut Walker<'i, 'a>,
    env: Env<'a>,
    mutations: HashMap<String, Vec<(u32, &'a ExprMethodCall)>>,
    /// The function's parameters by name, each with its declared type's
    /// last segment (`backoff: &ExponentialBackoff` is `ExponentialBackoff`):
    /// a policy passed in is known by its type alone.
    params: HashMap<String, String>,
    item: String,
}

impl FnWalker<'_, '_, '_> {
    /// A policy built here but not (visibly) retried yet: one candidate per
    /// policy root (`key`), kept until a retry of it is found or the file ends.
    fn standalone_candidate(&mut self, key: (u32, u32), (line, end_line): (u32, u32), policy: Policy) {
        if self.w.standalone_keys.insert(key) {
            let site = Site {
                item: self.item.clone(),
                line,
                end_line,
                policy,
                unresolved: Vec::new(),
                standalone: false,
                ops: super::ops::Ops::new(),
            };
            self.w.standalone.push(Candidate { key, site });
        }
    }
}

impl<'ast, 'w, 'i> Visit<'ast> for FnWalker<'w, 'i, 'ast> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::MethodCall(_) => {
                let chain = chain_of(e);
                self.chain(e, &chain);
                self.visit_expr(chain.root);
                for m in &chain.calls {
                    for a in &m.args {
                        self.visit_expr(a);
                    }
                }
            }
            Expr::Call(c) => {
                self.call(e, c);
                syn::visit::visit_expr(self, e);
            }
            Expr::Struct(s) => {
                self.struct_timeouts(s);
                let chain = Chain { root: e, calls: Vec::new() };
                self.chain(e, &chain);
                syn::visit::visit_expr(self, e);
            }
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                self.retry_loop(e);
                syn::visit::visit_expr(self, e);
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        // `let mut b = Backoff::new(..); b.set_jitter(0.0);`: the policy the
        // binding ends up with includes its in-place setters.
        if let (Some(name), Some(init)) = (pat_ident(&l.pat), &l.init) {
            let chain = chain_of(&init.expr);
            if self.root(chain.root).is_some() {
                if let Some(mut r) = self.resolve(&init.expr, 0) {
                    for (_, m) in self.mutations_of(&name, None) {
                        libs::apply(&mut r.policy, &setter(m), &self.env);
                    }
                    self.standalone_candidate(root_key(chain.root), lines_of(l), r.policy);
                }
            }
        }
        syn::visit::visit_local(self, l);
    }

    fn visit_item(&mut self, _: &'ast Item) {
        // Nested items are walked as items of their own by `Walker::items`.
    }
}

/// The model of a source text, for the unit tests of this module's parts.
#[cfg(test)]
fn model_of(src: &str) -> FileModel {
    let file = syn::parse_file(src).unwrap_or_else(|e| panic!("test source does not parse: {e}"));
    model(&file, src)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_carry_their_item_path_and_are_sorted_by_it() {
        let m = model_of(
            "mod net { impl Client { fn b(&self) { (|| send()).retry(ExponentialBuilder::default()); } } }\n\
             fn a() { (|| send()).retry(ConstantBuilder::default()); }\n",
        );
        let items: Vec<&str> = m.sites.iter().map(|s| s.item.as_str()).collect();
        assert_eq!(items, ["a", "net::Client::b"]);
        assert!(m.sites.iter().all(|s| s.policy.lib.id() == "backon"));
    }

    #[test]
    fn a_tower_policy_impl_is_one_site_and_its_body_no_other() {
        let m = model_of(
            "impl Policy<Req, Res, E> for Attempts {\n\
             fn retry(&mut self, req: &mut Req, r: &mut Result<Res, E>) -> Option<Self::Future> { let _ = RetryConfig::Simple(self.0 - 1); None }\n\
             fn clone_request(&mut self, r: &Req) -> Option<Req> { None } }\n",
        );
        assert_eq!(m.sites.len(), 1, "{:?}", m.sites);
        assert_eq!(
            (m.sites[0].policy.lib.id(), m.sites[0].item.as_str()),
            ("tower-retry", "Attempts::retry")
        );
        assert!(m.sites[0].policy.client_wide, "an ungated policy covers every request");
    }

    #[test]
    fn a_wrapper_type_is_the_builder_its_constructor_wraps_and_nothing_else() {
        let m = model_of(
            "struct Capped { cap: Option<u64>, inner: ExponentialBuilder }\n\
             impl Capped {\n\
                 fn new() -> Self { Self { cap: None, inner: ExponentialBuilder::default() } }\n\
                 fn with_jitter(mut self) -> Self { self.inner = self.inner.with_jitter(); self }\n\
             }\n\
             fn policy(cap: Option<u64>) -> Capped { Capped::new().with_jitter().with_max_times(4) }\n",
        );
        // One policy, at the wrapper's use: the builder inside `new` is it.
        assert_eq!(m.sites.len(), 1, "{:?}", m.sites);
        assert_eq!(m.sites[0].line, 6);
        assert_eq!(m.sites[0].policy.jitter.value, Some(true));
        // The constructor's own values (`None`) are not names to look for
        // in the crate.
        assert!(m.unresolved.is_empty(), "{:?}", m.unresolved);
        // A type the file does not declare, configured with a library's
        // setter names, is looked for like a helper.
        let m = model_of("fn policy() -> Capped { Capped::new().with_max_times(4) }\n");
        assert!(m.sites.is_empty());
        assert_eq!(m.unresolved.iter().collect::<Vec<_>>(), ["Capped"]);
        // A constructor that builds no library root wraps no policy, even
        // when a value it boxes shares a name with a policy function (`new`).
        let m = model_of(
            "fn new() -> ExponentialBuilder { ExponentialBuilder::default() }\n\
             impl Error { fn from(x: u8) -> Self { Self::Http(Box::new(x)) } }\n\
             fn f() -> Error { Error::from(1).with_max_times(3) }\n",
        );
        assert!(m.sites.iter().all(|s| s.line != 3), "{:?}", m.sites);
        // The prelude's names are never looked for.
        let m = model_of("fn policy() -> Ok { Ok::new().with_max_times(4) }\n");
        assert!(m.unresolved.is_empty(), "{:?}", m.unresolved);
        // Without a library setter it is any other type's constructor.
        assert!(model_of("fn f() -> Cache { Cache::new().with_capacity(4) }\n").unresolved.is_empty());
    }

    #[test]
    fn item_bodies_are_found_by_the_paths_sites_carry() {
        let src = "mod net { impl Client { fn send(&self) { a(); } } }\n\
                   fn outer() { fn inner() { b(); } }\n\
                   trait T { fn d(&self) { c(); } }\n";
        let file = syn::parse_file(src).unwrap_or_else(|e| panic!("{e}"));
        let wanted = BTreeSet::from(["net::Client::send", "outer::inner", "T::d", "missing"]);
        let found: Vec<String> = item_bodies(&file, &wanted).into_iter().map(|(p, _)| p).collect();
        assert_eq!(found, ["net::Client::send", "outer::inner", "T::d"]);
    }

    #[test]
    fn a_file_without_retries_has_an_empty_model() {
        let m = model_of("fn main() { let x = 1 + 2; println!(\"{x}\"); }\n");
        assert!(m.sites.is_empty() && m.timeouts.is_empty() && m.discarded.is_empty());
    }
}
