//! Traefik's retry middleware, in every form it is declared: labels
//! (`traefik.http.middlewares.<m>.retry.attempts=5`, in Compose files,
//! Dockerfiles, Kubernetes annotations or code that generates them), the
//! file provider's YAML and TOML (`http.middlewares.<m>.retry`), and the
//! Kubernetes `Middleware` resource.
//!
//! `attempts` is the total number of tries: Traefik's retry middleware
//! tries again while its attempt counter is below it. A middleware does
//! nothing until a router uses it, so in labels and the file provider a
//! retry middleware is a layer only when a router of the same file lists
//! it; the router's `Host()` rule and service are its hosts. A `Middleware`
//! resource is a layer wherever it is declared, and an `IngressRoute` that
//! uses it gives it hosts ([`Declared::uses`](super::Declared)).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use regex::Regex;

use super::yamldocs::{get, items, number, text, Doc};
use super::{hosts, Attempts, Layer, Tier};

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|e| panic!("constant pattern: {e}")))
}

/// A router as declared: the middlewares it uses and the hosts it serves.
#[derive(Default)]
struct Router {
    middlewares: Vec<(String, u32)>,
    targets: BTreeSet<String>,
}

/// A retry middleware as declared: its attempts and line.
struct Retry {
    attempts: Attempts,
    line: u32,
}

/// Joins routers and retry middlewares of one file into layers.
fn join(
    path: &str,
    form: &str,
    retries: BTreeMap<String, Retry>,
    routers: BTreeMap<String, Router>,
) -> Vec<Layer> {
    let mut out = Vec::new();
    for (name, retry) in retries {
        let users: Vec<(&String, &Router, u32)> = routers
            .iter()
            .filter_map(|(rn, r)| {
                r.middlewares.iter().find(|(m, _)| *m == name).map(|(_, line)| (rn, r, *line))
            })
            .collect();
        if users.is_empty() {
            continue;
        }
        let targets = users.iter().flat_map(|(_, r, _)| r.targets.iter().cloned()).collect();
        let mut lines: Vec<u32> = users.iter().map(|(_, _, l)| *l).collect();
        lines.push(retry.line);
        out.push(Layer {
            tier: Tier::Proxy,
            source: "traefik".into(),
            name: format!("{form} middleware {name} on router {}", users.iter().map(|(n, _, _)| n.as_str()).collect::<Vec<_>>().join(", ")),
            path: path.to_string(),
            line: retry.line,
            attempts: retry.attempts,
            budget: None,
            retry_on: "the backend does not reply (network errors); any method in Traefik v2, idempotent ones only in recent releases unless retryNonIdempotentMethod: true".into(),
            targets,
            decl_lines: lines,
            via_env: Default::default(),
        });
    }
    out
}

fn attempts_of(raw: &str) -> Attempts {
    match raw.trim().trim_matches(|c| c == '"' || c == '\'').parse::<u32>() {
        Ok(n) => Attempts::Total(n.max(1)),
        Err(_) => Attempts::Unknown(format!("attempts {raw}")),
    }
}

fn strip_provider(m: &str) -> String {
    let m = m.trim().trim_matches(|c| c == '"' || c == '\'');
    m.split('@').next().unwrap_or(m).to_string()
}

fn host_rule_targets(rule: &str, out: &mut BTreeSet<String>) {
    static HOST: OnceLock<Regex> = OnceLock::new();
    for c in re(&HOST, r"Host(?:SNI)?\(\s*`([^`]+)`").captures_iter(rule) {
        out.extend(hosts::key(&c[1]));
    }
}

/// Labels anywhere in a text file.
pub(crate) fn read_labels(path: &str, text: &str) -> Vec<Layer> {
    if !text.contains("traefik.http.") {
        return Vec::new();
    }
    static MW: OnceLock<Regex> = OnceLock::new();
    static ROUTER: OnceLock<Regex> = OnceLock::new();
    let mw = re(
        &MW,
        r#"traefik\.http\.middlewares\.([^"'\s=:]+)\.retry\.attempts["']?\s*(?:=>|[:=])\s*["']?([^"'\s,}]+)"#,
    );
    let router = re(
        &ROUTER,
        r#"traefik\.http\.routers\.([^"'\s=:]+)\.(middlewares|rule|service)["']?\s*(?:=>|[:=])\s*["']?([^"'\n]*)"#,
    );
    let mut retries = BTreeMap::new();
    let mut routers: BTreeMap<String, Router> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i as u32 + 1;
        for c in mw.captures_iter(line) {
            retries.insert(c[1].to_string(), Retry { attempts: attempts_of(&c[2]), line: n });
        }
        for c in router.captures_iter(line) {
            let r = routers.entry(c[1].to_string()).or_default();
            match &c[2] {
                "middlewares" => r.middlewares.extend(c[3].split(',').map(|m| (strip_provider(m), n))),
                "rule" => host_rule_targets(&c[3], &mut r.targets),
                _ => r.targets.extend(hosts::key(&c[3])),
            }
        }
    }
    join(path, "label", retries, routers)
}

/// The file provider's YAML (`http: { middlewares, routers }`).
pub(crate) fn read_dynamic(path: &str, doc: &Doc) -> Vec<Layer> {
    let Some(http) = get(&doc.value, &["http"]) else { return Vec::new() };
    let mut retries = BTreeMap::new();
    if let Some(serde_yaml::Value::Mapping(mws)) = http.get("middlewares") {
        let mut seen = 0;
        for (name, mw) in mws {
            let (Some(name), Some(retry)) = (text(name), mw.get("retry")) else { continue };
            let attempts = match retry.get("attempts") {
                Some(v) => number(v).map_or_else(
                    || Attempts::Unknown(format!("attempts {}", text(v).unwrap_or_default())),
                    |n| Attempts::Total(n.clamp(1, u32::MAX as u64) as u32),
                ),
                None => Attempts::Unknown("retry without attempts".into()),
            };
            retries.insert(name, Retry { attempts, line: doc.line_of("attempts", seen) });
            seen += 1;
        }
    }
    let mut routers = BTreeMap::new();
    if let Some(serde_yaml::Value::Mapping(rs)) = http.get("routers") {
        for (name, r) in rs {
            let Some(name) = text(name) else { continue };
            let mut router = Router::default();
            for m in items(r.get("middlewares")).iter().filter_map(text) {
                router.middlewares.push((strip_provider(&m), doc.line_of(&m, 0)));
            }
            if let Some(rule) = r.get("rule").and_then(text) {
                host_rule_targets(&rule, &mut router.targets);
            }
            router.targets.extend(r.get("service").and_then(text).and_then(|s| hosts::key(&s)));
            routers.insert(name, router);
        }
    }
    join(path, "file", retries, routers)
}

/// The file provider's TOML: `[http.middlewares.<m>.retry]` with
/// `attempts = n`, and `[http.routers.<r>]` with `middlewares`, `rule`,
/// `service`.
pub(crate) fn read_toml(path: &str, text: &str) -> Vec<Layer> {
    if !text.contains("http.") {
        return Vec::new();
    }
    let mut retries = BTreeMap::new();
    let mut routers: BTreeMap<String, Router> = BTreeMap::new();
    enum Section {
        Retry(String),
        Router(String),
        Other,
    }
    let mut section = Section::Other;
    for (i, raw) in text.lines().enumerate() {
        let n = i as u32 + 1;
        let line = raw.trim();
        if let Some(head) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let head = head.trim().replace('"', "");
            section = if let Some(m) =
                head.strip_prefix("http.middlewares.").and_then(|m| m.strip_suffix(".retry"))
            {
                Section::Retry(m.to_string())
            } else if let Some(r) = head.strip_prefix("http.routers.") {
                Section::Router(r.to_string())
            } else {
                Section::Other
            };
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        match (&section, k.trim()) {
            (Section::Retry(m), "attempts") => {
                retries.insert(m.clone(), Retry { attempts: attempts_of(v), line: n });
            }
            (Section::Router(r), "middlewares") => {
                let list = v.trim().trim_start_matches('[').trim_end_matches(']');
                routers
                    .entry(r.clone())
                    .or_default()
                    .middlewares
                    .extend(list.split(',').map(|m| (strip_provider(m), n)));
            }
            (Section::Router(r), "rule") => {
                host_rule_targets(v, &mut routers.entry(r.clone()).or_default().targets)
            }
            (Section::Router(r), "service") => {
                routers.entry(r.clone()).or_default().targets.extend(hosts::key(v.trim().trim_matches('"')))
            }
            _ => {}
        }
    }
    join(path, "file", retries, routers)
}

/// A `Middleware` resource with `spec.retry`, or an `IngressRoute`'s uses
/// of middlewares (recorded for [`super::declared`] to give them hosts).
pub(crate) fn read_crd(path: &str, doc: &Doc) -> Vec<Layer> {
    let kind = get(&doc.value, &["kind"]).and_then(text).unwrap_or_default();
    let name = get(&doc.value, &["metadata", "name"]).and_then(text).unwrap_or_default();
    if kind != "Middleware" {
        return Vec::new();
    }
    let Some(retry) = get(&doc.value, &["spec", "retry"]) else { return Vec::new() };
    let attempts = match retry.get("attempts") {
        Some(v) => number(v).map_or_else(
            || Attempts::Unknown(format!("attempts {}", text(v).unwrap_or_default())),
            |n| Attempts::Total(n.clamp(1, u32::MAX as u64) as u32),
        ),
        None => Attempts::Unknown("retry without attempts".into()),
    };
    let line = doc.line_of("attempts", 0);
    vec![Layer {
        tier: Tier::Proxy,
        source: "traefik".into(),
        name: format!("Middleware {name}"),
        path: path.to_string(),
        line,
        attempts,
        budget: None,
        retry_on: "the backend does not reply (network errors)".into(),
        targets: BTreeSet::new(),
        decl_lines: vec![line],
        via_env: Default::default(),
    }]
}

/// The middlewares an `IngressRoute` uses, with the hosts of its routes.
pub(crate) fn uses_of(doc: &Doc) -> Vec<(String, BTreeSet<String>)> {
    if get(&doc.value, &["kind"]).and_then(text).as_deref() != Some("IngressRoute") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for route in items(get(&doc.value, &["spec", "routes"])) {
        let mut targets = BTreeSet::new();
        if let Some(rule) = route.get("match").and_then(text) {
            host_rule_targets(&rule, &mut targets);
        }
        for s in items(route.get("services")) {
            targets.extend(s.get("name").and_then(text).and_then(|n| hosts::key(&n)));
        }
        for m in items(route.get("middlewares")) {
            if let Some(n) = m.get("name").and_then(text) {
                out.push((n, targets.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{declared, Attempts};

    fn layers(path: &str, text: &str) -> Vec<super::Layer> {
        declared(&[(path.to_string(), text.to_string())]).layers
    }

    #[test]
    fn a_label_middleware_counts_only_once_a_router_uses_it() {
        let declared_only = "labels:\n  - traefik.http.routers.web.rule=Host(`shop.example.com`)\n  - traefik.http.middlewares.web-retry.retry.attempts=5\n";
        assert!(layers("docker-compose.yml", declared_only).is_empty());
        let used = format!("{declared_only}  - traefik.http.routers.web.middlewares=web-retry@docker\n");
        let l = layers("docker-compose.yml", &used);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!((l[0].attempts.clone(), l[0].line), (Attempts::Total(5), 3));
        assert_eq!(l[0].decl_lines, [4, 3]);
        assert!(l[0].targets.contains("shop"));
    }

    #[test]
    fn labels_generated_by_code_are_read_too() {
        let ruby = "{\n  \"traefik.http.middlewares.#{svc}-retry.retry.attempts\" => \"5\",\n  \"traefik.http.routers.#{svc}.middlewares\" => \"#{svc}-retry@docker\"\n}\n";
        let l = layers("lib/role.rb", ruby);
        assert_eq!(l.len(), 1);
        assert!(l[0].targets.is_empty(), "a templated router has no host");
    }

    #[test]
    fn file_provider_yaml_and_toml() {
        let yaml = "http:\n  routers:\n    api:\n      rule: Host(`payments.local`)\n      middlewares: [retry-api]\n      service: payments\n  middlewares:\n    retry-api:\n      retry: { attempts: 4, initialInterval: 100ms }\n";
        let l = layers("traefik/dynamic.yml", yaml);
        assert_eq!((l.len(), l[0].attempts.clone(), l[0].line), (1, Attempts::Total(4), 9));
        let toml = "[http.routers.api]\n  rule = \"Host(`payments.local`)\"\n  middlewares = [\"retry-api\"]\n[http.middlewares.retry-api.retry]\n  attempts = 3\n";
        let t = layers("traefik/dynamic.toml", toml);
        assert_eq!((t.len(), t[0].attempts.clone(), t[0].line), (1, Attempts::Total(3), 5));
        assert!(t[0].targets.contains("payments"));
        let unused = "[http.middlewares.retry-api.retry]\n  attempts = 3\n";
        assert!(layers("traefik/dynamic.toml", unused).is_empty());
    }

    #[test]
    fn a_middleware_resource_gets_hosts_from_the_ingress_routes_that_use_it() {
        let yaml = "kind: Middleware\nmetadata: { name: retry }\nspec:\n  retry: { attempts: 3 }\n---\nkind: IngressRoute\nspec:\n  routes:\n  - match: Host(`payments.example.com`)\n    middlewares: [{ name: retry }]\n    services: [{ name: payments, port: 80 }]\n";
        let l = layers("k8s/traefik.yaml", yaml);
        assert_eq!((l.len(), l[0].attempts.clone()), (1, Attempts::Total(3)));
        assert!(l[0].targets.contains("payments"), "{l:?}");
    }
}
