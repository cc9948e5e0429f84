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
#[cfg(test)]
pub(crate) fn read(path: &str, text: &str, out: &mut Declared) -> Result<(), ReadError> {
    read_shaped(path, text, out, false)
}

/// Reads every document of a YAML or JSON file into `out` (a file that
/// does not parse is an error only when it mentions something a layer is
/// made of), and with `skim` a JSON file is first skimmed (without building
/// its value) for anything [`read_doc`] starts from; one with none of it
/// gives nothing, so it is not parsed as YAML. Only for a file whose read
/// errors are not reported (an unchanged file of the tree, read to link
/// layers): a JSON file that YAML would refuse gives no error when skimmed.
pub(crate) fn read_shaped(path: &str, text: &str, out: &mut Declared, skim: bool) -> Result<(), ReadError> {
    let could_carry = super::mentions_layers(path, text);
    let interesting = could_carry || ["env", "kind:", "labels", "://"].iter().any(|w| text.contains(w));
    if !interesting {
        return Ok(());
    }
    if skim && json_gives_nothing(text) {
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
        // One parse serves the check and the readers (a service model of
        // several MB costs its parse once, not twice).
        let parsed = match crate::yaml::parse_checked(&body) {
            Ok(parsed) => parsed,
            Err(r) if could_carry => {
                return Err(ReadError { line: from as u32 + r.line as u32, message: r.message });
            }
            Err(_) => continue,
        };
        let parsed = parsed.or_else(|e: serde_yaml::Error| {
            // A key written twice: read as the cluster did, the last one wins
            // (the rewritten document is checked like any other). Decided by
            // the document, not by the parser's wording: `last_wins` is
            // `None` when no key repeats, and any other error stays.
            match super::dupkeys::last_wins(&body) {
                Some(fixed) => match crate::yaml::parse_checked(&fixed) {
                    Ok(Ok(v)) => Ok(v),
                    _ => Err(e),
                },
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

/// Keys [`read_doc`]'s readers start from (`services` for Compose files'
/// workloads and labels): a document with none of them,
/// and no environment variable with an address, gives nothing. A reader
/// that starts from another key adds it here (the test
/// `every_layer_in_json_is_read_as_in_yaml` checks each reader's example).
const SHAPE_KEYS: &[&str] = &["kind", "metadata", "virtual_hosts", "http", "services"];

/// Whether `text` is one JSON document in which [`read_doc`] would find
/// nothing: none of [`SHAPE_KEYS`], no mapping with both `name` and `value`,
/// no name-like key (all capitals, digits, `_`) with a value holding a `:`,
/// and no `NAME=...:...` list item (what [`collect_env`] reads). JSON that
/// YAML reads differently or not at all (templates, a `---` line, a tab, a
/// surrogate escape) and anything that is not JSON are never skimmed
/// (`false`): the caller parses them as before.
///
/// A skim stops at the first thing that could be read, so a file that has
/// one costs a partial skim and then its parse.
fn json_gives_nothing(text: &str) -> bool {
    let t = text.trim_start_matches([' ', '\n', '\r']);
    if !(t.starts_with('{') || t.starts_with('[')) || text.contains("{{") || text.contains('\t') {
        return false;
    }
    if text.lines().any(|l| l == "---" || l.starts_with("--- ")) {
        return false;
    }
    // libyaml refuses a surrogate `\uD800`-`\uDFFF` that serde_json pairs.
    let b = text.as_bytes();
    let surrogate = memchr::memmem::find_iter(b, b"\\u").any(|i| {
        b.get(i + 2).is_some_and(|c| matches!(c, b'd' | b'D'))
            && b.get(i + 3).is_some_and(|c| matches!(c, b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
    });
    if surrogate {
        return false;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde::de::DeserializeSeed::deserialize(skim::Walk, &mut de).is_ok() && de.end().is_ok()
}

/// The skim of [`json_gives_nothing`]: a walk over a JSON value that fails
/// (with a custom error) at the first thing [`read_doc`] could read.
mod skim {
    use std::fmt;

    use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

    /// What a scalar is, as far as [`super::collect_env`] cares.
    #[derive(Clone, Copy, Default)]
    pub(super) struct Scalar {
        /// Could be an environment variable's name (`text` of it is all
        /// capitals, digits and `_`).
        name: bool,
        /// Holds a `:` (an address has one).
        colon: bool,
        /// A `NAME=value-with-colon` list item.
        assignment: bool,
    }

    fn name_like(s: &str) -> bool {
        let s = s.trim_matches(|c| c == '"' || c == '\'');
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    }

    fn found<E: de::Error>() -> E {
        E::custom("a layer reader could read this document")
    }

    pub(super) struct Walk;

    impl<'de> DeserializeSeed<'de> for Walk {
        type Value = Scalar;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk {
        type Value = Scalar;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar, E> {
            Ok(Scalar::default())
        }

        // A number's text may be all digits: a name to `collect_env`.
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Scalar, E> {
            Ok(Scalar { name: true, ..Scalar::default() })
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Scalar, E> {
            Ok(Scalar { name: true, ..Scalar::default() })
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scalar, E> {
            Ok(Scalar { name: true, ..Scalar::default() })
        }

        fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
            Ok(Scalar::default())
        }

        fn visit_str<E: de::Error>(self, s: &str) -> Result<Scalar, E> {
            Ok(Scalar {
                name: name_like(s),
                colon: s.contains(':'),
                assignment: s.split_once('=').is_some_and(|(k, v)| name_like(k) && v.contains(':')),
            })
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
            while let Some(item) = seq.next_element_seed(Walk)? {
                if item.assignment {
                    return Err(found());
                }
            }
            Ok(Scalar::default())
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
            let (mut name, mut value) = (false, false);
            while let Some(key) = map.next_key_seed(Key)? {
                if key.shape {
                    return Err(found());
                }
                name |= key.text == KeyText::Name;
                value |= key.text == KeyText::Value;
                if name && value {
                    return Err(found());
                }
                let v = map.next_value_seed(Walk)?;
                if key.scalar.name && v.colon {
                    return Err(found());
                }
            }
            Ok(Scalar::default())
        }
    }

    #[derive(PartialEq, Eq)]
    enum KeyText {
        Name,
        Value,
        Other,
    }

    /// A mapping key (a string in JSON): its facts as a scalar, and
    /// whether it is one of [`super::SHAPE_KEYS`], `name` or `value`.
    struct KeyFacts {
        scalar: Scalar,
        shape: bool,
        text: KeyText,
    }

    struct Key;

    impl<'de> DeserializeSeed<'de> for Key {
        type Value = KeyFacts;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<KeyFacts, D::Error> {
            d.deserialize_str(self)
        }
    }

    impl<'de> Visitor<'de> for Key {
        type Value = KeyFacts;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object key")
        }

        fn visit_str<E: de::Error>(self, s: &str) -> Result<KeyFacts, E> {
            Ok(KeyFacts {
                scalar: Walk.visit_str(s)?,
                shape: super::SHAPE_KEYS.contains(&s),
                text: match s {
                    "name" => KeyText::Name,
                    "value" => KeyText::Value,
                    _ => KeyText::Other,
                },
            })
        }
    }
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

    /// Everything `read_shaped` gave, in a comparable form.
    fn read_all(path: &str, text: &str, skim: bool) -> String {
        let mut out = Declared::default();
        let r = read_shaped(path, text, &mut out, skim);
        format!("{r:?} {:?} {:?} {:?} {:?} {:?}", out.layers, out.env, out.services, out.uses, out.unreadable)
    }

    /// One example of every document shape a reader of `read_doc` starts
    /// from (a reader that starts from a new key adds its example here).
    const SHAPES: &[&str] = &[
        "kind: VirtualService\nmetadata: { name: pay }\nspec:\n  hosts: [payments]\n  http:\n  - retries: { attempts: 3 }\n    route:\n    - destination: { host: payments }\n",
        "kind: ServiceProfile\nmetadata: { name: payments.default.svc.cluster.local }\nspec:\n  retryBudget: { retryRatio: 0.2, minRetriesPerSecond: 10, ttl: 10s }\n  routes:\n  - name: GET /x\n    isRetryable: true\n",
        "kind: Middleware\nmetadata: { name: retry }\nspec:\n  retry: { attempts: 4 }\n",
        "kind: IngressRoute\nspec:\n  routes:\n  - match: Host(`payments`)\n    middlewares: [{ name: retry }]\n    services: [{ name: payments }]\n",
        "kind: Ingress\nmetadata:\n  annotations:\n    nginx.ingress.kubernetes.io/proxy-next-upstream: error timeout http_502\nspec:\n  rules: [{ host: payments }]\n",
        "kind: Service\nmetadata: { name: payments }\n",
        "metadata:\n  annotations:\n    retry.linkerd.io/http: 5xx\n    retry.linkerd.io/limit: '3'\n",
        "static_resources:\n  listeners:\n  - virtual_hosts:\n    - name: api\n      domains: [payments]\n      routes:\n      - match: { prefix: / }\n        route: { cluster: payments, retry_policy: { num_retries: 2, retry_on: 5xx } }\n",
        "http:\n  middlewares:\n    retry: { retry: { attempts: 3 } }\n  routers:\n    api: { rule: Host(`payments`), middlewares: [retry], service: payments }\n",
        "containers:\n- env:\n  - name: PAYMENTS_URL\n    value: http://payments:8080\n",
        "services:\n  web:\n    environment: { LEDGER_ADDR: 'ledger:9000' }\n",
        "services:\n  web:\n    environment: [LEDGER_URL=http://ledger]\n",
        "ports: { 8080: 'http://payments:8080' }\n",
    ];

    #[test]
    fn every_layer_in_json_is_read_as_in_yaml() {
        for yaml in SHAPES {
            let value: serde_json::Value = serde_yaml::from_str(yaml).unwrap();
            let json = serde_json::to_string_pretty(&value).unwrap();
            assert!(!json_gives_nothing(&json), "skimmed away:\n{json}");
            let full = read_all("k8s/x.json", &json, false);
            // A JSON Service names no layer word and no `kind:` (its key is
            // `"kind":`), so `read_shaped` passes it by before any skim.
            let passed_by = yaml.starts_with("kind: Service\n");
            assert_eq!(full == "Ok(()) [] {} {} [] []", passed_by, "{yaml}: {full}");
            assert_eq!(read_all("k8s/x.json", &json, true), full);
        }
    }

    #[test]
    fn a_json_file_with_nothing_to_read_is_skimmed_and_gives_what_its_parse_gives() {
        // An SDK service model: it mentions retries and URLs in prose, and
        // has no key a layer reader starts from.
        let model = r#"{
  "smithy": "2.0",
  "shapes": {
    "com.example#PutObject": {
      "type": "operation",
      "traits": { "smithy.api#documentation": "<p>Retries up to 3 times, see https://docs.example.com/retries.</p>", "smithy.api#http": { "method": "PUT", "uri": "/{Bucket}" } },
      "ID": "not an address",
      "list": ["A=b", 1, true, null, 2.5]
    }
  }
}"#;
        assert!(json_gives_nothing(model));
        assert_eq!(read_all("models/s3.json", model, true), read_all("models/s3.json", model, false));
        assert_eq!(read_all("models/s3.json", model, false), "Ok(()) [] {} {} [] []");
    }

    #[test]
    fn what_yaml_could_read_otherwise_is_never_skimmed() {
        for text in [
            "kind: Service\nmetadata: { name: payments }\n",
            "{\n\t\"a\": 1\n}",
            "{\"a\": \"{{ .Values.x }}\"}",
            "{\"a\": 1}\n---\n{\"b\": 2}",
            "{\"a\": \"\\ud83d\\ude00\"}",
            "{\"a\": [1, }",
            "{\"a\": 1} trailing",
            "{\"M_URL\": \"payments:9000\"}",
            "[\"'M_URL'=http://payments\"]",
            "{\"x\": {\"value\": 1, \"name\": 2}}",
        ] {
            assert!(!json_gives_nothing(text), "{text}");
        }
        assert!(json_gives_nothing("{\"a\": {\"b\": [\"x:y\", {\"Name\": \"http://q\"}]}}"));
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
