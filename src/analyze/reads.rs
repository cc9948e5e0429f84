//! When a POST is a read: its endpoint answers a question that needs a
//! body (a search, a query, a count, a description), so sending it again
//! repeats a read, not a write. Both the Rust analyzer and the project
//! helpers resolver ask here, so that one endpoint is judged the same way
//! in every language.
//!
//! Only the endpoint's last path segment is read, and only when the code
//! writes it (a literal, a `format!` template): a POST whose endpoint cannot
//! be told stays a write, and the reason a POST was judged a read goes into
//! what the gate reports, so a maintainer can disagree.

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

/// Why a POST to `path` is a read (`its endpoint /v1/t/{}/describe ends in
/// /describe, ..`), or `None` when its endpoint says nothing.
pub(crate) fn why_read(path: &str) -> Option<String> {
    let path_only = path.split(['?', '#']).next().unwrap_or("");
    let segment = read_segment(path_only)?;
    Some(format!("its endpoint `{path_only}` ends in `/{segment}`, a read sent as POST with a body"))
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
}
