//! Retry amplification in print: the comment's section for every
//! `retry-amplified` finding (a one-line summary and the chain as a Mermaid
//! flowchart, which GitHub renders), and `retrygate layers`' listing of
//! every operation of a revision with its layers.

use std::fmt::Write as _;

use crate::analyze::layers::chain::{self, Operation};
use crate::analyze::layers::AtRevision;
use crate::finding::{Finding, Kind};

/// Text from the pull request made safe inside a quoted Mermaid label in a
/// fenced block: no fence, no quote, no tag, one line.
fn label(s: &str) -> String {
    crate::text::truncate(&crate::text::one_line(s), 90)
        .replace('`', "'")
        .replace('"', "#quot;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
}

/// The comment's section: nothing when no finding is `retry-amplified`.
pub(crate) fn section(findings: &[Finding]) -> String {
    let mut o = String::new();
    for f in findings.iter().filter(|f| f.kind == Kind::RetryAmplified) {
        let Some(head) = &f.head else { continue };
        if o.is_empty() {
            o.push_str("\n#### Retry amplification\n");
        }
        let summary = f.message.split("; ").next().unwrap_or(&f.message);
        let _ = writeln!(o, "\n{}\n", super::markdown::inline(summary));
        o.push_str("```mermaid\nflowchart LR\n  req([\"1 inbound request\"])\n");
        let chain = head["chain"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let mut prev = "req".to_string();
        for (i, l) in chain.iter().enumerate() {
            let id = format!("l{i}");
            let attempts = match &l["attempts"] {
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            let budget = l["budget"]
                .as_f64()
                .map(|b| format!(" (retry budget {}%)", crate::analyze::layers::chain::trim(b * 100.0)))
                .unwrap_or_default();
            // Two layers of one source in a chain are routes of different
            // services (one calls the next): their names tell them apart.
            let same_source = chain.iter().filter(|x| x["source"] == l["source"]).count() > 1;
            let name = match l["name"].as_str() {
                Some(n) if same_source => format!(" {}", label(n)),
                _ => String::new(),
            };
            let _ = writeln!(
                o,
                "  {prev} --> {id}[\"{} {}{name}<br/>×{attempts}{budget} on {}<br/>{}\"]",
                label(l["tier"].as_str().unwrap_or("")),
                label(l["source"].as_str().unwrap_or("")),
                label(l["retry_on"].as_str().unwrap_or("")),
                label(l["location"].as_str().unwrap_or("")),
            );
            prev = id;
        }
        let total = match &head["attempts"] {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let _ = writeln!(o, "  {prev} --> dep[(\"dependency: up to {} attempts\")]\n```", label(&total));
    }
    o
}

/// `retrygate layers`: every operation, its figure, its layers and where
/// each is declared; then the layers that are not linked, and the files
/// that could not be read.
pub fn layers_text(r: &AtRevision) -> String {
    let mut o = String::new();
    let layers: usize = r.operations.iter().map(|op| op.layers.len()).sum();
    let _ = writeln!(
        o,
        "retrygate layers at {}: {}, limits.max_amplification {}",
        crate::text::short_sha(&r.rev),
        crate::text::plural(r.operations.len(), "operation", "operations"),
        r.max_amplification
    );
    if layers == 0 {
        o.push_str("No retrying layer is declared (mesh routes, proxies, client retries).\n");
    }
    let (linked, alone): (Vec<&Operation>, Vec<&Operation>) =
        r.operations.iter().partition(|op| op.host.is_some());
    for op in linked {
        operation(&mut o, op, r.max_amplification);
    }
    if !alone.is_empty() {
        o.push_str("\nNot linked to a host (shown side by side, never multiplied):\n");
        for op in alone {
            operation(&mut o, op, r.max_amplification);
        }
    }
    for (path, line, message) in &r.unreadable {
        let _ = writeln!(o, "\nerror: {path}:{line}: {message}; its layers are not listed");
    }
    for n in &r.notes {
        let _ = writeln!(o, "\nnote: {n}");
    }
    o
}

fn operation(o: &mut String, op: &Operation, max: u32) {
    let fig = op.figure();
    let over = if op.retrying() >= 2 && fig.exceeds(chain::Figure::Known(f64::from(max))) == Some(true) {
        " (over limits.max_amplification)"
    } else {
        ""
    };
    let _ = writeln!(
        o,
        "\n{}: up to {} attempts per inbound request{over}: {}",
        op.label,
        fig.describe(),
        op.chain_text()
    );
    for l in &op.layers {
        let budget = l
            .budget
            .map(|b| format!(", retry budget {}%", crate::analyze::layers::chain::trim(b * 100.0)))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "  {:<6} {:<24} {}  attempts {}{budget}  on {}  ({})",
            l.tier.as_str(),
            l.source,
            l.location(),
            l.attempts.describe(),
            l.retry_on,
            l.name
        );
    }
    let _ = writeln!(o, "  linked: {}", op.link);
}

/// `retrygate layers --format json`.
pub fn layers_json(r: &AtRevision) -> serde_json::Value {
    serde_json::json!({
        "rev": r.rev,
        "max_amplification": r.max_amplification,
        "operations": r.operations.iter().map(|op| {
            let mut v = crate::analyze::layers::compare::chain_json(op);
            v["host"] = serde_json::json!(op.host);
            v["link"] = serde_json::json!(op.link);
            v
        }).collect::<Vec<_>>(),
        "unreadable": r.unreadable.iter().map(|(p, l, m)| serde_json::json!({"path": p, "line": l, "message": m})).collect::<Vec<_>>(),
        "notes": r.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(source: &str) -> Finding {
        Finding::new(Kind::RetryAmplified, "layers/amplification", "k8s/vs.yaml", 3)
            .message("`GET /x -> a`: up to 9 attempts per inbound request (was 3): client 3 × istio 3; over the limit")
            .head(serde_json::json!({
                "attempts": 9,
                "chain": [
                    {"tier": "client", "source": "Rust (backon)", "attempts": 3, "budget": null, "retry_on": "5xx", "location": "src/a.rs:4"},
                    {"tier": "mesh", "source": source, "attempts": 3, "budget": 0.2, "retry_on": "5xx", "location": "k8s/vs.yaml:3"},
                ],
            }))
    }

    #[test]
    fn one_summary_line_and_one_mermaid_block_per_finding() {
        let s = section(&[finding("istio")]);
        assert!(s.starts_with("\n#### Retry amplification\n"), "{s}");
        assert_eq!(s.matches("```mermaid").count(), 1);
        assert!(
            s.contains("l0 --> l1[\"mesh istio<br/>×3 (retry budget 20%) on 5xx<br/>k8s/vs.yaml:3\"]"),
            "{s}"
        );
        assert!(s.contains("dep[(\"dependency: up to 9 attempts\")]"), "{s}");
        assert!(section(&[Finding::new(Kind::RetryCountRaised, "r", "a", 1)]).is_empty());
    }

    #[test]
    fn text_from_the_pull_request_cannot_leave_the_label_or_the_block() {
        let s = section(&[finding("x\"] --> evil[\"```\n<img src=x>")]);
        let block = s.split("```mermaid\n").nth(1).and_then(|b| b.split("```").next()).unwrap();
        assert_eq!(block.lines().count(), 5, "{block}");
        assert!(!block.contains("<img") && !block.contains("\"]  -->"), "{block}");
        assert!(block.contains("#quot;"), "{block}");
    }

    #[test]
    fn routes_of_two_services_in_one_chain_are_told_apart_by_name() {
        let f = Finding::new(Kind::RetryAmplified, "layers/amplification", "k8s/vs.yaml", 3).head(serde_json::json!({
            "attempts": 16,
            "chain": [
                {"tier": "mesh", "source": "istio", "name": "front http[0]", "attempts": 4, "budget": null, "retry_on": "5xx", "location": "k8s/vs.yaml:3"},
                {"tier": "mesh", "source": "istio", "name": "back http[0]", "attempts": 4, "budget": null, "retry_on": "5xx", "location": "k8s/vs.yaml:9"},
            ],
        }));
        let s = section(&[f]);
        assert!(s.contains("req --> l0[\"mesh istio front http[0]<br/>×4 on 5xx"), "{s}");
        assert!(s.contains("l0 --> l1[\"mesh istio back http[0]<br/>"), "{s}");
        // One layer per source: no name, as before.
        assert!(!section(&[finding("istio")]).contains("istio <"));
    }
}
