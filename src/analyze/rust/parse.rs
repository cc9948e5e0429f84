//! Parses Rust source with syn, refusing input that would overflow a
//! recursive parser, and turning every failure into a note with a location.

use proc_macro2::LineColumn;

/// Deeper bracket nesting than this is not parsed. Real code stays far below
/// it; 100,000 nested parentheses would otherwise overflow the stack.
pub const MAX_NESTING: usize = 256;

/// Why a file could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseFailure {
    TooDeep { line: u32, depth: usize },
    Syntax { line: u32, column: u32, message: String },
}

impl std::fmt::Display for ParseFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseFailure::TooDeep { line, depth } => write!(
                f,
                "line {line}: brackets nest deeper than {depth} levels; not parsed (limit {MAX_NESTING})"
            ),
            ParseFailure::Syntax { line, column, message } => {
                write!(f, "line {line}, column {column}: {message}")
            }
        }
    }
}

/// Parses a whole file.
pub fn parse_file(src: &str) -> Result<syn::File, ParseFailure> {
    check_nesting(src)?;
    syn::parse_file(src).map_err(|e| {
        let LineColumn { line, column } = e.span().start();
        ParseFailure::Syntax { line: line as u32, column: column as u32 + 1, message: e.to_string() }
    })
}

/// Rejects input whose brackets nest deeper than [`MAX_NESTING`]. It skips
/// string literals, chars and comments only roughly; that errs towards
/// counting more depth, which only ever means "not parsed, with a note".
fn check_nesting(src: &str) -> Result<(), ParseFailure> {
    let bytes = src.as_bytes();
    let mut depth = 0usize;
    let mut line = 1u32;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(ParseFailure::TooDeep { line, depth });
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    } else if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
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
    fn brackets_in_strings_and_comments_do_not_count() {
        let src = format!("// {}\nfn f() {{ let s = \"{}\"; }}\n", "(".repeat(1000), "[".repeat(1000));
        assert!(parse_file(&src).is_ok());
    }
}
