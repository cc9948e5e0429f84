//! Syntax trees for `inside: {scope: call}`: which calls a match is an
//! argument of, read from a tree-sitter parse of one side of a file, so
//! that `total=9` in `Pool(total=9), Retry(total=2)` is not taken for an
//! argument of `Retry(...)` because the two share a line.
//!
//! Only Python and Go are parsed. A file is parsed the first time a rule
//! with that scope reaches it after the prefilter, and a side that parses
//! with errors has no tree: the rule then keeps to its line window.

use tree_sitter::{Parser, Tree};

use crate::analyze::rules::lang::Language;

/// One side of a file as a syntax tree, for finding enclosing calls.
pub(super) struct CallTree {
    tree: Tree,
    /// The node kind of a call in the language (`call`, `call_expression`).
    call: &'static str,
}

/// Parses `text` written in `lang`; `None` for a language without a
/// grammar here, or when the parse has errors (a half-read file would place
/// arguments in the wrong call).
pub(super) fn parse(lang: Language, text: &str) -> Option<CallTree> {
    let (language, call): (tree_sitter::Language, _) = match lang {
        Language::Python => (tree_sitter_python::LANGUAGE.into(), "call"),
        Language::Go => (tree_sitter_go::LANGUAGE.into(), "call_expression"),
        _ => return None,
    };
    let mut parser = Parser::new();
    parser.set_language(&language).ok()?;
    let tree = parser.parse(text, None)?;
    (!tree.root_node().has_error()).then_some(CallTree { tree, call })
}

impl CallTree {
    /// The calls whose argument list holds byte `offset`, innermost first,
    /// each as the byte range of its callee up to and including the opening
    /// bracket of its arguments (`urllib3.Retry(`).
    pub(super) fn calls_around(&self, offset: usize) -> Vec<(usize, usize)> {
        let Some(mut node) = self.tree.root_node().descendant_for_byte_range(offset, offset) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Some(parent) = node.parent() {
            if node.kind() == "argument_list" && parent.kind() == self.call {
                out.push((parent.start_byte(), node.start_byte() + 1));
            }
            node = parent;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn callees(lang: Language, text: &str, at: &str) -> Vec<String> {
        let tree = parse(lang, text).expect("parses");
        let offset = text.find(at).expect("marker");
        tree.calls_around(offset).into_iter().map(|(a, b)| text[a..b].to_string()).collect()
    }

    #[test]
    fn a_python_keyword_belongs_to_its_own_call_not_to_its_neighbour() {
        let text = "a = HTTPAdapter(pool=Pool(total=9), max_retries=Retry(total=2))\n";
        assert_eq!(callees(Language::Python, text, "total=9"), ["Pool(", "HTTPAdapter("]);
        assert_eq!(callees(Language::Python, text, "total=2"), ["Retry(", "HTTPAdapter("]);
        assert!(callees(Language::Python, "total = 3\n", "total").is_empty());
    }

    #[test]
    fn a_go_argument_names_the_calls_around_it() {
        let text = "package p\n\nfunc f() {\n\tretry.Do(ctx, retry.WithMaxRetries(3, b), op)\n}\n";
        assert_eq!(callees(Language::Go, text, "3, b"), ["retry.WithMaxRetries(", "retry.Do("]);
    }

    #[test]
    fn a_file_that_does_not_parse_or_has_no_grammar_has_no_tree() {
        assert!(parse(Language::Python, "def f(:\n").is_none());
        assert!(parse(Language::Java, "class A {}").is_none());
    }
}
