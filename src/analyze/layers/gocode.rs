//! Retry policies built in Go code that generates mesh or proxy
//! configuration (a controller that writes Istio routes, a control plane
//! that writes Envoy's): an Istio `HTTPRetry{Attempts: n}` literal (n
//! retries) and an Envoy `RetryPolicy{NumRetries: ...n...}` literal (n
//! retries, Envoy's route `RouteAction_RetryPolicy` included). The count is
//! a literal or a constant of the same file; the hosts of generated routes
//! are computed, so these layers have none.

use std::sync::OnceLock;

use regex::Regex;

use super::{Attempts, Layer, Tier};

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|e| panic!("constant pattern: {e}")))
}

/// The retry literals of a Go file.
pub fn read(path: &str, text: &str) -> Vec<Layer> {
    if !text.contains("HTTPRetry{") && !text.contains("RetryPolicy{") {
        return Vec::new();
    }
    static OPEN: OnceLock<Regex> = OnceLock::new();
    let open = re(&OPEN, r"(HTTPRetry|RetryPolicy)\{");
    let mut out = Vec::new();
    for m in open.captures_iter(text) {
        let Some(whole) = m.get(0) else { continue };
        let body = block(&text[whole.end()..]);
        let istio = &m[1] == "HTTPRetry";
        let field = if istio { "Attempts" } else { "NumRetries" };
        let Some(value) = field_value(body, field) else { continue };
        let line = line_at(text, whole.start());
        let field_line = body.find(field).map_or(line, |at| line_at(text, whole.end() + at));
        let attempts = match resolve(text, &value) {
            Some(n) => Attempts::Total(n.saturating_add(1)),
            None => Attempts::Unknown(format!("{field}: {value}")),
        };
        let retry_on = if istio {
            field_value(body, "RetryOn")
                .unwrap_or_else(|| "Istio's default conditions (5xx in older releases)".into())
        } else {
            field_value(body, "RetryOn")
                .map_or_else(|| "(not set here)".into(), |v| v.trim_matches('"').to_string())
        };
        out.push(Layer {
            tier: if istio { Tier::Mesh } else { Tier::Proxy },
            source: if istio { "istio (generated in Go)".into() } else { "envoy (generated in Go)".into() },
            name: enclosing_func(text, whole.start()),
            path: path.to_string(),
            line: field_line,
            attempts,
            budget: None,
            retry_on,
            targets: Default::default(),
            decl_lines: vec![field_line, line],
            via_env: Default::default(),
        });
    }
    out
}

/// The text of a `{ ... }` body whose opening brace was just consumed.
fn block(rest: &str) -> &str {
    let mut depth = 1usize;
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &rest[..i];
                }
            }
            _ => {}
        }
    }
    rest
}

/// The expression given to `field:` at the top level of a literal body.
fn field_value(body: &str, field: &str) -> Option<String> {
    let at = body.match_indices(field).find(|(i, _)| {
        let before = body[..*i].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && body[i + field.len()..].trim_start().starts_with(':')
    })?;
    let after = body[at.0 + field.len()..].trim_start().strip_prefix(':')?;
    let mut depth = 0i32;
    let mut end = after.len();
    let mut quoted = false;
    for (i, c) in after.char_indices() {
        match c {
            '"' => quoted = !quoted,
            _ if quoted => {}
            '{' | '(' => depth += 1,
            '}' | ')' => depth -= 1,
            ',' | '\n' if depth == 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    Some(after[..end].trim().to_string())
}

/// A count written as a literal, a wrapper of one (`&types.UInt32Value{Value:
/// 10}`, `wrapperspb.UInt32(10)`, `uint32(n)`), or a constant of the file.
fn resolve(text: &str, expr: &str) -> Option<u32> {
    static NUM: OnceLock<Regex> = OnceLock::new();
    static IDENT: OnceLock<Regex> = OnceLock::new();
    let inner = expr.trim().trim_end_matches(['}', ')']).trim();
    if inner.contains(['+', '-', '*', '/', '<', '>']) {
        return None;
    }
    let last = inner.rsplit(['{', '(', ':', ' ']).next().unwrap_or(inner).trim();
    if let Ok(n) = last.parse::<u32>() {
        return Some(n);
    }
    if re(&NUM, r"^[A-Za-z_][A-Za-z0-9_]*$").is_match(last) {
        let def =
            re(&IDENT, r"(?m)^\s*(?:const\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:[A-Za-z0-9_]+\s*)?=\s*(\d+)\s*$");
        return def.captures_iter(text).find(|c| &c[1] == last).and_then(|c| c[2].parse().ok());
    }
    None
}

fn line_at(text: &str, byte: usize) -> u32 {
    text[..byte].bytes().filter(|b| *b == b'\n').count() as u32 + 1
}

fn enclosing_func(text: &str, byte: usize) -> String {
    text[..byte]
        .rfind("\nfunc ")
        .map(|at| {
            let sig = &text[at + 6..];
            let sig = if sig.starts_with('(') {
                sig.split_once(')').map_or(sig, |(_, r)| r.trim_start())
            } else {
                sig
            };
            sig.split(['(', '[']).next().unwrap_or("").trim().to_string()
        })
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "(file level)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_istio_retry_literal_with_a_constant_count() {
        let go = "package r\nconst (\n\tTimeout = \"60s\"\n\tDefaultRouteRetryAttempts = 3\n)\nfunc makeRoute() *HTTPRoute {\n\treturn &HTTPRoute{\n\t\tRetries: &v1alpha3.HTTPRetry{\n\t\t\tAttempts:      DefaultRouteRetryAttempts,\n\t\t\tPerTryTimeout: Timeout,\n\t\t},\n\t}\n}\n";
        let l = read("route.go", go);
        assert_eq!(l.len(), 1);
        assert_eq!((l[0].attempts.clone(), l[0].line, l[0].tier), (Attempts::Total(4), 9, Tier::Mesh));
        assert_eq!(l[0].name, "makeRoute");
    }

    #[test]
    fn an_envoy_retry_policy_literal_with_a_wrapped_count() {
        let go = "package retry\nfunc DefaultPolicy() *route.RetryPolicy {\n\tp := route.RouteAction_RetryPolicy{\n\t\tNumRetries: &types.UInt32Value{Value: 10},\n\t\tRetryOn: \"connect-failure,refused-stream\",\n\t}\n\treturn &p\n}\n";
        let l = read("retry.go", go);
        assert_eq!((l[0].attempts.clone(), l[0].line, l[0].tier), (Attempts::Total(11), 4, Tier::Proxy));
        assert_eq!(l[0].retry_on, "connect-failure,refused-stream");
    }

    #[test]
    fn a_computed_count_is_unknown_and_no_literal_no_layer() {
        let go = "package r\nfunc f(n uint32) { _ = &HTTPRetry{Attempts: int32(n) + 1} }\n";
        assert!(matches!(read("r.go", go)[0].attempts, Attempts::Unknown(_)));
        assert!(read("r.go", "package r\nfunc f() { retries := 3 }\n").is_empty());
    }
}
