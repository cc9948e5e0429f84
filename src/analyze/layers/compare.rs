//! Base against head: one `retry-amplified` finding per operation whose
//! figure grew past `limits.max_amplification` through a chain of two or
//! more retrying layers, reported at the changed line of the layer that
//! grew; notes for every other layer change (a single layer's count is the
//! business of the per-layer rules), for a chain whose figure cannot be
//! computed, and for a changed file that could carry retries but does not
//! parse (blocking: the gate cannot see what it declares).

use std::collections::BTreeMap;

use serde_json::json;

use super::chain::{self, factor, Figure, Operation};
use super::{Declared, Layer};
use crate::changeset::FileChange;
use crate::finding::{Finding, Kind, Note};

/// The rule id of the findings.
pub(crate) const RULE: &str = "layers/amplification";

/// The chain as data: what the JSON `head`/`base` and the comment's
/// diagram are made of.
pub(crate) fn chain_json(op: &Operation) -> serde_json::Value {
    json!({
        "operation": op.label,
        "attempts": op.figure().to_json(),
        "chain": op.layers.iter().map(|l| json!({
            "tier": l.tier.as_str(),
            "source": l.source,
            "name": l.name,
            "attempts": factor(l).to_json(),
            "budget": l.budget,
            "retry_on": l.retry_on,
            "location": l.location(),
        })).collect::<Vec<_>>(),
    })
}

/// The findings and notes of a change.
pub(crate) fn findings(
    base: &Declared,
    head: &Declared,
    changed: &[&FileChange],
    max: u32,
) -> (Vec<Finding>, Vec<Note>) {
    let mut findings = Vec::new();
    let mut notes = Vec::new();
    let by_path: BTreeMap<&str, &FileChange> = changed.iter().map(|f| (f.path.as_str(), *f)).collect();
    for (path, line, message) in &head.unreadable {
        if by_path.get(path.as_str()).is_some_and(|f| f.head.text().is_some()) {
            notes.push(Note::blocking(
                Some(path),
                format!("line {line}: {message}; this file may declare retries (a mesh route, a proxy or a client), so retry amplification could not be checked; fix the file, or review its retries by hand and sign off"),
            ));
        }
    }
    let base_ops: BTreeMap<String, Operation> =
        chain::operations(base).into_iter().map(|o| (o.label.clone(), o)).collect();
    let base_layers: BTreeMap<(String, String, String), &Layer> =
        base.layers.iter().map(|l| (l.key(), l)).collect();
    for op in chain::operations(head) {
        let grown: Vec<&Layer> = op
            .layers
            .iter()
            .filter(|l| match base_layers.get(&l.key()) {
                None => l.attempts.retries(),
                Some(b) => factor(l).exceeds(factor(b)) != Some(false) && factor(l) != factor(b),
            })
            .collect();
        // A client's own count is the retry findings' business; a chain is
        // this module's once a mesh or proxy layer is in it.
        if op.layers.iter().all(|l| matches!(l.tier, super::Tier::Client | super::Tier::Sdk)) {
            continue;
        }
        let head_fig = op.figure();
        // No layer grew, yet the chain may be new: its layers were joined
        // into one path (a base URL, a host or a Service name changed).
        let joined = grown.is_empty();
        let cause = match place(&grown, &by_path) {
            Some(c) => Some(c),
            None if joined => {
                op.layers.iter().find(|l| by_path.contains_key(l.path.as_str())).map(|l| (l, l.line))
            }
            None => continue,
        };
        let base_op = base_ops.get(&op.label);
        // A chain that only moved (a renamed file) reads the same on both sides.
        if base_op.is_some_and(|b| b.chain_text() == op.chain_text() && b.figure() == head_fig) {
            continue;
        }
        // The same layers already formed one path in the base (under another
        // label): nothing was joined.
        if joined && base_ops.values().any(|b| same_layers(b, &op) && b.figure() == head_fig) {
            continue;
        }
        // A chain joined from service to service: where the change named
        // the next host (an environment entry) says it best.
        let hop = op.hops.iter().find(|(p, _)| by_path.contains_key(p.as_str()));
        let (at_path, at_line) = match (cause, hop) {
            (_, Some((p, line))) if joined => (Some(p.as_str()), format!("line {line}: ")),
            (Some((l, line)), _) => (Some(l.path.as_str()), format!("line {line}: ")),
            (None, _) => (None, String::new()),
        };
        let base_fig = base_op.map_or(Figure::Known(1.0), Operation::figure);
        // Nothing grew and the figure is what it was (a route that turns
        // retries off, `attempts: 0`): there is no change to report.
        if joined && head_fig == base_fig {
            continue;
        }
        let summary = format!(
            "`{}`: up to {} attempts per inbound request (was {}): {}",
            op.label,
            head_fig.describe(),
            base_fig.describe(),
            op.chain_text()
        );
        let over = head_fig.exceeds(Figure::Known(f64::from(max)));
        let grew = head_fig.exceeds(base_fig);
        if op.retrying() >= 2 && joined && over != Some(false) && grew != Some(false) {
            notes.push(Note::blocking(
                at_path,
                format!("{at_line}{summary}; no layer's count changed, but the change joined these layers into one path (a base URL, a host or a Service name), over limits.max_amplification ({max}) or not computable: retry at one layer only, or bound the others with a retry budget (tower's TpsBudget, Envoy's retry_budget, Linkerd's retryBudget)"),
            ));
            continue;
        }
        let Some(cause) = cause else { continue };
        if op.retrying() >= 2 {
            match (over, grew) {
                (Some(true), Some(true)) => {
                    findings.push(
                        Finding::new(Kind::RetryAmplified, RULE, &cause.0.path, cause.1)
                            .message(format!(
                                "{summary}; over limits.max_amplification ({max}): retry at one layer only, or bound the others with a retry budget (tower's TpsBudget, Envoy's retry_budget, Linkerd's retryBudget)"
                            ))
                            .base(base_ops.get(&op.label).map_or(json!({"attempts": 1}), chain_json))
                            .head(chain_json(&op)),
                    );
                    continue;
                }
                (None, _) | (_, None) => {
                    notes.push(Note::blocking(
                        Some(&cause.0.path),
                        format!("line {}: {summary}; a layer's count cannot be computed, so whether the chain stays within limits.max_amplification ({max}) is not known; a maintainer checks the count before signing off", cause.1),
                    ));
                    continue;
                }
                _ => {}
            }
        }
        notes.push(Note::info(Some(&cause.0.path), format!("line {}: layer change: {summary}", cause.1)));
    }
    (findings, notes)
}

/// Whether two operations chain the same layers (file, source and name).
fn same_layers(a: &Operation, b: &Operation) -> bool {
    let keys = |o: &Operation| o.layers.iter().map(|l| l.key()).collect::<std::collections::BTreeSet<_>>();
    keys(a) == keys(b)
}

/// The layer and line a growth is reported at: the first grown layer with
/// a declaring line the change added, else the first grown layer in a
/// changed file (at its own line). `None` when no grown layer is in a
/// changed file: the change did not cause it.
fn place<'l>(grown: &[&'l Layer], changed: &BTreeMap<&str, &FileChange>) -> Option<(&'l Layer, u32)> {
    for l in grown {
        if let Some(f) = changed.get(l.path.as_str()) {
            if let Some(line) = l.decl_lines.iter().chain(std::iter::once(&l.line)).find(|n| f.is_added(**n))
            {
                return Some((l, *line));
            }
        }
    }
    grown.iter().find(|l| changed.contains_key(l.path.as_str())).map(|l| (*l, l.line))
}

#[cfg(test)]
mod tests {
    use super::super::declared;
    use super::*;

    fn model(files: &[(&str, &str)]) -> Declared {
        declared(&files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect::<Vec<_>>())
    }

    const VS_BASE: &str = "kind: VirtualService\nspec:\n  hosts: [payments]\n  http:\n  - route: [{ destination: { host: payments } }]\n";
    const VS_HEAD: &str = "kind: VirtualService\nspec:\n  hosts: [payments]\n  http:\n  - retries: { attempts: 2, retryOn: 5xx }\n    route: [{ destination: { host: payments } }]\n";
    const CLIENT: &str = "use backon::{ExponentialBuilder, Retryable};\nasync fn checkout(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    (|| async { c.get(\"http://payments:8080/orders\").send().await })\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times(2))\n        .await\n}\n";

    #[test]
    fn mesh_retries_added_under_a_retrying_client_is_amplified_at_the_added_line() {
        let base = model(&[("mesh/vs.yaml", VS_BASE), ("src/pay.rs", CLIENT)]);
        let head = model(&[("mesh/vs.yaml", VS_HEAD), ("src/pay.rs", CLIENT)]);
        let change = FileChange::from_texts("mesh/vs.yaml", Some(VS_BASE), Some(VS_HEAD));
        let (f, _) = findings(&base, &head, &[&change], 3);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].kind, f[0].path.as_str(), f[0].line), (Kind::RetryAmplified, "mesh/vs.yaml", 5));
        assert_eq!(
            f[0].message.split(";").next().unwrap(),
            "`GET /orders -> payments`: up to 9 attempts per inbound request (was 3): client 3 × istio 3"
        );
        assert_eq!(f[0].head.as_ref().unwrap()["attempts"], 9);
    }

    #[test]
    fn within_the_limit_or_a_single_layer_is_a_note_not_a_finding() {
        let base = model(&[("mesh/vs.yaml", VS_BASE), ("src/pay.rs", CLIENT)]);
        let head = model(&[("mesh/vs.yaml", VS_HEAD), ("src/pay.rs", CLIENT)]);
        let change = FileChange::from_texts("mesh/vs.yaml", Some(VS_BASE), Some(VS_HEAD));
        let (f, n) = findings(&base, &head, &[&change], 9);
        assert!(f.is_empty(), "{f:?}");
        assert!(n.iter().any(|n| !n.blocking && n.message.contains("up to 9 attempts")), "{n:?}");
        let (f, n) = findings(
            &model(&[("mesh/vs.yaml", VS_BASE)]),
            &model(&[("mesh/vs.yaml", VS_HEAD)]),
            &[&change],
            1,
        );
        assert!(f.is_empty());
        assert!(
            n.iter().any(|n| n.message.contains(
                "layer change: `requests to payments`: up to 3 attempts per inbound request (was 1): istio 3"
            )),
            "{n:?}"
        );
    }

    #[test]
    fn a_moved_route_is_no_change() {
        let base = model(&[("mesh/vs.yaml", VS_HEAD), ("src/pay.rs", CLIENT)]);
        let head = model(&[("k8s/mesh/vs.yaml", VS_HEAD), ("src/pay.rs", CLIENT)]);
        let moved = FileChange::from_texts("k8s/mesh/vs.yaml", None, Some(VS_HEAD));
        let (f, n) = findings(&base, &head, &[&moved], 3);
        assert!(f.is_empty() && n.is_empty(), "{f:?} {n:?}");
    }

    #[test]
    fn an_unchanged_chain_gives_nothing_and_a_broken_changed_file_blocks() {
        let both = model(&[("mesh/vs.yaml", VS_HEAD), ("src/pay.rs", CLIENT)]);
        let readme = FileChange::from_texts("README.md", Some("a"), Some("b"));
        let (f, n) = findings(&both, &both, &[&readme], 3);
        assert!(f.is_empty() && n.is_empty(), "{f:?} {n:?}");
        let broken = "kind: VirtualService\nspec:\n  http:\n  - retries: { attempts: 3\n";
        let head = model(&[("mesh/vs.yaml", broken)]);
        let change = FileChange::from_texts("mesh/vs.yaml", Some(VS_BASE), Some(broken));
        let (_, n) = findings(&model(&[("mesh/vs.yaml", VS_BASE)]), &head, &[&change], 3);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].blocking && n[0].message.starts_with("line 4: not valid YAML"), "{n:?}");
    }

    #[test]
    fn a_retrying_client_pointed_at_a_retrying_route_blocks_though_no_count_changed() {
        // Only the host the client calls changes: no layer's count grows,
        // but the two layers become one path.
        let elsewhere = CLIENT.replace("http://payments:8080", "http://ledger:8080");
        let base = model(&[("mesh/vs.yaml", VS_HEAD), ("src/pay.rs", &elsewhere)]);
        let head = model(&[("mesh/vs.yaml", VS_HEAD), ("src/pay.rs", CLIENT)]);
        let change = FileChange::from_texts("src/pay.rs", Some(&elsewhere), Some(CLIENT));
        let (f, n) = findings(&base, &head, &[&change], 3);
        assert!(f.is_empty(), "{f:?}");
        let blocking: Vec<&Note> = n.iter().filter(|n| n.blocking).collect();
        assert_eq!(blocking.len(), 1, "{n:?}");
        assert_eq!(blocking[0].path.as_deref(), Some("src/pay.rs"));
        assert!(
            blocking[0].message.starts_with(
                "line 3: `GET /orders -> payments`: up to 9 attempts per inbound request (was 1): client 3 × istio 3; no layer's count changed, but the change joined these layers into one path"
            ),
            "{n:?}"
        );
        // Within the limit it is the usual layer-change note.
        let (f, n) = findings(&base, &head, &[&change], 9);
        assert!(f.is_empty() && n.iter().all(|n| !n.blocking), "{f:?} {n:?}");
    }

    #[test]
    fn a_route_that_turns_retries_off_changes_no_figure_and_is_not_reported() {
        let off = VS_HEAD.replace("attempts: 2, retryOn: 5xx", "attempts: 0");
        let base = model(&[("mesh/vs.yaml", VS_BASE)]);
        let head = model(&[("mesh/vs.yaml", &off)]);
        let change = FileChange::from_texts("mesh/vs.yaml", Some(VS_BASE), Some(&off));
        let (f, n) = findings(&base, &head, &[&change], 3);
        assert!(f.is_empty() && n.is_empty(), "{f:?} {n:?}");
        // The same file turning retries on is still a layer change.
        let change = FileChange::from_texts("mesh/vs.yaml", Some(VS_BASE), Some(VS_HEAD));
        let (_, n) = findings(&base, &model(&[("mesh/vs.yaml", VS_HEAD)]), &[&change], 3);
        assert!(n.iter().any(|n| n.message.contains("layer change")), "{n:?}");
    }

    #[test]
    fn a_deployment_pointed_at_a_retrying_service_joins_two_routes_and_blocks() {
        let routes = "kind: VirtualService\nmetadata: { name: web }\nspec:\n  hosts: [web]\n  http:\n  - retries: { attempts: 2 }\n---\nkind: VirtualService\nmetadata: { name: pay }\nspec:\n  hosts: [payments]\n  http:\n  - retries: { attempts: 2 }\n";
        let deploy = |to: &str| {
            format!("kind: Deployment\nmetadata: {{ name: web }}\nspec:\n  template:\n    spec:\n      containers:\n      - env:\n        - {{ name: PAY_URL, value: \"http://{to}:8080\" }}\n")
        };
        let (old, new) = (deploy("ledger"), deploy("payments"));
        let base = model(&[("mesh/vs.yaml", routes), ("k8s/web.yaml", &old)]);
        let head = model(&[("mesh/vs.yaml", routes), ("k8s/web.yaml", &new)]);
        let change = FileChange::from_texts("k8s/web.yaml", Some(&old), Some(&new));
        let (f, n) = findings(&base, &head, &[&change], 3);
        assert!(f.is_empty(), "{f:?}");
        let blocking: Vec<&Note> = n.iter().filter(|n| n.blocking).collect();
        assert_eq!(blocking.len(), 1, "{n:?}");
        assert_eq!(blocking[0].path.as_deref(), Some("k8s/web.yaml"));
        assert!(
            blocking[0].message.starts_with("line 8: `requests to web`: up to 9 attempts per inbound request (was 3): istio 3 × istio 3; no layer's count changed"),
            "{n:?}"
        );
        // Pointed at a host no route retries, nothing is joined.
        let elsewhere = deploy("audit");
        let head = model(&[("mesh/vs.yaml", routes), ("k8s/web.yaml", &elsewhere)]);
        let change = FileChange::from_texts("k8s/web.yaml", Some(&old), Some(&elsewhere));
        let (f, n) = findings(&base, &head, &[&change], 3);
        assert!(f.is_empty() && n.is_empty(), "{f:?} {n:?}");
    }
}
