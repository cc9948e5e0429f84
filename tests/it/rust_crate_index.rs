//! The crate-wide index (issue 11, pattern 4) on real git repositories: a
//! client-wide retry policy added in one file covers the POSTs that
//! unchanged files of the same crate send, read from the head tree. Test
//! code, other crates of a workspace and idempotent-only crates do not count.

use crate::common;

use common::Repo;
use serde_json::Value;

fn scan(repo: &Repo, head: &str) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", head, "--format", "json"])
        .output()
        .expect("run retrygate");
    assert!(matches!(out.status.code(), Some(0 | 1)), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

fn non_idempotent(json: &Value) -> Vec<Value> {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "retry-non-idempotent")
        .cloned()
        .collect()
}

const PLAIN_CLIENT: &str = "pub struct Api { http: reqwest::Client }\n\
impl Api {\n\
    pub fn new() -> Api { Api { http: reqwest::Client::new() } }\n\
}\n";

const RETRYING_CLIENT: &str = "use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};\n\
use reqwest_retry::{policies::ExponentialBackoff, RetryTransientMiddleware};\n\
pub struct Api { http: ClientWithMiddleware }\n\
impl Api {\n\
    pub fn new() -> Api {\n\
        let policy = ExponentialBackoff::builder().build_with_max_retries(3);\n\
        let http = ClientBuilder::new(reqwest::Client::new())\n\
            .with(RetryTransientMiddleware::new_with_policy(policy))\n\
            .build();\n\
        Api { http }\n\
    }\n\
}\n";

const ORDERS: &str = "use crate::client::Api;\n\
\n\
impl Api {\n\
    pub async fn place(&self, order: &Order) -> Result<Response, Error> {\n\
        self.http.post(ORDERS_URL).json(order).send().await\n\
    }\n\
}\n";

const PRICES: &str = "impl Api {\n\
    pub async fn price(&self, sku: &str) -> Result<Response, Error> {\n\
        self.http.get(price_url(sku)).send().await\n\
    }\n\
}\n";

fn repo_with(files: &[(&str, &str)]) -> Repo {
    let repo = Repo::new();
    repo.write("Cargo.toml", "[package]\nname = \"shop\"\n");
    repo.write("src/client.rs", PLAIN_CLIENT);
    for (p, t) in files {
        repo.write(p, t);
    }
    repo.commit("base");
    repo.branch("retry");
    repo.write("src/client.rs", RETRYING_CLIENT);
    repo.commit("retry transient errors");
    repo
}

#[test]
fn a_post_in_an_unchanged_file_is_reported_at_the_policy() {
    let repo = repo_with(&[("src/orders.rs", ORDERS), ("src/prices.rs", PRICES)]);
    let json = scan(&repo, "retry");
    let f = non_idempotent(&json);
    assert_eq!(f.len(), 1, "{json:#}");
    assert_eq!(f[0]["path"], "src/client.rs");
    assert_eq!(f[0]["severity"], "error");
    let msg = f[0]["message"].as_str().unwrap();
    assert!(msg.contains("src/orders.rs:5"), "the message names the request site: {msg}");
    assert_eq!(json["verdict"], "block");
}

#[test]
fn reads_test_code_and_other_crates_are_not_covered() {
    let repo = repo_with(&[
        ("src/prices.rs", PRICES),
        // Test code sends no production traffic.
        ("tests/orders.rs", ORDERS),
        (
            "src/fixtures_mod.rs",
            "#[cfg(test)]\nmod tests {\n    fn seed(c: &Client) { c.post(URL).send(); }\n}\n",
        ),
        // Another crate of the workspace has its own client.
        ("tools/admin/Cargo.toml", "[package]\nname = \"admin\"\n"),
        ("tools/admin/src/lib.rs", ORDERS),
    ]);
    let json = scan(&repo, "retry");
    assert!(non_idempotent(&json).is_empty(), "{json:#}");
}

/// Sizes come from git for the unchanged files only: one past the per-file
/// limit is left out and said so (an info note), the rest are still read.
#[test]
fn an_unchanged_file_past_the_size_limit_is_left_out_with_a_note() {
    let limit = retrygate::testing::analyze::MAX_INDEX_FILE_BYTES as usize;
    let mut huge = String::from("pub fn big(c: &Client) {\n    c.patch(URL).send();\n}\n");
    while huge.len() <= limit {
        huge.push_str("// padding padding padding padding padding padding padding padding\n");
    }
    let repo = repo_with(&[("src/orders.rs", ORDERS), ("src/generated.rs", &huge)]);
    let json = scan(&repo, "retry");
    let f = non_idempotent(&json);
    assert_eq!(f.len(), 1, "{json:#}");
    let msg = f[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("src/orders.rs:5") && !msg.contains("PATCH"),
        "the PATCH in the unread file is not claimed: {msg}"
    );
    let notes: Vec<&str> =
        json["notes"].as_array().unwrap().iter().filter_map(|n| n["message"].as_str()).collect();
    assert!(
        notes.iter().any(|n| n.contains("too large to index") && n.contains("may be incomplete")),
        "{notes:?}"
    );
}

/// A file git lists but cannot give (its object is gone: a broken or
/// partial clone) is not a bound we chose: the scan blocks and says what to
/// check, rather than passing on the files it could read.
#[test]
fn an_unchanged_file_git_cannot_read_blocks_with_a_note() {
    let repo = repo_with(&[("src/orders.rs", ORDERS), ("src/prices.rs", PRICES)]);
    let id = repo.git(&["rev-parse", "retry:src/orders.rs"]);
    let object = repo.join(&format!(".git/objects/{}/{}", &id[..2], &id[2..]));
    std::fs::remove_file(&object).expect("the blob is a loose object");
    let json = scan(&repo, "retry");
    assert_eq!(json["verdict"], "block", "{json:#}");
    let notes: Vec<&Value> =
        json["notes"].as_array().unwrap().iter().filter(|n| n["blocking"] == true).collect();
    assert!(
        notes.iter().any(|n| n["message"]
            .as_str()
            .unwrap()
            .contains("git could not read some files of this crate")
            && n["path"] == "src/client.rs"),
        "{notes:?}"
    );
}
