//! When a POST is a read: its endpoint answers a question that needs a
//! body (a search, a query, a count, a description), so sending it again
//! repeats a read, not a write. Both the Rust analyzer and the project
//! helpers resolver ask here, so that one endpoint is judged the same way
//! in every language.
//!
//! A token exchange is judged the same way: OAuth 2.0 and OIDC token
//! endpoints take POST by specification (RFC 6749, section 3.2), and a
//! repeated request issues another short-lived credential; it does not
//! store anything a user sees twice.
//!
//! Only the endpoint's last path segment is read, and only when the code
//! writes it (a literal, a `format!` template, a local given one): a POST
//! whose endpoint cannot be told stays a write, and the reason a POST was
//! judged a read goes into what the gate reports, so a maintainer can
//! disagree. The project helpers resolver also takes the name of the
//! function that sends the POST ([`why_read_name`]): a method the project
//! itself calls `query` or `search` says what its endpoint does.

/// Last path segments of endpoints that answer a question rather than
/// change state, sent as POST because the question has a body.
const READ_ENDPOINTS: &[&str] = &["query", "search", "_search", "count", "_count", "describe", "explain"];

/// The read segment `path` (a URL or a path, with or without a query
/// string, placeholders or a trailing slash) ends in, if any.
pub(crate) fn read_segment(path: &str) -> Option<&'static str> {
    let path_only = path.split(['?', '#']).next().unwrap_or("");
    let segment = path_only.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    READ_ENDPOINTS.iter().copied().find(|r| segment.eq_ignore_ascii_case(r))
}

/// Whether a last path segment names a token endpoint: `token`, or a
/// segment ending in `_token`/`-token` (`mint_token`, `access-token`).
fn is_token_exchange(segment: &str) -> bool {
    let s = segment.to_ascii_lowercase();
    s == "token" || s.ends_with("_token") || s.ends_with("-token")
}

/// Why a POST to `path` is a read (`its endpoint /v1/t/{}/describe ends in
/// /describe, ..`), or `None` when its endpoint says nothing.
pub(crate) fn why_read(path: &str) -> Option<String> {
    let path_only = path.split(['?', '#']).next().unwrap_or("");
    if let Some(segment) = read_segment(path_only) {
        return Some(format!(
            "its endpoint `{path_only}` ends in `/{segment}`, a read sent as POST with a body"
        ));
    }
    let last = path_only.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    is_token_exchange(last).then(|| {
        format!(
            "its endpoint `{path_only}` is a token exchange (`/{last}`): token endpoints take POST, and a repeat issues another short-lived token, it does not repeat a write"
        )
    })
}

/// Why a POST sent by a function named `name` is a read: the name's last
/// word (split on `_` and case) is a read word, so `query`, `apl_query`
/// and `runSearch` are reads, and `search_and_store` is not.
pub(crate) fn why_read_name(name: &str) -> Option<String> {
    let words = crate::analyze::knobs::names::words(name);
    let last = words.last()?;
    let word =
        READ_ENDPOINTS.iter().copied().find(|r| !r.starts_with('_') && last.eq_ignore_ascii_case(r))?;
    Some(format!("it is sent by `{name}`, a function named as a read (`{word}`)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_segment_decides_with_or_without_query_slash_or_placeholders() {
        assert_eq!(read_segment("/v1/table/{}/describe/"), Some("describe"));
        assert_eq!(read_segment("https://es:9200/logs/_search?scroll=1m"), Some("_search"));
        assert_eq!(read_segment("/api/Query"), Some("query"));
        assert_eq!(read_segment("/v1/orders"), None);
        assert_eq!(read_segment("/search/orders"), None, "only the last segment counts");
        assert_eq!(read_segment("/v1/searches"), None, "a whole segment, not a prefix");
        assert_eq!(read_segment(""), None);
        let why = why_read("/v1/table/{}/describe/?x=1").unwrap();
        assert!(why.contains("`/v1/table/{}/describe/`") && why.contains("`/describe`"), "{why}");
    }

    #[test]
    fn a_token_endpoint_is_an_exchange_and_a_tokens_collection_is_not() {
        for path in ["/oauth/token", "/api/oidc/mint_token", "/v1/auth/access-token/", "/connect/token?x=1"] {
            let why = why_read(path).unwrap_or_else(|| panic!("{path} should be a token exchange"));
            assert!(why.contains("token exchange"), "{why}");
        }
        for path in ["/v1/tokens", "/v1/tokenize", "/v1/orders/token/refund", "/token/{}"] {
            assert_eq!(why_read(path), None, "{path}");
        }
    }

    #[test]
    fn a_function_named_as_a_read_by_its_last_word() {
        for name in ["query", "apl_query", "runSearch", "count", "Describe"] {
            let why = why_read_name(name).unwrap_or_else(|| panic!("{name} should be a read"));
            assert!(why.contains(&format!("`{name}`")), "{why}");
        }
        for name in ["search_and_store", "send_request", "queryAndSave", "post", ""] {
            assert_eq!(why_read_name(name), None, "{name}");
        }
    }
}
