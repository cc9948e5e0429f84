//! Retry amplification across layers, end to end through the binary on
//! real git repositories: a client whose base URL a manifest gives, a mesh
//! route, a proxy and a retry budget, compared base against head
//! (`retrygate scan`), listed per revision (`retrygate layers`), and
//! explained (`retrygate explain retry-amplified`). Fixtures are in
//! `tests/fixtures/layers/`; each layer reader's own positive and negative
//! cases are unit tests beside it (`src/analyze/layers/`).

use std::process::{Command, Output};

use crate::common::Repo;
use serde_json::Value;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/layers/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn retrygate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrygate")).args(args).output().expect("run retrygate")
}

fn scan(repo: &Repo, format: &str) -> (Output, String) {
    let out = retrygate(&[
        "scan",
        "--repo",
        repo.path().to_str().unwrap(),
        "--base",
        "main",
        "--head",
        "pr",
        "--format",
        format,
    ]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, text)
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The shop: a checkout client making 3 attempts at `payments` (its base
/// URL from the Deployment's env), and a VirtualService for `payments`.
fn shop(mesh_base: &str) -> Repo {
    let repo = Repo::new();
    repo.write("src/checkout.rs", fixture("checkout_client.rs"));
    repo.write("k8s/deploy.yaml", fixture("deploy.yaml"));
    repo.write("k8s/payments-vs.yaml", fixture(mesh_base));
    repo.commit("shop");
    repo.branch("pr");
    repo
}

fn amplified(json: &Value) -> Vec<&Value> {
    json["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "retry-amplified").collect()
}

#[test]
fn mesh_retries_under_a_retrying_client_are_amplified_at_the_added_line() {
    let repo = shop("vs_no_retries.yaml");
    repo.write("k8s/payments-vs.yaml", fixture("vs_retries.yaml"));
    repo.commit("retry payments in the mesh");
    let (out, text) = scan(&repo, "json");
    let j = json(&text);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let f = amplified(&j);
    assert_eq!(f.len(), 1, "{text}");
    assert_eq!(
        (f[0]["path"].as_str(), f[0]["line"].as_u64(), f[0]["severity"].as_str()),
        (Some("k8s/payments-vs.yaml"), Some(10), Some("error"))
    );
    let message = f[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("`backon retry in orders -> payments`: up to 9 attempts per inbound request (was 3): client 3 × istio 3;"),
        "{message}"
    );
    assert!(message.contains("retry at one layer only") && message.contains("TpsBudget"), "{message}");
    assert_eq!((f[0]["base"]["attempts"].as_u64(), f[0]["head"]["attempts"].as_u64()), (Some(3), Some(9)));
    let chain = f[0]["head"]["chain"].as_array().unwrap();
    assert_eq!(
        chain.iter().map(|l| l["location"].as_str().unwrap()).collect::<Vec<_>>(),
        ["src/checkout.rs:7", "k8s/payments-vs.yaml:10"]
    );
}

#[test]
fn the_comment_shows_the_chain_as_a_mermaid_flowchart() {
    let repo = shop("vs_no_retries.yaml");
    repo.write("k8s/payments-vs.yaml", fixture("vs_retries.yaml"));
    repo.commit("retry payments in the mesh");
    let (_, md) = scan(&repo, "markdown");
    let at = md.find("#### Retry amplification").unwrap_or_else(|| panic!("{md}"));
    let section = &md[at..];
    assert!(
        section.contains("up to 9 attempts per inbound request (was 3): client 3 × istio 3"),
        "{section}"
    );
    let block = section.split("```mermaid\n").nth(1).and_then(|b| b.split("```").next()).unwrap();
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(lines[0], "flowchart LR");
    assert!(lines[2].starts_with("  req --> l0[\"client Rust (backon)<br/>×3 on "), "{block}");
    assert!(
        lines[3].starts_with("  l0 --> l1[\"mesh istio<br/>×3 on 5xx,reset<br/>k8s/payments-vs.yaml:10"),
        "{block}"
    );
    assert_eq!(lines[4], "  l1 --> dep[(\"dependency: up to 9 attempts\")]");
}

#[test]
fn a_route_for_a_host_the_client_does_not_call_is_a_note_not_a_finding() {
    let repo = shop("vs_no_retries.yaml");
    repo.write("k8s/search-vs.yaml", fixture("vs_other_host.yaml"));
    repo.commit("retry search in the mesh");
    let (out, text) = scan(&repo, "json");
    let j = json(&text);
    assert!(amplified(&j).is_empty(), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
    let notes: Vec<&str> =
        j["notes"].as_array().unwrap().iter().filter_map(|n| n["message"].as_str()).collect();
    assert!(
        notes.iter().any(|n| n.contains(
            "layer change: `requests to search`: up to 3 attempts per inbound request (was 1): istio 3"
        )),
        "{notes:?}"
    );
}

#[test]
fn without_the_manifest_that_gives_the_base_url_the_layers_are_not_multiplied() {
    let repo = Repo::new();
    repo.write("src/checkout.rs", fixture("checkout_client.rs"));
    repo.write("k8s/payments-vs.yaml", fixture("vs_no_retries.yaml"));
    repo.commit("shop without its deployment");
    repo.branch("pr");
    repo.write("k8s/payments-vs.yaml", fixture("vs_retries.yaml"));
    repo.commit("retry payments in the mesh");
    let (_, text) = scan(&repo, "json");
    let j = json(&text);
    assert!(amplified(&j).is_empty(), "{text}");
    // The route's change is still said, on its own.
    assert!(
        j["notes"]
            .to_string()
            .contains("`requests to payments`: up to 3 attempts per inbound request (was 1): istio 3"),
        "{text}"
    );
}

#[test]
fn a_retry_budget_instead_of_mesh_attempts_is_within_the_limit() {
    let repo = shop("vs_no_retries.yaml");
    repo.write("k8s/payments-profile.yaml", fixture("serviceprofile.yaml"));
    repo.commit("retry payments within a budget");
    let (out, text) = scan(&repo, "json");
    let j = json(&text);
    assert!(amplified(&j).is_empty(), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
    let notes = j["notes"].to_string();
    assert!(notes.contains("client 3 × linkerd ≤1.1 (retry budget 10%)"), "{notes}");
}

#[test]
fn a_proxy_and_a_mesh_multiply_and_the_config_limit_is_read_from_the_base() {
    let repo = shop("vs_retries.yaml");
    repo.write(".github/retrygate.yml", "limits: { max_amplification: 20 }\n");
    repo.commit("a higher ceiling");
    repo.git(&["branch", "-f", "main", "pr"]);
    repo.write("nginx/nginx.conf", fixture("nginx.conf"));
    repo.commit("nginx in front of payments");
    let (out, text) = scan(&repo, "json");
    let j = json(&text);
    // 3 × 3 × 2 = 18: under the base's ceiling of 20, so a note.
    assert!(amplified(&j).is_empty(), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        j["notes"]
            .to_string()
            .contains("up to 18 attempts per inbound request (was 9): client 3 × istio 3 × nginx 2"),
        "{text}"
    );
}

/// The shop's Deployment as JSON, and an SDK service model that mentions
/// retries and URLs in its prose: both the same at the base and the head.
fn shop_with_json(mesh_base: &str) -> Repo {
    let repo = Repo::new();
    repo.write("src/checkout.rs", fixture("checkout_client.rs"));
    let deploy: Vec<serde_json::Value> =
        fixture("deploy.yaml").split("---\n").map(|d| serde_yaml::from_str(d).unwrap()).collect();
    repo.write("k8s/deploy.json", serde_json::to_string_pretty(&deploy[0]).unwrap());
    repo.write(
        "models/payments.json",
        r#"{"shapes": {"Pay": {"documentation": "Retries 3 times; see https://docs.example.com/retries", "method": "POST"}}}"#,
    );
    repo.write("models/broken.json", r#"{"documentation": "retries", "#);
    repo.write("k8s/payments-vs.yaml", fixture(mesh_base));
    repo.commit("shop");
    repo.branch("pr");
    repo
}

#[test]
fn an_unchanged_json_manifest_still_links_the_chain() {
    let repo = shop_with_json("vs_no_retries.yaml");
    repo.write("k8s/payments-vs.yaml", fixture("vs_retries.yaml"));
    repo.commit("retry payments in the mesh");
    let (out, text) = scan(&repo, "json");
    assert_eq!(out.status.code(), Some(1), "{text}");
    let j = json(&text);
    let f = amplified(&j);
    assert_eq!(f.len(), 1, "{text}");
    assert!(f[0]["message"].as_str().unwrap().contains("(was 3): client 3 × istio 3"), "{text}");
    // An unchanged file that does not parse is not the change's business.
    assert!(!text.contains("models/broken.json"), "{text}");
}

#[test]
fn a_changed_json_file_that_does_not_parse_still_blocks() {
    let repo = shop_with_json("vs_no_retries.yaml");
    repo.write("models/broken.json", r#"{"documentation": "retries", "x": "#);
    repo.commit("break the model");
    let (out, text) = scan(&repo, "json");
    assert_eq!(out.status.code(), Some(1), "{text}");
    let j = json(&text);
    let blocking: Vec<&Value> =
        j["notes"].as_array().unwrap().iter().filter(|n| n["blocking"] == true).collect();
    assert_eq!(blocking.len(), 1, "{text}");
    assert_eq!(blocking[0]["path"], "models/broken.json", "{text}");
    assert!(blocking[0]["message"].as_str().unwrap().contains("not valid YAML"), "{text}");
}

#[test]
fn a_broken_mesh_file_blocks_with_its_file_and_line() {
    let repo = shop("vs_no_retries.yaml");
    repo.write("k8s/payments-vs.yaml", fixture("vs_broken.yaml"));
    repo.commit("broken route");
    let (out, text) = scan(&repo, "json");
    assert_eq!(out.status.code(), Some(1), "{text}");
    let j = json(&text);
    let note = j["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["blocking"] == true && n["path"] == "k8s/payments-vs.yaml")
        .unwrap_or_else(|| panic!("{text}"));
    let m = note["message"].as_str().unwrap();
    assert!(m.starts_with("line 7: not valid YAML ("), "{m}");
    assert!(m.contains("fix the file, or review its retries by hand and sign off"), "{m}");
    assert!(!m.contains('\n'), "one line: {m}");
}

#[test]
fn layers_lists_every_operation_and_where_each_layer_is_declared_at_each_revision() {
    let repo = shop("vs_no_retries.yaml");
    repo.write("k8s/payments-vs.yaml", fixture("vs_retries.yaml"));
    repo.write("nginx/nginx.conf", fixture("nginx.conf"));
    repo.commit("retries everywhere");
    let dir = repo.path().to_str().unwrap();
    let out = retrygate(&["layers", "--repo", dir, "--rev", "pr"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("backon retry in orders -> payments: up to 18 attempts per inbound request (over limits.max_amplification): client 3 × istio 3 × nginx 2"), "{text}");
    for at in ["src/checkout.rs:7", "k8s/payments-vs.yaml:10", "nginx/nginx.conf:10"] {
        assert!(text.contains(at), "{at} missing: {text}");
    }
    assert!(text.contains("linked: the client calls `payments`, which the other layers serve"), "{text}");
    // The base has the client alone.
    let base = retrygate(&["layers", "--repo", dir, "--rev", "main", "--format", "json"]);
    let j: Value = serde_json::from_slice(&base.stdout).unwrap();
    let ops = j["operations"].as_array().unwrap();
    assert_eq!(ops.len(), 1, "{j}");
    assert_eq!((ops[0]["attempts"].as_u64(), ops[0]["host"].as_str()), (Some(3), Some("payments")));
}

#[test]
fn layers_says_what_it_could_not_read_and_exits_1() {
    let repo = shop("vs_broken.yaml");
    let out = retrygate(&["layers", "--repo", repo.path().to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("error: k8s/payments-vs.yaml:7: not valid YAML ("), "{text}");
    let bad = retrygate(&["layers", "--repo", repo.path().to_str().unwrap(), "--rev", "no-such-rev"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("unknown revision 'no-such-rev'"), "{err}");
}

#[test]
fn explain_retry_amplified() {
    let out = retrygate(&["explain", "retry-amplified"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(text.starts_with("retry-amplified (default severity: error)"), "{text}");
    assert!(text.contains("Use instead: Retry at one layer only"), "{text}");
}

/// Three services, each calling the next through an address in its
/// Deployment: storefront and cart retry in the mesh; stock does not yet.
fn services_in_a_row() -> Repo {
    let repo = Repo::new();
    repo.write("k8s/deployments.yaml", fixture("chain_deployments.yaml"));
    repo.write("k8s/routes.yaml", fixture("chain_routes.yaml"));
    repo.commit("shop");
    repo.branch("pr");
    repo
}

#[test]
fn retries_added_on_a_service_that_another_service_calls_are_amplified_through_the_call() {
    let repo = services_in_a_row();
    let routes = fixture("chain_routes.yaml").replace(
        "  http:\n  - route:\n    - destination: { host: stock }",
        "  http:\n  - retries:\n      attempts: 2\n    route:\n    - destination: { host: stock }",
    );
    repo.write("k8s/routes.yaml", &routes);
    repo.commit("retry stock in the mesh");
    let (out, text) = scan(&repo, "json");
    let j = json(&text);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let f = amplified(&j);
    assert_eq!(f.len(), 1, "{text}");
    assert_eq!((f[0]["path"].as_str(), f[0]["line"].as_u64()), (Some("k8s/routes.yaml"), Some(36)));
    let message = f[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("`requests to storefront`: up to 27 attempts per inbound request (was 9): istio 3 × istio 3 × istio 3;"),
        "{message}"
    );
    // `layers` says how the hops were linked.
    let out = retrygate(&["layers", "--repo", repo.path().to_str().unwrap(), "--rev", "pr"]);
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing.contains("`storefront` calls `cart` (CART_API, k8s/deployments.yaml:17); `cart` calls `stock` (STOCK_ADDR, k8s/deployments.yaml:34)"),
        "{listing}"
    );
}

#[test]
fn without_the_environment_that_names_the_next_service_the_routes_stay_apart() {
    let repo = services_in_a_row();
    repo.write(
        "k8s/deployments.yaml",
        fixture("chain_deployments.yaml").replace("\"stock:9000\"", "\"10.0.4.2:9000\""),
    );
    let routes = fixture("chain_routes.yaml").replace(
        "  http:\n  - route:\n    - destination: { host: stock }",
        "  http:\n  - retries:\n      attempts: 2\n    route:\n    - destination: { host: stock }",
    );
    repo.write("k8s/routes.yaml", &routes);
    repo.commit("retry stock in the mesh; cart reaches stock by address");
    let (out, text) = scan(&repo, "json");
    let j = json(&text);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(amplified(&j).is_empty(), "{text}");
    let notes: Vec<&str> =
        j["notes"].as_array().unwrap().iter().filter_map(|n| n["message"].as_str()).collect();
    assert!(
        notes.iter().any(|n| n.contains(
            "layer change: `requests to stock`: up to 3 attempts per inbound request (was 1): istio 3"
        )),
        "{notes:?}"
    );
}
