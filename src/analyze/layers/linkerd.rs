//! Linkerd: a `ServiceProfile`'s retryable routes (`isRetryable: true`,
//! bounded by the profile's `retryBudget`, Linkerd's default 20% of
//! requests plus 10 per second when the profile sets none), and the
//! `retry.linkerd.io/http` (or `/grpc`) and `retry.linkerd.io/limit`
//! annotations of newer releases (1 retry when the limit is unset or 0) on
//! a Service or route.

use super::yamldocs::{get, items, number, text, Doc};
use super::{hosts, Attempts, Layer, Tier};

/// Linkerd's retry budget when a profile sets none (linkerd.io, "How to
/// configure retries": `retryRatio: 0.2`, `minRetriesPerSecond: 10`).
const DEFAULT_RETRY_RATIO: f64 = 0.2;

/// The retryable routes of a ServiceProfile, bounded by its budget.
pub(crate) fn read_profile(path: &str, doc: &Doc) -> Vec<Layer> {
    let name = get(&doc.value, &["metadata", "name"]).and_then(text).unwrap_or_default();
    let ratio = get(&doc.value, &["spec", "retryBudget", "retryRatio"])
        .and_then(|v| v.as_f64().or_else(|| text(v).and_then(|t| t.parse().ok())))
        .unwrap_or(DEFAULT_RETRY_RATIO);
    let mut out = Vec::new();
    let mut seen = 0usize;
    for route in items(get(&doc.value, &["spec", "routes"])) {
        let retryable = route.get("isRetryable").is_some_and(|v| v.as_bool() == Some(true));
        let line = doc.line_of("isRetryable", seen);
        if route.get("isRetryable").is_some() {
            seen += 1;
        }
        if !retryable {
            continue;
        }
        let cond = route.get("condition");
        let method = cond.and_then(|c| c.get("method")).and_then(text).unwrap_or_else(|| "any method".into());
        let route_name = route.get("name").and_then(text).unwrap_or_default();
        out.push(Layer {
            tier: Tier::Mesh,
            source: "linkerd".into(),
            name: format!("{name} {route_name}"),
            path: path.to_string(),
            line,
            attempts: Attempts::Unbounded,
            budget: Some(ratio),
            retry_on: describe_route(&method, &route_name),
            targets: hosts::key(&name).into_iter().collect(),
            decl_lines: vec![line],
            via_env: Default::default(),
        });
    }
    out
}

/// `failures of GET /orders`: a route name that already starts with its
/// method (as `linkerd profile` writes them) is not given it twice.
fn describe_route(method: &str, route_name: &str) -> String {
    let named = route_name.split_whitespace().next().is_some_and(|w| w.eq_ignore_ascii_case(method));
    match (named, route_name.is_empty()) {
        (true, _) => format!("failures of {route_name}"),
        (false, true) => format!("failures of {method}"),
        (false, false) => format!("failures of {method} {route_name}"),
    }
}

/// A `retry.linkerd.io/http` annotation on any resource: the resource's
/// name (a Service) or its parent and backend references (an HTTPRoute)
/// are its hosts.
pub(crate) fn read_annotations(path: &str, doc: &Doc) -> Vec<Layer> {
    let Some(ann) = get(&doc.value, &["metadata", "annotations"]) else { return Vec::new() };
    let Some(on) =
        ann.get("retry.linkerd.io/http").or_else(|| ann.get("retry.linkerd.io/grpc")).and_then(text)
    else {
        return Vec::new();
    };
    let limit = ann.get("retry.linkerd.io/limit");
    let attempts = match limit {
        None => Attempts::Total(2),
        Some(v) => match number(v) {
            // Linkerd reads a limit of 0 as unset: its default of 1 retry.
            Some(0) => Attempts::Total(2),
            Some(n) => Attempts::Total(n.saturating_add(1).min(u32::MAX as u64) as u32),
            None => Attempts::Unknown(format!("retry.linkerd.io/limit: {}", text(v).unwrap_or_default())),
        },
    };
    let name = get(&doc.value, &["metadata", "name"]).and_then(text).unwrap_or_default();
    let mut targets: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let kind = get(&doc.value, &["kind"]).and_then(text).unwrap_or_default();
    if kind == "Service" {
        targets.extend(hosts::key(&name));
    }
    for r in items(get(&doc.value, &["spec", "parentRefs"])) {
        targets.extend(r.get("name").and_then(text).and_then(|n| hosts::key(&n)));
    }
    for rule in items(get(&doc.value, &["spec", "rules"])) {
        for b in items(rule.get("backendRefs")) {
            targets.extend(b.get("name").and_then(text).and_then(|n| hosts::key(&n)));
        }
    }
    let needle = if limit.is_some() { "retry.linkerd.io/limit" } else { "retry.linkerd.io/http" };
    let line = doc.line_of(needle, 0);
    vec![Layer {
        tier: Tier::Mesh,
        source: "linkerd".into(),
        name: format!("{kind} {name}"),
        path: path.to_string(),
        line,
        attempts,
        budget: None,
        retry_on: on,
        targets,
        decl_lines: vec![line],
        via_env: Default::default(),
    }]
}

#[cfg(test)]
mod tests {
    use super::super::{declared, Attempts};

    fn layers(yaml: &str) -> Vec<super::Layer> {
        declared(&[("mesh/linkerd.yaml".to_string(), yaml.to_string())]).layers
    }

    #[test]
    fn retryable_profile_routes_are_bounded_by_the_budget() {
        let l = layers("kind: ServiceProfile\nmetadata: { name: payments.shop.svc.cluster.local }\nspec:\n  routes:\n  - name: GET /orders\n    condition: { method: GET }\n    isRetryable: true\n  - name: POST /orders\n    condition: { method: POST }\n  retryBudget: { retryRatio: 0.1, minRetriesPerSecond: 5, ttl: 10s }\n");
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!((l[0].attempts.clone(), l[0].budget, l[0].line), (Attempts::Unbounded, Some(0.1), 7));
        assert!(l[0].targets.contains("payments"));
        assert_eq!(l[0].retry_on, "failures of GET /orders");
        let unnamed = layers("kind: ServiceProfile\nmetadata: { name: a }\nspec:\n  routes:\n  - name: orders\n    condition: { method: GET }\n    isRetryable: true\n");
        assert_eq!(unnamed[0].retry_on, "failures of GET orders");
        let default_budget = layers("kind: ServiceProfile\nmetadata: { name: a }\nspec:\n  routes:\n  - name: r\n    isRetryable: true\n");
        assert_eq!(default_budget[0].budget, Some(0.2));
    }

    #[test]
    fn annotations_give_limit_plus_one_and_no_annotation_no_layer() {
        let l = layers("kind: HTTPRoute\nmetadata:\n  name: pay\n  annotations:\n    retry.linkerd.io/http: 5xx\n    retry.linkerd.io/limit: \"3\"\nspec:\n  parentRefs: [{ name: payments, kind: Service }]\n");
        assert_eq!((l[0].attempts.clone(), l[0].line), (Attempts::Total(4), 6));
        assert!(l[0].targets.contains("payments"));
        assert!(
            layers("kind: Service\nmetadata:\n  name: payments\n  annotations: { team: pay }\n").is_empty()
        );
        let grpc = layers("kind: Service\nmetadata:\n  name: payments\n  annotations:\n    retry.linkerd.io/grpc: unavailable\n    retry.linkerd.io/limit: \"0\"\n");
        assert_eq!(
            (grpc[0].attempts.clone(), grpc[0].retry_on.as_str()),
            (Attempts::Total(2), "unavailable")
        );
        assert!(grpc[0].targets.contains("payments"));
    }
}
