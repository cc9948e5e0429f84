//! Which tree-sitter grammar reads a path, and parsing with it.

use tree_sitter::{Language, Parser, Tree};

/// A language read as a syntax tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Grammar {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    /// Read by the operation model only (`reads_library_sites` is false).
    Ruby,
    Php,
    CSharp,
    Kotlin,
}

impl Grammar {
    /// The grammar of `path`, by its extension; `None` for the languages
    /// still read by tokens only (and for `.d.ts` declarations, which hold
    /// no values).
    pub(crate) fn of_path(path: &str) -> Option<Grammar> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".d.ts") {
            return None;
        }
        let ext = lower.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "py" | "pyi" => Grammar::Python,
            "js" | "mjs" | "cjs" | "jsx" => Grammar::JavaScript,
            "ts" | "mts" | "cts" => Grammar::TypeScript,
            "tsx" => Grammar::Tsx,
            "go" => Grammar::Go,
            "java" => Grammar::Java,
            "rb" => Grammar::Ruby,
            "php" => Grammar::Php,
            "cs" => Grammar::CSharp,
            "kt" | "kts" => Grammar::Kotlin,
            _ => return None,
        })
    }

    /// [`Grammar::of_path`] for the library-settings analyzer: only the
    /// grammars it reads.
    pub(crate) fn of_library_path(path: &str) -> Option<Grammar> {
        Grammar::of_path(path).filter(|g| g.reads_library_sites())
    }

    /// The name library files use for it (`languages:` in rules/libraries).
    pub(crate) fn library_language(self) -> &'static str {
        match self {
            Grammar::Python => "python",
            Grammar::JavaScript => "javascript",
            Grammar::TypeScript | Grammar::Tsx => "typescript",
            Grammar::Go => "go",
            Grammar::Java => "java",
            Grammar::Ruby => "ruby",
            Grammar::Php => "php",
            Grammar::CSharp => "csharp",
            Grammar::Kotlin => "kotlin",
        }
    }

    /// Whether the library-settings analyzer reads this grammar (the
    /// languages whose value evaluation it was written for); the operation
    /// model reads every grammar.
    pub(crate) fn reads_library_sites(self) -> bool {
        !matches!(self, Grammar::Ruby | Grammar::Php | Grammar::CSharp | Grammar::Kotlin)
    }

    fn language(self) -> Language {
        match self {
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
            Grammar::Java => tree_sitter_java::LANGUAGE.into(),
            Grammar::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Grammar::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Grammar::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
            Grammar::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
        }
    }

    /// The syntax tree of `text`, or why there is none. tree-sitter
    /// recovers from syntax errors (the tree holds `ERROR` nodes); `None`
    /// only when the grammar could not be loaded or parsing gave up.
    pub(crate) fn parse(self, text: &str) -> Result<Tree, String> {
        let mut parser = Parser::new();
        parser
            .set_language(&self.language())
            .map_err(|e| format!("the {} grammar did not load ({e})", self.library_language()))?;
        parser.parse(text, None).ok_or_else(|| "the parser gave up".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads_and_parses_its_language() {
        for (g, code) in [
            (Grammar::Python, "x = f(a=1)\n"),
            (Grammar::JavaScript, "const x = f({ a: 1 });\n"),
            (Grammar::TypeScript, "const x: number = f({ a: 1 });\n"),
            (Grammar::Tsx, "const x = <A b={1} />;\n"),
            (Grammar::Go, "package p\nconst X = 1\n"),
            (Grammar::Java, "class A { int x = 1; }\n"),
            (Grammar::Ruby, "x = f(a: 1)\n"),
            (Grammar::Php, "<?php $x = f(1);\n"),
            (Grammar::CSharp, "class A { int x = 1; }\n"),
            (Grammar::Kotlin, "val x = f(1)\n"),
        ] {
            let t = g.parse(code).unwrap();
            assert!(!t.root_node().has_error(), "{g:?}: {}", t.root_node().to_sexp());
        }
    }

    #[test]
    fn paths_pick_their_grammar() {
        assert_eq!(Grammar::of_path("a/b.py"), Some(Grammar::Python));
        assert_eq!(Grammar::of_path("a/B.TSX"), Some(Grammar::Tsx));
        assert_eq!(Grammar::of_path("types/x.d.ts"), None);
        assert_eq!(Grammar::of_path("a.rb"), Some(Grammar::Ruby));
        assert_eq!(Grammar::of_library_path("a.rb"), None, "the library analyzer reads the first five only");
        assert_eq!(Grammar::of_path("a/B.kt"), Some(Grammar::Kotlin));
        assert_eq!(Grammar::of_path("a.rs"), None);
    }
}
