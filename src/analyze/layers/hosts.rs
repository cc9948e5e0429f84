//! One host key for everything that names where a request goes, so that a
//! client's base URL, a mesh route's hosts, an upstream's servers and a
//! Kubernetes Service name can be compared.
//!
//! The key is the first DNS label, lowercased: `payments`,
//! `payments.shop.svc.cluster.local` and `http://payments:8080/v1` all
//! become `payments`, the way a reader of Kubernetes manifests links a
//! Service to the names pods call it by. A name with a template in it
//! (`{{ .Values.host }}`, `#{service}`, `${HOST}`) has no key: it cannot be
//! told which host it is.

use std::collections::{BTreeMap, BTreeSet};

/// The host key of a host name, URL or `host:port`; `None` for a wildcard,
/// a template or an empty name.
pub(crate) fn key(raw: &str) -> Option<String> {
    let s = raw.trim().trim_matches(|c| c == '"' || c == '\'' || c == '`');
    if s.is_empty() || s == "*" || s.contains(['{', '}', '$', '#', '<', '>', ' ']) {
        return None;
    }
    let s = s.split_once("://").map_or(s, |(_, rest)| rest);
    let s = s.rsplit_once('@').map_or(s, |(_, rest)| rest);
    let host = s.split(['/', '?']).next().unwrap_or("");
    let host = if host.starts_with('[') { host } else { host.split(':').next().unwrap_or("") };
    // An address is not a name a reader links by (and its first label, `10`,
    // would join unrelated hosts).
    if host.starts_with('[') || host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let label = host.split('.').next().unwrap_or("").to_ascii_lowercase();
    if label.is_empty()
        || label == "*"
        || !label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return None;
    }
    Some(label)
}

/// The keys of every `http(s)://` URL literal in `text`, with the line of
/// each. A URL on a comment line (a license header, a link to docs) is not
/// one the code calls.
pub(crate) fn urls_in(text: &str) -> Vec<(u32, String, String)> {
    const COMMENT: &[&str] = &["//", "#", "/*", "*", "--", "\"\"\"", "'''"];
    let mut out = Vec::new();
    // Inside a `/* */` block or a Python docstring.
    let (mut block, mut docstring) = (false, false);
    for (i, line) in text.lines().enumerate() {
        let was_inside = block || docstring;
        if block {
            block = !line.contains("*/");
        } else if let Some(at) = line.find("/*") {
            block = !line[at..].contains("*/");
        }
        let quotes = line.matches("\"\"\"").count() + line.matches("'''").count();
        if quotes % 2 == 1 {
            docstring = !docstring;
        }
        if was_inside || quotes > 0 || COMMENT.iter().any(|c| line.trim_start().starts_with(c)) {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("http") {
            let tail = &rest[at..];
            let after = tail.strip_prefix("https://").or_else(|| tail.strip_prefix("http://"));
            if let Some(after) = after {
                let end = after
                    .find(|c: char| c == '"' || c == '\'' || c.is_whitespace() || c == ')')
                    .unwrap_or(after.len());
                let url = &after[..end];
                if let Some(k) = key(url) {
                    let path = url.find('/').map_or("/", |p| &url[p..]);
                    out.push((i as u32 + 1, k, path.to_string()));
                }
            }
            rest = &rest[at + 4..];
        }
    }
    out
}

/// Environment variable names read in `text` (`env::var("X")`,
/// `std::env::var("X")`, `env!("X")`, `os.environ["X"]`, `os.Getenv("X")`,
/// `process.env.X`), with the line of each.
pub(crate) fn env_reads(text: &str) -> Vec<(u32, String)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"(?:env::var(?:_os)?|env!|option_env!|Getenv|environ\.get|getenv)\(\s*"([A-Z][A-Z0-9_]*)"|environ\[\s*["']([A-Z][A-Z0-9_]*)["']\]|process\.env\.([A-Z][A-Z0-9_]*)"#)
            .unwrap_or_else(|e| panic!("constant pattern: {e}"))
    });
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for c in re.captures_iter(line) {
            if let Some(m) = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)) {
                out.push((i as u32 + 1, m.as_str().to_string()));
            }
        }
    }
    out
}

/// Records `NAME=value` lines of a `.env` file whose value is a URL.
pub(crate) fn read_dotenv(text: &str, env: &mut BTreeMap<String, BTreeSet<String>>) {
    for line in text.lines() {
        let line = line.trim().trim_start_matches("export ");
        if let Some((name, value)) = line.split_once('=') {
            record_env(name.trim(), value.trim(), env);
        }
    }
}

/// Records an environment variable whose value is a URL or a `host:port`.
pub(crate) fn record_env(name: &str, value: &str, env: &mut BTreeMap<String, BTreeSet<String>>) {
    let name = name.trim_matches(|c| c == '"' || c == '\'');
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') {
        return;
    }
    let value = value.trim_matches(|c| c == '"' || c == '\'');
    let looks_like_address = value.contains("://") || value.contains(':') && !value.contains(' ');
    if !looks_like_address {
        return;
    }
    if let Some(k) = key(value) {
        env.entry(name.to_string()).or_default().insert(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_service_names_and_host_ports_share_a_key() {
        for raw in [
            "payments",
            "payments.shop.svc.cluster.local",
            "http://payments:8080/v1/checkout",
            "https://user@Payments.example.com/x?y",
            "payments:9000",
        ] {
            assert_eq!(key(raw).as_deref(), Some("payments"), "{raw}");
        }
    }

    #[test]
    fn templates_and_wildcards_have_no_key() {
        for raw in [
            "{{ .Values.host }}",
            "#{config.service}",
            "${HOST}",
            "*",
            "",
            "<svc>",
            "*.example.com",
            "10.0.0.1:8080",
            "http://[::1]:80/",
        ] {
            assert_eq!(key(raw), None, "{raw}");
        }
    }

    #[test]
    fn url_literals_and_env_reads_are_found_with_their_lines() {
        let text = "let a = \"x\";\nlet u = \"http://payments:8080/checkout\";\nlet b = std::env::var(\"LEDGER_URL\");\n";
        assert_eq!(urls_in(text), [(2, "payments".to_string(), "/checkout".to_string())]);
        assert_eq!(env_reads(text), [(3, "LEDGER_URL".to_string())]);
        assert!(urls_in("no urls here, httpx is a library").is_empty());
        // Comment lines name pages to read, not hosts to call.
        let commented = "// see https://docs.example.com/retries\n#    http://www.apache.org/licenses/LICENSE-2.0\n * https://github.com/x\nlet u = \"http://payments/x\"; // https://docs.example.com\n";
        let keys: Vec<String> = urls_in(commented).into_iter().map(|(_, k, _)| k).collect();
        assert_eq!(keys, ["payments", "docs"]);
        // Nor is one inside a block comment or a docstring.
        let blocks = "/*\n    http://www.apache.org/licenses/LICENSE-2.0\n*/\nlet a = \"http://ledger/\";\ndef f():\n    \"\"\"See\n    https://boto3.amazonaws.com/docs\n    \"\"\"\n    return get(\"http://stock/\")\n";
        let keys: Vec<String> = urls_in(blocks).into_iter().map(|(_, k, _)| k).collect();
        assert_eq!(keys, ["ledger", "stock"]);
    }

    #[test]
    fn env_values_that_are_not_addresses_are_ignored() {
        let mut env = BTreeMap::new();
        read_dotenv(
            "PAYMENTS_URL=http://payments:8080\nLOG_LEVEL=debug\nexport LEDGER_ADDR=ledger:9000\n",
            &mut env,
        );
        assert_eq!(env.keys().collect::<Vec<_>>(), ["LEDGER_ADDR", "PAYMENTS_URL"]);
        assert!(env["PAYMENTS_URL"].contains("payments"));
    }
}
