//! The limits that keep the Rust analyzer's time and stack bounded, whatever
//! a pull request's `.rs` files contain.
//!
//! syn parses recursively, and every later pass over its tree (the visitors,
//! the printer behind spans and messages, even `Drop`) recurses once per
//! level of the tree. So the depth of the tree, not only the nesting of
//! brackets, decides whether a file can overflow the stack: 9,000 nested
//! `Vec<`, 50,000 `!` or 100,000 `&` build a tree as deep as a bracket tower
//! without a single bracket.
//!
//! [`check_and_keep`] bounds that depth *before* syn sees the file. It lexes the
//! file with proc-macro2's own tokenizer (iterative, and it knows strings,
//! raw strings, char literals and comments exactly) and computes, for every
//! token, an upper bound on how deep the tree around it can be:
//!
//! - every enclosing bracket group counts one level, plus the tokens that
//!   came before the group in its own run;
//! - a run is the tokens since the last point where the tree cannot keep
//!   nesting: a `;`, a `=>`, a `{ .. }` block followed by a new statement or
//!   item, and a `,` outside angle brackets and closure bars;
//! - every token of a run counts one level (a prefix operator, a `<`, a
//!   `.method()`, a `+ 1`, an `as u8` each deepen the tree by at most a
//!   level per token), except attributes (`#[..]`, `#![..]`, doc comments),
//!   which sit beside a node, not around it.
//!
//! The bound over-counts (`a::b::c` is flat, yet counts five), which only
//! ever means "not analysed, with a blocking note naming the file"; real code
//! stays far below [`MAX_DEPTH`] (measured on the repositories in
//! `eval/`: see docs/limits.md). Parsing and analysis then run on a thread
//! whose stack ([`ANALYSIS_STACK_BYTES`]) holds a tree of that depth with a
//! wide margin, so the limit holds by construction rather than by luck.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// The deepest syntax tree (by the bound described in the module docs) the
/// analyzer parses. Deeper files are not parsed; they get a blocking note.
pub(crate) const MAX_DEPTH: usize = 1_500;

/// Stack of every thread that parses or walks Rust syntax. Measured in a
/// debug build, the worst construct needs well under 40 KiB per level of
/// [`MAX_DEPTH`] across parsing, visiting, printing and dropping; the
/// reservation is virtual memory, touched only as deep as a file goes.
pub const ANALYSIS_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Where and how deep a file first goes past [`MAX_DEPTH`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep {
    /// 1-based line of the token that went past the limit.
    pub(crate) line: u32,
}

/// Idents after a `{ .. }` block that continue the same expression rather
/// than start a new statement or item.
const CONTINUES_AFTER_BLOCK: &[&str] = &["else", "as"];

/// The state of one token run inside one bracket group.
#[derive(Default)]
struct Run {
    /// Tokens since the last reset.
    len: usize,
    /// Unclosed `<` since the last reset (not reset by `,`: `A<B, C<D, ..`).
    angle: usize,
    /// A `|` was seen: commas may be closure parameters (`|a, b| |a, b| ..`).
    bars: bool,
    /// The previous token was a `{ .. }` group.
    after_block: bool,
    /// The previous token, when it was a joint punctuation mark (`-` of `->`).
    joint: Option<char>,
    /// Tokens of a possible attribute (`#`, `#!`) not counted yet: an
    /// attribute adds no depth (a doc comment is one), anything else does.
    attr: usize,
}

impl Run {
    fn reset(&mut self) {
        *self = Run::default();
    }
}

/// Whether `tokens` nest deeper than `limit` (the tests' view of [`check_and_keep`]).
#[cfg(test)]
fn check_tokens(tokens: TokenStream, limit: usize) -> Result<(), TooDeep> {
    check_and_keep(tokens, limit).map(drop)
}

/// One open group while checking: its remaining tokens, the depth it starts
/// at, its run, whether it is an attribute's brackets, and the tokens seen
/// so far with the group's delimiter and span, to rebuild it.
struct Frame {
    iter: proc_macro2::token_stream::IntoIter,
    base: usize,
    run: Run,
    is_attr: bool,
    seen: Vec<TokenTree>,
    group: Option<(Delimiter, proc_macro2::Span)>,
}

/// Checks that no part of `tokens` nests deeper than `limit`, without
/// recursion, and hands the tokens back, unchanged, when they pass.
/// The tokens are moved, not copied: iterating a shared stream would clone
/// every token of the file (and syn copies them once more), so each group is
/// taken apart while it is read and put together again as it closes.
pub(crate) fn check_and_keep(tokens: TokenStream, limit: usize) -> Result<TokenStream, TooDeep> {
    let frame = |iter, base, is_attr, group| Frame {
        iter,
        base,
        run: Run::default(),
        is_attr,
        seen: Vec::new(),
        group,
    };
    let mut stack: Vec<Frame> = vec![frame(tokens.into_iter(), 0, false, None)];
    loop {
        let Some(top) = stack.last_mut() else { return Ok(TokenStream::new()) };
        let Some(tt) = top.iter.next() else {
            let Some(done) = stack.pop() else { return Ok(TokenStream::new()) };
            let stream: TokenStream = done.seen.into_iter().collect();
            let Some((delimiter, span)) = done.group else { return Ok(stream) };
            let mut group = proc_macro2::Group::new(delimiter, stream);
            group.set_span(span);
            if let Some(outer) = stack.last_mut() {
                // The group just closed is one token of the outer run
                // (`after_block` was set when it opened).
                if !done.is_attr {
                    outer.run.len += 1;
                }
                outer.seen.push(TokenTree::Group(group));
            }
            continue;
        };
        let base = top.base;
        let run = &mut top.run;
        if run.after_block {
            let starts_new = match &tt {
                TokenTree::Ident(i) => !CONTINUES_AFTER_BLOCK.iter().any(|k| i == k),
                TokenTree::Punct(p) => p.as_char() == '#',
                _ => false,
            };
            if starts_new {
                run.reset();
            }
        }
        run.after_block = false;
        // `#`, `#!` then `[..]` is an attribute; `#` followed by anything else
        // counts after all.
        let attr_group =
            matches!(&tt, TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket) && run.attr > 0;
        match &tt {
            TokenTree::Punct(p) if p.as_char() == '#' && run.attr == 0 => {
                run.attr = 1;
                top.seen.push(tt);
                continue;
            }
            TokenTree::Punct(p) if p.as_char() == '!' && run.attr == 1 => {
                run.attr = 2;
                top.seen.push(tt);
                continue;
            }
            _ if attr_group => run.attr = 0,
            _ => {
                run.len += run.attr;
                run.attr = 0;
            }
        }
        let mut joint = None;
        match tt {
            TokenTree::Group(g) => {
                let depth = base + run.len + 1;
                if depth > limit {
                    return Err(TooDeep { line: line_of(&TokenTree::Group(g)) });
                }
                run.after_block = g.delimiter() == Delimiter::Brace;
                run.joint = None;
                let group = Some((g.delimiter(), g.span()));
                // Dropping the group first leaves its stream unshared, so
                // reading it moves the tokens instead of copying them.
                let inner = g.stream();
                drop(g);
                stack.push(frame(inner.into_iter(), depth, attr_group, group));
                continue;
            }
            TokenTree::Punct(ref p) => {
                let c = p.as_char();
                match c {
                    ';' => run.reset(),
                    ',' if run.angle == 0 && !run.bars => run.reset(),
                    '>' if run.joint == Some('=') => run.reset(),
                    _ => {
                        match c {
                            '<' => run.angle += 1,
                            // `->` is not a closing angle bracket.
                            '>' if run.joint != Some('-') => run.angle = run.angle.saturating_sub(1),
                            '|' => run.bars = true,
                            _ => {}
                        }
                        run.len += 1;
                    }
                }
                if p.spacing() == Spacing::Joint {
                    joint = Some(c);
                }
            }
            TokenTree::Ident(_) | TokenTree::Literal(_) => run.len += 1,
        }
        run.joint = joint;
        if base + run.len > limit {
            return Err(TooDeep { line: line_of(&tt) });
        }
        top.seen.push(tt);
    }
}

fn line_of(tt: &TokenTree) -> u32 {
    (tt.span().start().line as u32).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(src: &str, limit: usize) -> bool {
        check_tokens(src.parse().unwrap(), limit).is_ok()
    }

    /// Every token with its kind, text, spacing, delimiter and span, in order.
    fn flatten(tokens: TokenStream, out: &mut Vec<String>) {
        for tt in tokens {
            let (s, e) = (tt.span().start(), tt.span().end());
            let at = format!("{}:{}-{}:{}", s.line, s.column, e.line, e.column);
            match tt {
                TokenTree::Group(g) => {
                    out.push(format!("open {:?} {at}", g.delimiter()));
                    flatten(g.stream(), out);
                    out.push("close".into());
                }
                TokenTree::Punct(p) => out.push(format!("punct {} {:?} {at}", p.as_char(), p.spacing())),
                TokenTree::Ident(i) => out.push(format!("ident {i} {at}")),
                TokenTree::Literal(l) => out.push(format!("literal {l} {at}")),
            }
        }
    }

    #[test]
    fn the_checked_tokens_come_back_unchanged() {
        // Real code with attributes, doc comments, negative numbers, lifetimes,
        // raw strings and every delimiter: the kept stream is token for token,
        // span for span, the lexed one, and syn reads the same file from it.
        for src in [
            include_str!("bounds.rs"),
            include_str!("sites/resolve.rs"),
            include_str!("../../changeset/mod.rs"),
            "#![allow(x)]\n/// doc\nfn f<'a>(x: &'a [u8; 2]) -> i64 { let y = -1i64 - -2; r#\"raw\"#; #[cfg(test)] { y } }\n",
            "",
        ] {
            let lexed: TokenStream = src.parse().unwrap();
            let kept = check_and_keep(lexed.clone(), MAX_DEPTH).unwrap();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            flatten(lexed.clone(), &mut a);
            flatten(kept.clone(), &mut b);
            assert_eq!(a, b);
            assert_eq!(syn::parse2::<syn::File>(lexed).unwrap(), syn::parse2::<syn::File>(kept).unwrap());
        }
    }

    #[test]
    fn nesting_without_brackets_counts() {
        for (unit, tail) in
            [("!", "x"), ("&", "x"), ("*", "x"), ("return ", ""), ("a = ", "1"), ("|x| ", "0")]
        {
            let src = format!("fn f() {{ {}{tail}; }}", unit.repeat(200));
            assert!(!depth_ok(&src, 150), "{unit} x200 must exceed 150");
            assert!(depth_ok(&src, 1_000), "{unit} x200 fits in 1000");
        }
        let generics = format!("type T = {}u8{};", "Vec<".repeat(100), ">".repeat(100));
        assert!(!depth_ok(&generics, 150));
        let chain = format!("fn f() {{ x{}; }}", ".retry()".repeat(100));
        assert!(!depth_ok(&chain, 150));
    }

    #[test]
    fn commas_do_not_hide_nesting_inside_generics_or_closures() {
        let generics = format!("type T = {}u8{};", "HashMap<u8, ".repeat(100), ">".repeat(100));
        assert!(!depth_ok(&generics, 150), "commas inside <..> do not reset");
        let arrows = format!("type T = {}u8{};", "Vec<fn() -> ".repeat(100), ">".repeat(100));
        assert!(!depth_ok(&arrows, 150), "`->` does not close a `<`");
        let closures = format!("fn f() {{ {}0; }}", "|a, b| ".repeat(100));
        assert!(!depth_ok(&closures, 150), "commas between closure bars do not reset");
        let attrs = format!("fn f() {{ let x = {}x; }}", "#[a] !".repeat(200));
        assert!(!depth_ok(&attrs, 150), "attributes between operators do not hide them");
        let hashes = format!("fn f() {{ {}x; }}", "# !".repeat(200));
        assert!(!depth_ok(&hashes, 150), "a `#` that opens no attribute counts");
        let else_if = format!("fn f() {{ if a {{}} {} }}", "else if a {} ".repeat(100));
        assert!(!depth_ok(&else_if, 150), "an else-if chain nests");
    }

    #[test]
    fn strings_chars_and_comments_cannot_hide_code() {
        // A hand scan that treats `'"'`, `r"\"` or `/* " */` as opening a string
        // skipped what followed; the real lexer does not.
        let deep = format!("{}1{}", "(".repeat(300), ")".repeat(300));
        for prefix in ["let c = '\"';", "let s = r\"\\\";", "/* \" */"] {
            let src = format!("fn f() {{ {prefix} let x = {deep}; }}");
            assert!(!depth_ok(&src, 256), "{prefix} hid the nesting");
        }
    }

    #[test]
    fn flat_code_resets_and_stays_shallow() {
        let many_items = "fn a() -> Result<Vec<u8>, E> { Ok(vec![]) }\n".repeat(2_000);
        assert!(depth_ok(&many_items, 100));
        let many_stmts = format!("fn f() {{ {} }}", "let x = a.b(c).d::<u8>()?;\n".repeat(2_000));
        assert!(depth_ok(&many_stmts, 100));
        let table = format!("const T: [u8; 3000] = [{}];", "1, ".repeat(3_000));
        assert!(depth_ok(&table, 100));
        let arms = format!("fn f(c: char) {{ match c {{ {} _ => 0 }} }}", "'a' | 'b' => 1,\n".repeat(2_000));
        assert!(depth_ok(&arms, 100));
        let strings = format!("const S: &str = \"{}\"; // {}", "(".repeat(5_000), "[".repeat(5_000));
        assert!(depth_ok(&strings, 100));
        let docs =
            format!("{}\n{}fn f() {{}}", "//! module docs\n".repeat(2_000), "#[inline]\n".repeat(1_000));
        assert!(depth_ok(&docs, 100), "attributes and doc comments add no depth");
    }

    #[test]
    fn the_limit_names_the_line() {
        let src = format!("fn f() {{\n\n let x = {}1; }}", "!".repeat(2_000));
        assert_eq!(check_tokens(src.parse().unwrap(), 100), Err(TooDeep { line: 3 }));
    }
}
