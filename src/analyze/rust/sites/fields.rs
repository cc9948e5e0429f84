//! What a crate sets its struct fields to, by field name, so a count read
//! as `self.config.max_retries` is the value the crate gives that field.
//!
//! A project's own retry settings usually live in a config struct: the
//! default is a struct literal in `impl Default` or a constructor
//! (`max_retries: 3` or `max_retries: DEFAULT_MAX_RETRIES`), a
//! `#[serde(default = "fn")]` function, or an `#[arg(default_value_t = ..)]` attribute. The
//! retry reads the field somewhere else. Fields are matched by name within
//! the files modelled together, and also kept under `Type.field` (the
//! struct a literal or attribute belongs to, `Self` read as the impl's
//! type): a read whose receiver's type is known (`p: &HttpPolicy` ..
//! `p.max_attempts`) takes that type's values only, so another struct's
//! field of the same name (a login lock-out's `max_attempts`) does not make
//! it unknown; [`super::super::eval::Env`] takes a field's
//! value only when every place that sets it agrees, so a field also set
//! from run-time input stays unknown. Test code sets fields to anything and
//! is not read.

use std::collections::HashMap;

use syn::visit::Visit;
use syn::{Expr, Item};

use super::resolve::tail_expr;

/// Struct-literal (and serde default) values by field, and attribute
/// defaults written as numbers, by field.
pub(super) type Finished<'a> = (HashMap<String, Vec<&'a Expr>>, HashMap<String, Vec<f64>>);

/// The field values of some files.
#[derive(Default)]
pub(super) struct FieldValues<'a> {
    /// Struct-literal values by field name.
    pub(super) exprs: HashMap<String, Vec<&'a Expr>>,
    /// `#[serde(default = "path")]`: field name -> the default function's name.
    pub(super) default_fns: Vec<(String, String)>,
    /// Attribute defaults written as numbers.
    pub(super) numbers: HashMap<String, Vec<f64>>,
    /// The type of the `impl` block being visited, for `Self { .. }`.
    impl_ty: Option<String>,
}

/// The key of field `field` of struct `ty` ([`FieldValues`] keeps each
/// value under it and under the bare field name).
pub(crate) fn typed_key(ty: &str, field: &str) -> String {
    format!("{ty}.{field}")
}

impl<'a> FieldValues<'a> {
    pub(super) fn collect(&mut self, items: &'a [Item]) {
        for item in items {
            self.visit_item(item);
        }
    }

    /// The values, with each `serde(default)` function read as its tail
    /// expression (`fns` are the functions of the files, by name).
    pub(super) fn finish(mut self, fns: &HashMap<String, &'a syn::Block>) -> Finished<'a> {
        for (field, f) in std::mem::take(&mut self.default_fns) {
            if let Some(e) = fns.get(&f).and_then(|b| tail_expr(b)) {
                self.exprs.entry(field).or_default().push(e);
            }
        }
        self.impl_ty = None;
        (self.exprs, self.numbers)
    }

    fn field_attrs(&mut self, ty: &str, field: &syn::Field) {
        let Some(bare) = field.ident.as_ref().map(|i| i.to_string()) else { return };
        // Under the bare name and under the struct's, as literals are.
        for name in [typed_key(ty, &bare), bare] {
            self.field_attrs_as(&name, field);
        }
    }

    /// [`Self::field_attrs`] for one key.
    fn field_attrs_as(&mut self, name: &str, field: &syn::Field) {
        let name = name.to_string();
        for a in &field.attrs {
            let p = a.path();
            if p.is_ident("serde") {
                let _ = a.parse_nested_meta(|meta| {
                    if meta.path.is_ident("default") && meta.input.peek(syn::Token![=]) {
                        let s: syn::LitStr = meta.value()?.parse()?;
                        if let Some(f) = s.value().rsplit("::").next() {
                            self.default_fns.push((name.clone(), f.to_string()));
                        }
                    } else if meta.input.peek(syn::Token![=]) {
                        let _: Expr = meta.value()?.parse()?;
                    }
                    Ok(())
                });
            } else if p.is_ident("arg") {
                let _ = a.parse_nested_meta(|meta| {
                    if !meta.input.peek(syn::Token![=]) {
                        return Ok(());
                    }
                    let v: Expr = meta.value()?.parse()?;
                    let wanted = meta.path.is_ident("default_value_t") || meta.path.is_ident("default_value");
                    if let (true, Some(n)) = (wanted, literal_number(&v)) {
                        self.numbers.entry(name.clone()).or_default().push(n);
                    }
                    Ok(())
                });
            }
        }
    }
}

/// `5`, `"5"`, `2.5`: a number written as a literal or a string of one.
fn literal_number(e: &Expr) -> Option<f64> {
    let Expr::Lit(l) = e else { return None };
    match &l.lit {
        syn::Lit::Int(i) => i.base10_digits().parse().ok(),
        syn::Lit::Float(f) => f.base10_parse().ok(),
        syn::Lit::Str(s) => s.value().trim().parse().ok(),
        _ => None,
    }
}

fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let p = a.path();
        p.segments.last().is_some_and(|s| s.ident == "test")
            || (p.is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

impl<'a> Visit<'a> for FieldValues<'a> {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        if !is_test_attr(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        if !is_test_attr(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_item_struct(&mut self, s: &'a syn::ItemStruct) {
        let ty = s.ident.to_string();
        for f in &s.fields {
            self.field_attrs(&ty, f);
        }
        syn::visit::visit_item_struct(self, s);
    }

    fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let outer = std::mem::replace(&mut self.impl_ty, ty);
        syn::visit::visit_item_impl(self, i);
        self.impl_ty = outer;
    }

    fn visit_expr_struct(&mut self, e: &'a syn::ExprStruct) {
        let named = e.path.segments.last().map(|s| s.ident.to_string());
        let ty = match named.as_deref() {
            Some("Self") => self.impl_ty.clone(),
            _ => named,
        };
        for fv in &e.fields {
            if let syn::Member::Named(n) = &fv.member {
                // `Config { max_retries, .. }` (shorthand) names a local, not a value.
                if fv.colon_token.is_some() {
                    let field = n.to_string();
                    if let Some(ty) = &ty {
                        self.exprs.entry(typed_key(ty, &field)).or_default().push(&fv.expr);
                    }
                    self.exprs.entry(field).or_default().push(&fv.expr);
                }
            }
        }
        syn::visit::visit_expr_struct(self, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(src: &str) -> (HashMap<String, Vec<String>>, HashMap<String, Vec<f64>>) {
        let file = syn::parse_file(src).unwrap_or_else(|e| panic!("{e}"));
        let mut fv = FieldValues::default();
        fv.collect(&file.items);
        let mut fns = HashMap::new();
        for item in &file.items {
            if let Item::Impl(i) = item {
                for ii in &i.items {
                    if let syn::ImplItem::Fn(f) = ii {
                        fns.insert(f.sig.ident.to_string(), &f.block);
                    }
                }
            }
        }
        let (exprs, numbers) = fv.finish(&fns);
        let exprs = exprs
            .into_iter()
            .map(|(k, v)| (k, v.iter().map(|e| quote::ToTokens::to_token_stream(e).to_string()).collect()))
            .collect();
        (exprs, numbers)
    }

    #[test]
    fn literals_serde_defaults_and_arg_defaults_are_read_and_test_code_is_not() {
        let (exprs, numbers) = values(
            "#[derive(Deserialize, Parser)]\n\
             struct Config {\n\
                 #[serde(default = \"Config::default_retries\")] retries: u32,\n\
                 #[arg(long, default_value_t = 5)] attempts: u32,\n\
                 #[arg(long, default_value = \"250\")] delay_ms: u64,\n\
                 timeout: u64,\n\
             }\n\
             impl Config { fn default_retries() -> u32 { 4 } }\n\
             impl Default for Config { fn default() -> Self { Config { retries: 4, attempts: 5, delay_ms: 250, timeout: TIMEOUT } } }\n\
             fn build(timeout: u64) -> Config { Config { timeout, ..Default::default() } }\n\
             #[cfg(test)] mod tests { fn t() -> Config { Config { retries: 99, ..Default::default() } } }\n",
        );
        assert_eq!(exprs["retries"], ["4", "4"], "the literal and the serde default function");
        assert_eq!(exprs["timeout"], ["TIMEOUT"], "a shorthand field names a local, not a value");
        assert_eq!(numbers["attempts"], [5.0]);
        assert_eq!(numbers["delay_ms"], [250.0]);
    }

    #[test]
    fn values_are_also_kept_under_their_struct() {
        let (exprs, numbers) = values(
            "struct Login { #[arg(default_value_t = 5)] max_attempts: u32 }\n\
             impl Default for Http { fn default() -> Self { Self { max_attempts: 3 } } }\n\
             fn lockout() -> Login { Login { max_attempts: 5 } }\n",
        );
        assert_eq!(exprs["max_attempts"], ["3", "5"], "every struct's under the bare name");
        assert_eq!(exprs["Http.max_attempts"], ["3"], "`Self` is the impl's type");
        assert_eq!(exprs["Login.max_attempts"], ["5"]);
        assert_eq!(numbers["Login.max_attempts"], [5.0]);
        assert!(!numbers.contains_key("Http.max_attempts"));
    }
}
