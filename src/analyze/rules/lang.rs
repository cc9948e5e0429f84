//! Which language a file is written in, judged from its name, and the lexical
//! syntax (comments, string quotes) the masker needs for that language.
//!
//! A file whose name matches no language here (Markdown, plain text, images)
//! is never read by a rule: rules name languages, never "any file".

use std::path::Path;

/// The languages rules can name in `languages:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// `.py`.
    Python,
    /// `.js`, `.mjs`, `.cjs`, `.jsx`.
    JavaScript,
    /// `.ts`, `.mts`, `.cts`, `.tsx` (not `.d.ts` declarations).
    TypeScript,
    /// `.go`.
    Go,
    /// `.java`.
    Java,
    /// `.kt`, `.kts`.
    Kotlin,
    /// `.rb`.
    Ruby,
    /// `.yml`, `.yaml`.
    Yaml,
    /// `.json`.
    Json,
    /// `.toml`.
    Toml,
    /// Java `.properties`.
    Properties,
    /// `.ini`, `.cfg`.
    Ini,
    /// `.env`, `.env.*`.
    Env,
    /// `Dockerfile`, `Dockerfile.*`, `Containerfile`.
    Dockerfile,
    /// nginx `.conf`.
    Nginx,
    /// `.sh`, `.bash`.
    Shell,
}

/// How comments and string literals look in a language.
#[derive(Debug, Clone, Copy)]
pub struct Syntax {
    /// Openers of comments that run to the end of the line.
    pub(crate) line_comments: &'static [&'static [u8]],
    /// A line comment opener counts only at the start of a line or after
    /// whitespace (YAML, shell: `a#b` is not a comment).
    pub(crate) comment_needs_space: bool,
    pub(crate) block_comment: Option<(&'static [u8], &'static [u8])>,
    /// Quote characters that open a one-line string literal.
    pub(crate) quotes: &'static [u8],
    /// `"""` / `'''` open strings that may span lines (Python, Java, Kotlin, TOML).
    pub(crate) triple_quotes: bool,
    /// A backquote opens a string that may span lines (JS template, Go raw string).
    pub(crate) backtick_multiline: bool,
    /// A quote opens a string only after a separator (start of line, space,
    /// `:`, `=`, `[`, `{`, `,`, `(`, `-`), so `don't` in a plain YAML scalar is text.
    pub(crate) quote_needs_separator: bool,
}

const C_LIKE: Syntax = Syntax {
    line_comments: &[b"//"],
    comment_needs_space: false,
    block_comment: Some((b"/*", b"*/")),
    quotes: b"\"'",
    triple_quotes: false,
    backtick_multiline: false,
    quote_needs_separator: false,
};

const HASH_CONFIG: Syntax = Syntax {
    line_comments: &[b"#"],
    comment_needs_space: true,
    block_comment: None,
    quotes: b"\"'",
    triple_quotes: false,
    backtick_multiline: false,
    quote_needs_separator: true,
};

impl Language {
    /// Every language, in the order of the docs.
    pub(crate) const ALL: &'static [Language] = &[
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Go,
        Language::Java,
        Language::Kotlin,
        Language::Ruby,
        Language::Yaml,
        Language::Json,
        Language::Toml,
        Language::Properties,
        Language::Ini,
        Language::Env,
        Language::Dockerfile,
        Language::Nginx,
        Language::Shell,
    ];

    /// The name used in rule files.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Go => "go",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
            Language::Ruby => "ruby",
            Language::Yaml => "yaml",
            Language::Json => "json",
            Language::Toml => "toml",
            Language::Properties => "properties",
            Language::Ini => "ini",
            Language::Env => "env",
            Language::Dockerfile => "dockerfile",
            Language::Nginx => "nginx",
            Language::Shell => "shell",
        }
    }

    /// A programming language (names bound to values), not a config format.
    pub(crate) fn is_code(self) -> bool {
        matches!(
            self,
            Language::Python
                | Language::JavaScript
                | Language::TypeScript
                | Language::Go
                | Language::Java
                | Language::Kotlin
                | Language::Ruby
        )
    }

    pub(crate) fn parse(name: &str) -> Option<Language> {
        Language::ALL.iter().copied().find(|l| l.name() == name)
    }

    /// The language of a repository path, or `None` for files no rule reads
    /// (Markdown, text, binaries, unknown extensions).
    pub fn of_path(path: &str) -> Option<Language> {
        let name = Path::new(path).file_name()?.to_str()?;
        let lower = name.to_ascii_lowercase();
        if lower == "dockerfile" || lower.starts_with("dockerfile.") || lower == "containerfile" {
            return Some(Language::Dockerfile);
        }
        if lower == ".env" || lower.starts_with(".env.") {
            return Some(Language::Env);
        }
        // Type declarations (`.d.ts`, `.pyi` stubs) hold no behaviour: a
        // signature or a doc comment that changed there retries nothing.
        if [".d.ts", ".d.mts", ".d.cts", ".pyi"].iter().any(|s| lower.ends_with(s)) {
            return None;
        }
        let ext = lower.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "py" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" | "tsx" => Language::TypeScript,
            "go" => Language::Go,
            "java" => Language::Java,
            "kt" | "kts" => Language::Kotlin,
            "rb" => Language::Ruby,
            "yml" | "yaml" => Language::Yaml,
            "json" => Language::Json,
            "toml" => Language::Toml,
            "properties" => Language::Properties,
            "ini" | "cfg" => Language::Ini,
            "env" => Language::Env,
            "dockerfile" => Language::Dockerfile,
            "conf" => Language::Nginx,
            "sh" | "bash" => Language::Shell,
            _ => return None,
        })
    }

    /// How comments and string literals look in this language.
    pub fn syntax(self) -> Syntax {
        match self {
            Language::Python => Syntax {
                line_comments: &[b"#"],
                comment_needs_space: false,
                block_comment: None,
                quotes: b"\"'",
                triple_quotes: true,
                backtick_multiline: false,
                quote_needs_separator: false,
            },
            Language::JavaScript | Language::TypeScript => Syntax { backtick_multiline: true, ..C_LIKE },
            Language::Go => Syntax { backtick_multiline: true, ..C_LIKE },
            Language::Java | Language::Kotlin => Syntax { triple_quotes: true, ..C_LIKE },
            Language::Json => Syntax {
                line_comments: &[],
                comment_needs_space: false,
                block_comment: None,
                quotes: b"\"",
                triple_quotes: false,
                backtick_multiline: false,
                quote_needs_separator: false,
            },
            Language::Toml => Syntax { triple_quotes: true, ..HASH_CONFIG },
            Language::Ruby => Syntax {
                line_comments: &[b"#"],
                comment_needs_space: false,
                block_comment: Some((b"=begin", b"=end")),
                quotes: b"\"'",
                triple_quotes: false,
                backtick_multiline: false,
                quote_needs_separator: false,
            },
            Language::Ini => Syntax { line_comments: &[b"#", b";"], ..HASH_CONFIG },
            Language::Yaml
            | Language::Properties
            | Language::Env
            | Language::Dockerfile
            | Language::Nginx
            | Language::Shell => HASH_CONFIG,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_languages_and_prose_maps_to_none() {
        assert_eq!(Language::of_path("app/client.py"), Some(Language::Python));
        assert_eq!(Language::of_path("web/src/api.TS"), Some(Language::TypeScript));
        assert_eq!(Language::of_path("deploy/Dockerfile"), Some(Language::Dockerfile));
        assert_eq!(Language::of_path("deploy/Dockerfile.prod"), Some(Language::Dockerfile));
        assert_eq!(Language::of_path(".env.production"), Some(Language::Env));
        assert_eq!(Language::of_path("charts/app/values.yaml"), Some(Language::Yaml));
        assert_eq!(Language::of_path("conf/client.ini"), Some(Language::Ini));
        assert_eq!(Language::of_path("setup.cfg"), Some(Language::Ini));
        assert_eq!(Language::of_path("README.md"), None);
        assert_eq!(Language::of_path("docs/retries.txt"), None);
        assert_eq!(Language::of_path("Makefile"), None);
        assert_eq!(Language::of_path("index.d.ts"), None, "declarations hold no behaviour");
        assert_eq!(Language::of_path("types/retry.D.MTS"), None);
        assert_eq!(Language::of_path("stubs/client.pyi"), None);
        assert_eq!(Language::of_path("src/index.ts"), Some(Language::TypeScript));
    }

    #[test]
    fn names_round_trip() {
        for l in Language::ALL {
            assert_eq!(Language::parse(l.name()), Some(*l));
        }
        assert_eq!(Language::parse("cobol"), None);
    }
}
