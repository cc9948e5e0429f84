//! Whether a changed file holds retry or HTTP-client code, in any language:
//! what decides that a change needs the 429 replay. It is a word test, not a
//! parse, so that a file no analyzer models (a Go or Kotlin client) still
//! counts, and it looks at every changed file, `paths.ignore` or not.
//!
//! The retry and timeout words are the Rust analyzer's prefilter
//! ([`super::rust::is_change_relevant`]); the HTTP-client words below are the
//! ones it does not already cover. Both go into one matcher, so each file is
//! scanned once.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use crate::changeset::FileChange;

/// Extensions of files that hold prose or lock data, not code.
const PROSE: &[&str] = &["md", "markdown", "txt", "rst", "adoc", "lock"];

/// HTTP-client words that the retry words do not already cover, matched
/// without regard to ASCII case.
const HTTP_WORDS: &[&str] = &[
    "reqwest",
    "hyper",
    "urllib",
    "requests.",
    "axios",
    "fetch(",
    "httpclient",
    "http.client",
    "okhttp",
    "grpc",
];

/// The retry words and the HTTP-client words in one matcher.
static RETRY_OR_HTTP_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    super::any_word(super::rust::RETRY_TOKENS.iter().chain(super::rust::TIMEOUT_TOKENS).chain(HTTP_WORDS))
});

/// Whether `f` holds retry or HTTP-client code on either side. Prose (by
/// extension) never does; a side that could not be read says nothing.
pub(crate) fn holds_retry_code(f: &FileChange) -> bool {
    if f.extension().is_some_and(|e| PROSE.contains(&e.as_str())) {
        return false;
    }
    [f.base.text(), f.head.text()].into_iter().flatten().any(|t| RETRY_OR_HTTP_WORDS.is_match(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_words_and_http_client_words_count_on_either_side_in_any_case() {
        assert!(holds_retry_code(&FileChange::from_texts("src/a.rs", None, Some("let n = MAX_RETRIES;\n"))));
        assert!(holds_retry_code(&FileChange::from_texts("web/api.ts", None, Some("await Fetch(url)\n"))));
        assert!(holds_retry_code(&FileChange::from_texts(
            "app/c.py",
            Some("import urllib.request\n"),
            Some("x = 1\n")
        )));
        assert!(holds_retry_code(&FileChange::from_texts(
            "app/c.py",
            Some("s = requests.Session()\n"),
            None
        )));
        assert!(holds_retry_code(&FileChange::from_texts(
            "svc/Main.java",
            None,
            Some("new OkHttpClient()\n")
        )));
    }

    #[test]
    fn plain_code_and_prose_do_not() {
        assert!(!holds_retry_code(&FileChange::from_texts(
            "src/lib.rs",
            Some("fn a() {}\n"),
            Some("fn b() {}\n")
        )));
        // "requests" without the call dot is a word, not the library.
        assert!(!holds_retry_code(&FileChange::from_texts(
            "app/c.py",
            None,
            Some("pending_requests = []\n")
        )));
        for prose in ["README.md", "docs/retries.MARKDOWN", "notes.txt", "Cargo.lock", "guide.rst"] {
            assert!(
                !holds_retry_code(&FileChange::from_texts(
                    prose,
                    None,
                    Some("retry with reqwest and backoff\n")
                )),
                "{prose}"
            );
        }
    }
}
