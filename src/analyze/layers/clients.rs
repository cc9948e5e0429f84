//! The application's own retries: the Rust analyzer's retry policies of a
//! file ([`crate::analyze::rust::policies_of`], the same model the
//! retry findings come from), each a client layer. Its host is what a
//! reader of the file would say it calls: the base URL literals of the
//! file, and the environment variables it reads whose values a manifest
//! gives ([`super::Declared::env`]). A file that calls several hosts leaves
//! the link open ([`super::chain`] shows such a client on its own).

use std::collections::BTreeSet;

use super::{hosts, Attempts, Layer, ReadError, Tier};

/// Whether an environment variable's name says it carries an address.
pub(crate) fn carries_address(name: &str) -> bool {
    ["URL", "URI", "ADDR", "HOST", "ENDPOINT"].iter().any(|w| name.contains(w))
}

/// The client layers of one Rust file.
pub(crate) fn read_rust(path: &str, text: &str) -> Result<Vec<Layer>, ReadError> {
    let policies =
        crate::analyze::rust::policies_of(path, text).map_err(|e| ReadError { line: 1, message: e })?;
    if policies.is_empty() {
        return Ok(Vec::new());
    }
    let urls = hosts::urls_in(text);
    let targets: BTreeSet<String> = urls.iter().map(|(_, h, _)| h.clone()).collect();
    let via_env: BTreeSet<String> =
        hosts::env_reads(text).into_iter().map(|(_, n)| n).filter(|n| carries_address(n)).collect();
    let methods: BTreeSet<&str> = ["get", "post", "put", "patch", "delete"]
        .into_iter()
        .filter(|m| text.contains(&format!(".{m}(")))
        .collect();
    let paths: BTreeSet<&str> = urls.iter().map(|(_, _, p)| p.as_str()).collect();
    let mut out = Vec::new();
    for p in policies {
        let attempts = match p.attempts {
            Some(n) if n.is_finite() && n >= 1.0 => Attempts::Total(n.min(u32::MAX as f64) as u32),
            Some(_) | None => Attempts::Unbounded,
        };
        let name = match (methods.iter().next(), paths.iter().next()) {
            (Some(m), Some(route)) if methods.len() == 1 && paths.len() == 1 => {
                format!("{} {route}", m.to_ascii_uppercase())
            }
            _ => format!("{} retry in {}", p.lib, enclosing_fn(text, p.line)),
        };
        out.push(Layer {
            tier: Tier::Client,
            source: format!("Rust ({})", p.lib),
            name,
            path: path.to_string(),
            line: p.line,
            attempts,
            budget: None,
            retry_on: "what its retry policy retries on".into(),
            targets: targets.clone(),
            decl_lines: (p.line..=p.end_line).collect(),
            via_env: via_env.clone(),
        });
    }
    Ok(out)
}

/// The name of the `fn` a line is in (the nearest `fn` above it).
fn enclosing_fn(text: &str, line: u32) -> String {
    text.lines()
        .take(line as usize)
        .filter_map(|l| {
            let at = l.find("fn ")?;
            let rest = &l[at + 3..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            (!name.is_empty()).then_some(name)
        })
        .last()
        .unwrap_or_else(|| "(file)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: &str = "use backon::{ExponentialBuilder, Retryable};\nasync fn checkout(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    (|| async { c.post(\"http://payments:8080/checkout\").header(\"Idempotency-Key\", \"k\").send().await })\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times(6))\n        .await\n}\n";

    #[test]
    fn a_retry_policy_is_a_client_layer_with_the_host_it_calls() {
        let l = read_rust("src/pay.rs", CLIENT).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!((l[0].attempts.clone(), l[0].name.as_str()), (Attempts::Total(7), "POST /checkout"));
        assert_eq!(l[0].targets.iter().collect::<Vec<_>>(), ["payments"]);
    }

    #[test]
    fn env_base_urls_are_kept_for_linking_and_no_retry_no_layer() {
        let env = CLIENT.replace(
            "\"http://payments:8080/checkout\"",
            "format!(\"{}/checkout\", std::env::var(\"PAYMENTS_URL\").unwrap())",
        );
        let l = read_rust("src/pay.rs", &env).unwrap();
        assert!(l[0].targets.is_empty());
        assert_eq!(l[0].via_env.iter().collect::<Vec<_>>(), ["PAYMENTS_URL"]);
        assert!(read_rust("src/x.rs", "fn f() { let u = \"http://payments\"; }\n").unwrap().is_empty());
    }

    #[test]
    fn an_unparsable_retrying_file_is_an_error() {
        let err = read_rust("src/x.rs", "fn f( { retry(").unwrap_err();
        assert!(!err.message.is_empty());
    }
}
