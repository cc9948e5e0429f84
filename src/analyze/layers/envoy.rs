//! Envoy route configuration: a `retry_policy` on a virtual host or a route
//! (`num_retries` counts retries, 1 when unset, so `num_retries + 1` tries;
//! `retry_on` says when), and the `retry_budget` of the circuit breakers of
//! the cluster a route sends to, which bounds the route's retries to a
//! share of its active requests (Envoy's default budget is 20%).

use std::collections::BTreeMap;

use serde_yaml::Value;

use super::yamldocs::{get, items, number, text, Doc};
use super::{hosts, Attempts, Layer, Tier};

/// Every retrying route of every `virtual_hosts` list in a document.
pub(crate) fn read(path: &str, doc: &Doc) -> Vec<Layer> {
    let mut budgets = BTreeMap::new();
    find_budgets(&doc.value, &mut budgets, 0);
    let mut out = Vec::new();
    let mut seen = 0usize;
    find_virtual_hosts(
        &doc.value,
        &mut |vh| {
            let vh_name = vh.get("name").and_then(text).unwrap_or_default();
            let domains: Vec<String> =
                items(vh.get("domains")).iter().filter_map(text).filter_map(|d| hosts::key(&d)).collect();
            let vh_policy = vh.get("retry_policy");
            for route in items(vh.get("routes")) {
                let action = route.get("route");
                let Some(policy) = action.and_then(|a| a.get("retry_policy")).or(vh_policy) else { continue };
                let line = doc.line_of("retry_policy", seen);
                seen += 1;
                let cluster = action.and_then(|a| a.get("cluster")).and_then(text).unwrap_or_default();
                let attempts = match policy.get("num_retries") {
                    None => Attempts::Total(2),
                    Some(v) => match number(v) {
                        Some(n) => Attempts::Total(n.saturating_add(1).min(u32::MAX as u64) as u32),
                        None => Attempts::Unknown(format!("num_retries: {}", text(v).unwrap_or_default())),
                    },
                };
                let mut targets: std::collections::BTreeSet<String> = domains.iter().cloned().collect();
                targets.extend(hosts::key(&cluster));
                let prefix = get(route, &["match", "prefix"])
                    .or_else(|| get(route, &["match", "path"]))
                    .and_then(text);
                out.push(Layer {
                    tier: Tier::Proxy,
                    source: "envoy".into(),
                    name: format!("{vh_name} {}", prefix.unwrap_or_default()).trim().to_string(),
                    path: path.to_string(),
                    line,
                    attempts,
                    budget: budgets.get(&cluster).copied(),
                    retry_on: policy
                        .get("retry_on")
                        .and_then(text)
                        .unwrap_or_else(|| "(none set: Envoy retries nothing)".into()),
                    targets,
                    decl_lines: vec![line],
                    via_env: Default::default(),
                });
            }
        },
        0,
    );
    out
}

fn find_virtual_hosts(v: &Value, f: &mut dyn FnMut(&Value), depth: usize) {
    if depth > 64 {
        return;
    }
    match v {
        Value::Mapping(m) => {
            for (k, val) in m {
                if k.as_str() == Some("virtual_hosts") {
                    for vh in items(Some(val)) {
                        f(vh);
                    }
                } else {
                    find_virtual_hosts(val, f, depth + 1);
                }
            }
        }
        Value::Sequence(s) => s.iter().for_each(|x| find_virtual_hosts(x, f, depth + 1)),
        _ => {}
    }
}

/// Clusters with a `retry_budget` (share of active requests, 0.2 = 20%).
fn find_budgets(v: &Value, out: &mut BTreeMap<String, f64>, depth: usize) {
    if depth > 64 {
        return;
    }
    match v {
        Value::Mapping(m) => {
            if let (Some(name), Some(th)) =
                (m.get("name").and_then(text), get(v, &["circuit_breakers", "thresholds"]))
            {
                for t in items(Some(th)) {
                    if let Some(b) = t.get("retry_budget") {
                        let pct =
                            get(b, &["budget_percent", "value"]).and_then(|p| p.as_f64()).unwrap_or(20.0);
                        out.insert(name.clone(), pct / 100.0);
                    }
                }
            }
            m.values().for_each(|x| find_budgets(x, out, depth + 1));
        }
        Value::Sequence(s) => s.iter().for_each(|x| find_budgets(x, out, depth + 1)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::{declared, Attempts};

    const ROUTES: &str = "static_resources:\n  listeners:\n  - filter_chains:\n    - filters:\n      - typed_config:\n          route_config:\n            virtual_hosts:\n            - name: api\n              domains: [\"payments.internal\"]\n              routes:\n              - match: { prefix: /checkout }\n                route:\n                  cluster: payments\n                  retry_policy: { retry_on: 5xx, num_retries: 4 }\n              - match: { prefix: /health }\n                route: { cluster: payments }\n  clusters:\n  - name: payments\n";

    #[test]
    fn a_route_retry_policy_is_a_proxy_layer_of_num_retries_plus_one() {
        let l = declared(&[("envoy.yaml".into(), ROUTES.into())]).layers;
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!((l[0].attempts.clone(), l[0].line, l[0].budget), (Attempts::Total(5), 14, None));
        assert_eq!(l[0].name, "api /checkout");
        assert!(l[0].targets.contains("payments"));
    }

    #[test]
    fn a_cluster_retry_budget_bounds_its_routes() {
        let with_budget = format!("{ROUTES}    circuit_breakers:\n      thresholds:\n      - retry_budget: {{ budget_percent: {{ value: 25.0 }}, min_retry_concurrency: 3 }}\n");
        let l = declared(&[("envoy.yaml".into(), with_budget)]).layers;
        assert_eq!(l[0].budget, Some(0.25));
        // Without `virtual_hosts`, `retry_policy` is not Envoy's.
        assert!(declared(&[("x.yaml".into(), "retry_policy: { num_retries: 3 }\n".into())])
            .layers
            .is_empty());
    }
}
