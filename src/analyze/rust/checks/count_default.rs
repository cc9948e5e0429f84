//! A retry count written over the type's default where the value is built
//! (`procedure: ProcedureConfig::default()` ->
//! `procedure: ProcedureConfig { max_retry_times: 12, .. }`, or
//! `settings.max_retries = 12;` on a local built by `Settings::default()`,
//! or `Settings::default().with_retries(12)`, a setter of the type whose
//! body assigns the field): the base's value is the one `impl Default for
//! ProcedureConfig` writes, wherever in the workspace that impl is. Compared with it, a higher count is reported
//! as [`super::count_unlinked`] reports a raised named count; an impl that
//! cannot be found or read decides nothing.

use serde_json::json;
use syn::visit::Visit;

use super::count_unlinked::{is_retry_count_name, unlinked_severity, CHECK};
use super::Change;
use crate::finding::Kind;

/// A number given to a retry-count field in a struct literal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LiteralCount {
    /// The struct's name (last path segment).
    pub(crate) ty: String,
    /// The field; empty for a setter until its body is read
    /// ([`setter_field`]).
    pub(crate) field: String,
    pub(crate) value: f64,
    pub(crate) line: u32,
    /// How the number was written over the default.
    pub(crate) form: Form,
}

/// How a count was written over a type's default.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Form {
    /// `Ty { field: 12, .. }`.
    Literal,
    /// `value.field = 12;` on a local built as a `Ty`.
    Assigned,
    /// `.setter(12)` on a `Ty` (`Ty::default().with_retries(12)`).
    Setter(String),
}

/// Every retry count (a field named as one, [`is_retry_count_name`]) of
/// `file` written as a number over a struct's value: in a struct literal,
/// assigned to a field of a local whose type the function knows, or given
/// to a one-argument method named for a count called on such a value (a
/// setter, whose field is read from its body later).
pub(crate) fn literal_counts(file: &syn::File) -> Vec<LiteralCount> {
    let mut v = Counts { out: Vec::new(), locals: std::collections::HashMap::new() };
    v.visit_file(file);
    v.out
}

/// The visitor of [`literal_counts`]: the counts, and the locals of the
/// function being read with the struct each was built as.
struct Counts {
    out: Vec<LiteralCount>,
    locals: std::collections::HashMap<String, String>,
}

impl Counts {
    /// The struct a value is, when written so: `Ty::default()`, `Ty::new(..)`,
    /// `<Ty as Default>::default()`, `Ty { .. }`, a local built as one, or
    /// a setter chained on one (`Ty::default().with_x(1)`).
    fn type_of(&self, e: &syn::Expr) -> Option<String> {
        match e {
            syn::Expr::Struct(s) => s.path.segments.last().map(|x| x.ident.to_string()),
            syn::Expr::Call(c) => {
                let syn::Expr::Path(p) = &*c.func else { return None };
                let n = p.path.segments.len();
                let ctor = p.path.segments.last()?.ident.to_string();
                if !matches!(ctor.as_str(), "default" | "new") {
                    return None;
                }
                let ty = match &p.qself {
                    Some(q) => match &*q.ty {
                        syn::Type::Path(t) => t.path.segments.last()?.ident.to_string(),
                        _ => return None,
                    },
                    None if n >= 2 => p.path.segments[n - 2].ident.to_string(),
                    None => return None,
                };
                ty.starts_with(|c: char| c.is_ascii_uppercase()).then_some(ty)
            }
            syn::Expr::Path(p) => p.path.get_ident().and_then(|i| self.locals.get(&i.to_string()).cloned()),
            syn::Expr::MethodCall(m) if m.args.len() == 1 => self.type_of(&m.receiver),
            syn::Expr::Paren(p) => self.type_of(&p.expr),
            _ => None,
        }
    }

    /// Reads a function body with its own locals.
    fn in_function(&mut self, f: impl FnOnce(&mut Self)) {
        let outer = std::mem::take(&mut self.locals);
        f(self);
        self.locals = outer;
    }
}

impl<'ast> Visit<'ast> for Counts {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.in_function(|v| syn::visit::visit_item_fn(v, f));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.in_function(|v| syn::visit::visit_impl_item_fn(v, f));
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        syn::visit::visit_local(self, l);
        let (pat, annotated) = match &l.pat {
            syn::Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
            p => (p, None),
        };
        let syn::Pat::Ident(id) = pat else { return };
        let from_type = annotated.and_then(|t| match t {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        });
        let ty = from_type.or_else(|| l.init.as_ref().and_then(|i| self.type_of(&i.expr)));
        match ty {
            Some(ty) => self.locals.insert(id.ident.to_string(), ty),
            None => self.locals.remove(&id.ident.to_string()),
        };
    }

    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        if let Some(ty) = s.path.segments.last().map(|x| x.ident.to_string()) {
            for f in &s.fields {
                let syn::Member::Named(name) = &f.member else { continue };
                let field = name.to_string();
                if !is_retry_count_name(&field) {
                    continue;
                }
                if let Some((value, line)) = super::count_argument::number(&f.expr) {
                    self.out.push(LiteralCount { ty: ty.clone(), field, value, line, form: Form::Literal });
                }
            }
        }
        syn::visit::visit_expr_struct(self, s);
    }

    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        if let syn::Expr::Field(f) = &*a.left {
            if let (syn::Member::Named(name), Some(ty)) = (&f.member, self.type_of(&f.base)) {
                let field = name.to_string();
                if is_retry_count_name(&field) && matches!(&*f.base, syn::Expr::Path(_)) {
                    if let Some((value, line)) = super::count_argument::number(&a.right) {
                        self.out.push(LiteralCount { ty, field, value, line, form: Form::Assigned });
                    }
                }
            }
        }
        syn::visit::visit_expr_assign(self, a);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if m.args.len() == 1 {
            let number = m.args.first().and_then(super::count_argument::number);
            let setter = m.method.to_string();
            // A setter named for the count (`with_retries`, `set_max_attempts`):
            // a library builder's own setters (`with_max_times`) are its sites'.
            let named = is_retry_count_name(&setter);
            if let (true, Some((value, line)), Some(ty)) = (named, number, self.type_of(&m.receiver)) {
                self.out.push(LiteralCount {
                    ty,
                    field: String::new(),
                    value,
                    line,
                    form: Form::Setter(setter),
                });
            }
        }
        syn::visit::visit_expr_method_call(self, m);
    }
}

/// The field setter `name` of `impl ty` in `file` assigns its argument to
/// (`fn with_retries(mut self, n: u32) -> Self { self.max_retries = n;
/// self }`), when that field is named as a retry count.
pub(crate) fn setter_field(file: &syn::File, ty: &str, name: &str) -> Option<String> {
    file.items.iter().find_map(|item| {
        let syn::Item::Impl(imp) = item else { return None };
        let self_ty = match &*imp.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        if imp.trait_.is_some() || self_ty.as_deref() != Some(ty) {
            return None;
        }
        imp.items.iter().find_map(|ii| {
            let syn::ImplItem::Fn(f) = ii else { return None };
            if f.sig.ident != name {
                return None;
            }
            let param = f.sig.inputs.iter().find_map(|a| match a {
                syn::FnArg::Typed(t) => match &*t.pat {
                    syn::Pat::Ident(i) => Some(i.ident.to_string()),
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            })?;
            let field = assigned_field(&f.block, &param)?;
            is_retry_count_name(&field).then_some(field)
        })
    })
}

/// The field of `self` a block assigns `param` to (`self.f = param`, or
/// `Self { f: param, ..self }`).
fn assigned_field(block: &syn::Block, param: &str) -> Option<String> {
    struct Find<'p>(&'p str, Option<String>);
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            if let (syn::Expr::Field(f), syn::Expr::Path(v)) = (&*a.left, &*a.right) {
                let on_self = matches!(&*f.base, syn::Expr::Path(p) if p.path.is_ident("self"));
                if let (true, syn::Member::Named(n)) = (on_self, &f.member) {
                    if v.path.is_ident(self.0) && self.1.is_none() {
                        self.1 = Some(n.to_string());
                    }
                }
            }
            syn::visit::visit_expr_assign(self, a);
        }

        fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
            for fv in &s.fields {
                let given = matches!(&fv.expr, syn::Expr::Path(v) if v.path.is_ident(self.0));
                if let (true, syn::Member::Named(n), None) = (given, &fv.member, &self.1) {
                    self.1 = Some(n.to_string());
                }
            }
            syn::visit::visit_expr_struct(self, s);
        }
    }
    let mut v = Find(param, None);
    v.visit_block(block);
    v.1
}

/// Whether the base text built `ty` from its default (`Ty::default()`,
/// `<Ty as Default>::default()`) and wrote no `field` of its own.
pub(crate) fn base_took_default(base: &str, ty: &str, field: &str) -> bool {
    let called =
        base.contains(&format!("{ty}::default()")) || base.contains(&format!("<{ty} as Default>::default()"));
    called && !crate::analyze::rust::program::names_word(base, field)
}

/// The value `impl Default for ty` in `file` gives `field`, with its line:
/// the `ty { .. }` or `Self { .. }` literal `default()` returns.
pub(crate) fn default_of(file: &syn::File, ty: &str, field: &str) -> Option<(f64, u32)> {
    file.items.iter().find_map(|item| {
        let syn::Item::Impl(imp) = item else { return None };
        let is_default =
            imp.trait_.as_ref().and_then(|(_, p, _)| p.segments.last()).is_some_and(|s| s.ident == "Default");
        let self_ty = match &*imp.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        if !is_default || self_ty.as_deref() != Some(ty) {
            return None;
        }
        imp.items.iter().find_map(|ii| {
            let syn::ImplItem::Fn(f) = ii else { return None };
            if f.sig.ident != "default" {
                return None;
            }
            let tail = f.block.stmts.last()?;
            let syn::Stmt::Expr(syn::Expr::Struct(lit), None) = tail else { return None };
            let named = lit.path.segments.last().map(|s| s.ident.to_string());
            if named.as_deref() != Some(ty) && named.as_deref() != Some("Self") {
                return None;
            }
            lit.fields.iter().find_map(|fv| match &fv.member {
                syn::Member::Named(n) if n == field => super::count_argument::number(&fv.expr),
                _ => None,
            })
        })
    })
}

/// A literal count above the default it replaced.
pub(crate) fn decide(path: &str, c: &LiteralCount, default: f64, at: &str) -> Option<Change> {
    if c.value <= default {
        return None;
    }
    let how = match &c.form {
        Form::Literal => format!("in a `{}` literal that replaced `{}::default()`", c.ty, c.ty),
        Form::Assigned => format!("by an assignment to a `{}` that was `{}::default()`", c.ty, c.ty),
        Form::Setter(s) => format!("by `.{s}({})` on a `{}` that was `{}::default()`", c.value, c.ty, c.ty),
    };
    let mut change = Change::new(
        Kind::RetryCountRaised,
        &CHECK,
        format!(
            "`{}` set to {} {how}, whose `{}` is {} ({at}); no retry whose attempt count retrygate computes reads it, so the attempts it allows were not checked; a maintainer checks which retry reads it",
            c.field, c.value, c.field, default
        ),
    );
    change.severity = unlinked_severity(&c.field, path);
    change.base = Some(json!({"value": default, "from": format!("{}::default()", c.ty)}));
    change.head = Some(json!({"value": c.value}));
    Some(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_counts_and_defaults_are_read_from_the_tree() {
        let head: syn::File = syn::parse_str(
            "fn d() -> O { O { jobs: Jobs { max_retry_times: 12, retry_delay: 5 }, name: 3 } }",
        )
        .unwrap();
        let got = literal_counts(&head);
        assert_eq!(got.len(), 1);
        assert_eq!(
            (got[0].ty.as_str(), got[0].field.as_str(), got[0].value),
            ("Jobs", "max_retry_times", 12.0)
        );
        let def: syn::File = syn::parse_str(
            "impl Default for Jobs {\n    fn default() -> Self {\n        Self { max_retry_times: 3, retry_delay: 5 }\n    }\n}\nimpl Default for Other { fn default() -> Self { Self { max_retry_times: 9 } } }",
        )
        .unwrap();
        assert_eq!(default_of(&def, "Jobs", "max_retry_times"), Some((3.0, 3)));
        assert_eq!(default_of(&def, "Jobs", "retry_delay"), Some((5.0, 3)));
        assert_eq!(default_of(&def, "Missing", "max_retry_times"), None);
    }

    #[test]
    fn only_a_literal_that_replaced_the_default_is_compared() {
        assert!(base_took_default("jobs: Jobs::default(),", "Jobs", "max_retry_times"));
        assert!(!base_took_default("jobs: Jobs { max_retry_times: 3 },", "Jobs", "max_retry_times"));
        assert!(!base_took_default("jobs: other(),", "Jobs", "max_retry_times"));
        let c = LiteralCount {
            ty: "Jobs".into(),
            field: "max_retry_times".into(),
            value: 12.0,
            line: 1,
            form: Form::Literal,
        };
        assert!(decide("src/a.rs", &c, 3.0, "src/jobs.rs:3").is_some());
        assert!(decide("src/a.rs", &c, 12.0, "src/jobs.rs:3").is_none());
    }

    fn counts(src: &str) -> Vec<(String, String, f64, Form)> {
        let file: syn::File = syn::parse_str(src).unwrap();
        literal_counts(&file).into_iter().map(|c| (c.ty, c.field, c.value, c.form)).collect()
    }

    #[test]
    fn a_count_assigned_to_a_typed_local_is_read_with_its_type() {
        let got = counts(
            "fn a() { let mut s = Settings::default(); s.max_retries = 10; }\n\
             fn b() { let mut s: Settings = load(); s.retry_attempts = 7; s.timeout_ms = 9; }\n\
             fn c() { let mut s = <Jobs as Default>::default(); s.max_retry_times = 4; }\n",
        );
        assert_eq!(
            got,
            [
                ("Settings".into(), "max_retries".into(), 10.0, Form::Assigned),
                ("Settings".into(), "retry_attempts".into(), 7.0, Form::Assigned),
                ("Jobs".into(), "max_retry_times".into(), 4.0, Form::Assigned),
            ]
        );
        assert!(
            counts("fn a(s: &mut Settings) { s.max_retries = 10; }").is_empty(),
            "a parameter is not built here"
        );
        assert!(counts("fn a() { let mut s = load(); s.max_retries = 10; }").is_empty(), "no type");
        assert!(
            counts("fn a() { let mut s = Settings::default(); }\nfn b() { s.max_retries = 10; }").is_empty(),
            "a local is its own function's"
        );
    }

    #[test]
    fn a_count_given_to_a_setter_is_read_and_its_field_comes_from_the_setter() {
        let got = counts(
            "fn a() { let s = Settings::default().with_retries(10); let t = Settings::new().with_max_times(9); }\n\
             fn b() { let s = Settings::default(); let s = s.with_timeout(5).set_attempts(6); }\n",
        );
        assert_eq!(
            got,
            [
                ("Settings".into(), String::new(), 10.0, Form::Setter("with_retries".into())),
                ("Settings".into(), String::new(), 6.0, Form::Setter("set_attempts".into())),
            ],
            "a setter not named for a count is a library's or another setting"
        );
        let def: syn::File = syn::parse_str(
            "impl Settings {\n    pub fn with_retries(mut self, n: u32) -> Self { self.http_retries = n; self }\n    \
             pub fn set_attempts(self, k: u32) -> Self { Self { max_attempts: k, ..self } }\n    \
             pub fn with_timeout(mut self, n: u64) -> Self { self.timeout_ms = n; self }\n}\n\
             impl Tuning for Other { fn with_retries(mut self, n: u32) -> Self { self.retries = n; self } }\n",
        )
        .unwrap();
        assert_eq!(setter_field(&def, "Settings", "with_retries").as_deref(), Some("http_retries"));
        assert_eq!(setter_field(&def, "Settings", "set_attempts").as_deref(), Some("max_attempts"));
        assert_eq!(setter_field(&def, "Settings", "with_timeout"), None, "not a count");
        assert_eq!(
            setter_field(&def, "Other", "with_retries"),
            None,
            "a trait's method is not the type's setter"
        );
        assert_eq!(setter_field(&def, "Settings", "missing"), None);
    }

    #[test]
    fn the_message_says_how_the_default_was_overridden() {
        let c = LiteralCount {
            ty: "Settings".into(),
            field: "http_retries".into(),
            value: 10.0,
            line: 4,
            form: Form::Setter("with_retries".into()),
        };
        let change = decide("src/app.rs", &c, 3.0, "src/config.rs:9").expect("a raise");
        assert!(change.message.contains("`.with_retries(10)` on a `Settings`"), "{}", change.message);
        let assigned = LiteralCount { form: Form::Assigned, ..c };
        assert!(
            decide("src/app.rs", &assigned, 3.0, "x").is_some_and(|c| c.message.contains("an assignment"))
        );
        assert!(decide("src/app.rs", &assigned, 10.0, "x").is_none(), "not above the default");
    }
}
