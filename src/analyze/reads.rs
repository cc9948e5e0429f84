//! When a POST is a read: its endpoint answers a question that needs a
//! body (a search, a query, a count, a description), so sending it again
//! repeats a read, not a write. Both the Rust analyzer and the project
//! helpers resolver ask here, so that one endpoint is judged the same way
//! in every language.
//!
//! A token exchange is judged the same way: OAuth 2.0 and OIDC token
//! endpoints take POST by specification (RFC 6749, section 3.2), and a
//! repeated request issues another short-lived credential; it does not
//! store anything a user sees twice. Only an endpoint whose every word
//! names the token it issues is one (`/oauth/token`, `/access-token`):
//! `/reset-token` sends an email on every call.
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
/// segment every word of which says what token is issued (`mint_token`,
/// `access-token`, `oauth2_token`). A segment that names anything else
/// the request does (`reset-token` sends an email, `revoke_token`,
/// `verify-token`) is not an exchange: the endpoint's words are the
/// server's, so one word that is not a token's is enough to keep it a write.
fn is_token_exchange(segment: &str) -> bool {
    const TOKEN_WORDS: &[&str] = &[
        "token", "access", "refresh", "id", "oauth", "oauth2", "oidc", "mint", "exchange", "issue", "jwt",
        "bearer", "auth", "session", "new",
    ];
    let words = crate::analyze::knobs::names::words(segment);
    words.iter().any(|w| w.eq_ignore_ascii_case("token"))
        && words.iter().all(|w| TOKEN_WORDS.iter().any(|t| w.eq_ignore_ascii_case(t)))
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

/// Whether an endpoint's last path segment names a change of state
/// (`_update_by_query`, `bulk-delete`, `create`): a request to it writes,
/// whatever the function that sends it is called.
pub(crate) fn names_a_change(path: &str) -> bool {
    const CHANGES: &[&str] = &[
        "update", "delete", "create", "insert", "remove", "write", "add", "send", "submit", "reset",
        "cancel", "publish", "upload", "import", "bulk", "set", "put", "patch", "upsert", "merge", "reindex",
        "rename", "move", "copy", "revoke", "invite", "register", "charge", "refund", "transfer", "execute",
        "run", "trigger",
    ];
    let path_only = path.split(['?', '#']).next().unwrap_or("");
    let segment = path_only.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    crate::analyze::knobs::names::words(segment)
        .iter()
        .any(|w| CHANGES.iter().any(|c| w.eq_ignore_ascii_case(c)))
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

/// Why a POST whose request body is written in `text` (the call, or the
/// function that builds it) is a read by its protocol: every JSON-RPC
/// method it names is one the protocol defines as a read (`eth_call`,
/// `getAccountInfo`, `simulateTransaction`), or it sends a GraphQL `query`
/// document and no `mutation`. `None` when the text names no such method,
/// names any other, or cannot be told.
///
/// The method is the server's, not the client code's: the change cannot
/// rename `eth_sendRawTransaction` into a read without the server refusing
/// it. That is what makes it evidence where a function's name is not.
pub(crate) fn why_read_body(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    if lower.contains("jsonrpc") || lower.contains("json-rpc") || lower.contains("json_rpc") {
        let methods = jsonrpc_methods(text);
        if !methods.is_empty() && methods.iter().all(|m| jsonrpc_method_reads(m)) {
            let shown: Vec<String> = methods.iter().take(3).map(|m| format!("`{m}`")).collect();
            return Some(format!(
                "it sends the JSON-RPC method {}, a read its protocol sends as POST",
                shown.join(", ")
            ));
        }
        return None;
    }
    let words = crate::analyze::knobs::names::words(&lower);
    if words.iter().any(|w| w == "mutation" || w == "subscription") {
        return None;
    }
    graphql_query(text)
        .then(|| "it sends a GraphQL `query` document (no `mutation`), a read sent as POST".to_string())
}

/// The string values given to a `method` key (`"method": "eth_call"`,
/// `method: 'getBalance'`, `Method = "x"`) in `text`.
fn jsonrpc_methods(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices("method").chain(text.match_indices("Method")) {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let mut j = i + "method".len();
        // A closing quote of the key, then `:`, `=`, `=>` or `,`.
        while j < bytes.len() && matches!(bytes[j], b'"' | b'\'' | b' ' | b'\t') {
            j += 1;
        }
        if j >= bytes.len() || !matches!(bytes[j], b':' | b'=' | b',') {
            continue;
        }
        while j < bytes.len() && matches!(bytes[j], b':' | b'=' | b'>' | b',' | b' ' | b'\t') {
            j += 1;
        }
        let Some(&q) = bytes.get(j).filter(|q| matches!(q, b'"' | b'\'' | b'`')) else { continue };
        let rest = &text[j + 1..];
        let Some(end) = rest.find(q as char) else { continue };
        let value = &rest[..end];
        // `method: "POST"` beside it is the HTTP request's own.
        let http = ["get", "post", "put", "patch", "delete", "head", "options"]
            .iter()
            .any(|m| value.eq_ignore_ascii_case(m));
        if !http
            && !value.is_empty()
            && value.len() <= 80
            && value.chars().all(|c| c.is_ascii_alphanumeric() || "_./:".contains(c))
        {
            out.push(value.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether a JSON-RPC method is a read as its protocol defines it.
/// Ethereum's `eth_`/`net_`/`web3_` namespaces name their reads (`eth_call`,
/// `eth_get*`, `eth_estimateGas`, ...); elsewhere (Solana, Bitcoin Core,
/// MCP's `tools/list`) a method whose first word asks for data (`get`,
/// `list`, `simulate`, `estimate`, ...) reads. `eth_sendRawTransaction`,
/// `sendTransaction` and MCP's `tools/call` are writes.
fn jsonrpc_method_reads(method: &str) -> bool {
    const ETH_READS: &[&str] = &[
        "eth_call",
        "eth_estimategas",
        "eth_blocknumber",
        "eth_chainid",
        "eth_gasprice",
        "eth_feehistory",
        "eth_maxpriorityfeepergas",
        "eth_syncing",
        "eth_accounts",
        "eth_protocolversion",
        "eth_blobbaseFee",
        "net_version",
        "net_listening",
        "net_peercount",
        "web3_clientversion",
        "web3_sha3",
    ];
    const READ_WORDS: &[&str] = &[
        "get", "list", "query", "describe", "simulate", "estimate", "search", "count", "fetch", "read",
        "status", "health", "ping", "version", "is", "has", "minimum",
    ];
    let m = method.to_ascii_lowercase();
    if let Some(rest) = ["eth_", "debug_", "trace_", "txpool_"].iter().find_map(|p| m.strip_prefix(p)) {
        return ETH_READS.iter().any(|r| r.eq_ignore_ascii_case(&m))
            || rest.starts_with("get")
            || (m.starts_with("debug_") || m.starts_with("trace_") || m.starts_with("txpool_"))
                && !rest.starts_with("send");
    }
    if m.starts_with("net_") || m.starts_with("web3_") {
        return ETH_READS.iter().any(|r| r.eq_ignore_ascii_case(&m));
    }
    // The method's own name after a namespace (`tools/list`, `wallet.getBalance`).
    let own = method.rsplit(['/', '.']).next().unwrap_or(method);
    let words = crate::analyze::knobs::names::words(own);
    words.first().is_some_and(|w| READ_WORDS.contains(&w.as_str()))
}

/// Whether `text` holds a GraphQL query document given as a request's
/// `query`: a `query` key or field whose string starts with `query` or `{`.
fn graphql_query(text: &str) -> bool {
    text.match_indices("query").any(|(i, _)| {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            return false;
        }
        let rest = text[i + "query".len()..].trim_start_matches(['"', '\'', ' ', '\t']);
        let Some(rest) = rest.strip_prefix([':', '=']) else { return false };
        let rest = rest.trim_start_matches(['>', ' ', '\t', '\n', '\r']);
        let Some(q) = rest.chars().next().filter(|c| matches!(c, '"' | '\'' | '`')) else { return false };
        let doc = rest[q.len_utf8()..].trim_start_matches(['"', '\'', '`', ' ', '\t', '\n', '\r', '\\', 'n']);
        doc.starts_with('{')
            || doc.starts_with("query ")
            || doc.starts_with("query{")
            || doc.starts_with("query(")
    })
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
        for path in [
            "/v1/tokens",
            "/v1/tokenize",
            "/v1/orders/token/refund",
            "/token/{}",
            "/v1/users/reset-token",
            "/api/revoke_token",
            "/verify-token",
            "/v1/payment_token",
        ] {
            assert_eq!(why_read(path), None, "{path}");
        }
    }

    #[test]
    fn a_json_rpc_read_or_a_graphql_query_reads_and_any_write_among_them_does_not() {
        for text in [
            r#"requests.post(RPC, json={"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [tx, "latest"]})"#,
            r#"body = {'jsonrpc': '2.0', 'method': 'getAccountInfo', 'params': [key]}"#,
            r#"fetch(url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", method: "simulateTransaction" }) })"#,
            r#"{"jsonrpc":"2.0","method":"tools/list"}"#,
            r#"json={"jsonrpc": "2.0", "method": "eth_getBalance"}"#,
        ] {
            let why = why_read_body(text).unwrap_or_else(|| panic!("{text} reads"));
            assert!(why.contains("JSON-RPC"), "{why}");
        }
        for text in [
            r#"{"jsonrpc": "2.0", "method": "eth_sendRawTransaction", "params": [raw]}"#,
            r#"{"jsonrpc": "2.0", "method": "sendTransaction"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call"}"#,
            r#"{"jsonrpc": "2.0", "method": "eth_call"} ... {"jsonrpc": "2.0", "method": "eth_sendRawTransaction"}"#,
            r#"{"jsonrpc": "2.0", "method": m}"#,
            r#"requests.post(url, json={"method": "getX"})"#,
        ] {
            assert_eq!(why_read_body(text), None, "{text}");
        }
        assert!(why_read_body(
            r#"client.post(GRAPHQL_URL, json={"query": "query Run($id: ID!) { run(id: $id) { status } }"})"#
        )
        .is_some_and(|w| w.contains("GraphQL")));
        assert!(why_read_body("body: JSON.stringify({ query: `{ viewer { login } }` })").is_some());
        assert_eq!(why_read_body(r#"json={"query": "mutation Create { createRun { id } }"}"#), None);
        assert_eq!(why_read_body(r#"json={"query": q}"#), None, "a document not written here");
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
