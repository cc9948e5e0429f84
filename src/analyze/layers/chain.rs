//! Links the layers of one revision into operations and gives each its
//! figure: the worst-case attempts one inbound request can cause at the
//! dependency, the product of its layers' attempts.
//!
//! Linking follows what a reader would use: a client joins the mesh and
//! proxy layers whose hosts include the one host it calls (a base URL
//! literal of its file, or the value a manifest gives an environment
//! variable it reads). Layers of one tier and source for one host are
//! alternatives (two routes of one VirtualService), not a chain: the worst
//! of them counts. A host whose workload calls another host (an address in
//! its environment, [`super::workloads`]) passes each of its attempts on,
//! so the chain continues into the mesh routes of the host it calls, along
//! the worst path. A layer whose host cannot be told, a client that calls
//! no known host or several, and an SDK default are operations of their
//! own: shown beside the others, never multiplied into them.

use std::collections::{BTreeMap, BTreeSet};

use super::{workloads, Attempts, Declared, Layer, Tier};

/// A figure: attempts per inbound request.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub(crate) enum Figure {
    Known(f64),
    Unbounded,
    /// A layer's count cannot be computed (a template, one try per server of
    /// an upstream whose servers are not listed).
    Unknown,
}

impl Figure {
    /// Whether `self` is more than `other`; `None` when it cannot be told.
    pub(crate) fn exceeds(self, other: Figure) -> Option<bool> {
        match (self, other) {
            (Figure::Unknown, _) | (_, Figure::Unknown) => None,
            (Figure::Unbounded, Figure::Unbounded) => Some(false),
            (Figure::Unbounded, _) => Some(true),
            (_, Figure::Unbounded) => Some(false),
            (Figure::Known(a), Figure::Known(b)) => Some(a > b + 1e-9),
        }
    }

    pub(crate) fn describe(self) -> String {
        match self {
            Figure::Known(n) => trim(n),
            Figure::Unbounded => "unbounded".into(),
            Figure::Unknown => "an unknown number of".into(),
        }
    }

    pub(crate) fn to_json(self) -> serde_json::Value {
        match self {
            Figure::Known(n) if n.fract() == 0.0 => serde_json::json!(n as u64),
            Figure::Known(n) => serde_json::json!(n),
            Figure::Unbounded => serde_json::json!("unbounded"),
            Figure::Unknown => serde_json::json!("unknown"),
        }
    }
}

/// A count or a percentage as a reader writes it: whole numbers bare, and
/// at most three decimals otherwise, so a 0.1% budget (×1.001) does not
/// read as no budget at all (×1.0, 0%).
pub(crate) fn trim(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{}", n as u64)
    } else {
        let s = format!("{:.3}", n);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// What one layer contributes to the product.
pub(crate) fn factor(l: &Layer) -> Figure {
    let raw = match &l.attempts {
        Attempts::Total(n) | Attempts::PerServer(Some(n)) => Figure::Known(f64::from(*n)),
        Attempts::Unbounded => Figure::Unbounded,
        Attempts::PerServer(None) | Attempts::Unknown(_) => Figure::Unknown,
    };
    match (l.budget, raw) {
        // A budget caps retries at a share of requests, whatever the count.
        (Some(b), Figure::Known(n)) => Figure::Known(n.min(1.0 + b)),
        (Some(b), _) => Figure::Known(1.0 + b),
        (None, f) => f,
    }
}

/// `client 7 × mesh 4 × nginx 3`: how a layer reads in a chain.
pub(crate) fn short(l: &Layer) -> String {
    let who = match l.tier {
        Tier::Client => "client".to_string(),
        Tier::Sdk => "sdk".to_string(),
        Tier::Mesh | Tier::Proxy => l.source.split(' ').next().unwrap_or(&l.source).to_string(),
    };
    let n = match (l.budget, factor(l)) {
        (Some(b), f) => format!("≤{} (retry budget {}%)", f.describe(), trim(b * 100.0)),
        (None, Figure::Unknown) => format!("? ({})", l.attempts.describe()),
        (None, f) => f.describe(),
    };
    format!("{who} {n}")
}

/// One operation: the layers one request passes, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// `POST /checkout -> payments`, `requests to payments`, or the layer
    /// itself for one that is not linked.
    pub(crate) label: String,
    pub(crate) host: Option<String>,
    pub(crate) layers: Vec<Layer>,
    /// Why the layers are (or are not) one path, for the listing.
    pub(crate) link: String,
    /// Where each service-to-service hop of the chain is declared (the
    /// environment entry that names the next host): file and line.
    pub(crate) hops: Vec<(String, u32)>,
}

impl Operation {
    /// The product of the layers' factors.
    pub(crate) fn figure(&self) -> Figure {
        self.layers.iter().map(factor).fold(Figure::Known(1.0), |acc, f| match (acc, f) {
            (Figure::Unknown, _) | (_, Figure::Unknown) => Figure::Unknown,
            (Figure::Unbounded, _) | (_, Figure::Unbounded) => Figure::Unbounded,
            (Figure::Known(a), Figure::Known(b)) => Figure::Known(a * b),
        })
    }

    /// Layers that may send a request more than once and are not bounded
    /// by a retry budget: a budget is the remedy for amplification, so a
    /// layer under one does not make a chain of retrying layers.
    pub(crate) fn retrying(&self) -> usize {
        self.layers.iter().filter(|l| l.attempts.retries() && l.budget.is_none()).count()
    }

    /// `client 7 × mesh 4 × nginx 3`.
    pub(crate) fn chain_text(&self) -> String {
        self.layers.iter().map(short).collect::<Vec<_>>().join(" × ")
    }
}

/// The hosts a client calls: its literals and its environment variables'
/// values.
fn client_hosts(l: &Layer, d: &Declared) -> BTreeSet<String> {
    let mut h = l.targets.clone();
    for v in &l.via_env {
        if let Some(values) = d.env.get(v) {
            h.extend(values.iter().cloned());
        }
    }
    h
}

/// Every operation of one revision.
pub(crate) fn operations(d: &Declared) -> Vec<Operation> {
    // host -> (tier, source) -> the worst layer for it.
    let mut routes: BTreeMap<String, BTreeMap<(Tier, String), &Layer>> = BTreeMap::new();
    let mut out = Vec::new();
    for l in d.layers.iter().filter(|l| matches!(l.tier, Tier::Mesh | Tier::Proxy)) {
        if l.targets.is_empty() {
            out.push(Operation {
                label: format!("{} {}", l.source, l.name),
                host: None,
                layers: vec![l.clone()],
                link: "its hosts cannot be told (computed or templated), so it is not linked to a client"
                    .into(),
                hops: Vec::new(),
            });
            continue;
        }
        for t in &l.targets {
            let slot = routes.entry(t.clone()).or_default().entry((l.tier, l.source.clone())).or_insert(l);
            if factor(l).exceeds(factor(slot)) != Some(false) && factor(l) != factor(slot) {
                *slot = l;
            }
        }
    }
    let calls = workloads::calls(d);
    let hop = Hops { routes: &routes, calls: &calls };
    let mut called: BTreeSet<String> = BTreeSet::new();
    // A library that retries on its own, in a file that calls one known
    // host, is that file's client: it joins the chain like one.
    let linked_sdk = |l: &Layer| l.tier == Tier::Sdk && client_hosts(l, d).len() == 1;
    for l in d.layers.iter().filter(|l| l.tier == Tier::Client || linked_sdk(l)) {
        let hosts = client_hosts(l, d);
        if hosts.len() != 1 {
            let why = if hosts.is_empty() {
                "no base URL literal or address variable with a known value in its file".to_string()
            } else {
                format!(
                    "its file calls several hosts ({}), and which one this retry covers is not known",
                    hosts.into_iter().collect::<Vec<_>>().join(", ")
                )
            };
            out.push(Operation {
                label: format!("{} ({})", l.name, l.path),
                host: None,
                layers: vec![l.clone()],
                link: why,
                hops: Vec::new(),
            });
            continue;
        }
        let Some(host) = hosts.into_iter().next() else { continue };
        let (chain, via, hops) = hop.chain(&host);
        let mut layers = vec![l.clone()];
        layers.extend(chain);
        called.insert(host.clone());
        let link = if layers.len() > 1 {
            format!("the client calls `{host}`, which the other layers serve{via}")
        } else {
            format!("the client calls `{host}`; no mesh or proxy layer serves it")
        };
        out.push(Operation { label: format!("{} -> {host}", l.name), host: Some(host), layers, link, hops });
    }
    // Requests that reach the routes from outside the repository's clients:
    // one operation per host, the longest chains first, and none whose
    // layers another operation already shows (an upstream's servers are
    // hosts of the same nginx layer as the upstream; a host that another
    // host's workload calls is in that host's chain).
    #[allow(clippy::type_complexity)]
    let mut uncalled: Vec<(&String, Vec<Layer>, String, Vec<(String, u32)>)> = routes
        .keys()
        .filter(|host| !called.contains(*host))
        .map(|host| {
            let (chain, via, hops) = hop.chain(host);
            (host, chain, via, hops)
        })
        .collect();
    uncalled.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    let shown = |op: &Operation| op.layers.iter().map(Layer::key).collect::<BTreeSet<_>>();
    let mut seen: Vec<BTreeSet<(String, String, String)>> = out.iter().map(shown).collect();
    for (host, layers, via, hops) in uncalled {
        let keys: BTreeSet<_> = layers.iter().map(|l| l.key()).collect();
        if seen.iter().any(|s| keys.is_subset(s)) {
            continue;
        }
        seen.push(keys);
        out.push(Operation {
            label: format!("requests to {host}"),
            host: Some(host.clone()),
            layers,
            link: format!("every layer here serves `{host}`{via}; no client in the repository calls it"),
            hops,
        });
    }
    for l in d.layers.iter().filter(|l| l.tier == Tier::Sdk && !linked_sdk(l)) {
        out.push(Operation {
            label: format!("{} ({})", l.name, l.path),
            host: None,
            layers: vec![l.clone()],
            link: "an SDK's retries (its default, or the count this file sets): its file calls no one known host, so it is not linked".into(),
            hops: Vec::new(),
        });
    }
    out
}

/// Most service-to-service hops a chain follows (a call graph deeper than
/// this is cut, never looped).
const MAX_HOPS: usize = 8;

/// The mesh and proxy layers of each host, and which hosts each host's
/// workloads call: a chain goes through a host's own layers, then through
/// the worst of the chains of the hosts it calls.
struct Hops<'a> {
    routes: &'a BTreeMap<String, BTreeMap<(Tier, String), &'a Layer>>,
    calls: &'a BTreeMap<String, BTreeMap<String, (String, String, u32)>>,
}

impl Hops<'_> {
    /// The layers a request to `host` passes, its own first, and how the
    /// hops were linked (`; `a` calls `b` (B_URL, k8s/a.yaml:12)`).
    fn chain(&self, host: &str) -> (Vec<Layer>, String, Vec<(String, u32)>) {
        let mut path = vec![host.to_string()];
        let mut layers = self.own(host);
        let mut via = String::new();
        let (more, hops) = self.worst_below(host, &mut path);
        // A layer that serves several hosts on the path counts once.
        for l in more {
            if !layers.iter().any(|x| x.key() == l.key()) {
                layers.push(l);
            }
        }
        let mut from = host.to_string();
        let mut at = Vec::new();
        for (to, (var, file, line)) in hops {
            via.push_str(&format!("; `{from}` calls `{to}` ({var}, {file}:{line})"));
            at.push((file, line));
            from = to;
        }
        (layers, via, at)
    }

    fn own(&self, host: &str) -> Vec<Layer> {
        self.routes.get(host).map(|m| m.values().map(|l| (*l).clone()).collect()).unwrap_or_default()
    }

    /// The worst chain below `host` through the hosts its workloads call:
    /// its layers and the hops taken. Empty when no host it reaches has a
    /// layer.
    #[allow(clippy::type_complexity)]
    fn worst_below(
        &self,
        host: &str,
        path: &mut Vec<String>,
    ) -> (Vec<Layer>, Vec<(String, (String, String, u32))>) {
        let mut best: (Vec<Layer>, Vec<(String, (String, String, u32))>) = (Vec::new(), Vec::new());
        if path.len() > MAX_HOPS {
            return best;
        }
        let Some(callees) = self.calls.get(host) else { return best };
        for (callee, how) in callees {
            if path.contains(callee) {
                continue;
            }
            path.push(callee.clone());
            // Past the first host only mesh routes are on the path: a
            // service calls the next by its name, and a sidecar applies the
            // route for that name; a proxy whose upstream lists the name
            // is not between them.
            let mut layers: Vec<Layer> =
                self.own(callee).into_iter().filter(|l| l.tier == Tier::Mesh).collect();
            let (below, mut hops) = self.worst_below(callee, path);
            path.pop();
            layers.extend(below);
            if layers.is_empty() {
                continue;
            }
            hops.insert(0, (callee.clone(), how.clone()));
            if best.0.is_empty() || worse(&layers, &best.0) {
                best = (layers, hops);
            }
        }
        best
    }
}

/// Whether chain `a` is worse than chain `b`: a larger figure, or, when
/// the figures cannot be compared, more retrying layers.
fn worse(a: &[Layer], b: &[Layer]) -> bool {
    let fig = |ls: &[Layer]| Operation {
        label: String::new(),
        host: None,
        layers: ls.to_vec(),
        link: String::new(),
        hops: Vec::new(),
    };
    let (fa, fb) = (fig(a), fig(b));
    match fa.figure().exceeds(fb.figure()) {
        Some(x) => x,
        None => fa.retrying() > fb.retrying(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::declared;
    use super::*;

    const VS: &str = "kind: VirtualService\nspec:\n  hosts: [payments]\n  http:\n  - retries: { attempts: 2 }\n    route: [{ destination: { host: payments } }]\n  - match: [{ uri: { prefix: /slow } }]\n    retries: { attempts: 4 }\n    route: [{ destination: { host: payments } }]\n";
    const NGINX: &str = "upstream payments {\n  server payments-1:8080;\n  server payments-2:8080;\n}\nserver {\n  location / {\n    proxy_next_upstream error timeout http_503;\n    proxy_pass http://payments;\n  }\n}\n";
    const CLIENT: &str = "use backon::{ExponentialBuilder, Retryable};\nasync fn checkout(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n    (|| async { c.get(&format!(\"{}/orders\", std::env::var(\"PAYMENTS_URL\").unwrap())).send().await })\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times(6))\n        .await\n}\n";

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    }

    #[test]
    fn a_client_linked_through_its_env_variable_multiplies_with_mesh_and_proxy() {
        let d = declared(&files(&[
            ("mesh/vs.yaml", VS),
            ("nginx/nginx.conf", NGINX),
            ("src/pay.rs", CLIENT),
            ("k8s/deploy.yaml", "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - env:\n        - name: PAYMENTS_URL\n          value: http://payments.shop.svc:8080\n"),
        ]));
        let ops = operations(&d);
        let op = ops.iter().find(|o| o.layers.iter().any(|l| l.tier == Tier::Client)).unwrap();
        // The worse of the two routes (4 retries = 5 tries) counts, not both.
        assert_eq!(op.figure(), Figure::Known(7.0 * 5.0 * 2.0), "{}", op.chain_text());
        assert_eq!(op.chain_text(), "client 7 × istio 5 × nginx 2");
        assert_eq!(op.host.as_deref(), Some("payments"));
    }

    #[test]
    fn an_upstreams_servers_do_not_repeat_its_chain() {
        let d = declared(&files(&[("mesh/vs.yaml", VS), ("nginx/nginx.conf", NGINX)]));
        let ops = operations(&d);
        assert_eq!(ops.len(), 1, "{ops:?}");
        assert_eq!(ops[0].label, "requests to payments");
        assert_eq!(ops[0].chain_text(), "istio 5 × nginx 2");
    }

    #[test]
    fn without_the_env_value_the_client_stands_alone() {
        let d = declared(&files(&[("mesh/vs.yaml", VS), ("src/pay.rs", CLIENT)]));
        let ops = operations(&d);
        let client = ops.iter().find(|o| o.layers[0].tier == Tier::Client).unwrap();
        assert_eq!((client.layers.len(), client.host.clone()), (1, None));
        assert!(client.link.contains("no base URL"), "{}", client.link);
        let mesh = ops.iter().find(|o| o.label == "requests to payments").unwrap();
        assert_eq!(mesh.figure(), Figure::Known(5.0));
    }

    /// Three services in a row, each behind a route of 3 retries; the
    /// first two call the next through an address in their Deployment.
    const ROUTES: &str = "kind: VirtualService\nmetadata: { name: edge }\nspec:\n  hosts: [\"*\"]\n  gateways: [edge]\n  http:\n  - retries: { attempts: 3 }\n    route: [{ destination: { host: front } }]\n---\nkind: VirtualService\nmetadata: { name: middle }\nspec:\n  hosts: [middle]\n  http:\n  - retries: { attempts: 3 }\n    route: [{ destination: { host: middle } }]\n---\nkind: VirtualService\nmetadata: { name: back }\nspec:\n  hosts: [back]\n  http:\n  - retries: { attempts: 3 }\n    route: [{ destination: { host: back } }]\n";

    fn deployment(name: &str, app: &str, env: &str) -> String {
        format!("kind: Deployment\nmetadata: {{ name: {name} }}\nspec:\n  template:\n    metadata: {{ labels: {{ app: {app} }} }}\n    spec:\n      containers:\n      - env:\n        - {{ name: NEXT_URL, value: \"{env}\" }}\n")
    }

    #[test]
    fn a_service_that_calls_the_next_multiplies_their_routes() {
        let deploys = [
            deployment("front-v1", "front", "http://middle/"),
            deployment("middle-v1", "middle", "http://back:80"),
        ]
        .join("---\n");
        let d = declared(&files(&[("mesh/routes.yaml", ROUTES), ("k8s/deploy.yaml", &deploys)]));
        let ops = operations(&d);
        assert_eq!(ops.len(), 1, "{ops:?}");
        assert_eq!(
            (ops[0].label.as_str(), ops[0].chain_text().as_str()),
            ("requests to front", "istio 4 × istio 4 × istio 4")
        );
        assert_eq!(ops[0].figure(), Figure::Known(64.0));
        assert!(ops[0].link.contains("`front` calls `middle` (NEXT_URL, k8s/deploy.yaml:9); `middle` calls `back` (NEXT_URL, k8s/deploy.yaml:19)"), "{}", ops[0].link);
        // A proxy that lists the next host among its upstream servers is
        // not between two services: only its own host's requests pass it.
        let nginx = "upstream back { server back:80; server back-2:80; }\nserver {\n  location / {\n    proxy_pass http://back;\n  }\n}\n";
        let d = declared(&files(&[
            ("nginx.conf", nginx),
            ("k8s/deploy.yaml", &deployment("middle-v1", "middle", "http://back:80")),
            ("mesh/routes.yaml", &ROUTES.replace("[back]", "[other]").replace("host: back", "host: other")),
        ]));
        let middle = operations(&d).into_iter().find(|o| o.label == "requests to middle").unwrap();
        assert_eq!(middle.chain_text(), "istio 4", "{middle:?}");
    }

    #[test]
    fn without_a_call_between_them_services_stay_apart() {
        // The same routes, and Deployments that name no other host.
        let deploys = [
            deployment("front-v1", "front", "http://front/"),
            deployment("middle-v1", "middle", "10.0.0.9:80"),
        ]
        .join("---\n");
        let d = declared(&files(&[("mesh/routes.yaml", ROUTES), ("k8s/deploy.yaml", &deploys)]));
        let mut texts: Vec<String> =
            operations(&d).iter().map(|o| format!("{}: {}", o.label, o.chain_text())).collect();
        texts.sort();
        assert_eq!(
            texts,
            ["requests to back: istio 4", "requests to front: istio 4", "requests to middle: istio 4"]
        );
        // A loop of calls is followed once, never round again.
        let deploys = [
            deployment("front-v1", "front", "http://middle/"),
            deployment("middle-v1", "middle", "http://front/"),
        ]
        .join("---\n");
        let d = declared(&files(&[("mesh/routes.yaml", ROUTES), ("k8s/deploy.yaml", &deploys)]));
        let front = operations(&d).into_iter().find(|o| o.label == "requests to front").unwrap();
        assert_eq!(front.chain_text(), "istio 4 × istio 4");
    }

    #[test]
    fn a_retrying_library_in_a_file_that_calls_one_host_joins_that_hosts_chain() {
        let go = "import \"github.com/hashicorp/go-retryablehttp\"\nfunc pay() { c := retryablehttp.NewClient()\n c.RetryMax = 2\n c.Post(os.Getenv(\"PAYMENTS_URL\"), \"\", nil) }\n";
        let deploy = "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - env:\n        - name: PAYMENTS_URL\n          value: http://payments:8080\n";
        let d = declared(&files(&[("mesh/vs.yaml", VS), ("cmd/pay.go", go), ("k8s/deploy.yaml", deploy)]));
        let ops = operations(&d);
        let op = ops.iter().find(|o| o.layers[0].tier == Tier::Sdk).unwrap();
        assert_eq!(
            (op.label.as_str(), op.chain_text().as_str()),
            ("go-retryablehttp -> payments", "sdk 3 × istio 5")
        );
        assert!(!ops.iter().any(|o| o.label == "requests to payments"), "{ops:?}");
        // Calling two hosts, or none the manifests name, it stays on its own.
        let two = go.replace("c.RetryMax = 2", "c.RetryMax = 2\n c.Get(\"http://ledger/x\")");
        let d = declared(&files(&[("mesh/vs.yaml", VS), ("cmd/pay.go", &two), ("k8s/deploy.yaml", deploy)]));
        let ops = operations(&d);
        let sdk = ops.iter().find(|o| o.layers[0].tier == Tier::Sdk).unwrap();
        assert_eq!((sdk.layers.len(), sdk.host.clone()), (1, None));
        assert!(ops.iter().any(|o| o.label == "requests to payments"), "{ops:?}");
    }

    #[test]
    fn a_budget_bounds_its_layer_and_an_unknown_count_makes_the_figure_unknown() {
        let linkerd = "kind: ServiceProfile\nmetadata: { name: payments.shop.svc.cluster.local }\nspec:\n  routes:\n  - name: all\n    isRetryable: true\n";
        let d = declared(&files(&[("mesh/vs.yaml", VS), ("mesh/sp.yaml", linkerd)]));
        let op = &operations(&d)[0];
        assert_eq!(op.figure(), Figure::Known(5.0 * 1.2));
        assert!(op.chain_text().contains("≤1.2 (retry budget 20%)"), "{}", op.chain_text());
        let unknown = NGINX.replace("  server payments-2:8080;\n", "  server {{ .Host }};\n");
        let d = declared(&files(&[("nginx/nginx.conf", &unknown)]));
        assert_eq!(operations(&d)[0].figure(), Figure::Unknown);
    }
}
