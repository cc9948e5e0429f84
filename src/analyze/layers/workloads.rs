//! Which service calls which: a workload the repository declares (a
//! Kubernetes Deployment, StatefulSet, DaemonSet or bare Pod, a Compose
//! service) with an environment variable whose value is another host's URL
//! calls that host. A request to the first then reaches the second once
//! per attempt the first's layers make, so their retries multiply
//! ([`super::chain`] follows these calls from host to host).
//!
//! The hosts a workload serves are what a reader links it by: its own name,
//! its `app` (or `app.kubernetes.io/name`) label, and every Kubernetes
//! Service whose selector its pod labels satisfy.

use std::collections::{BTreeMap, BTreeSet};

use serde_yaml::Value;

use super::yamldocs::{get, items, text, Doc};
use super::{hosts, Declared};

/// One workload: the hosts it serves and the hosts its environment names.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Workload {
    /// Its name and `app` labels, as host keys.
    pub(crate) names: BTreeSet<String>,
    /// Its pod labels, matched against Service selectors.
    pub(crate) labels: BTreeMap<String, String>,
    /// Host key it calls -> (the variable that names it, file, line).
    pub(crate) calls: BTreeMap<String, (String, String, u32)>,
}

/// Kinds whose pods run application code.
const KINDS: &[&str] = &["Deployment", "StatefulSet", "DaemonSet", "Pod", "ReplicaSet", "DeploymentConfig"];

/// The workloads one document declares (a Kubernetes workload, or the
/// services of a Compose file), and the selector of a Service.
pub(crate) fn read(path: &str, doc: &Doc, out: &mut Declared) {
    let kind = get(&doc.value, &["kind"]).and_then(text).unwrap_or_default();
    if kind == "Service" {
        let name = get(&doc.value, &["metadata", "name"]).and_then(text).and_then(|n| hosts::key(&n));
        let selector = string_map(get(&doc.value, &["spec", "selector"]));
        if let (Some(name), false) = (name, selector.is_empty()) {
            out.selectors.push((name, selector));
        }
        return;
    }
    if KINDS.contains(&kind.as_str()) {
        let pod = if kind == "Pod" { Some(&doc.value) } else { get(&doc.value, &["spec", "template"]) };
        let mut w = Workload::default();
        w.names.extend(get(&doc.value, &["metadata", "name"]).and_then(text).and_then(|n| hosts::key(&n)));
        w.labels = string_map(pod.and_then(|p| get(p, &["metadata", "labels"])));
        for label in ["app", "app.kubernetes.io/name"] {
            w.names.extend(w.labels.get(label).and_then(|v| hosts::key(v)));
        }
        for c in items(pod.and_then(|p| get(p, &["spec", "containers"]))) {
            for e in items(c.get("env")) {
                if let (Some(n), Some(v)) = (e.get("name").and_then(text), e.get("value").and_then(text)) {
                    add_call(&mut w, path, doc, &n, &v);
                }
            }
        }
        push(w, out);
        return;
    }
    // Compose: `services:` whose entries have an image, a build or an
    // environment.
    if let Some(Value::Mapping(services)) = doc.value.get("services") {
        for (name, svc) in services {
            let (Some(name), Value::Mapping(m)) = (text(name), svc) else { continue };
            if !["image", "build", "environment"].iter().any(|k| m.contains_key(*k)) {
                continue;
            }
            let mut w = Workload::default();
            w.names.extend(hosts::key(&name));
            for k in ["container_name", "hostname"] {
                w.names.extend(m.get(k).and_then(text).and_then(|n| hosts::key(&n)));
            }
            match m.get("environment") {
                Some(Value::Mapping(env)) => {
                    for (k, v) in env {
                        if let (Some(k), Some(v)) = (text(k), text(v)) {
                            add_call(&mut w, path, doc, &k, &v);
                        }
                    }
                }
                Some(Value::Sequence(env)) => {
                    for item in env {
                        if let Some((k, v)) = item.as_str().and_then(|t| t.split_once('=')) {
                            add_call(&mut w, path, doc, k, v);
                        }
                    }
                }
                _ => {}
            }
            push(w, out);
        }
    }
}

fn push(w: Workload, out: &mut Declared) {
    if !w.names.is_empty() && !w.calls.is_empty() {
        out.workloads.push(w);
    }
}

/// Records `name=value` as a call when the value is an address of a named
/// host other than the workload's own.
fn add_call(w: &mut Workload, path: &str, doc: &Doc, name: &str, value: &str) {
    let mut env = BTreeMap::new();
    hosts::record_env(name, value, &mut env);
    for (var, keys) in env {
        for k in keys {
            if !w.names.contains(&k) {
                let line = doc.line_of(&var, 0);
                w.calls.entry(k).or_insert_with(|| (var.clone(), path.to_string(), line));
            }
        }
    }
}

/// A mapping of scalars (labels, a selector) as strings.
fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(Value::Mapping(m)) = v {
        for (k, v) in m {
            if let (Some(k), Some(v)) = (text(k), text(v)) {
                out.insert(k, v);
            }
        }
    }
    out
}

/// Host key -> the hosts its workloads call, with the variable, file and
/// line that say so. A workload serves its names and every Service whose
/// selector its labels satisfy.
pub(crate) fn calls(d: &Declared) -> BTreeMap<String, BTreeMap<String, (String, String, u32)>> {
    let mut out: BTreeMap<String, BTreeMap<String, (String, String, u32)>> = BTreeMap::new();
    for w in &d.workloads {
        let mut served = w.names.clone();
        for (svc, selector) in &d.selectors {
            if selector.iter().all(|(k, v)| w.labels.get(k) == Some(v)) {
                served.insert(svc.clone());
            }
        }
        for host in served {
            let entry = out.entry(host.clone()).or_default();
            for (callee, how) in &w.calls {
                if *callee != host {
                    entry.entry(callee.clone()).or_insert_with(|| how.clone());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::declared;
    use super::*;

    fn model(yaml: &str) -> Declared {
        declared(&[("k8s/app.yaml".to_string(), yaml.to_string())])
    }

    #[test]
    fn a_deployment_calls_the_hosts_its_env_names_and_serves_its_selected_service() {
        let d = model("kind: Deployment\nmetadata: { name: web-v1 }\nspec:\n  template:\n    metadata:\n      labels: { app: web, version: v1 }\n    spec:\n      containers:\n      - name: web\n        env:\n        - name: LOG_LEVEL\n          value: debug\n        - name: CART_URL\n          value: http://cart:8080/api\n---\nkind: Service\nmetadata: { name: storefront }\nspec:\n  selector: { app: web }\n");
        let c = calls(&d);
        for served in ["web-v1", "web", "storefront"] {
            let callees: Vec<&String> = c[served].keys().collect();
            assert_eq!(callees, ["cart"], "{served}: {c:?}");
        }
        assert_eq!(c["web"]["cart"], ("CART_URL".to_string(), "k8s/app.yaml".to_string(), 13));
    }

    #[test]
    fn compose_services_call_by_environment_and_nothing_else_is_a_call() {
        let d = model("services:\n  api:\n    image: api\n    environment:\n      - LEDGER_ADDR=ledger:9000\n      - MODE=fast\n  worker:\n    build: .\n    environment:\n      SELF_URL: http://worker:80\n");
        let c = calls(&d);
        assert_eq!(c.keys().collect::<Vec<_>>(), ["api"], "{c:?}");
        assert!(c["api"].contains_key("ledger"));
        // A Service whose selector no workload satisfies serves nothing; an
        // address that is not a name (an IP) is no call.
        let d = model("kind: Deployment\nmetadata: { name: a }\nspec:\n  template:\n    metadata: { labels: { app: a } }\n    spec:\n      containers:\n      - env:\n        - { name: DB_HOST, value: \"10.0.0.5:5432\" }\n---\nkind: Service\nmetadata: { name: b }\nspec: { selector: { app: other } }\n");
        assert!(calls(&d).is_empty(), "{:?}", calls(&d));
    }
}
