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

use std::collections::{HashMap, HashSet};

use syn::visit::Visit;
use syn::{Expr, ExprMethodCall, Item, Pat, Stmt};

use super::eval::Env;
use super::libs::{self, Imports, Root, Setter};
use super::loops::{self, exits_on_success, has_exit, is_variant};
use super::policy::{Attempts, Fact, Lib, Policy};
use super::syntax::{body_facts, chain_of, ident_of, last_segments, line_of, lines_of, BodyFacts, Chain};

/// Methods and functions whose duration argument is a request or operation
/// timeout.
const TIMEOUT_METHODS: &[&str] = &[
    "timeout",
    "connect_timeout",
    "read_timeout",
    "operation_timeout",
    "operation_attempt_timeout",
    "timeout_global",
    "timeout_per_call",
    "timeout_connect",
    "timeout_read",
    "request_timeout",
];

/// How deep policy resolution follows variables and helper functions.
const MAX_RESOLVE_DEPTH: u32 = 8;

/// How many in-place setter statements on one binding are applied to its
/// policy (the last ones win; real code has a handful).
const MAX_MUTATIONS_APPLIED: usize = 64;

/// One retry site.
#[derive(Debug, Clone)]
pub struct Site {
    /// Enclosing item path, e.g. `checkout::Client::submit`.
    pub item: String,
    pub line: u32,
    pub end_line: u32,
    pub policy: Policy,
}

/// A timeout set somewhere in the file.
#[derive(Debug, Clone)]
pub struct TimeoutSite {
    pub item: String,
    /// The setter: `timeout`, `connect_timeout`, `operation_timeout`, ...
    pub setter: String,
    pub ms: f64,
    pub line: u32,
}

/// A by-value builder setter called as a statement; its result is lost.
#[derive(Debug, Clone)]
pub struct Discarded {
    pub item: String,
    pub setter: String,
    pub receiver: String,
    pub lib: Option<Lib>,
    pub line: u32,
}

/// Everything the analyzer reads from one version of one file.
#[derive(Debug, Default, Clone)]
pub struct FileModel {
    pub sites: Vec<Site>,
    pub timeouts: Vec<TimeoutSite>,
    pub discarded: Vec<Discarded>,
    /// POST/PATCH request sites outside test code (method, line), for the
    /// crate-wide index; read while the tree is at hand so that the index
    /// never parses a changed file a second time.
    pub writes: Vec<(String, u32)>,
}

/// Crates whose names decide between same-named types; a file that names
/// one inline (`tokio_retry::Retry::spawn`) counts as importing it.
const DISAMBIGUATING_CRATES: &[&str] = &[
    "tokio_retry2",
    "tokio_retry",
    "retry_policies",
    "reqwest_retry",
    "exponential_backoff",
    "backoff",
    "retry",
];

/// Builds the model of a parsed file; `src` is the text it was parsed from.
pub fn model(file: &syn::File, src: &str) -> FileModel {
    let mut index = FileIndex::default();
    index.collect(&file.items, &mut Vec::new());
    for name in DISAMBIGUATING_CRATES {
        if mentions_crate(src, name) {
            index.imports.crates.insert((*name).to_string());
        }
    }
    // The constants move into one environment that every function's walk
    // borrows in turn (cloning them per function cost a fifth of a scan).
    let consts = std::mem::take(&mut index.consts);
    let mut walker = Walker {
        index: &index,
        env: Some(Env { consts, lets: HashMap::new() }),
        out: FileModel::default(),
        consumed: HashSet::new(),
        standalone: Vec::new(),
        standalone_keys: HashSet::new(),
        facts_of_fn: HashMap::new(),
    };
    walker.items(&file.items, &mut Vec::new());
    let mut model = walker.finish();
    if super::crate_index::may_write(src) {
        model.writes = super::crate_index::write_sites_of(file);
    }
    model
}

/// File-wide facts gathered before the walk: constants, helper functions,
/// imported crates, and the HTTP methods the file sends at all.
#[derive(Default)]
struct FileIndex<'a> {
    consts: HashMap<String, &'a Expr>,
    /// Functions by name (last one wins for duplicates in different impls).
    fns: HashMap<String, &'a syn::Block>,
    imports: Imports,
}

impl<'a> FileIndex<'a> {
    fn collect(&mut self, items: &'a [Item], path: &mut Vec<String>) {
        for item in items {
            match item {
                Item::Const(c) => {
                    self.consts.insert(c.ident.to_string(), &c.expr);
                }
                Item::Static(s) => {
                    self.consts.insert(s.ident.to_string(), &s.expr);
                }
                Item::Fn(f) => self.add_fn(f.sig.ident.to_string(), &f.block),
                Item::Impl(i) => {
                    for ii in &i.items {
                        match ii {
                            syn::ImplItem::Fn(f) => self.add_fn(f.sig.ident.to_string(), &f.block),
                            syn::ImplItem::Const(c) => {
                                self.consts.insert(c.ident.to_string(), &c.expr);
                            }
                            _ => {}
                        }
                    }
                }
                Item::Trait(t) => {
                    for ti in &t.items {
                        if let syn::TraitItem::Fn(f) = ti {
                            if let Some(b) = &f.default {
                                self.add_fn(f.sig.ident.to_string(), b);
                            }
                        }
                    }
                }
                Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        path.push(m.ident.to_string());
                        self.collect(inner, path);
                        path.pop();
                    }
                }
                Item::Use(u) => collect_use_roots(&u.tree, &mut self.imports),
                _ => {}
            }
        }
    }

    fn add_fn(&mut self, name: String, block: &'a syn::Block) {
        for stmt in &block.stmts {
            if let Stmt::Item(Item::Const(c)) = stmt {
                self.consts.insert(c.ident.to_string(), &c.expr);
            }
        }
        self.fns.insert(name, block);
    }

    /// What every function of the file sends, for client-wide policies
    /// (computed only when the file has one).
    fn file_facts(&self) -> BodyFacts {
        let mut facts = BodyFacts::default();
        for block in self.fns.values() {
            merge_facts(&mut facts, &body_facts(*block));
        }
        facts
    }
}

/// `name::` preceded by a non-identifier character (so `retry::` does not
/// match inside `tokio_retry::`).
fn mentions_crate(src: &str, name: &str) -> bool {
    let pat = format!("{name}::");
    src.match_indices(&pat)
        .any(|(i, _)| src[..i].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_')))
}

fn collect_use_roots(tree: &syn::UseTree, imports: &mut Imports) {
    match tree {
        syn::UseTree::Path(p) => {
            imports.crates.insert(p.ident.to_string());
            // `use crate::x` / `use self::x` say nothing; look one level further.
            if matches!(p.ident.to_string().as_str(), "crate" | "self" | "super") {
                collect_use_roots(&p.tree, imports);
            }
        }
        syn::UseTree::Name(n) => {
            imports.crates.insert(n.ident.to_string());
        }
        syn::UseTree::Rename(r) => {
            imports.crates.insert(r.ident.to_string());
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_use_roots(t, imports);
            }
        }
        syn::UseTree::Glob(_) => {}
    }
}

pub fn merge_facts(into: &mut BodyFacts, from: &BodyFacts) {
    into.methods.extend(from.methods.iter().cloned());
    into.idempotency_key |= from.idempotency_key;
    into.reads_retry_after |= from.reads_retry_after;
    into.uses_randomness |= from.uses_randomness;
    into.method_gated |= from.method_gated;
    into.sends_request |= from.sends_request;
    into.has_continue |= from.has_continue;
    into.sleeps += from.sleeps;
}

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
}

fn root_key(e: &Expr) -> (u32, u32) {
    let s = syn::spanned::Spanned::span(e).start();
    (s.line as u32, s.column as u32)
}

impl<'i, 'a> Walker<'i, 'a> {
    fn items(&mut self, items: &'a [Item], path: &mut Vec<String>) {
        for item in items {
            match item {
                Item::Fn(f) => {
                    path.push(f.sig.ident.to_string());
                    self.function(&f.block, path);
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
                                self.function(&f.block, path);
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
                                self.function(b, path);
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
        let mut fw = FnWalker { w: self, env, mutations: HashMap::new(), item: path.join("::") };
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

    fn function(&mut self, block: &'a syn::Block, path: &[String]) {
        let mut lets = LetCollector::default();
        lets.visit_block(block);
        let env = self.lend_env(lets.lets);
        let item = path.join("::");
        let mut fw = FnWalker { w: self, env, mutations: lets.mutations, item };
        fw.visit_block(block);
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
        let mut p = Policy::new(
            Lib::Tower,
            Fact::new(Attempts::Unknown, "decided by the Policy impl"),
            Fact::new(None, "decided by the Policy impl"),
        );
        p.method_gated = facts.method_gated;
        p.client_wide = !facts.method_gated;
        p.idempotency_key = facts.idempotency_key;
        p.retry_after = Fact::new(Some(facts.reads_retry_after), "the Policy impl");
        let (line, end_line) = lines_of(&f.sig);
        self.out.sites.push(Site { item: path.join("::"), line, end_line, policy: p });
    }

    /// What helper function `name` of this file does, read once.
    fn fn_facts(&mut self, name: &str) -> Option<&BodyFacts> {
        if !self.facts_of_fn.contains_key(name) {
            let block = self.index.fns.get(name)?;
            self.facts_of_fn.insert(name.to_string(), body_facts(*block));
        }
        self.facts_of_fn.get(name)
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

    fn finish(mut self) -> FileModel {
        for c in self.standalone {
            if !self.consumed.contains(&c.key) {
                self.out.sites.push(c.site);
            }
        }
        if self.out.sites.iter().any(|s| s.policy.client_wide && !s.policy.method_gated) {
            let facts = self.index.file_facts();
            for s in &mut self.out.sites {
                if s.policy.client_wide && !s.policy.method_gated {
                    s.policy.methods.extend(facts.methods.iter().cloned());
                    s.policy.idempotency_key |= facts.idempotency_key;
                }
            }
        }
        self.out.sites.sort_by(|a, b| (&a.item, a.line).cmp(&(&b.item, b.line)));
        self.out
    }
}

fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
        syn::Type::Reference(r) => type_name(&r.elem),
        _ => "_".into(),
    }
}

/// `let` bindings, `var.set_x(..);` mutations, and setter statements of one
/// function body (closures included, nested items excluded).
#[derive(Default)]
struct LetCollector<'a> {
    lets: HashMap<String, Vec<(u32, &'a Expr)>>,
    mutations: HashMap<String, Vec<(u32, &'a ExprMethodCall)>>,
    statements: Vec<(u32, &'a ExprMethodCall)>,
}

impl<'a> Visit<'a> for LetCollector<'a> {
    fn visit_local(&mut self, l: &'a syn::Local) {
        if let (Some(name), Some(init)) = (pat_ident(&l.pat), &l.init) {
            self.lets.entry(name).or_default().push((line_of(l), &init.expr));
        }
        syn::visit::visit_local(self, l);
    }

    fn visit_stmt(&mut self, s: &'a Stmt) {
        if let Stmt::Expr(Expr::MethodCall(m), Some(_)) = s {
            self.statements.push((line_of(m), m));
            // Only in-place setters change a binding's policy; nothing else
            // is looked up here.
            if libs::exponential_backoff::MUTATING_SETTERS.iter().any(|s| m.method == s) {
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
    item: String,
}

/// A policy found for an expression, with the root position of the chain
/// that built it (to mark it consumed).
struct Resolved {
    policy: Policy,
    keys: Vec<(u32, u32)>,
}

impl<'w, 'i, 'a> FnWalker<'w, 'i, 'a> {
    /// The in-place setters called on `name` (up to `line` when given), at
    /// most the last [`MAX_MUTATIONS_APPLIED`]: later setters override
    /// earlier ones, and the bound keeps a file with thousands of setter
    /// statements on one binding linear.
    fn mutations_of(&self, name: &str, line: Option<u32>) -> &[(u32, &'a ExprMethodCall)] {
        let all = self.mutations.get(name).map_or(&[][..], Vec::as_slice);
        let end = line.map_or(all.len(), |line| all.partition_point(|(l, _)| *l <= line));
        &all[end.saturating_sub(MAX_MUTATIONS_APPLIED)..end]
    }

    /// Resolves an expression to a policy: a constructor chain, a variable
    /// bound to one, or a helper function of this file returning one.
    fn resolve(&self, e: &'a Expr, depth: u32) -> Option<Resolved> {
        if depth > MAX_RESOLVE_DEPTH {
            return None;
        }
        let chain = chain_of(e);
        let (mut resolved, skip) = self.resolve_root(&chain, depth)?;
        for m in chain.calls.iter().skip(skip) {
            let s = setter(m);
            libs::apply(&mut resolved.policy, &s, &self.env);
        }
        Some(resolved)
    }

    /// The policy a chain's root stands for; `skip` says how many calls of
    /// the chain the root consumed (`self.policy()` consumes one).
    fn resolve_root(&self, chain: &Chain<'a>, depth: u32) -> Option<(Resolved, usize)> {
        let key = root_key(chain.root);
        if let Some(root) = as_root(chain.root) {
            if let Some(policy) = libs::construct(&root, &self.env, &self.w.index.imports) {
                return Some((Resolved { policy, keys: vec![key] }, 0));
            }
        }
        match chain.root {
            Expr::Path(p) if p.path.segments.len() == 1 => {
                let name = p.path.segments[0].ident.to_string();
                if name == "self" {
                    return self.resolve_self_call(chain, depth);
                }
                let line = line_of(chain.root);
                let init = self.env.lookup(&name, line)?;
                let mut r = self.resolve(init, depth + 1)?;
                // `let mut b = Backoff::new(..); b.set_jitter(0.0);`
                for (_, m) in self.mutations_of(&name, Some(line)) {
                    libs::apply(&mut r.policy, &setter(m), &self.env);
                }
                Some((r, 0))
            }
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else { return None };
                if p.path.segments.len() != 1 {
                    return None;
                }
                let block = self.w.index.fns.get(&p.path.segments[0].ident.to_string())?;
                let tail = tail_expr(block)?;
                Some((self.resolve(tail, depth + 1)?, 0))
            }
            Expr::Field(_) => None,
            _ => None,
        }
    }

    fn resolve_self_call(&self, chain: &Chain<'a>, depth: u32) -> Option<(Resolved, usize)> {
        let first = chain.calls.first()?;
        let block = self.w.index.fns.get(&first.method.to_string())?;
        let tail = tail_expr(block)?;
        Some((self.resolve(tail, depth + 1)?, 1))
    }

    /// Facts about a retried operation: a closure's body, or a function of
    /// this file named by path or `self.name`; callees are followed once.
    fn op_facts(&mut self, op: &'a Expr) -> BodyFacts {
        let mut facts = body_facts(op);
        let named = match op {
            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => Some(n.to_string()),
                _ => None,
            },
            _ => None,
        };
        let mut callees: Vec<String> = std::mem::take(&mut facts.callees);
        callees.extend(named);
        self.w.merge_callees(&mut facts, callees);
        facts
    }

    fn push_site(&mut self, mut policy: Policy, op: Option<&'a Expr>, at: &'a Expr) {
        if let Some(op) = op {
            let f = self.op_facts(op);
            policy.methods.extend(f.methods);
            policy.idempotency_key |= f.idempotency_key;
            if policy.lib == Lib::Backoff && f.reads_retry_after {
                policy.retry_after = Fact::new(Some(true), "the operation returns Error::retry_after");
            }
        }
        let (line, end_line) = lines_of(at);
        self.w.out.sites.push(Site { item: self.item.clone(), line, end_line, policy });
    }

    /// A whole method chain: policy setters, retry calls, timeouts.
    fn chain(&mut self, whole: &'a Expr, chain: &Chain<'a>) {
        for (i, m) in chain.calls.iter().enumerate() {
            let is_timeout = TIMEOUT_METHODS.iter().any(|t| m.method == t);
            let is_retry = (m.method == "retry" || m.method == "retry_config") && m.args.len() == 1;
            if !is_timeout && !is_retry {
                continue;
            }
            let name = m.method.to_string();
            if is_timeout {
                if let Some(ms) = m.args.first().and_then(|a| self.env.millis(a)) {
                    self.w.out.timeouts.push(TimeoutSite {
                        item: self.item.clone(),
                        setter: name.clone(),
                        ms,
                        line: line_of(m),
                    });
                }
            }
            if is_retry {
                self.retry_call(whole, chain, i);
                return;
            }
        }
        // A policy built here but not (visibly) retried yet.
        if as_root(chain.root).is_some() {
            if let Some(r) = self.resolve(whole, 0) {
                let key = root_key(chain.root);
                if self.w.standalone_keys.insert(key) {
                    let (line, end_line) = lines_of(whole);
                    let site = Site { item: self.item.clone(), line, end_line, policy: r.policy };
                    self.w.standalone.push(Candidate { key, site });
                }
            }
        }
    }

    /// `op.retry(policy)` (backon), `policy.retry(op)` (again),
    /// `builder.retry(policy)` (reqwest, tower ServiceBuilder),
    /// `loader.retry_config(cfg)` (aws); then `.when/.adjust/.notify`.
    fn retry_call(&mut self, whole: &'a Expr, chain: &Chain<'a>, i: usize) {
        let m = chain.calls[i];
        let arg = &m.args[0];
        let receiver: &'a Expr = &m.receiver;
        let (resolved, op) = match self.resolve(receiver, 0) {
            // again: the receiver is the policy and the argument the operation.
            Some(r) if r.policy.lib == Lib::Again => (Some(r), Some(arg)),
            _ => match self.resolve(arg, 0) {
                Some(r) => {
                    let op = if matches!(r.policy.lib, Lib::Reqwest | Lib::Aws | Lib::Tower) {
                        None
                    } else {
                        Some(receiver)
                    };
                    (Some(r), op)
                }
                None => (None, None),
            },
        };
        let Some(mut r) = resolved else { return };
        for k in &r.keys {
            self.w.consumed.insert(*k);
        }
        for later in &chain.calls[i + 1..] {
            let Some(a) = later.args.first() else { continue };
            match later.method.to_string().as_str() {
                "adjust" => {
                    let reads = body_facts(a).reads_retry_after;
                    r.policy.retry_after = Fact::new(
                        Some(reads),
                        if reads {
                            ".adjust(..) reads Retry-After"
                        } else {
                            ".adjust(..) does not read Retry-After"
                        },
                    );
                }
                "when" => {
                    r.policy.method_gated |= body_facts(a).method_gated;
                    let t = loops::tests_of_expr(a);
                    r.policy.refusal_only = t.refusal && !t.after_apply;
                }
                _ => {}
            }
        }
        self.push_site(r.policy, op, whole);
    }

    /// Calls: `Retry::spawn`, `RetryIf::spawn`, `backoff::retry`,
    /// `future::retry`, `retry_notify`, `retry(iter, op)`,
    /// `RetryTransientMiddleware::new_with_policy`, `RetryLayer::new`,
    /// `tokio::time::timeout(d, fut)`.
    fn call(&mut self, whole: &'a Expr, c: &'a syn::ExprCall) {
        let Expr::Path(p) = &*c.func else { return };
        // Most calls in a file are nothing to a retry: reject them by their
        // last name before any allocation.
        if !p.path.segments.last().is_some_and(|s| interesting_call_name(&s.ident)) {
            return;
        }
        let segs = last_segments(&p.path, 2);
        let (ty, func) = match segs.as_slice() {
            [ty, func] => (ty.as_str(), func.as_str()),
            [func] => ("", func.as_str()),
            _ => return,
        };
        let args: Vec<&'a Expr> = c.args.iter().collect();
        match (ty, func) {
            ("Retry" | "RetryIf", "spawn" | "spawn_notify") if args.len() >= 2 => {
                if let Some(mut r) = self.resolve(args[0], 0) {
                    if let Some(cond) = args.get(2) {
                        r.policy.method_gated |= body_facts(*cond).method_gated;
                        let t = loops::tests_of_expr(cond);
                        r.policy.refusal_only = t.refusal && !t.after_apply;
                    }
                    self.consume_and_push(r, Some(args[1]), whole);
                }
            }
            (_, "retry" | "retry_notify") if args.len() >= 2 => {
                if let Some(r) = self.resolve(args[0], 0) {
                    self.consume_and_push(r, Some(args[1]), whole);
                }
            }
            ("RetryTransientMiddleware", "new_with_policy" | "new_with_policy_and_strategy") => {
                if let Some(arg) = args.first() {
                    if let Some(mut r) = self.resolve(arg, 0) {
                        r.policy.client_wide = true;
                        self.consume_and_push(r, None, whole);
                    }
                }
            }
            ("RetryLayer", "new") => {
                if let Some(r) = args.first().and_then(|a| self.resolve(a, 0)) {
                    self.consume_and_push(r, None, whole);
                }
            }
            (_, "timeout") if args.len() == 2 => {
                if let Some(ms) = self.env.millis(args[0]) {
                    self.w.out.timeouts.push(TimeoutSite {
                        item: self.item.clone(),
                        setter: "timeout".into(),
                        ms,
                        line: line_of(whole),
                    });
                }
            }
            _ => {
                // A constructor with no setters (`ExponentialBuilder::default()`).
                let chain = Chain { root: whole, calls: Vec::new() };
                self.chain(whole, &chain);
            }
        }
    }

    fn consume_and_push(&mut self, r: Resolved, op: Option<&'a Expr>, whole: &'a Expr) {
        for k in &r.keys {
            self.w.consumed.insert(*k);
        }
        self.push_site(r.policy, op, whole);
    }

    /// Hand-rolled retry loops. A retry re-issues the same request after a
    /// failure and stops on success; a loop that sends each pass and carries
    /// on whatever happens (a periodic flush or poll, the supervision or
    /// reconnect loop of a long-running task) is not one, nor is a `for` over
    /// a collection (one request per item).
    fn retry_loop(&mut self, whole: &'a Expr) {
        let (body, attempts, label_hint, bound_text) = match whole {
            Expr::ForLoop(f) => {
                if !matches!(&*f.expr, Expr::Range(_)) {
                    return;
                }
                let hint = pat_ident(&f.pat).unwrap_or_default();
                let text = format!("`for {} in {}`", code(&f.pat), code(&f.expr));
                (&f.body, self.range_len(&f.expr), hint, text)
            }
            Expr::While(w) => match &*w.cond {
                // `while let Err(e) = call()`: runs until the call succeeds.
                Expr::Let(l) if is_variant(&l.pat, "Err") => match self.loop_bound(&w.body) {
                    Some((bound, cond)) => (
                        &w.body,
                        Some(bound),
                        String::new(),
                        format!("`while let Err(..)` exits on `{cond}`"),
                    ),
                    None => (
                        &w.body,
                        Some(Attempts::Unbounded),
                        String::new(),
                        "a `while let Err(..)` loop with no attempt limit".into(),
                    ),
                },
                // `while let Some(x) = rx.recv()`: a consumer, not a retry.
                Expr::Let(_) => return,
                cond => {
                    let hint = cond_ident(cond).unwrap_or_default();
                    let bound = self.while_bound(cond).or_else(|| self.loop_bound(&w.body).map(|(b, _)| b));
                    (&w.body, bound, hint, format!("`while {}`", code(cond)))
                }
            },
            Expr::Loop(l) => match self.loop_bound(&l.body) {
                Some((bound, cond)) => {
                    (&l.body, Some(bound), String::new(), format!("`loop` exits on `{cond}`"))
                }
                None => (
                    &l.body,
                    Some(Attempts::Unbounded),
                    String::new(),
                    "a `loop` with no attempt limit".into(),
                ),
            },
            _ => return,
        };
        // The whole loop: `while let Err(e) = client.post(..).send()` sends
        // in its condition.
        let facts = body_facts(whole);
        if !facts.sends_request || !(facts.sleeps > 0 || facts.has_continue) || loops::is_periodic(body) {
            return;
        }
        let named_like_retry = {
            let h = label_hint.to_ascii_lowercase();
            h.contains("attempt") || h.contains("retr") || h.contains("tries") || h.contains("try")
        };
        let is_retry = match whole {
            // A bounded `for`/`while` over attempts: the loop ends by itself,
            // so an exit on success (or a name that says so) makes it a retry.
            Expr::ForLoop(_) => has_exit(body) || named_like_retry,
            Expr::While(w) if matches!(&*w.cond, Expr::Let(_)) => true,
            // An open-ended loop must stop when the request succeeds.
            _ => exits_on_success(body) || (named_like_retry && has_exit(body)),
        };
        if !is_retry {
            return;
        }
        let attempts = attempts.unwrap_or(Attempts::Unknown);
        let mut p = Policy::new(
            Lib::HandRolled,
            Fact::new(attempts, bound_text),
            if facts.uses_randomness {
                Fact::new(Some(true), "the loop's delay uses randomness")
            } else {
                Fact::new(Some(false), "the loop's delay uses no randomness")
            },
        );
        let sleeps = SleepArgs::collect(body, &self.env);
        p.min_delay_ms = sleeps.iter().copied().reduce(f64::min);
        p.max_delay_ms = sleeps.iter().copied().reduce(f64::max);
        p.retry_after = if facts.reads_retry_after {
            Fact::new(Some(true), "the loop reads Retry-After")
        } else {
            Fact::new(Some(false), "the loop does not read Retry-After")
        };
        p.methods = facts.methods.clone();
        p.idempotency_key = facts.idempotency_key;
        p.method_gated = facts.method_gated;
        p.refusal_only = loops::retries_on_refusal_only(body);
        let (line, end_line) = lines_of(whole);
        // Follow helpers the loop calls for the request itself.
        let mut merged = facts;
        let callees = std::mem::take(&mut merged.callees);
        self.w.merge_callees(&mut merged, callees);
        p.methods.extend(merged.methods);
        p.idempotency_key |= merged.idempotency_key;
        self.w.out.sites.push(Site { item: self.item.clone(), line, end_line, policy: p });
    }

    fn range_len(&self, e: &Expr) -> Option<Attempts> {
        let Expr::Range(r) = e else { return None };
        let start = r.start.as_deref().map_or(Some(0.0), |s| self.env.number(s))?;
        let end = self.env.number(r.end.as_deref()?)?;
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        Some(Attempts::from_total(Some(end - start + if inclusive { 1.0 } else { 0.0 })))
    }

    fn while_bound(&self, cond: &Expr) -> Option<Attempts> {
        let Expr::Binary(b) = cond else { return None };
        let n = self.env.number(&b.right)?;
        match b.op {
            syn::BinOp::Lt(_) => Some(Attempts::from_total(Some(n))),
            syn::BinOp::Le(_) => Some(Attempts::from_total(Some(n + 1.0))),
            _ => None,
        }
    }

    /// `loop { .. if attempt >= N { break/return } .. }`.
    fn loop_bound(&self, body: &syn::Block) -> Option<(Attempts, String)> {
        loops::loop_bound(body, &self.env)
    }

    /// A by-value setter whose result is dropped: `b.with_jitter();`.
    fn discarded_setter(&mut self, m: &'a ExprMethodCall, line: u32) {
        let name = m.method.to_string();
        let receiver = ident_of(&m.receiver);
        let lib = self.resolve(&m.receiver, 0).map(|r| r.policy.lib);
        let hit = match lib {
            Some(l) => libs::by_value_setters(l).contains(&name.as_str()),
            None => {
                let looks_like_builder = receiver.as_deref().is_some_and(|r| {
                    let r = r.to_ascii_lowercase();
                    ["builder", "backoff", "policy", "strategy", "retry", "backon"]
                        .iter()
                        .any(|w| r.contains(w))
                });
                looks_like_builder && libs::any_by_value_setter(&name)
            }
        };
        if hit {
            self.w.out.discarded.push(Discarded {
                item: self.item.clone(),
                setter: name,
                receiver: receiver.unwrap_or_else(|| "builder".into()),
                lib,
                line,
            });
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
            Expr::Struct(_) => {
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
            if as_root(chain.root).is_some() {
                if let Some(mut r) = self.resolve(&init.expr, 0) {
                    for (_, m) in self.mutations_of(&name, None) {
                        libs::apply(&mut r.policy, &setter(m), &self.env);
                    }
                    let key = root_key(chain.root);
                    if self.w.standalone_keys.insert(key) {
                        let (line, end_line) = lines_of(l);
                        let site = Site { item: self.item.clone(), line, end_line, policy: r.policy };
                        self.w.standalone.push(Candidate { key, site });
                    }
                }
            }
        }
        syn::visit::visit_local(self, l);
    }

    fn visit_item(&mut self, _: &'ast Item) {
        // Nested items are walked as items of their own by `Walker::items`.
    }
}

/// Last path segments of every call the site finder or a library module
/// acts on: retry entry points and policy constructors.
const INTERESTING_CALLS: &[&str] = &[
    // retry entry points
    "spawn",
    "spawn_notify",
    "retry",
    "retry_notify",
    "new_with_policy",
    "new_with_policy_and_strategy",
    "timeout",
    // policy constructors (see libs/*::construct)
    "default",
    "new",
    "builder",
    "from_millis",
    "from_millis_exclusive",
    "from_millis_inclusive",
    "exponential",
    "fixed",
    "standard",
    "adaptive",
    "disabled",
    "for_host",
    "scoped",
    "never",
    "Simple",
    "retry_fn",
];

fn interesting_call_name(ident: &proc_macro2::Ident) -> bool {
    INTERESTING_CALLS.iter().any(|n| ident == n)
}

/// A chain root in the shape libraries construct policies from.
fn as_root(e: &Expr) -> Option<Root<'_>> {
    match e {
        Expr::Call(c) => {
            let Expr::Path(p) = &*c.func else { return None };
            if !p.path.segments.last().is_some_and(|s| interesting_call_name(&s.ident)) {
                return None;
            }
            let segs = last_segments(&p.path, 2);
            let (ty, func) = match segs.as_slice() {
                [ty, func] => (ty.clone(), func.clone()),
                [func] => (String::new(), func.clone()),
                _ => return None,
            };
            Some(Root::Call { ty, func, args: c.args.iter().collect() })
        }
        Expr::Struct(s) => {
            // Only backoff's `ExponentialBackoff { .. }` is built as a literal.
            if s.path.segments.last().is_none_or(|x| x.ident != "ExponentialBackoff") {
                return None;
            }
            let ty = s.path.segments.last()?.ident.to_string();
            let fields = s
                .fields
                .iter()
                .filter_map(|f| match &f.member {
                    syn::Member::Named(n) => Some((n.to_string(), &f.expr)),
                    syn::Member::Unnamed(_) => None,
                })
                .collect();
            Some(Root::Struct { ty, fields, has_rest: s.rest.is_some() })
        }
        Expr::Paren(p) => as_root(&p.expr),
        _ => None,
    }
}

fn setter(m: &ExprMethodCall) -> Setter<'_> {
    Setter { name: m.method.to_string(), args: m.args.iter().collect() }
}

/// The value a function body evaluates to: its tail expression, or the
/// argument of a final `return`.
fn tail_expr(block: &syn::Block) -> Option<&Expr> {
    match block.stmts.last()? {
        Stmt::Expr(Expr::Return(r), _) => r.expr.as_deref(),
        Stmt::Expr(e, None) => Some(e),
        _ => None,
    }
}

/// Source text of a node for messages, as tokens (`0 ..= MAX_RETRIES`).
fn code<T: quote::ToTokens>(node: &T) -> String {
    let text = node.to_token_stream().to_string();
    if text.len() > 60 {
        format!("{}..", &text[..text.char_indices().nth(57).map_or(text.len(), |(i, _)| i)])
    } else {
        text
    }
}

fn cond_ident(e: &Expr) -> Option<String> {
    match e {
        Expr::Binary(b) => ident_of(&b.left),
        _ => None,
    }
}

/// Durations passed to `sleep(..)` inside a loop body.
struct SleepArgs<'e, 'a> {
    env: &'e Env<'a>,
    found: Vec<f64>,
}

impl<'e, 'a> SleepArgs<'e, 'a> {
    fn collect(body: &syn::Block, env: &'e Env<'a>) -> Vec<f64> {
        let mut v = SleepArgs { env, found: Vec::new() };
        v.visit_block(body);
        v.found
    }
}

impl<'ast> Visit<'ast> for SleepArgs<'_, '_> {
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let Expr::Path(p) = &*c.func {
            if p.path.segments.last().is_some_and(|s| s.ident == "sleep") {
                if let Some(ms) = c.args.first().and_then(|a| self.env.millis(a)) {
                    self.found.push(ms);
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
    fn visit_item(&mut self, _: &'ast Item) {}
}
