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

use std::collections::HashMap;

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Stmt, Token};

/// Rewrites every `select!`/`join!` of the file, nested ones included.
/// `src` is the file's text: a file that names neither is not walked.
pub(crate) fn expand(file: &mut syn::File, src: &str) {
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

/// The most macro invocations expanded in one file, and the deepest a
/// macro's output is expanded again: past these the invocation stays tokens.
pub(crate) const MAX_EXPANSIONS: usize = 4096;
pub(crate) const MAX_EXPANSION_DEPTH: u32 = 8;

/// One `macro_rules!` definition: its rules as (matcher, transcriber).
#[derive(Clone)]
pub(crate) struct MacroRules {
    rules: Vec<(Vec<TokenTree>, TokenStream)>,
}

impl MacroRules {
    /// Reads the rules of a `macro_rules! name { (..) => { .. }; .. }` body;
    /// `None` when the body is not in that shape.
    pub(crate) fn of(mac: &syn::Macro) -> Option<MacroRules> {
        let mut rules = Vec::new();
        let mut it = mac.tokens.clone().into_iter().peekable();
        while let Some(tt) = it.next() {
            let TokenTree::Group(matcher) = tt else { return None };
            match (it.next(), it.next()) {
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == '=' && b.as_char() == '>' => {}
                _ => return None,
            }
            let Some(TokenTree::Group(body)) = it.next() else { return None };
            rules.push((matcher.stream().into_iter().collect(), body.stream()));
            if matches!(it.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
                it.next();
            }
        }
        (!rules.is_empty()).then_some(MacroRules { rules })
    }

    /// The tokens an invocation with `input` expands to: the first rule
    /// whose matcher takes the input, with its `$names` substituted. Rules
    /// with repetitions (`$(..)*`) are not expanded.
    ///
    /// The macro's own tokens take the invocation's `span`, so what they
    /// build is placed at the invocation; the arguments keep their lines.
    pub(crate) fn expand(&self, input: TokenStream, span: Span) -> Option<TokenStream> {
        let input: Vec<TokenTree> = input.into_iter().collect();
        self.rules.iter().find_map(|(matcher, body)| {
            let mut bound = HashMap::new();
            match_tokens(matcher, &input, &mut bound)?;
            transcribe(respan(body.clone(), span), &bound)
        })
    }
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut n = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                n.set_span(span);
                tt = TokenTree::Group(n);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// Matches `input` against `matcher`, binding `$name:frag` fragments.
fn match_tokens(
    matcher: &[TokenTree],
    input: &[TokenTree],
    bound: &mut HashMap<String, TokenStream>,
) -> Option<()> {
    let (mut m, mut i) = (0, 0);
    while m < matcher.len() {
        match &matcher[m] {
            TokenTree::Punct(p) if p.as_char() == '$' => {
                let (TokenTree::Ident(name), Some(TokenTree::Punct(colon)), Some(TokenTree::Ident(frag))) =
                    (matcher.get(m + 1)?, matcher.get(m + 2), matcher.get(m + 3))
                else {
                    return None;
                };
                if colon.as_char() != ':' {
                    return None;
                }
                m += 4;
                let take = if matches!(frag.to_string().as_str(), "ident" | "tt" | "literal" | "lifetime") {
                    1
                } else {
                    // Up to the next literal token of the matcher (a separator), or the end.
                    match matcher.get(m) {
                        None => input.len() - i.min(input.len()),
                        Some(sep) => {
                            let sep = sep.to_string();
                            input[i..].iter().position(|t| t.to_string() == sep)?
                        }
                    }
                };
                if take == 0 || i + take > input.len() {
                    return None;
                }
                bound.insert(name.to_string(), input[i..i + take].iter().cloned().collect());
                i += take;
            }
            TokenTree::Group(g) => {
                let TokenTree::Group(h) = input.get(i)? else { return None };
                if g.delimiter() != h.delimiter() {
                    return None;
                }
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let given: Vec<TokenTree> = h.stream().into_iter().collect();
                match_tokens(&inner, &given, bound)?;
                m += 1;
                i += 1;
            }
            literal => {
                if input.get(i)?.to_string() != literal.to_string() {
                    return None;
                }
                m += 1;
                i += 1;
            }
        }
    }
    (i == input.len()).then_some(())
}

/// The transcriber with every bound `$name` replaced by its tokens (kept
/// together as one group, as rustc keeps an `expr` fragment).
fn transcribe(body: TokenStream, bound: &HashMap<String, TokenStream>) -> Option<TokenStream> {
    let mut out = Vec::new();
    let mut it = body.into_iter().peekable();
    while let Some(tt) = it.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '$' => match it.next()? {
                TokenTree::Ident(name) => {
                    let tokens = bound.get(&name.to_string())?.clone();
                    let mut g = proc_macro2::Group::new(Delimiter::None, tokens);
                    g.set_span(name.span());
                    out.push(TokenTree::Group(g));
                }
                // `$(..)*` repetitions and `$crate` are not expanded.
                _ => return None,
            },
            TokenTree::Group(g) => {
                let mut n = proc_macro2::Group::new(g.delimiter(), transcribe(g.stream(), bound)?);
                n.set_span(g.span());
                out.push(TokenTree::Group(n));
            }
            other => out.push(other),
        }
    }
    Some(out.into_iter().collect())
}

/// Expands every invocation of the `macro_rules!` in `rules` (by name)
/// in `file`: in expression, statement and item position, the output's own
/// invocations too, up to [`MAX_EXPANSION_DEPTH`] and [`MAX_EXPANSIONS`].
pub(crate) fn expand_rules(file: &mut syn::File, rules: &HashMap<String, MacroRules>) {
    if rules.is_empty() {
        return;
    }
    let mut x = RulesExpander { rules, depth: 0, count: 0 };
    x.items(&mut file.items);
    x.visit_file_mut(file);
}

struct RulesExpander<'r> {
    rules: &'r HashMap<String, MacroRules>,
    depth: u32,
    count: usize,
}

impl RulesExpander<'_> {
    fn output(&mut self, mac: &syn::Macro) -> Option<TokenStream> {
        if self.count >= MAX_EXPANSIONS || self.depth >= MAX_EXPANSION_DEPTH {
            return None;
        }
        let ident = mac.path.get_ident()?;
        let out = self.rules.get(&ident.to_string())?.expand(mac.tokens.clone(), ident.span())?;
        self.count += 1;
        Some(out)
    }

    /// Item-position invocations, replaced by the items they expand to.
    fn items(&mut self, items: &mut Vec<syn::Item>) {
        let mut i = 0;
        while i < items.len() {
            let expanded = match &items[i] {
                syn::Item::Macro(m) if m.ident.is_none() => {
                    self.output(&m.mac).and_then(|t| syn::parse2::<syn::File>(t).ok())
                }
                _ => None,
            };
            match expanded {
                Some(f) => {
                    // The new items' own invocations: one level deeper.
                    let mut new = f.items;
                    self.depth += 1;
                    self.items(&mut new);
                    self.depth -= 1;
                    let n = new.len();
                    items.splice(i..=i, new);
                    i += n;
                }
                None => {
                    if let syn::Item::Mod(m) = &mut items[i] {
                        if let Some((_, inner)) = &mut m.content {
                            self.items(inner);
                        }
                    }
                    i += 1;
                }
            }
        }
    }
}

impl VisitMut for RulesExpander<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Macro(m) = e {
            if let Some(x) = self.output(&m.mac).and_then(|t| syn::parse2::<Expr>(t).ok()) {
                *e = x;
                self.depth += 1;
                self.visit_expr_mut(e);
                self.depth -= 1;
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let Stmt::Macro(m) = s {
            let parsed = self.output(&m.mac).and_then(|t| syn::Block::parse_within.parse2(t).ok());
            if let Some(stmts) = parsed {
                let semi = m.semi_token;
                *s = match <[Stmt; 1]>::try_from(stmts) {
                    Ok([Stmt::Expr(e, None)]) => Stmt::Expr(e, semi),
                    Ok([one]) => one,
                    Err(many) => Stmt::Expr(
                        Expr::Block(syn::ExprBlock { attrs: Vec::new(), label: None, block: block(many) }),
                        semi,
                    ),
                };
                self.depth += 1;
                self.visit_stmt_mut(s);
                self.depth -= 1;
                return;
            }
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        // Items declared in a block can be invocations too.
        let mut items = Vec::new();
        let mut positions = Vec::new();
        for (i, st) in b.stmts.iter().enumerate() {
            if let Stmt::Item(it @ syn::Item::Macro(m)) = st {
                if m.ident.is_none()
                    && m.mac.path.get_ident().is_some_and(|n| self.rules.contains_key(&n.to_string()))
                {
                    positions.push(i);
                    items.push(it.clone());
                }
            }
        }
        if !positions.is_empty() {
            self.items(&mut items);
            if items.iter().all(|i| !matches!(i, syn::Item::Macro(m) if m.ident.is_none())) {
                for i in positions.into_iter().rev() {
                    b.stmts.remove(i);
                }
                b.stmts.extend(items.into_iter().map(Stmt::Item));
            }
        }
        syn::visit_mut::visit_block_mut(self, b);
    }
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

    fn rules(src: &str) -> MacroRules {
        let f = syn::parse_file(src).unwrap();
        let syn::Item::Macro(m) = &f.items[0] else { panic!("not a macro") };
        MacroRules::of(&m.mac).expect("rules")
    }

    #[test]
    fn macro_rules_bodies_expand_with_their_arguments() {
        let r = rules(
            "macro_rules! p { () => { B::default() }; ($n:expr) => { B::default().with_max_times($n) }; }",
        );
        let none = r.expand(quote::quote!(), Span::call_site()).unwrap().to_string();
        assert_eq!(none, "B :: default ()");
        let one = r.expand(quote::quote!(N + 1), Span::call_site()).unwrap().to_string();
        assert!(one.contains("with_max_times (N + 1)"), "{one}");
        let two = rules("macro_rules! r { ($op:expr, $t:expr) => { ($op).retry($t) }; }");
        let out = two.expand(quote::quote!(|| get(a, b), 3), Span::call_site()).unwrap().to_string();
        assert!(out.contains("(|| get (a , b)) . retry (3)"), "{out}");
    }

    #[test]
    fn repetitions_and_unmatched_invocations_are_not_expanded() {
        let rep = rules("macro_rules! v { ($($x:expr),*) => { vec![$($x),*] }; }");
        assert!(rep.expand(quote::quote!(1, 2), Span::call_site()).is_none());
        let r = rules("macro_rules! p { (fast) => { 1 }; }");
        assert!(r.expand(quote::quote!(slow), Span::call_site()).is_none());
        assert!(r.expand(quote::quote!(fast), Span::call_site()).is_some());
    }

    #[test]
    fn invocations_expand_in_expression_statement_and_item_position() {
        let src = "macro_rules! p { () => { B::default().with_max_times(3) }; }
                   macro_rules! f { () => { fn made() { (|| get()).retry(p!()); } }; }
                   f!();
fn g() { let b = p!(); p!(); }
";
        let mut file = syn::parse_file(src).unwrap();
        let all = crate::analyze::rust::sites::macro_rules_of(&[&file]);
        expand_rules(&mut file, &all);
        let out = file.to_token_stream().to_string();
        assert!(out.contains("fn made ()"), "{out}");
        assert!(out.contains("let b = B :: default () . with_max_times (3)"), "{out}");
        assert!(
            out.contains("retry (B :: default () . with_max_times (3))"),
            "the output's own invocation: {out}"
        );
        assert!(out.contains("; B :: default ()"), "a statement: {out}");
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
