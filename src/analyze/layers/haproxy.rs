//! HAProxy: `retries n` (n more tries after a failed one, so `n + 1`;
//! HAProxy's default is 3 where nothing is declared) in a `backend` or
//! `listen` section or inherited from `defaults`, with `retry-on` (2.0+;
//! `connect-failure` by default: the request never reached a server) and
//! `option redispatch` (a retry may go to another server). A section is a
//! layer when it or its `defaults` declares `retries`, `retry-on` or
//! `option redispatch`; its hosts are the section's name and its servers'.

use std::collections::BTreeSet;

use super::{hosts, Attempts, Layer, Tier};

/// Whether this file looks like HAProxy configuration.
pub(crate) fn wants(lower_path: &str, text: &str) -> bool {
    (lower_path.contains("haproxy") || lower_path.ends_with(".cfg"))
        && text
            .lines()
            .any(|l| l.starts_with("backend") || l.starts_with("listen") || l.starts_with("defaults"))
}

#[derive(Clone, Default)]
struct Section {
    kind: String,
    name: String,
    retries: Option<(String, u32)>,
    retry_on: Option<(String, u32)>,
    redispatch: Option<u32>,
    servers: BTreeSet<String>,
}

/// The retrying `backend` and `listen` sections of a file.
pub(crate) fn read(path: &str, text: &str) -> Vec<Layer> {
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i as u32 + 1;
        let line = raw.split('#').next().unwrap_or("").trim_end();
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if !raw.starts_with([' ', '\t'])
            && matches!(
                first,
                "defaults"
                    | "backend"
                    | "listen"
                    | "frontend"
                    | "global"
                    | "resolvers"
                    | "peers"
                    | "userlist"
            )
        {
            sections.push(Section {
                kind: first.into(),
                name: words.next().unwrap_or("").into(),
                ..Default::default()
            });
            continue;
        }
        let Some(s) = sections.last_mut() else { continue };
        match first {
            "retries" => s.retries = Some((words.next().unwrap_or("").into(), n)),
            "retry-on" => s.retry_on = Some((words.collect::<Vec<_>>().join(" "), n)),
            "option" if words.next() == Some("redispatch") => s.redispatch = Some(n),
            "no" if words.next() == Some("option") && words.next() == Some("redispatch") => {
                s.redispatch = None
            }
            "server" => {
                let _name = words.next();
                s.servers.extend(words.next().and_then(hosts::key));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut defaults = Section::default();
    for s in &sections {
        if s.kind == "defaults" {
            defaults = s.clone();
            continue;
        }
        if !matches!(s.kind.as_str(), "backend" | "listen") {
            continue;
        }
        let retries = s.retries.clone().or_else(|| defaults.retries.clone());
        let retry_on = s.retry_on.clone().or_else(|| defaults.retry_on.clone());
        let redispatch = s.redispatch.or(defaults.redispatch);
        let Some(line) = retries.as_ref().map(|r| r.1).or(retry_on.as_ref().map(|r| r.1)).or(redispatch)
        else {
            continue;
        };
        let attempts = match &retries {
            None => Attempts::Total(4),
            Some((r, _)) => r.parse::<u32>().map_or_else(
                |_| Attempts::Unknown(format!("retries {r}")),
                |n| Attempts::Total(n.saturating_add(1)),
            ),
        };
        let mut targets = s.servers.clone();
        targets.extend(hosts::key(&s.name));
        let mut decl_lines: Vec<u32> = [retries.map(|r| r.1), retry_on.as_ref().map(|r| r.1), redispatch]
            .into_iter()
            .flatten()
            .collect();
        decl_lines.sort();
        out.push(Layer {
            tier: Tier::Proxy,
            source: "haproxy".into(),
            name: format!("{} {}", s.kind, s.name),
            path: path.to_string(),
            line,
            attempts,
            budget: None,
            retry_on: format!(
                "{}{}",
                retry_on.map_or_else(|| "connect-failure (HAProxy's default)".to_string(), |r| r.0),
                if redispatch.is_some() { ", to another server (option redispatch)" } else { "" }
            ),
            targets,
            decl_lines,
            via_env: Default::default(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{declared, Attempts};

    fn layers(text: &str) -> Vec<super::Layer> {
        declared(&[("haproxy/haproxy.cfg".to_string(), text.to_string())]).layers
    }

    #[test]
    fn backend_inherits_retries_from_defaults() {
        let cfg = "defaults\n    mode http\n    retries 2\n    option redispatch\n\nbackend payments\n    retry-on conn-failure 503\n    server p1 payments-1:8080 check\n";
        let l = layers(cfg);
        assert_eq!(l.len(), 1);
        assert_eq!((l[0].attempts.clone(), l[0].line), (Attempts::Total(3), 3));
        assert!(l[0].retry_on.contains("503") && l[0].retry_on.contains("redispatch"), "{}", l[0].retry_on);
        assert!(l[0].targets.contains("payments"));
    }

    #[test]
    fn nothing_declared_is_no_layer() {
        assert!(
            layers("defaults\n    mode http\nbackend payments\n    server p1 payments-1:8080\n").is_empty()
        );
    }
}
