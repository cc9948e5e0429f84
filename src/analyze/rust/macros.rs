//! The macro bodies the analyzer reads as code: `select!` and `join!`.
//!
//! syn leaves a macro's body as tokens, and an async client's retries often
//! sit inside one: nats.rs raised a tryhard `.retries(5)` to
//! `.retries(u32::MAX)` in a `tokio::select!` branch, and the gate did not
//! see it. These two macros take ordinary expressions, so their bodies are
//! parsed and put back as plain syntax with the original spans (line numbers
//! are unchanged):
//!
//! - `select! { PAT = FUT (, if COND)? => HANDLER, .. else => E }` (tokio's
//!   and futures', `select_biased!` too) becomes a block of one
//!   `if let PAT = FUT { HANDLER }` per branch (inside `if COND { .. }` when
//!   there is a precondition), then the `else`/`complete`/`default` handler.
//!   The branches sit side by side, not in an `else if` chain, so a select
//!   of many branches adds no depth (the depth bound of [`super::bounds`] was
//!   checked on the tokens and must still hold).
//! - `join!(A, B)` and `try_join!(A, B)` become the tuple `(A, B)`.
//!
//! A body that does not parse this way is left as it was. Other macros stay
//! tokens; the facts read from tokens (string literals, names) still see
//! them.

use proc_macro2::Span;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Stmt, Token};

/// Rewrites every `select!`/`join!` of the file, nested ones included.
/// `src` is the file's text: a file that names neither is not walked.
pub fn expand(file: &mut syn::File, src: &str) {
    if src.contains("select!") || src.contains("select_biased!") || src.contains("join!") {
        Expander.visit_file_mut(file);
    }
}

struct Expander;

impl VisitMut for Expander {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Macro(m) = e {
            if let Some(x) = expand_macro(&m.mac) {
                *e = x;
            }
        }
        // The new expression's own macros (a select in a handler) are next.
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let Stmt::Macro(m) = s {
            if let Some(x) = expand_macro(&m.mac) {
                *s = Stmt::Expr(x, m.semi_token);
            }
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
}

/// Which of the two shapes a macro path names, if any: `tokio::`,
/// `futures::` (or `futures_util::`) or a bare, imported name.
fn shape(path: &syn::Path) -> Option<Shape> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let (last, first) = (segs.last()?, segs.first()?);
    if segs.len() > 1 && !matches!(first.as_str(), "tokio" | "futures" | "futures_util") {
        return None;
    }
    match last.as_str() {
        "select" | "select_biased" => Some(Shape::Select),
        "join" | "try_join" => Some(Shape::Join),
        _ => None,
    }
}

enum Shape {
    Select,
    Join,
}

fn expand_macro(mac: &syn::Macro) -> Option<Expr> {
    let span = mac.path.segments.last().map_or_else(Span::call_site, |s| s.ident.span());
    match shape(&mac.path)? {
        Shape::Select => (|input: ParseStream| select_body(input, span)).parse2(mac.tokens.clone()).ok(),
        Shape::Join => {
            let elems = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(mac.tokens.clone()).ok()?;
            Some(Expr::Tuple(syn::ExprTuple { attrs: Vec::new(), paren_token: Default::default(), elems }))
        }
    }
}

/// Parses a select body into the block described in the module docs.
fn select_body(input: ParseStream, span: Span) -> syn::Result<Expr> {
    let mut stmts = Vec::new();
    // tokio's `biased;`
    if input.peek(syn::Ident) && input.peek2(Token![;]) {
        let word: syn::Ident = input.parse()?;
        if word != "biased" {
            return Err(syn::Error::new(word.span(), "not a select branch"));
        }
        input.parse::<Token![;]>()?;
    }
    while !input.is_empty() {
        let fallback = (input.peek(Token![else]) || input.peek(syn::Ident)) && input.peek2(Token![=>]);
        if fallback {
            // `else => ..` (tokio), `complete => ..` / `default => ..` (futures)
            input.step(|c| {
                c.token_tree().map(|(_, rest)| ((), rest)).ok_or_else(|| c.error("expected a word"))
            })?;
            input.parse::<Token![=>]>()?;
            let handler = handler(input)?;
            stmts.push(Stmt::Expr(handler, Some(Token![;](span))));
            continue;
        }
        let pat = Pat::parse_multi_with_leading_vert(input)?;
        let eq: Token![=] = input.parse()?;
        let fut = Expr::parse_without_eager_brace(input)?;
        let cond = if input.peek(Token![,]) && input.peek2(Token![if]) {
            input.parse::<Token![,]>()?;
            input.parse::<Token![if]>()?;
            Some(Expr::parse_without_eager_brace(input)?)
        } else {
            None
        };
        input.parse::<Token![=>]>()?;
        let handler = handler(input)?;
        let bind = Expr::Let(syn::ExprLet {
            attrs: Vec::new(),
            let_token: Token![let](span),
            pat: Box::new(pat),
            eq_token: eq,
            expr: Box::new(fut),
        });
        let branch = if_then(bind, handler, span);
        let branch = match cond {
            Some(cond) => if_then(cond, branch, span),
            None => branch,
        };
        stmts.push(Stmt::Expr(branch, None));
    }
    Ok(Expr::Block(syn::ExprBlock { attrs: Vec::new(), label: None, block: block(stmts) }))
}

/// A branch's handler and the comma after it (optional after a block, as in
/// a `match` arm).
fn handler(input: ParseStream) -> syn::Result<Expr> {
    let e: Expr = input.parse()?;
    if input.peek(Token![,]) {
        input.parse::<Token![,]>()?;
    } else if !input.is_empty() && !matches!(e, Expr::Block(_) | Expr::If(_) | Expr::Match(_) | Expr::Loop(_))
    {
        return Err(input.error("expected `,` after a select branch"));
    }
    Ok(e)
}

/// `if COND { BODY }`
fn if_then(cond: Expr, body: Expr, span: Span) -> Expr {
    Expr::If(syn::ExprIf {
        attrs: Vec::new(),
        if_token: Token![if](span),
        cond: Box::new(cond),
        then_branch: block(vec![Stmt::Expr(body, None)]),
        else_branch: None,
    })
}

fn block(stmts: Vec<Stmt>) -> syn::Block {
    syn::Block { brace_token: Default::default(), stmts }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    fn expanded(src: &str) -> String {
        let mut f = syn::parse_file(src).unwrap();
        expand(&mut f, src);
        f.to_token_stream().to_string()
    }

    #[test]
    fn a_select_becomes_one_if_let_per_branch_with_its_precondition_and_fallback() {
        let out = expanded(
            "fn f() { loop { tokio::select! { biased; Some(m) = rx.recv() => { go(m); } _ = tick(), if ready => continue, else => break, } } }",
        );
        assert!(out.contains("if let Some (m) = rx . recv () { { go (m) ; } }"), "{out}");
        assert!(out.contains("if ready { if let _ = tick () { continue } }"), "{out}");
        assert!(out.contains("break ;"), "{out}");
        assert!(!out.contains("select"), "{out}");
    }

    #[test]
    fn join_becomes_a_tuple_and_nested_selects_are_expanded_too() {
        let out = expanded(
            "async fn f() { let (a, b) = futures::join!(one(), two()); select! { x = a => select! { y = b => y, }, } }",
        );
        assert!(out.contains("let (a , b) = (one () , two ())"), "{out}");
        assert!(out.contains("if let x = a { { if let y = b { y } } }"), "{out}");
    }

    #[test]
    fn other_macros_and_bodies_that_do_not_parse_are_left_as_tokens() {
        for src in [
            "fn f() { mylib::select! { whatever here } }",
            "fn f() { tokio::select! { this is not => a branch } }",
            "fn f() { vec![1, 2]; }",
        ] {
            let out = expanded(src);
            assert!(out.contains('!'), "{src} -> {out}");
        }
    }

    #[test]
    fn lines_are_kept() {
        let src =
            "fn f() {\n    tokio::select! {\n        r = retry_fn(|| fetch()).retries(9) => r,\n    }\n}\n";
        let mut f = syn::parse_file(src).unwrap();
        expand(&mut f, src);
        let syn::Item::Fn(func) = &f.items[0] else { panic!() };
        let Stmt::Expr(Expr::Block(b), _) = &func.block.stmts[0] else { panic!("{:?}", func.block.stmts[0]) };
        let Stmt::Expr(Expr::If(i), _) = &b.block.stmts[0] else { panic!() };
        let Expr::Let(l) = &*i.cond else { panic!() };
        assert_eq!(l.expr.to_token_stream().into_iter().next().unwrap().span().start().line, 3);
    }
}
