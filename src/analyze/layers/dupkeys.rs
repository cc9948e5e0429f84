//! YAML documents with a key written twice in one mapping. The YAML spec
//! and serde_yaml reject them, but the Kubernetes tooling of 2017-2019
//! (`kubectl` on go-yaml v2) read them with the last value winning, and
//! real manifests of that time (service-mesh install files among them)
//! carry such keys. Rather than call such a file unreadable, the layer
//! readers read it the way the cluster did: the earlier entry of each
//! repeated key is dropped.

/// `text` with the earlier entry of every key repeated in one block
/// mapping removed (the key line and everything indented under it), or
/// `None` when no key is repeated. Flow mappings (`{ a: 1, a: 2 }`) are
/// left alone.
pub(crate) fn last_wins(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    // Open mappings: (indent of their keys, keys seen with their line).
    let mut stack: Vec<(usize, Vec<(String, usize)>)> = Vec::new();
    let mut drop: Vec<(usize, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed == "---" {
            continue;
        }
        let mut indent = line.len() - trimmed.len();
        let mut rest = trimmed;
        let mut new_item = false;
        // `- key: v` opens a new mapping at the column of `key`.
        while let Some(after) = rest.strip_prefix("- ") {
            new_item = true;
            let pad = after.len() - after.trim_start().len();
            indent += 2 + pad;
            rest = after.trim_start();
        }
        let Some(key) = key_of(rest) else {
            stack.retain(|(at, _)| *at < indent || (*at == indent && !new_item));
            continue;
        };
        stack.retain(|(at, _)| *at < indent || (*at == indent && !new_item));
        if stack.last().is_none_or(|(at, _)| *at != indent) {
            stack.push((indent, Vec::new()));
        }
        let Some((_, keys)) = stack.last_mut() else { continue };
        if let Some(pos) = keys.iter().position(|(k, _)| *k == key) {
            let (_, start) = keys.remove(pos);
            // The earlier entry: its key line (without a `- ` that opened
            // the item) and what is indented under it.
            drop.push((start, block_end(&lines, start, indent)));
        }
        keys.push((key, i));
    }
    if drop.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        if drop.iter().any(|(a, _)| *a == i) {
            // The key line of a list item keeps the item open (`- `), so
            // its other keys, on the lines below, stay in it.
            let t = line.trim_start();
            let dashes = t.len() - t.trim_start_matches(['-', ' ']).len();
            if dashes > 0 && t.starts_with("- ") {
                out.push_str(line[..line.len() - t.len() + dashes].trim_end());
            }
            out.push('\n');
            continue;
        }
        if drop.iter().any(|(a, b)| (*a..*b).contains(&i)) {
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

/// The key of a `key: value` or `key:` line, quotes removed.
fn key_of(rest: &str) -> Option<String> {
    if rest.starts_with(['{', '[', '|', '>', '&', '*', '!']) {
        return None;
    }
    let colon = rest.find(": ").or_else(|| rest.strip_suffix(':').map(|k| k.len()))?;
    let key = rest[..colon].trim().trim_matches(|c| c == '"' || c == '\'');
    (!key.is_empty() && !key.contains(['#', '{', '[']) && !key.contains(": ")).then(|| key.to_string())
}

/// The line after the block an entry at line `start`, whose key is at
/// column `indent`, spans: deeper lines, blank lines, and a sequence
/// written at the key's own column (`ports:` then `- containerPort`).
fn block_end(lines: &[&str], start: usize, indent: usize) -> usize {
    let mut end = start + 1;
    while end < lines.len() {
        let l = lines[end];
        let t = l.trim_start();
        let at = l.len() - t.len();
        if t.is_empty() || t.starts_with('#') || at > indent || (at == indent && t.starts_with("- ")) {
            end += 1;
        } else {
            break;
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earlier_of_a_repeated_key_is_dropped_with_its_block() {
        let t = "apiVersion: v1\nkind: Deployment\napiVersion: apps/v1\nspec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 1\n    image: x\n    ports:\n    - containerPort: 2\n";
        let fixed = last_wins(t).unwrap();
        let v: serde_yaml::Value = serde_yaml::from_str(&fixed).unwrap();
        assert_eq!(v["apiVersion"].as_str(), Some("apps/v1"));
        assert_eq!(v["spec"]["containers"][0]["ports"][0]["containerPort"].as_u64(), Some(2));
        assert_eq!(v["spec"]["containers"][0]["image"].as_str(), Some("x"));
        assert_eq!(fixed.lines().count(), t.lines().count(), "lines keep their numbers");
        // The repeated key is the first of a list item.
        let t = "ports:\n- name: a\n  port: 1\n  name: b\n";
        let v: serde_yaml::Value = serde_yaml::from_str(&last_wins(t).unwrap()).unwrap();
        assert_eq!((v["ports"][0]["name"].as_str(), v["ports"][0]["port"].as_u64()), (Some("b"), Some(1)));
    }

    #[test]
    fn keys_of_different_mappings_and_list_items_are_not_repeats() {
        let t = "a:\n  name: x\nb:\n  name: y\nitems:\n- name: p\n  v: 1\n- name: q\n  v: 2\n";
        assert_eq!(last_wins(t), None);
    }

    #[test]
    fn a_manifest_with_a_repeated_key_still_declares_its_route_and_a_broken_one_is_still_an_error() {
        let vs = "apiVersion: v1\nkind: VirtualService\napiVersion: networking.istio.io/v1alpha3\nmetadata: { name: r }\nspec:\n  hosts: [ratings]\n  http:\n  - retries: { attempts: 2 }\n";
        let d = super::super::declared(&[("k8s/vs.yaml".to_string(), vs.to_string())]);
        assert!(d.unreadable.is_empty(), "{:?}", d.unreadable);
        assert_eq!(d.layers.len(), 1, "{:?}", d.layers);
        assert_eq!(d.layers[0].line, 8);
        let broken = format!("{vs}  - retries: {{ attempts: 3\n");
        let d = super::super::declared(&[("k8s/vs.yaml".to_string(), broken)]);
        assert_eq!(d.unreadable.len(), 1, "{:?}", d.unreadable);
    }
}
