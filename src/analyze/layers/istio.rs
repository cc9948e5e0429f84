//! Istio `VirtualService` routes: `http[].retries` (`attempts` counts
//! retries, so a route makes `attempts + 1` tries; `attempts: 0` turns
//! retries off), `retryOn`, and the hosts the route serves and sends to.
//!
//! Only what a route declares is a layer. Istio also retries routes that
//! declare nothing (2 retries by default in recent releases); that default
//! is listed in `docs/layers.md` and not counted, since which Istio a
//! cluster runs is not in the repository.

use std::collections::BTreeSet;

use super::yamldocs::{get, items, number, text, Doc};
use super::{hosts, Attempts, Layer, Tier};

/// The retrying routes of one VirtualService document.
pub(crate) fn read(path: &str, doc: &Doc) -> Vec<Layer> {
    let name =
        get(&doc.value, &["metadata", "name"]).and_then(text).unwrap_or_else(|| "VirtualService".into());
    let served: BTreeSet<String> = items(get(&doc.value, &["spec", "hosts"]))
        .iter()
        .filter_map(text)
        .filter_map(|h| hosts::key(&h))
        .collect();
    let mut out = Vec::new();
    let mut seen = 0usize;
    for (i, route) in items(get(&doc.value, &["spec", "http"])).iter().enumerate() {
        let Some(retries) = route.get("retries") else { continue };
        let line = doc.line_of("attempts", seen);
        if retries.get("attempts").is_some() {
            seen += 1;
        }
        let attempts = match retries.get("attempts") {
            Some(v) => match number(v) {
                Some(n) => Attempts::Total(n.saturating_add(1).min(u32::MAX as u64) as u32),
                None => Attempts::Unknown(format!("attempts: {}", text(v).unwrap_or_default())),
            },
            // `retries:` without `attempts` keeps Istio's default.
            None => Attempts::Unknown("retries without attempts: Istio's default".into()),
        };
        let mut targets = served.clone();
        for dest in items(route.get("route")) {
            if let Some(k) = get(dest, &["destination", "host"]).and_then(text).and_then(|h| hosts::key(&h)) {
                targets.insert(k);
            }
        }
        let route_name = route.get("name").and_then(text).unwrap_or_else(|| format!("http[{i}]"));
        out.push(Layer {
            tier: Tier::Mesh,
            source: "istio".into(),
            name: format!("{name} {route_name}"),
            path: path.to_string(),
            line,
            attempts,
            budget: None,
            retry_on: retries
                .get("retryOn")
                .and_then(text)
                .unwrap_or_else(|| "Istio's default conditions (connect-failure, refused-stream, unavailable, cancelled, retriable-status-codes)".into()),
            targets,
            decl_lines: vec![line],
            via_env: Default::default(),
        });
    }
    out
}

/// A pre-1.0 `RouteRule` (`config.istio.io/v1alpha2`): one route for its
/// `destination` (`name`, or the host itself in the older string form),
/// retried per `httpReqRetries.simpleRetry.attempts`, which counts retries
/// as a VirtualService's `attempts` does.
pub(crate) fn read_route_rule(path: &str, doc: &Doc) -> Vec<Layer> {
    let Some(retry) = get(&doc.value, &["spec", "httpReqRetries", "simpleRetry"]) else { return Vec::new() };
    let name = get(&doc.value, &["metadata", "name"]).and_then(text).unwrap_or_else(|| "RouteRule".into());
    let dest = get(&doc.value, &["spec", "destination"]);
    let host = dest.and_then(|d| d.get("name").and_then(text).or_else(|| text(d)));
    let line = doc.line_of("attempts", 0);
    let attempts = match retry.get("attempts") {
        Some(v) => match number(v) {
            Some(n) => Attempts::Total(n.saturating_add(1).min(u32::MAX as u64) as u32),
            None => Attempts::Unknown(format!("attempts: {}", text(v).unwrap_or_default())),
        },
        None => Attempts::Unknown("simpleRetry without attempts: Istio's default".into()),
    };
    vec![Layer {
        tier: Tier::Mesh,
        source: "istio".into(),
        name: format!("RouteRule {name}"),
        path: path.to_string(),
        line,
        attempts,
        budget: None,
        retry_on: "Istio's default conditions (5xx and connection failures)".into(),
        targets: host.and_then(|h| hosts::key(&h)).into_iter().collect(),
        decl_lines: vec![line],
        via_env: Default::default(),
    }]
}

#[cfg(test)]
mod tests {
    use super::super::{declared, Attempts};

    fn layers(yaml: &str) -> Vec<super::Layer> {
        declared(&[("mesh/vs.yaml".to_string(), yaml.to_string())]).layers
    }

    #[test]
    fn a_route_with_retries_is_a_mesh_layer_of_attempts_plus_one() {
        let l = layers("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: { name: pay }\nspec:\n  hosts: [payments.shop.svc.cluster.local]\n  http:\n  - name: primary\n    retries:\n      attempts: 3\n      retryOn: 5xx,reset\n    route:\n    - destination: { host: payments }\n");
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].attempts, Attempts::Total(4));
        assert_eq!((l[0].line, l[0].retry_on.as_str(), l[0].name.as_str()), (9, "5xx,reset", "pay primary"));
        assert!(l[0].targets.contains("payments"));
    }

    #[test]
    fn a_pre_1_0_route_rule_retries_its_destination() {
        let rule = "apiVersion: config.istio.io/v1alpha2\nkind: RouteRule\nmetadata: { name: ratings-retry }\nspec:\n  destination:\n    name: ratings\n  route:\n  - labels: { version: v1 }\n  httpReqRetries:\n    simpleRetry:\n      attempts: 3\n      perTryTimeout: 2s\n";
        let l = layers(rule);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!(
            (l[0].attempts.clone(), l[0].line, l[0].name.as_str()),
            (Attempts::Total(4), 11, "RouteRule ratings-retry")
        );
        assert_eq!(l[0].targets.iter().collect::<Vec<_>>(), ["ratings"]);
        // The older string form of the destination names the host itself.
        let old = rule.replace(
            "  destination:\n    name: ratings\n",
            "  destination: ratings.default.svc.cluster.local\n",
        );
        assert_eq!(layers(&old)[0].targets.iter().collect::<Vec<_>>(), ["ratings"]);
        // A rule that only routes is no layer.
        assert!(layers(&rule.replace(
            "  httpReqRetries:\n    simpleRetry:\n      attempts: 3\n      perTryTimeout: 2s\n",
            ""
        ))
        .is_empty());
    }

    #[test]
    fn routes_without_retries_and_other_kinds_are_no_layers() {
        assert!(layers("kind: VirtualService\nspec:\n  hosts: [a]\n  http:\n  - route:\n    - destination: { host: a }\n").is_empty());
        assert!(layers("kind: DestinationRule\nspec:\n  host: a\n  retries: { attempts: 3 }\n").is_empty());
        let off =
            layers("kind: VirtualService\nspec:\n  hosts: [a]\n  http:\n  - retries: { attempts: 0 }\n");
        assert_eq!(off[0].attempts, Attempts::Total(1));
        assert!(!off[0].attempts.retries());
    }
}
