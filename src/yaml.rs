//! Checks every YAML document retrygate parses (config, replay scenarios,
//! rule packs) before serde_yaml sees it.
//!
//! Two things are refused:
//!
//! - **deep flow nesting** (`agents: [[[[…`): serde_yaml's parser takes time
//!   quadratic in it (40,000 levels take seconds; 500,000 never finish),
//!   although it then refuses anything past 128 levels anyway. The check
//!   counts every `[` and `{` against every `]` and `}` in the raw text,
//!   without trying to skip strings or comments: a hand scan that skips them
//!   can be fooled into skipping real brackets, while counting them all only
//!   over-counts. [`MAX_FLOW_DEPTH`] leaves room for brackets in strings.
//! - **tags** (`mode: !advisory`): serde_yaml reads a tag as an enum
//!   variant, so `!advisory` would quietly mean `advisory`. No retrygate file
//!   needs a tag; a tagged value is an error naming the tag and its line.

use std::fmt;

/// Deepest net bracket nesting accepted (see the module docs). serde_yaml
/// itself refuses values nested past 128 levels.
pub(crate) const MAX_FLOW_DEPTH: usize = 100;

/// Why a YAML document was refused before parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// 1-based line of the problem.
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Checks `text` for deep flow nesting, then for tags. A document that does
/// not parse at all passes: the caller's own parse reports that error with
/// its line.
pub(crate) fn check(text: &str) -> Result<(), Refusal> {
    check_depth(text)?;
    check_tags(text)
}

fn check_depth(text: &str) -> Result<(), Refusal> {
    let mut depth = 0usize;
    let mut line = 1usize;
    for b in text.bytes() {
        match b {
            b'\n' => line += 1,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    return Err(Refusal {
                        line,
                        message: format!(
                            "brackets nest deeper than {MAX_FLOW_DEPTH} levels (every `[` and `{{` counts, also inside strings and comments); not parsed: flatten the value"
                        ),
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn check_tags(text: &str) -> Result<(), Refusal> {
    let Ok(root) = serde_yaml::from_str::<serde_yaml::Value>(text) else { return Ok(()) };
    check_tags_of(text, &root)
}

/// [`check`] and the parse in one, for a caller that wants the value: the
/// same refusals, and the document parsed once instead of twice (a large
/// document costs its parse, not its check). The inner error is
/// serde_yaml's, for the caller to report with its line.
pub(crate) fn parse_checked(text: &str) -> Result<Result<serde_yaml::Value, serde_yaml::Error>, Refusal> {
    check_depth(text)?;
    let parsed = serde_yaml::from_str::<serde_yaml::Value>(text);
    if let Ok(root) = &parsed {
        check_tags_of(text, root)?;
    }
    Ok(parsed)
}

/// The tag refusal of [`check`] on a document `text` already parsed as `root`.
fn check_tags_of(text: &str, root: &serde_yaml::Value) -> Result<(), Refusal> {
    use serde_yaml::Value;
    // Iterative: the depth check bounds flow nesting, not block nesting.
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        match v {
            Value::Tagged(t) => {
                let tag = t.tag.to_string();
                let line = text.find(&tag).map_or(1, |at| text[..at].matches('\n').count() + 1);
                return Err(Refusal {
                    line,
                    message: format!(
                        "the YAML tag `{tag}` is not accepted (a tag can turn a plain value into another); write the value without it"
                    ),
                });
            }
            Value::Sequence(items) => stack.extend(items.iter()),
            Value::Mapping(m) => {
                for (k, v) in m {
                    stack.push(k);
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_refused_fast_with_its_line() {
        let text = format!("mode: enforce\nagents: {}1{}\n", "[".repeat(500_000), "]".repeat(500_000));
        let start = std::time::Instant::now();
        let err = check(&text).unwrap_err();
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(err.line, 2);
        assert!(err.to_string().contains("nest deeper than 100 levels"), "{err}");
        let maps = format!("a: {}1{}\n", "{b: ".repeat(200), "}".repeat(200));
        assert!(check(&maps).is_err());
    }

    #[test]
    fn brackets_in_strings_cannot_hide_nesting() {
        // A scanner that skips quotes would skip the brackets after `it's`.
        let text = format!("a: [it's, {}1{}]\n", "[".repeat(200), "]".repeat(200));
        assert!(check(&text).is_err());
        let comment = format!("# \"\na: {}1{}\n", "[".repeat(200), "]".repeat(200));
        assert!(check(&comment).is_err());
    }

    #[test]
    fn ordinary_documents_pass() {
        assert!(check("mode: enforce\nagents: { logins: [\"Copilot\", \"*[bot]\"] }\n").is_ok());
        assert!(check("rules:\n  - id: x\n    pattern: 'retries\\s*=\\s*([0-9]+)'\n").is_ok());
        assert!(check("message: wow !nice\n").is_ok(), "a `!` inside a plain scalar is text");
        assert!(check("not: [valid").is_ok(), "syntax errors are the caller's to report");
    }

    #[test]
    fn parse_checked_refuses_what_check_refuses_and_parses_the_rest() {
        for text in ["# config\nmode: !advisory\n", &format!("a: {}1{}\n", "[".repeat(200), "]".repeat(200))]
        {
            assert_eq!(parse_checked(text).unwrap_err(), check(text).unwrap_err());
        }
        let v = parse_checked("a: [1, 2]\n").unwrap().unwrap();
        assert_eq!(v["a"][1], serde_yaml::Value::from(2));
        assert!(parse_checked("not: [valid").unwrap().is_err(), "the parse error is the caller's");
    }

    #[test]
    fn tags_are_refused_with_their_line() {
        let err = check("# config\nmode: !advisory\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("`!advisory` is not accepted"), "{err}");
        assert!(check("a:\n  - b: [1, {c: !x 2}]\n").is_err(), "at any depth");
    }
}
