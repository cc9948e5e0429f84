//! Where the test code of one Rust file is: the line ranges of items that
//! only exist in test builds (`#[cfg(test)]`, `#![cfg(test)]`) and of test
//! functions (`#[test]`, `#[tokio::test]`, any `#[...::test]`).
//!
//! [`crate::analyze::testcode`] uses these ranges to turn findings inside
//! them into notes that do not block. This module only reads attributes; it
//! knows nothing about retries.

use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Attribute, Item, Meta, Token};

use super::parse::{parse_file, ParseFailure};

/// One item that is test code, with the lines it spans (attributes included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TestItem {
    /// How a person would name it: `#[cfg(test)] mod tests`, `#[tokio::test] fn retries`.
    pub(crate) what: String,
    pub(crate) line: u32,
    pub(crate) end_line: u32,
}

/// The test items of a file, outermost first; a `#[test]` function inside a
/// `#[cfg(test)]` module is covered by the module and not listed again.
pub(crate) fn test_items(src: &str) -> Result<Vec<TestItem>, ParseFailure> {
    let file = parse_file(src)?;
    if file.attrs.iter().any(is_cfg_test) {
        let end_line = src.lines().count().max(1) as u32;
        return Ok(vec![TestItem { what: "#![cfg(test)] file".into(), line: 1, end_line }]);
    }
    let mut v = Finder { found: Vec::new() };
    v.visit_file(&file);
    Ok(v.found)
}

/// How the file `src` declares the out-of-line module `name` (`mod name;`):
/// `Some(true)` under `#[cfg(test)]`, `Some(false)` plainly, `None` not at
/// all (or the file does not parse). Only top-level declarations count.
pub(crate) fn declares_module(src: &str, name: &str) -> Option<bool> {
    let file = parse_file(src).ok()?;
    file.items.iter().find_map(|item| match item {
        Item::Mod(m) if m.content.is_none() && m.ident == name => Some(m.attrs.iter().any(is_cfg_test)),
        _ => None,
    })
}

struct Finder {
    found: Vec<TestItem>,
}

impl Finder {
    /// Records `item` when its attributes make it test code; returns whether it did.
    fn record(&mut self, attrs: &[Attribute], kind: &str, name: String, span: proc_macro2::Span) -> bool {
        let mark = if attrs.iter().any(is_cfg_test) {
            "#[cfg(test)]".to_string()
        } else if kind == "fn" {
            match attrs.iter().find_map(test_attribute) {
                Some(a) => format!("#[{a}]"),
                None => return false,
            }
        } else {
            return false;
        };
        let what = if name.is_empty() { format!("{mark} {kind}") } else { format!("{mark} {kind} {name}") };
        self.found.push(TestItem { what, line: span.start().line as u32, end_line: span.end().line as u32 });
        true
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_item(&mut self, item: &'ast Item) {
        let (attrs, kind, name): (&[Attribute], &str, String) = match item {
            Item::Fn(f) => (&f.attrs, "fn", f.sig.ident.to_string()),
            Item::Mod(m) => (&m.attrs, "mod", m.ident.to_string()),
            Item::Impl(i) => (&i.attrs, "impl", String::new()),
            Item::Const(c) => (&c.attrs, "const", c.ident.to_string()),
            Item::Static(s) => (&s.attrs, "static", s.ident.to_string()),
            Item::Struct(s) => (&s.attrs, "struct", s.ident.to_string()),
            Item::Enum(e) => (&e.attrs, "enum", e.ident.to_string()),
            Item::Trait(t) => (&t.attrs, "trait", t.ident.to_string()),
            Item::Macro(m) => (&m.attrs, "macro", String::new()),
            Item::Use(u) => (&u.attrs, "use", String::new()),
            _ => return syn::visit::visit_item(self, item),
        };
        // Inside a test item everything is test code already.
        if !self.record(attrs, kind, name, item.span()) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !self.record(&f.attrs, "fn", f.sig.ident.to_string(), f.span()) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
}

/// `#[cfg(P)]` where `P` holds only when compiling tests.
fn is_cfg_test(attr: &Attribute) -> bool {
    attr.path().is_ident("cfg") && attr.parse_args::<Meta>().is_ok_and(|m| requires_test(&m))
}

/// Whether a cfg predicate can only be true in a test build: `test`,
/// `all(.., test, ..)`, or `any(..)` whose every branch requires it.
/// `not(test)` and `any(test, feature = "x")` are not test-only; a feature
/// whose name says test (`feature = "test-util"`) is.
fn requires_test(meta: &Meta) -> bool {
    match meta {
        Meta::Path(p) => p.is_ident("test"),
        Meta::List(list) => {
            let Ok(args) = list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) else {
                return false;
            };
            if list.path.is_ident("all") {
                args.iter().any(requires_test)
            } else if list.path.is_ident("any") {
                !args.is_empty() && args.iter().all(requires_test)
            } else {
                false
            }
        }
        // `feature = "test-util"`: a feature named for tests (tokio's
        // `test-util`, `testing`, `test-support`) compiles the item only
        // for tests that ask for it.
        Meta::NameValue(nv) => {
            nv.path.is_ident("feature")
                && matches!(&nv.value, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })
                    if s.value().to_ascii_lowercase().contains("test"))
        }
    }
}

/// `test` or `tokio::test` (any path whose last segment is `test`) for a
/// test-function attribute.
fn test_attribute(attr: &Attribute) -> Option<String> {
    let path = attr.path();
    let last = path.segments.last()?;
    if last.ident != "test" {
        return None;
    }
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    Some(names.join("::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(src: &str) -> Vec<(String, u32, u32)> {
        test_items(src).unwrap().into_iter().map(|t| (t.what, t.line, t.end_line)).collect()
    }

    #[test]
    fn cfg_test_modules_and_test_functions_with_their_lines() {
        let src = "\
fn send() {}

#[cfg(test)]
mod tests {
    #[test]
    fn inner() {}
}

#[tokio::test]
async fn retries() {
    send();
}

#[test]
fn plain() {}
";
        assert_eq!(
            ranges(src),
            [
                ("#[cfg(test)] mod tests".to_string(), 3, 7),
                ("#[tokio::test] fn retries".to_string(), 9, 12),
                ("#[test] fn plain".to_string(), 14, 15),
            ]
        );
    }

    #[test]
    fn test_functions_inside_ordinary_modules_and_impls_are_found() {
        let src = "\
mod net {
    #[async_std::test]
    async fn a() {}
    fn b() {}
}
impl Client {
    #[cfg(test)]
    fn fake() -> Self { todo!() }
    fn real() {}
}
";
        assert_eq!(
            ranges(src),
            [("#[async_std::test] fn a".to_string(), 2, 3), ("#[cfg(test)] fn fake".to_string(), 7, 8)]
        );
    }

    #[test]
    fn only_predicates_that_require_a_test_build_count() {
        let src = "\
#[cfg(all(test, feature = \"net\"))]
mod a {}
#[cfg(any(test, feature = \"fake\"))]
mod b {}
#[cfg(not(test))]
mod c {}
#[cfg(feature = \"test\")]
mod d {}
#[cfg(any(test, all(test, unix)))]
mod e {}
#[tested]
fn f() {}
#[test_case(1)]
fn g() {}
#[cfg(any(test, feature = \"test-util\"))]
mod h {}
#[cfg(feature = \"net\")]
mod i {}
";
        let found: Vec<String> = ranges(src).into_iter().map(|r| r.0).collect();
        assert_eq!(
            found,
            ["#[cfg(test)] mod a", "#[cfg(test)] mod d", "#[cfg(test)] mod e", "#[cfg(test)] mod h"]
        );
    }

    #[test]
    fn an_inner_cfg_test_makes_the_whole_file_test_code() {
        let src = "#![cfg(test)]\nuse super::*;\n\nfn helper() {}\n";
        assert_eq!(ranges(src), [("#![cfg(test)] file".to_string(), 1, 4)]);
    }

    #[test]
    fn out_of_line_module_declarations() {
        let lib = "mod client;\n#[cfg(test)]\nmod tests;\n#[cfg(not(test))]\nmod live;\nmod inline { mod tests; }\n";
        assert_eq!(declares_module(lib, "tests"), Some(true));
        assert_eq!(declares_module(lib, "client"), Some(false));
        assert_eq!(declares_module(lib, "live"), Some(false));
        assert_eq!(
            declares_module(lib, "inline"),
            None,
            "a module with a body is not an out-of-line declaration"
        );
        assert_eq!(declares_module(lib, "missing"), None);
        assert_eq!(
            declares_module("mod tests", "tests"),
            None,
            "a file that does not parse declares nothing"
        );
    }

    #[test]
    fn a_file_without_tests_has_none_and_bad_syntax_is_an_error() {
        assert!(ranges("fn main() { let test = 1; }\n").is_empty());
        assert!(test_items("fn main( {").is_err());
    }
}

/// The example this module's doc used to carry (the items are internal,
/// so it runs here rather than as a doctest).
#[cfg(test)]
mod example {
    #[test]
    fn a_cfg_test_module_spans_its_attribute_to_its_brace() {
        let src = "fn send() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
        let items = super::test_items(src).unwrap();
        assert_eq!((items[0].line, items[0].end_line), (2, 6));
        assert_eq!(items[0].what, "#[cfg(test)] mod tests");
    }
}
