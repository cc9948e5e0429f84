//! File-wide facts read before the walk: constants, helper functions, the
//! crates a file names, and what a set of function bodies sends.

use std::collections::{HashMap, HashSet};

use syn::{Expr, Item};

use super::super::libs::Imports;
use super::super::syntax::{body_facts, BodyFacts};

/// File-wide facts gathered before the walk: constants, helper functions,
/// imported crates, and the HTTP methods the file sends at all.
#[derive(Default)]
pub(super) struct FileIndex<'a> {
    pub(super) consts: HashMap<String, &'a Expr>,
    /// Functions by name (last one wins for duplicates in different impls).
    pub(super) fns: HashMap<String, &'a syn::Block>,
    /// The signatures of the functions in [`Self::fns`], for helpers whose
    /// parameters are bound per call site.
    pub(super) sigs: HashMap<String, &'a syn::Signature>,
    /// Other names for types and functions: `use backon::ExponentialBuilder
    /// as Policy` and `type Policy = backon::ExponentialBuilder` map
    /// `Policy` to `ExponentialBuilder`.
    pub(super) aliases: HashMap<String, String>,
    /// Associated functions that return their own type (`Type::new`,
    /// `Type::default`), keyed `Type::name`: the constructors of a project's
    /// own type, which may wrap a retry library's builder in a field.
    pub(super) ctors: HashMap<String, &'a syn::Block>,
    /// The project's own types that decide when to stop themselves: an
    /// `impl` with `next_backoff` (backoff's `Backoff` trait) or an
    /// `impl Iterator` (a tokio-retry strategy). A builder such a type
    /// wraps gives its delays, not its bound.
    pub(super) own_policies: HashSet<String>,
    /// `macro_rules!` definitions by name, expanded where they are invoked.
    pub(super) macros: HashMap<String, &'a syn::Macro>,
    pub(super) imports: Imports,
}

impl<'a> FileIndex<'a> {
    pub(super) fn collect(&mut self, items: &'a [Item], path: &mut Vec<String>) {
        for item in items {
            match item {
                Item::Const(c) => {
                    self.consts.insert(c.ident.to_string(), &c.expr);
                }
                Item::Static(s) => {
                    self.consts.insert(s.ident.to_string(), &s.expr);
                }
                Item::Fn(f) => self.add_fn(&f.sig, &f.block, path),
                Item::Impl(i) => {
                    let self_ty = impl_type_name(&i.self_ty);
                    let iterator = i
                        .trait_
                        .as_ref()
                        .and_then(|(_, p, _)| p.segments.last())
                        .is_some_and(|s| s.ident == "Iterator");
                    for ii in &i.items {
                        match ii {
                            syn::ImplItem::Fn(f) => {
                                let steps =
                                    f.sig.ident == "next_backoff" || (iterator && f.sig.ident == "next");
                                if let (true, Some(ty)) = (steps, &self_ty) {
                                    self.own_policies.insert(ty.clone());
                                }
                                if let Some(ty) = &self_ty {
                                    if returns_own_type(&f.sig, ty) {
                                        self.ctors.insert(format!("{ty}::{}", f.sig.ident), &f.block);
                                    }
                                }
                                self.add_fn(&f.sig, &f.block, path)
                            }
                            syn::ImplItem::Const(c) => {
                                self.add_assoc_const(self_ty.as_deref(), &c.ident, &c.expr)
                            }
                            _ => {}
                        }
                    }
                }
                Item::Trait(t) => {
                    let trait_name = t.ident.to_string();
                    for ti in &t.items {
                        match ti {
                            syn::TraitItem::Fn(f) => {
                                if let Some(b) = &f.default {
                                    self.add_fn(&f.sig, b, path);
                                }
                            }
                            syn::TraitItem::Const(c) => {
                                if let Some((_, e)) = &c.default {
                                    self.add_assoc_const(Some(&trait_name), &c.ident, e);
                                }
                            }
                            _ => {}
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
                Item::Use(u) => {
                    collect_use_roots(&u.tree, &mut self.imports);
                    collect_renames(&u.tree, &mut self.aliases);
                }
                Item::Type(t) => {
                    if let syn::Type::Path(p) = &*t.ty {
                        if let Some(last) = p.path.segments.last() {
                            if last.ident != t.ident {
                                self.aliases.insert(t.ident.to_string(), last.ident.to_string());
                            }
                        }
                    }
                }
                Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                    if let Some(name) = &m.ident {
                        self.macros.insert(name.to_string(), &m.mac);
                    }
                }
                _ => {}
            }
        }
    }

    /// An associated constant (of an `impl`, a trait impl, or a trait's
    /// default) under `Type::NAME`, which `Type::NAME` and `<Type as
    /// Trait>::NAME` read, and under its bare name unless a constant of
    /// that name is already known (a free `const NAME` is what a bare
    /// `NAME` means; `Self::NAME` falls back to it).
    fn add_assoc_const(&mut self, ty: Option<&str>, ident: &syn::Ident, expr: &'a Expr) {
        let name = ident.to_string();
        if let Some(ty) = ty {
            self.consts.insert(format!("{ty}::{name}"), expr);
        }
        self.consts.entry(name).or_insert(expr);
    }

    fn add_fn(&mut self, sig: &'a syn::Signature, block: &'a syn::Block, path: &mut Vec<String>) {
        // Items declared inside the body (a `const`, a helper `fn`, a
        // `macro_rules!`) are the file's too: a nested function is walked
        // and resolved like any other.
        let nested = nested_items(block);
        if !nested.is_empty() {
            path.push(sig.ident.to_string());
            for item in nested {
                self.collect(std::slice::from_ref(item), path);
            }
            path.pop();
        }
        let name = sig.ident.to_string();
        self.sigs.insert(name.clone(), sig);
        self.fns.insert(name, block);
    }

    /// The name `name` stands for: itself, or what an alias names.
    pub(super) fn unalias<'n>(&'n self, name: &'n str) -> &'n str {
        self.aliases.get(name).map_or(name, String::as_str)
    }

    /// What every function of the file sends, for client-wide policies
    /// (computed only when the file has one).
    pub(super) fn file_facts(&self) -> BodyFacts {
        let mut facts = BodyFacts::default();
        for block in self.fns.values() {
            merge_facts(&mut facts, &body_facts(*block));
        }
        facts
    }
}

/// The last segment of an `impl` block's type (`impl<T> a::Wrapper<T>` ->
/// `Wrapper`).
fn impl_type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// Whether a function of `impl ty` returns `Self` or `ty` (a constructor).
fn returns_own_type(sig: &syn::Signature, ty: &str) -> bool {
    match &sig.output {
        syn::ReturnType::Type(_, t) => impl_type_name(t).is_some_and(|n| n == "Self" || n == ty),
        syn::ReturnType::Default => false,
    }
}

/// `name::` preceded by a non-identifier character (so `retry::` does not
/// match inside `tokio_retry::`).
pub(super) fn mentions_crate(src: &str, name: &str) -> bool {
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

/// `use a::B as C`: `C` stands for `B` (`_` renames are not names).
fn collect_renames(tree: &syn::UseTree, aliases: &mut HashMap<String, String>) {
    match tree {
        syn::UseTree::Path(p) => collect_renames(&p.tree, aliases),
        syn::UseTree::Rename(r) if r.rename != "_" && r.rename != r.ident => {
            aliases.insert(r.rename.to_string(), r.ident.to_string());
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                collect_renames(t, aliases);
            }
        }
        _ => {}
    }
}

/// The items declared inside a function body, at any block depth, not
/// inside other items (those are reached through their own item).
pub(super) fn nested_items(block: &syn::Block) -> Vec<&Item> {
    struct Nested<'a>(Vec<&'a Item>);
    impl<'a> syn::visit::Visit<'a> for Nested<'a> {
        fn visit_item(&mut self, i: &'a Item) {
            self.0.push(i);
        }
    }
    let mut v = Nested(Vec::new());
    syn::visit::Visit::visit_block(&mut v, block);
    v.0
}

pub(crate) fn merge_facts(into: &mut BodyFacts, from: &BodyFacts) {
    into.methods.extend(from.methods.iter().cloned());
    into.reads.extend(from.reads.iter().cloned());
    into.write_lines.extend(from.write_lines.iter().cloned());
    into.idempotency_key |= from.idempotency_key;
    into.reads_retry_after |= from.reads_retry_after;
    into.uses_randomness |= from.uses_randomness;
    into.jitter_calls.extend(from.jitter_calls.iter().cloned());
    into.delay_from_policy |= from.delay_from_policy;
    into.method_gated |= from.method_gated;
    into.sends_request |= from.sends_request;
    into.has_continue |= from.has_continue;
    into.sleeps += from.sleeps;
    into.body_not_cloneable |= from.body_not_cloneable;
    into.resends_clones |= from.resends_clones;
    into.ops.extend(from.ops.iter().cloned());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(src: &str) -> (syn::File, Vec<String>) {
        let file = syn::parse_file(src).unwrap_or_else(|e| panic!("{e}"));
        (file, Vec::new())
    }

    #[test]
    fn constants_functions_and_use_roots_are_collected_from_every_level() {
        let (file, mut path) = index_of(
            "use backon::{ExponentialBuilder, Retryable};\nuse crate::net::client;\nconst TOP: u32 = 3;\n\
             mod inner { static DEEP: u64 = 9; fn helper() -> u32 { const LOCAL: u32 = 2; LOCAL } }\n\
             impl C { const ASSOC: u32 = 1; fn method(&self) {} }\n\
             trait T { fn provided(&self) {} fn required(&self); }\n",
        );
        let mut index = FileIndex::default();
        index.collect(&file.items, &mut path);
        let mut consts: Vec<&str> = index.consts.keys().map(String::as_str).collect();
        consts.sort_unstable();
        assert_eq!(consts, ["ASSOC", "C::ASSOC", "DEEP", "LOCAL", "TOP"]);
        let mut fns: Vec<&str> = index.fns.keys().map(String::as_str).collect();
        fns.sort_unstable();
        assert_eq!(fns, ["helper", "method", "provided"], "a trait method without a body is not a helper");
        assert!(index.imports.has("backon") && index.imports.has("net"), "{:?}", index.imports);
        assert!(path.is_empty(), "the module path is restored");
    }

    #[test]
    fn associated_constants_are_kept_by_type_and_a_free_one_keeps_the_bare_name() {
        let (file, mut path) = index_of(
            "impl A { const MAX: u32 = 1; }\nconst MAX: u32 = 2;\nimpl Policy for B { const MAX: u32 = 3; }\n\
             trait Policy { const MAX: u32 = 4; const NO_DEFAULT: u32; }\nimpl C { const ONLY: u32 = 5; }\n",
        );
        let mut index = FileIndex::default();
        index.collect(&file.items, &mut path);
        let value = |k: &str| index.consts.get(k).map(|e| quote::ToTokens::to_token_stream(e).to_string());
        assert_eq!(value("A::MAX").as_deref(), Some("1"));
        assert_eq!(value("MAX").as_deref(), Some("2"), "the free const, whatever the order");
        assert_eq!(value("B::MAX").as_deref(), Some("3"));
        assert_eq!(value("Policy::MAX").as_deref(), Some("4"), "a trait's default");
        assert_eq!(value("ONLY").as_deref(), Some("5"), "an associated const alone keeps its bare name");
        assert!(value("Policy::NO_DEFAULT").is_none() && value("NO_DEFAULT").is_none());
    }

    #[test]
    fn file_facts_merge_what_every_function_sends() {
        let (file, mut path) = index_of(
            "fn a(c: &Client) { c.post(\"/x\").send(); }\nfn b(c: &Client) { c.get(\"/y\").header(\"Idempotency-Key\", k).send(); }\n",
        );
        let mut index = FileIndex::default();
        index.collect(&file.items, &mut path);
        let facts = index.file_facts();
        assert!(facts.methods.contains("POST") && facts.methods.contains("GET"), "{:?}", facts.methods);
        assert!(facts.idempotency_key);
    }

    #[test]
    fn a_crate_is_mentioned_only_as_a_whole_path_segment() {
        assert!(mentions_crate("let s = retry::Fixed::from_millis(10);", "retry"));
        assert!(mentions_crate("retry::retry(s, op)", "retry"));
        assert!(!mentions_crate("tokio_retry::Retry::spawn(s, op)", "retry"));
        assert!(!mentions_crate("my_retry::x()", "retry"));
        assert!(!mentions_crate("fn retry() {}", "retry"));
    }

    #[test]
    fn merged_facts_accumulate() {
        let mut into = BodyFacts { sleeps: 1, ..BodyFacts::default() };
        let from = BodyFacts { sleeps: 2, reads_retry_after: true, ..BodyFacts::default() };
        merge_facts(&mut into, &from);
        assert_eq!(into.sleeps, 3);
        assert!(into.reads_retry_after && !into.idempotency_key);
    }
}
