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
pub(crate) fn read(path: &str, text: &str) -> Vec<Layer> {
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
        let attempts = match resolve(text, &value, 0) {
            Some(n) => Attempts::Total(n.saturating_add(1)),
            None => Attempts::Unknown(format!("{field}: {value}")),
        };
        let retry_on = match field_value(body, "RetryOn") {
            Some(v) => string_value(text, &v),
            None if istio => "Istio's default conditions (5xx in older releases)".into(),
            None => "(not set here)".into(),
        };
        out.push(Layer {
            tier: if istio { Tier::Mesh } else { Tier::Proxy },
            source: if istio { "istio (generated in Go)".into() } else { "envoy (generated in Go)".into() },
            name: item_name(text, whole.start()),
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
/// 10}`, `wrapperspb.UInt32(10)`, `uint32(3)`), or a name the file defines
/// as one of those (`defaultNumRetries = &wrappers.UInt32Value{Value: 2}`).
/// Anything with an operator or a second argument (`OrDefault(x, 2)`) is
/// not a count retrygate can tell.
fn resolve(text: &str, expr: &str, depth: usize) -> Option<u32> {
    let e = expr.trim().trim_start_matches('&').trim();
    if let Ok(n) = e.parse::<u32>() {
        return Some(n);
    }
    if depth > 4 || e.contains([',', '+', '-', '*', '/', '<', '>', '"']) {
        return None;
    }
    if let Some((ty, inner)) = e.split_once('{') {
        let inner = inner.strip_suffix('}')?;
        if !is_path(ty) {
            return None;
        }
        let value = inner.split_once(':').map_or(inner, |(_, v)| v);
        return resolve(text, value, depth + 1);
    }
    if let Some((f, inner)) = e.split_once('(') {
        return if is_path(f) { resolve(text, inner.strip_suffix(')')?, depth + 1) } else { None };
    }
    is_path(e).then(|| definition(text, e)).flatten().and_then(|rhs| resolve(text, &rhs, depth + 1))
}

/// The right-hand side of `name = ...` (`const`, `var`, a `var (...)` block
/// or `:=`) in the file.
fn definition(text: &str, name: &str) -> Option<String> {
    let def = Regex::new(&format!(
        r"(?m)^\s*(?:const\s+|var\s+)?{}\s*(?:[A-Za-z_][\w.]*\s*)?:?=\s*(.+?)\s*$",
        regex::escape(name)
    ))
    .ok()?;
    def.captures(text).map(|c| c[1].to_string())
}

/// A string as written (`"5xx"`) or through a name the file defines as one.
fn string_value(text: &str, expr: &str) -> String {
    let e = expr.trim();
    if let Some(s) = e.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return s.to_string();
    }
    if is_path(e) {
        if let Some(s) = definition(text, e)
            .and_then(|d| d.strip_prefix('"').and_then(|s| s.strip_suffix('"')).map(str::to_string))
        {
            return s;
        }
    }
    format!("(computed: {e})")
}

fn is_path(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

fn line_at(text: &str, byte: usize) -> u32 {
    text[..byte].bytes().filter(|b| *b == b'\n').count() as u32 + 1
}

/// What a reader calls the literal: the variable it is assigned to on its
/// line (`cachedDefaultPolicy = &route.RetryPolicy{`), else its function.
fn item_name(text: &str, byte: usize) -> String {
    static ASSIGNED: OnceLock<Regex> = OnceLock::new();
    let line_start = text[..byte].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..byte];
    match re(&ASSIGNED, r"([A-Za-z_]\w*)\s*:?=\s*&?[\w.]*$").captures(before) {
        Some(c) => c[1].to_string(),
        None => enclosing_func(text, byte),
    }
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
    fn a_count_and_conditions_defined_in_a_var_block_are_resolved() {
        let go = "package retry\nvar (\n\tdefaultNumRetries = &wrappers.UInt32Value{Value: 2}\n\tdefaultRetryOn    = \"connect-failure,refused-stream\"\n\tcachedPolicy = &route.RetryPolicy{\n\t\tNumRetries: defaultNumRetries,\n\t\tRetryOn:    defaultRetryOn,\n\t}\n)\n";
        let l = read("retry.go", go);
        assert_eq!((l[0].attempts.clone(), l[0].name.as_str()), (Attempts::Total(3), "cachedPolicy"));
        assert_eq!(l[0].retry_on, "connect-failure,refused-stream");
    }

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
        let defaulted =
            "package r\nfunc f() { _ = &HTTPRetry{Attempts: int32(ptr.OrDefault(r.Attempts, 2))} }\n";
        assert!(matches!(read("r.go", defaulted)[0].attempts, Attempts::Unknown(_)));
        assert!(read("r.go", "package r\nfunc f() { retries := 3 }\n").is_empty());
    }
}
