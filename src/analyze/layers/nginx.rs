//! nginx: a `proxy_pass` that may pass a failed request to the next server
//! of its upstream. `proxy_next_upstream` says when (nginx's default,
//! `error timeout`, applies where nothing is declared; `off` turns it off)
//! and `proxy_next_upstream_tries` bounds the tries, the first included
//! (unset or 0: one try per server of the upstream). Directives are
//! inherited from `http` to `server` to `location`. A location that
//! declares nothing is a layer only when its upstream lists two or more
//! servers, since nginx's default can then send one request to each.
//!
//! ingress-nginx's `nginx.ingress.kubernetes.io/proxy-next-upstream` and
//! `proxy-next-upstream-tries` annotations (3 tries by default) declare
//! the same on an `Ingress`.
//!
//! Templates (`{{ range }}` in a Go template) are read with their actions
//! blanked out; a brace that does not close is an error naming its line.

use std::collections::{BTreeMap, BTreeSet};

use super::yamldocs::{get, items, text, Doc};
use super::{hosts, Attempts, Layer, ReadError, Tier};

/// Whether this file looks like nginx configuration.
pub(crate) fn wants(lower_path: &str, text: &str) -> bool {
    let named =
        lower_path.contains("nginx") || lower_path.ends_with(".conf") || lower_path.contains(".conf.");
    named && text.contains("proxy_pass")
}

/// One directive or block.
#[derive(Debug, Default)]
struct Node {
    name: String,
    args: Vec<String>,
    line: u32,
    children: Option<Vec<Node>>,
}

/// Blanks `{{ ... }}` template actions (Go, Jinja) so their braces do not
/// count as nginx blocks.
fn untemplate(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{").or_else(|| rest.find("{%")) {
        out.push_str(&rest[..open]);
        let close_pat = if rest[open..].starts_with("{%") { "%}" } else { "}}" };
        match rest[open..].find(close_pat) {
            Some(close) => {
                let action = &rest[open..open + close + 2];
                let inner = action[2..action.len() - 2].trim_matches(|c: char| c == '-' || c.is_whitespace());
                let control = close_pat == "%}"
                    || ["range", "end", "if", "else", "with", "define", "template", "block", "/*"]
                        .iter()
                        .any(|k| inner.starts_with(k));
                out.push_str(if control { " " } else { "$TEMPLATE" });
                out.extend(std::iter::repeat_n('\n', action.matches('\n').count()));
                rest = &rest[open + close + 2..];
            }
            None => {
                rest = &rest[open..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

fn parse(text: &str) -> Result<Vec<Node>, ReadError> {
    let mut stack: Vec<(Node, Vec<Node>)> = Vec::new();
    let mut top: Vec<Node> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut line = 1u32;
    let mut start_line = 1u32;
    let mut chars = text.chars().peekable();
    let flush = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                line += 1;
                flush(&mut word, &mut words);
            }
            '#' if word.is_empty() => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '"' | '\'' if word.is_empty() => {
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    if q == '\n' {
                        line += 1;
                    }
                    word.push(q);
                }
                words.push(std::mem::take(&mut word));
            }
            ';' | '{' | '}' => {
                flush(&mut word, &mut words);
                if c == '}' {
                    let Some((mut node, children)) = stack.pop() else {
                        return Err(ReadError { line, message: "a `}` closes no block".into() });
                    };
                    node.children = Some(children);
                    match stack.last_mut() {
                        Some((_, siblings)) => siblings.push(node),
                        None => top.push(node),
                    }
                    words.clear();
                    continue;
                }
                let mut it = std::mem::take(&mut words).into_iter();
                let node = Node {
                    name: it.next().unwrap_or_default(),
                    args: it.collect(),
                    line: start_line,
                    children: None,
                };
                if c == '{' {
                    stack.push((node, Vec::new()));
                } else if !node.name.is_empty() {
                    match stack.last_mut() {
                        Some((_, siblings)) => siblings.push(node),
                        None => top.push(node),
                    }
                }
            }
            c if c.is_whitespace() => flush(&mut word, &mut words),
            c => {
                if word.is_empty() && words.is_empty() {
                    start_line = line;
                }
                word.push(c);
            }
        }
    }
    if let Some((open, _)) = stack.last() {
        return Err(ReadError {
            line: open.line,
            message: format!("the `{}` block opened here is never closed", open.name),
        });
    }
    Ok(top)
}

/// What `proxy_next_upstream*` say at one level, inherited downwards.
#[derive(Clone, Default)]
struct Inherited {
    next_upstream: Option<(Vec<String>, u32)>,
    tries: Option<(String, u32)>,
    server_names: BTreeSet<String>,
}

/// The layers of an nginx configuration file.
pub(crate) fn read(path: &str, text: &str) -> Result<Vec<Layer>, ReadError> {
    let nodes = parse(&untemplate(text))?;
    let mut upstreams: BTreeMap<String, (Option<u32>, BTreeSet<String>)> = BTreeMap::new();
    collect_upstreams(&nodes, &mut upstreams, 0);
    let mut out = Vec::new();
    walk(path, &nodes, Inherited::default(), "", &upstreams, &mut out, 0);
    Ok(out)
}

fn collect_upstreams(
    nodes: &[Node],
    out: &mut BTreeMap<String, (Option<u32>, BTreeSet<String>)>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    for n in nodes {
        let Some(children) = &n.children else { continue };
        if n.name == "upstream" {
            let servers: Vec<&Node> = children.iter().filter(|c| c.name == "server").collect();
            let templated =
                n.args.iter().chain(servers.iter().flat_map(|s| &s.args)).any(|a| a.contains("TEMPLATE"));
            let count = (!templated).then_some(servers.len() as u32);
            let hosts = servers.iter().filter_map(|s| s.args.first()).filter_map(|a| hosts::key(a)).collect();
            out.insert(n.args.first().cloned().unwrap_or_default(), (count, hosts));
        } else {
            collect_upstreams(children, out, depth + 1);
        }
    }
}

fn walk(
    path: &str,
    nodes: &[Node],
    mut inh: Inherited,
    location: &str,
    upstreams: &BTreeMap<String, (Option<u32>, BTreeSet<String>)>,
    out: &mut Vec<Layer>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    for n in nodes {
        match n.name.as_str() {
            "proxy_next_upstream" => inh.next_upstream = Some((n.args.clone(), n.line)),
            "proxy_next_upstream_tries" => {
                inh.tries = Some((n.args.first().cloned().unwrap_or_default(), n.line))
            }
            "server_name" => inh.server_names = n.args.iter().filter_map(|a| hosts::key(a)).collect(),
            _ => {}
        }
    }
    for n in nodes {
        if n.name == "proxy_pass" && n.children.is_none() {
            out.extend(layer(path, n, &inh, location, upstreams));
        }
    }
    for n in nodes {
        let Some(children) = &n.children else { continue };
        if n.name == "upstream" {
            continue;
        }
        let loc = if n.name == "location" { n.args.join(" ") } else { location.to_string() };
        let mut child = inh.clone();
        if n.name == "server" {
            child.server_names.clear();
        }
        walk(path, children, child, &loc, upstreams, out, depth + 1);
    }
}

fn layer(
    path: &str,
    pass: &Node,
    inh: &Inherited,
    location: &str,
    upstreams: &BTreeMap<String, (Option<u32>, BTreeSet<String>)>,
) -> Option<Layer> {
    let target = pass.args.first()?;
    let after_scheme = target.split_once("://").map_or(target.as_str(), |(_, r)| r);
    let upstream_name = after_scheme.split(['/', ':']).next().unwrap_or("");
    let upstream = upstreams.get(upstream_name);
    let (conditions, cond_line, declared) = match &inh.next_upstream {
        Some((args, line)) => (args.clone(), *line, true),
        None => (vec!["error".to_string(), "timeout".to_string()], pass.line, false),
    };
    if conditions.iter().any(|c| c == "off") {
        return None;
    }
    let servers = upstream.and_then(|u| u.0);
    let attempts = match &inh.tries {
        Some((t, _)) if t != "0" => match t.parse::<u32>() {
            Ok(n) => match servers {
                Some(s) if s < n => Attempts::Total(s.max(1)),
                _ => Attempts::Total(n.max(1)),
            },
            Err(_) => Attempts::Unknown(format!("proxy_next_upstream_tries {t}")),
        },
        _ => Attempts::PerServer(servers),
    };
    if !declared && (!attempts.retries() || servers.is_none()) {
        // nginx's default only matters with several servers, and is counted
        // only where the servers are listed.
        return None;
    }
    let mut targets: BTreeSet<String> = inh.server_names.clone();
    targets.extend(hosts::key(upstream_name));
    if let Some((_, h)) = upstream {
        targets.extend(h.iter().cloned());
    }
    let mut decl_lines = vec![cond_line];
    decl_lines.extend(inh.tries.as_ref().map(|t| t.1));
    let methods = if conditions.iter().any(|c| c == "non_idempotent") {
        ", any method (non_idempotent)"
    } else {
        ", idempotent methods only on nginx 1.9.13 and later (older versions pass POST too)"
    };
    Some(Layer {
        tier: Tier::Proxy,
        source: "nginx".into(),
        name: format!("location {} -> {}", if location.is_empty() { "(server)" } else { location }, target),
        path: path.to_string(),
        line: cond_line,
        attempts,
        budget: None,
        retry_on: format!(
            "{}{}{methods}",
            conditions.join(" "),
            if declared { "" } else { " (nginx's default)" }
        ),
        targets,
        decl_lines,
        via_env: Default::default(),
    })
}

/// The ingress-nginx annotations of an `Ingress`.
pub(crate) fn read_ingress(path: &str, doc: &Doc) -> Vec<Layer> {
    let Some(ann) = get(&doc.value, &["metadata", "annotations"]) else { return Vec::new() };
    const NEXT: &str = "nginx.ingress.kubernetes.io/proxy-next-upstream";
    const TRIES: &str = "nginx.ingress.kubernetes.io/proxy-next-upstream-tries";
    let next = ann.get(NEXT).and_then(text);
    let tries = ann.get(TRIES).and_then(text);
    if next.is_none() && tries.is_none() {
        return Vec::new();
    }
    if next.as_deref().is_some_and(|n| n.split_whitespace().any(|w| w == "off")) {
        return Vec::new();
    }
    let attempts = match tries.as_deref() {
        None => Attempts::Total(3),
        Some("0") => Attempts::PerServer(None),
        Some(t) => t.trim().parse::<u32>().map_or_else(
            |_| Attempts::Unknown(format!("proxy-next-upstream-tries {t}")),
            |n| Attempts::Total(n.max(1)),
        ),
    };
    let mut targets = BTreeSet::new();
    for rule in items(get(&doc.value, &["spec", "rules"])) {
        targets.extend(rule.get("host").and_then(text).and_then(|h| hosts::key(&h)));
        for p in items(get(rule, &["http", "paths"])) {
            targets.extend(
                get(p, &["backend", "service", "name"])
                    .or_else(|| get(p, &["backend", "serviceName"]))
                    .and_then(text)
                    .and_then(|n| hosts::key(&n)),
            );
        }
    }
    let line =
        doc.line_of(if tries.is_some() { "proxy-next-upstream-tries" } else { "proxy-next-upstream" }, 0);
    let name = get(&doc.value, &["metadata", "name"]).and_then(text).unwrap_or_default();
    vec![Layer {
        tier: Tier::Proxy,
        source: "ingress-nginx".into(),
        name: format!("Ingress {name}"),
        path: path.to_string(),
        line,
        attempts,
        budget: None,
        retry_on: next.unwrap_or_else(|| "error timeout (ingress-nginx's default)".into()),
        targets,
        decl_lines: vec![line],
        via_env: Default::default(),
    }]
}

#[cfg(test)]
mod tests {
    use super::super::{declared, Attempts};
    use super::*;

    fn layers(path: &str, text: &str) -> Vec<Layer> {
        declared(&[(path.to_string(), text.to_string())]).layers
    }

    const CONF: &str = "http {\n  upstream payments {\n    server payments-1:8080;\n    server payments-2:8080;\n    server payments-3:8080;\n  }\n  server {\n    server_name shop.example.com;\n    location /checkout {\n      proxy_next_upstream error timeout http_502;\n      proxy_pass http://payments;\n    }\n  }\n}\n";

    #[test]
    fn next_upstream_without_tries_tries_every_server() {
        let l = layers("deploy/nginx.conf", CONF);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!((l[0].attempts.clone(), l[0].line), (Attempts::PerServer(Some(3)), 10));
        assert!(l[0].targets.contains("payments") && l[0].targets.contains("shop"));
        let tries = CONF.replace("http_502;", "http_502;\n      proxy_next_upstream_tries 2;");
        assert_eq!(layers("deploy/nginx.conf", &tries)[0].attempts, Attempts::Total(2));
        let off = CONF.replace("error timeout http_502", "off");
        assert!(layers("deploy/nginx.conf", &off).is_empty());
    }

    #[test]
    fn nginx_default_counts_only_with_several_listed_servers() {
        let single = "server {\n  location / {\n    proxy_pass http://payments:8080;\n  }\n}\n";
        assert!(layers("nginx.conf", single).is_empty());
        let default = CONF.replace("      proxy_next_upstream error timeout http_502;\n", "");
        let l = layers("nginx.conf", &default);
        assert_eq!(l.len(), 1);
        assert!(l[0].retry_on.contains("nginx's default"), "{}", l[0].retry_on);
    }

    #[test]
    fn templates_are_blanked_and_an_unclosed_block_names_its_line() {
        let tmpl = "http {\n{{ range $s := .services }}\n  upstream {{ Base $s.Key }} {\n    {{ range $u := $s.Nodes }}server {{ $u.Value }};{{ end }}\n  }\n  server {\n    location / {\n      proxy_next_upstream error timeout http_502 http_503 http_504;\n      proxy_pass http://{{ Base $s.Key }};\n    }\n  }\n{{ end }}\n}\n";
        let l = layers("router/templates/nginx.conf", tmpl);
        assert_eq!(l.len(), 1, "{l:?}");
        assert_eq!((l[0].attempts.clone(), l[0].line), (Attempts::PerServer(None), 8));
        let err = read("nginx.conf", "http {\n  server {\n    proxy_pass http://a;\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("never closed"), "{err:?}");
    }

    #[test]
    fn ingress_annotations() {
        let yaml = "kind: Ingress\nmetadata:\n  name: shop\n  annotations:\n    nginx.ingress.kubernetes.io/proxy-next-upstream: error timeout http_503\n    nginx.ingress.kubernetes.io/proxy-next-upstream-tries: \"4\"\nspec:\n  rules:\n  - host: shop.example.com\n    http:\n      paths:\n      - backend: { service: { name: payments, port: { number: 80 } } }\n";
        let l = layers("k8s/ingress.yaml", yaml);
        assert_eq!((l[0].attempts.clone(), l[0].line), (Attempts::Total(4), 6));
        assert!(l[0].targets.contains("payments"));
        assert!(layers("k8s/ingress.yaml", "kind: Ingress\nmetadata: { name: shop }\n").is_empty());
    }
}
