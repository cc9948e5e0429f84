//! Reads a YAML (or JSON) file one document at a time and hands each to the
//! readers that know its shape: Kubernetes kinds by `kind`, Envoy and
//! Traefik configuration by their keys, and environment variables wherever
//! they are written. Helm templates are read with their `{{ }}` actions
//! blanked out, so a route a chart declares is still seen.

use serde_yaml::Value;

use super::{envoy, hosts, istio, linkerd, nginx, traefik, Declared, ReadError};

/// One document of a file: its value and where it starts.
pub(crate) struct Doc<'a> {
    pub(crate) value: Value,
    /// 1-based line of the document's first line in the file.
    pub(crate) start: u32,
    pub(crate) lines: Vec<&'a str>,
}

impl Doc<'_> {
    /// The file line of the `nth` (0-based) line of this document that
    /// contains `needle` after its indentation; the document's first line
    /// when there is none (the reader still points at the right document).
    pub(crate) fn line_of(&self, needle: &str, nth: usize) -> u32 {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.contains(needle))
            .nth(nth)
            .map_or(self.start, |(i, _)| self.start + i as u32)
    }
}

/// `v[k1][k2]...`, or `None` where a key is missing.
pub(crate) fn get<'v>(v: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

/// A scalar as text (numbers and booleans included).
pub(crate) fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A scalar as a whole number (`3`, `"3"`).
pub(crate) fn number(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The items of a sequence (none for anything else).
pub(crate) fn items(v: Option<&Value>) -> &[Value] {
    match v {
        Some(Value::Sequence(s)) => s,
        _ => &[],
    }
}

/// Blanks out Helm/Go template actions so that the YAML around them parses:
/// a line that is only an action (`{{- if .Values.x }}`) is dropped, and an
/// action inside a value becomes the word `TEMPLATE`, which has no host key.
fn untemplate(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("{{") && t.ends_with("}}") && t.matches("{{").count() == 1 {
            out.push('\n');
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            match rest[open..].find("}}") {
                Some(close) => {
                    out.push_str("$TEMPLATE");
                    rest = &rest[open + close + 2..];
                }
                None => {
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// Reads every document of a YAML or JSON file into `out`. A file that does
/// not parse is an error only when it mentions something a layer is made of.
pub(crate) fn read(path: &str, text: &str, out: &mut Declared) -> Result<(), ReadError> {
    let could_carry = super::mentions_layers(path, text);
    let interesting = could_carry || ["env", "kind:", "labels", "://"].iter().any(|w| text.contains(w));
    if !interesting {
        return Ok(());
    }
    let owned;
    let text = if text.contains("{{") {
        owned = untemplate(text);
        owned.as_str()
    } else {
        text
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut start = 0usize;
    let mut bounds = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if *l == "---" || l.starts_with("--- ") {
            bounds.push((start, i));
            start = i + 1;
        }
    }
    bounds.push((start, lines.len()));
    for (from, to) in bounds {
        let body = lines[from..to].join("\n");
        if body.trim().is_empty() {
            continue;
        }
        if let Err(r) = crate::yaml::check(&body) {
            if could_carry {
                return Err(ReadError { line: from as u32 + r.line as u32, message: r.message });
            }
            continue;
        }
        let parsed = serde_yaml::from_str(&body).or_else(|e: serde_yaml::Error| {
            // A key written twice: read as the cluster did, the last one wins.
            match e
                .to_string()
                .contains("duplicate entry")
                .then(|| super::dupkeys::last_wins(&body))
                .flatten()
            {
                Some(fixed) => serde_yaml::from_str(&fixed).map_err(|_| e),
                None => Err(e),
            }
        });
        let value: Value = match parsed {
            Ok(v) => v,
            Err(e) if could_carry => {
                // An error at the end of input is reported past the last line.
                let line =
                    from as u32 + e.location().map_or(1, |l| l.line() as u32).min((to - from).max(1) as u32);
                let msg = e.to_string();
                let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
                return Err(ReadError { line, message: format!("not valid YAML ({msg})") });
            }
            Err(_) => continue,
        };
        let doc = Doc { value, start: from as u32 + 1, lines: lines[from..to].to_vec() };
        read_doc(path, &doc, out);
    }
    Ok(())
}

fn read_doc(path: &str, doc: &Doc, out: &mut Declared) {
    let kind = get(&doc.value, &["kind"]).and_then(text).unwrap_or_default();
    match kind.as_str() {
        "VirtualService" => out.layers.extend(istio::read(path, doc)),
        "RouteRule" => out.layers.extend(istio::read_route_rule(path, doc)),
        "ServiceProfile" => out.layers.extend(linkerd::read_profile(path, doc)),
        "Middleware" | "IngressRoute" => out.layers.extend(traefik::read_crd(path, doc)),
        "Ingress" => out.layers.extend(nginx::read_ingress(path, doc)),
        "Service" => {
            if let Some(k) =
                get(&doc.value, &["metadata", "name"]).and_then(text).and_then(|n| hosts::key(&n))
            {
                out.services.insert(k);
            }
        }
        _ => {}
    }
    out.layers.extend(linkerd::read_annotations(path, doc));
    out.layers.extend(envoy::read(path, doc));
    out.layers.extend(traefik::read_dynamic(path, doc));
    out.uses.extend(traefik::uses_of(doc));
    super::workloads::read(path, doc, out);
    collect_env(&doc.value, out, 0);
}

/// Environment variables with URL values anywhere in a document: the
/// Kubernetes `- name: X / value: Y` form and plain `X: Y` mappings (Compose
/// `environment:`, Helm values, ConfigMaps).
fn collect_env(v: &Value, out: &mut Declared, depth: usize) {
    if depth > 64 {
        return;
    }
    match v {
        Value::Mapping(m) => {
            if let (Some(n), Some(val)) = (m.get("name").and_then(text), m.get("value").and_then(text)) {
                hosts::record_env(&n, &val, &mut out.env);
            }
            for (k, val) in m {
                if let (Some(k), Some(val)) = (text(k), text(val)) {
                    hosts::record_env(&k, &val, &mut out.env);
                } else {
                    collect_env(val, out, depth + 1);
                }
            }
        }
        Value::Sequence(s) => {
            for item in s {
                // Compose's list form: `- PAYMENTS_URL=http://payments`.
                if let Some((k, val)) = item.as_str().and_then(|t| t.split_once('=')) {
                    hosts::record_env(k, val, &mut out.env);
                }
                collect_env(item, out, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_actions_are_blanked_and_lines_kept() {
        let t = "{{- if .Values.mesh }}\nkind: VirtualService\nspec:\n  hosts: [{{ .Values.host }}]\n{{- end }}\n";
        let u = untemplate(t);
        assert_eq!(u.lines().count(), t.lines().count());
        assert!(u.contains("hosts: [$TEMPLATE]"), "{u}");
    }

    #[test]
    fn a_broken_file_that_could_carry_retries_names_its_line() {
        let mut out = Declared::default();
        let err = read(
            "mesh/vs.yaml",
            "kind: VirtualService\nspec:\n  http:\n  - retries: { attempts: 3\n",
            &mut out,
        )
        .unwrap_err();
        assert_eq!(err.line, 4, "{err:?}");
        assert!(err.message.starts_with("not valid YAML"), "{err:?}");
        // A broken file with nothing a layer is made of is not this reader's business.
        assert!(read("ci/x.yaml", "steps: [ {\n", &mut Declared::default()).is_ok());
    }

    #[test]
    fn env_values_come_from_every_manifest_form() {
        let mut out = Declared::default();
        let t = "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - env:\n        - name: PAYMENTS_URL\n          value: http://payments:8080\n---\nservices:\n  web:\n    environment:\n      - LEDGER_URL=http://ledger\n  api:\n    environment:\n      SHIPPING_ADDR: shipping:9000\n";
        read("k8s/app.yaml", t, &mut out).unwrap();
        let names: Vec<&String> = out.env.keys().collect();
        assert_eq!(names, ["LEDGER_URL", "PAYMENTS_URL", "SHIPPING_ADDR"], "{:?}", out.env);
    }
}
