//! A retry count written into a struct literal that replaced the type's
//! default (`procedure: ProcedureConfig::default()` ->
//! `procedure: ProcedureConfig { max_retry_times: 12, .. }`): the base's
//! value is the one `impl Default for ProcedureConfig` writes, wherever in
//! the workspace that impl is. Compared with it, a higher count is reported
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
    pub(crate) field: String,
    pub(crate) value: f64,
    pub(crate) line: u32,
}

/// Every struct-literal field of `file` named as a retry count
/// ([`is_retry_count_name`]) whose value is a number.
pub(crate) fn literal_counts(file: &syn::File) -> Vec<LiteralCount> {
    struct V(Vec<LiteralCount>);
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
            if let Some(ty) = s.path.segments.last().map(|x| x.ident.to_string()) {
                for f in &s.fields {
                    let syn::Member::Named(name) = &f.member else { continue };
                    let field = name.to_string();
                    if !is_retry_count_name(&field) {
                        continue;
                    }
                    if let Some((value, line)) = super::count_argument::number(&f.expr) {
                        self.0.push(LiteralCount { ty: ty.clone(), field, value, line });
                    }
                }
            }
            syn::visit::visit_expr_struct(self, s);
        }
    }
    let mut v = V(Vec::new());
    v.visit_file(file);
    v.0
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
    let mut change = Change::new(
        Kind::RetryCountRaised,
        &CHECK,
        format!(
            "`{}` set to {} in a `{}` literal that replaced `{}::default()`, whose `{}` is {} ({at}); no retry whose attempt count retrygate computes reads it, so the attempts it allows were not checked; a maintainer checks which retry reads it",
            c.field, c.value, c.ty, c.ty, c.field, default
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
        let c = LiteralCount { ty: "Jobs".into(), field: "max_retry_times".into(), value: 12.0, line: 1 };
        assert!(decide("src/a.rs", &c, 3.0, "src/jobs.rs:3").is_some());
        assert!(decide("src/a.rs", &c, 12.0, "src/jobs.rs:3").is_none());
    }
}
