//! Parses Rust source with syn, refusing input whose syntax tree could be
//! deeper than [`bounds::MAX_DEPTH`] (see [`bounds`]), turning every
//! failure into a note with a location, and reading the bodies of `select!`
//! and `join!` as code ([`super::macros`]).

use proc_macro2::LineColumn;

use super::bounds;

/// Why a file could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParseFailure {
    TooDeep { line: u32 },
    Syntax { line: u32, column: u32, message: String },
}

impl std::fmt::Display for ParseFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseFailure::TooDeep { line } => write!(
                f,
                "line {line}: brackets, operators, generics, closures or method chains nest deeper than the {} levels retrygate analyses; not parsed",
                bounds::MAX_DEPTH
            ),
            ParseFailure::Syntax { line, column, message } => {
                write!(f, "line {line}, column {column}: {message}")
            }
        }
    }
}

/// Parses a whole file. Call it on a thread with
/// [`bounds::ANALYSIS_STACK_BYTES`] of stack: the depth check bounds the
/// tree, the stack must hold it.
pub(crate) fn parse_file(src: &str) -> Result<syn::File, ParseFailure> {
    // Lexed once: the depth check and syn read the same tokens.
    let body = without_bom_and_shebang(src);
    let tokens: proc_macro2::TokenStream = body.parse().map_err(|e: proc_macro2::LexError| {
        let LineColumn { line, column } = e.span().start();
        ParseFailure::Syntax { line: line as u32, column: column as u32 + 1, message: e.to_string() }
    })?;
    let tokens = bounds::check_and_keep(tokens, bounds::MAX_DEPTH)
        .map_err(|t| ParseFailure::TooDeep { line: t.line })?;
    let mut file: syn::File = syn::parse2(tokens).map_err(|e: syn::Error| {
        let LineColumn { line, column } = e.span().start();
        ParseFailure::Syntax { line: line as u32, column: column as u32 + 1, message: e.to_string() }
    })?;
    super::macros::expand(&mut file, body);
    Ok(file)
}

/// What `syn::parse_file` parses of a file: without a byte-order mark, and
/// without a `#!` first line that is not an inner attribute (`#![..]`). The
/// shebang's newline stays, so line numbers match the file's.
fn without_bom_and_shebang(src: &str) -> &str {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    match src.strip_prefix("#!") {
        Some(rest) if !rest.trim_start().starts_with('[') => src.find('\n').map_or("", |i| &src[i..]),
        _ => src,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_nesting_is_refused_without_recursion() {
        let src = format!("fn f() {{ let x = {}1{}; }}", "(".repeat(100_000), ")".repeat(100_000));
        match parse_file(&src) {
            Err(ParseFailure::TooDeep { line: 1, .. }) => {}
            other => panic!("expected TooDeep, got {other:?}"),
        }
    }

    #[test]
    fn syntax_errors_carry_a_location() {
        let err = parse_file("fn main() {\n    let x = ;\n}\n").unwrap_err();
        match &err {
            ParseFailure::Syntax { line: 2, .. } => {}
            other => panic!("expected a syntax error on line 2, got {other:?}"),
        }
        assert!(err.to_string().starts_with("line 2, column"), "{err}");
    }

    #[test]
    fn a_shebang_and_a_bom_are_skipped_and_lines_still_match() {
        let f = parse_file("\u{feff}#!/usr/bin/env run-cargo-script\nfn main() {}\n").unwrap();
        assert_eq!(f.items.len(), 1);
        let err = parse_file("#!/usr/bin/env x\nfn main() {\n    let x = ;\n}\n").unwrap_err();
        assert!(matches!(err, ParseFailure::Syntax { line: 3, .. }), "{err:?}");
        assert!(
            parse_file("#![allow(dead_code)]\nfn f() {}\n").is_ok(),
            "an inner attribute is not a shebang"
        );
        let lex = parse_file("fn f() {\n  let s = \"unterminated;\n}\n").unwrap_err();
        assert!(matches!(lex, ParseFailure::Syntax { line: 2, .. }), "{lex:?}");
    }

    #[test]
    fn brackets_in_strings_and_comments_do_not_count() {
        let src = format!("// {}\nfn f() {{ let s = \"{}\"; }}\n", "(".repeat(1000), "[".repeat(1000));
        assert!(parse_file(&src).is_ok());
    }
}
