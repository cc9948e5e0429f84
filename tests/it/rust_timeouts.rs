//! Rust timeouts judged wherever they are set (issue 52, item 2): a
//! timeout belongs to the operations it bounds, and is compared when a
//! retry covers them, in its own file or not. Each case runs the binary on
//! a real git repository, and each new behaviour has a case that must
//! stay quiet beside it:
//!
//! - a connect timeout lowered warns and never blocks (a connect that
//!   times out sent nothing);
//! - a tower or OpenDAL `TimeoutLayer` lowered in a stack with a
//!   `RetryLayer` blocks; one in a stack with no retry layer does not;
//! - a builder's `request_timeout` beside its own `request_retries(n)`
//!   blocks; beside `request_retries(0)` it does not;
//! - a timeout newly set where the base set none is lowered from "none",
//!   on a client under retry middleware or on a client another file
//!   retries; a new lock wait or a new timeout in a function no retry
//!   covers is not;
//! - a clap `default_value_t` that a retried client's timeout reads.

use crate::common;

use serde_json::Value;

/// Scans `files_base` -> `files_head` in a one-crate repository; the scan
/// itself must not fail.
fn change(files_base: &[(&str, &str)], files_head: &[(&str, &str)]) -> Value {
    let (code, json) = common::scan_crate_change(files_base, files_head);
    assert!(matches!(code, Some(0 | 1)), "scan failed: {json}");
    json
}

/// `(severity, line, message)` of every timeout-lowered finding in `path`.
fn timeouts_in(json: &Value, path: &str) -> Vec<(String, u64, String)> {
    json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["path"] == path && f["kind"] == "timeout-lowered")
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("severity"), f["line"].as_u64().unwrap_or_default(), s("message"))
        })
        .collect()
}

fn errors_in(json: &Value, path: &str) -> Vec<(String, u64, String)> {
    timeouts_in(json, path).into_iter().filter(|(s, _, _)| s == "error").collect()
}

/// A file that retries, through a backon policy, with the client that
/// `crate::http::build_client()` builds.
const FETCH: &str = "use backon::{ExponentialBuilder, Retryable};\n\n\
    pub async fn prices() -> reqwest::Result<reqwest::Response> {\n\
    \x20   let client = crate::http::build_client();\n\
    \x20   (|| async { client.get(\"https://api/prices\").send().await })\n\
    \x20       .retry(ExponentialBuilder::default().with_jitter().with_max_times(3))\n\
    \x20       .await\n}\n";

fn http(setters: &str) -> String {
    format!(
        "use std::time::Duration;\n\npub fn build_client() -> reqwest::Client {{\n    reqwest::Client::builder(){setters}.build().expect(\"client\")\n}}\n"
    )
}

#[test]
fn a_lowered_connect_timeout_warns_and_a_lowered_request_timeout_blocks() {
    let base = http(".connect_timeout(Duration::from_secs(30))");
    let head = http(".connect_timeout(Duration::from_secs(2))");
    let json = change(&[("src/http.rs", &base), ("src/fetch.rs", FETCH)], &[("src/http.rs", &head)]);
    let found = timeouts_in(&json, "src/http.rs");
    assert_eq!(found.len(), 1, "{json}");
    assert_eq!(found[0].0, "warning", "a connect timeout never blocks: {found:?}");
    assert!(found[0].2.contains("connect"), "{found:?}");

    let base = http(".timeout(Duration::from_secs(30))");
    let head = http(".timeout(Duration::from_secs(2))");
    let json = change(&[("src/http.rs", &base), ("src/fetch.rs", FETCH)], &[("src/http.rs", &head)]);
    assert_eq!(errors_in(&json, "src/http.rs").len(), 1, "{json}");
}

#[test]
fn a_timeout_newly_set_on_a_client_another_file_retries_is_lowered_from_none() {
    let base = http("");
    let head = http(".timeout(Duration::from_secs(2))");
    let json = change(&[("src/http.rs", &base), ("src/fetch.rs", FETCH)], &[("src/http.rs", &head)]);
    let errors = errors_in(&json, "src/http.rs");
    assert_eq!(errors.len(), 1, "{json}");
    assert!(errors[0].2.contains("newly set to 2 s") && errors[0].2.contains("src/fetch.rs"), "{errors:?}");

    // A new connect timeout only warns.
    let head = http(".connect_timeout(Duration::from_secs(2))");
    let json = change(&[("src/http.rs", &base), ("src/fetch.rs", FETCH)], &[("src/http.rs", &head)]);
    assert!(errors_in(&json, "src/http.rs").is_empty(), "{json}");
    assert_eq!(timeouts_in(&json, "src/http.rs").len(), 1, "{json}");

    // The same client with no retry anywhere in the crate.
    let once = FETCH.replace(
        "(|| async { client.get(\"https://api/prices\").send().await })\n        .retry(ExponentialBuilder::default().with_jitter().with_max_times(3))\n        .await",
        "client.get(\"https://api/prices\").send().await",
    );
    assert!(!once.contains(".retry("));
    let head = http(".timeout(Duration::from_secs(2))");
    let json = change(&[("src/http.rs", &base), ("src/fetch.rs", &once)], &[("src/http.rs", &head)]);
    assert!(timeouts_in(&json, "src/http.rs").is_empty(), "{json}");
}

/// A client under reqwest-retry's middleware and a GET through it; `extra`
/// goes on the request before `.send()`, `other` is a function beside.
fn middleware(extra: &str, other: &str) -> String {
    format!(
        "use std::time::Duration;\n\nuse reqwest::Response;\nuse reqwest_middleware::{{ClientBuilder, ClientWithMiddleware}};\n\
         use reqwest_retry::policies::ExponentialBackoff;\nuse reqwest_retry::RetryTransientMiddleware;\n\n\
         pub fn build_client() -> ClientWithMiddleware {{\n    let policy = ExponentialBackoff::builder().build_with_max_retries(3);\n\
         \x20   ClientBuilder::new(reqwest::Client::new())\n        .with(RetryTransientMiddleware::new_with_policy(policy))\n        .build()\n}}\n\n\
         pub async fn items(client: &ClientWithMiddleware, base: &str) -> reqwest_middleware::Result<Response> {{\n\
         \x20   client\n        .get(format!(\"{{base}}/items\")){extra}\n        .send()\n        .await\n}}\n{other}"
    )
}

#[test]
fn a_per_request_timeout_newly_set_under_retry_middleware_is_lowered_from_none() {
    let base = middleware("", "");
    let head = middleware("\n        .timeout(Duration::from_secs(2))", "");
    let json = change(&[("src/client.rs", &base)], &[("src/client.rs", &head)]);
    let errors = errors_in(&json, "src/client.rs");
    assert_eq!(errors.len(), 1, "{json}");
    assert!(errors[0].2.contains("where the base set no timeout"), "{errors:?}");

    // A lock wait newly bounded beside it bounds no request.
    let lock = |t: &str| {
        format!(
            "\npub async fn flush(state: &tokio::sync::Mutex<Vec<u8>>) -> usize {{\n    let g = {t};\n    g.len()\n}}\n"
        )
    };
    let base = middleware("", &lock("state.lock().await"));
    let head = middleware(
        "",
        &lock("match tokio::time::timeout(Duration::from_secs(1), state.lock()).await { Ok(g) => g, Err(_) => return 0 }"),
    );
    let json = change(&[("src/client.rs", &base)], &[("src/client.rs", &head)]);
    assert!(timeouts_in(&json, "src/client.rs").is_empty(), "{json}");
}

#[test]
fn a_timeout_whose_base_value_was_not_read_is_not_new() {
    // The base's timeout comes from a function the analyzer does not
    // evaluate; the head writes it out. Not "set where there was none".
    let base = middleware("\n        .timeout(crate::settings::request_timeout())", "");
    let head = middleware("\n        .timeout(Duration::from_secs(2))", "");
    let json = change(&[("src/client.rs", &base)], &[("src/client.rs", &head)]);
    assert!(errors_in(&json, "src/client.rs").is_empty(), "{json}");
}

/// A tower stack; `retry` is the retry layer line (or none).
fn tower(retry: &str, secs: u32) -> String {
    format!(
        "use std::time::Duration;\n\nuse tower::retry::RetryLayer;\nuse tower::timeout::TimeoutLayer;\nuse tower::ServiceBuilder;\n\n\
         pub fn stack<S>(inner: S) -> impl tower::Service<http::Request<String>> {{\n    ServiceBuilder::new(){retry}\n\
         \x20       .layer(TimeoutLayer::new(Duration::from_secs({secs})))\n        .service(inner)\n}}\n"
    )
}

#[test]
fn a_tower_timeout_layer_lowered_under_a_retry_layer_blocks_and_alone_does_not() {
    let with = "\n        .layer(RetryLayer::new(crate::policy::Attempts(3)))";
    let json = change(&[("src/svc.rs", &tower(with, 30))], &[("src/svc.rs", &tower(with, 3))]);
    let errors = errors_in(&json, "src/svc.rs");
    assert_eq!(errors.len(), 1, "{json}");
    assert!(errors[0].2.contains("TimeoutLayer"), "{errors:?}");

    // A server's timeout layer: no retry layer in its stack, though the
    // file retries something else.
    let elsewhere = "use backon::{ExponentialBuilder, Retryable};\n\n\
        pub async fn warm(c: &reqwest::Client) -> reqwest::Result<reqwest::Response> {\n\
        \x20   (|| async { c.get(\"https://api/warm\").send().await })\n\
        \x20       .retry(ExponentialBuilder::default().with_jitter().with_max_times(3))\n        .await\n}\n";
    let base = format!("{}\n{elsewhere}", tower("", 30));
    let head = format!("{}\n{elsewhere}", tower("", 3));
    let json = change(&[("src/svc.rs", &base)], &[("src/svc.rs", &head)]);
    assert!(timeouts_in(&json, "src/svc.rs").is_empty(), "{json}");
}

fn opendal(secs: u32, retry: &str) -> String {
    format!(
        "use std::time::Duration;\n\nuse opendal::layers::{{RetryLayer, TimeoutLayer}};\nuse opendal::Operator;\n\n\
         pub fn operator(op: Operator) -> Operator {{\n    op.layer(TimeoutLayer::new().with_timeout(Duration::from_secs({secs}))){retry}\n}}\n"
    )
}

#[test]
fn an_opendal_timeout_layer_lowered_with_a_retry_layer_blocks_and_alone_does_not() {
    let retry = "\n        .layer(RetryLayer::new().with_max_times(4).with_jitter())";
    let json = change(&[("src/store.rs", &opendal(60, retry))], &[("src/store.rs", &opendal(10, retry))]);
    let errors = errors_in(&json, "src/store.rs");
    assert_eq!(errors.len(), 1, "{json}");
    assert!(errors[0].2.contains("60 s") && errors[0].2.contains("10 s"), "{errors:?}");

    let json = change(&[("src/store.rs", &opendal(60, ""))], &[("src/store.rs", &opendal(10, ""))]);
    assert!(timeouts_in(&json, "src/store.rs").is_empty(), "{json}");
}

fn discovery(secs: u32, retries: u32) -> String {
    format!(
        "use std::time::Duration;\n\nuse discv5::ConfigBuilder;\n\n\
         pub fn config(listen: discv5::ListenConfig) -> discv5::Config {{\n    ConfigBuilder::new(listen)\n\
         \x20       .request_timeout(Duration::from_secs({secs}))\n        .request_retries({retries})\n        .build()\n}}\n"
    )
}

#[test]
fn a_builder_timeout_beside_its_own_retry_setter_blocks_and_beside_zero_retries_does_not() {
    let json = change(&[("src/disc.rs", &discovery(4, 2))], &[("src/disc.rs", &discovery(1, 2))]);
    let errors = errors_in(&json, "src/disc.rs");
    assert_eq!(errors.len(), 1, "{json}");
    assert!(errors[0].2.contains("request_timeout"), "{errors:?}");

    let json = change(&[("src/disc.rs", &discovery(4, 0))], &[("src/disc.rs", &discovery(1, 0))]);
    assert!(timeouts_in(&json, "src/disc.rs").is_empty(), "{json}");
}

fn clap_opts(request: u32, shutdown: u32) -> String {
    format!(
        "use clap::Parser;\n\n#[derive(Parser, Debug, Clone)]\npub struct Opts {{\n\
         \x20   #[arg(long, default_value_t = {request})]\n    pub request_timeout_secs: u64,\n\
         \x20   #[arg(long, default_value_t = {shutdown})]\n    pub shutdown_timeout_secs: u64,\n}}\n"
    )
}

const CLAP_FETCH: &str = "use std::time::Duration;\n\nuse backon::{ExponentialBuilder, Retryable};\n\nuse crate::config::Opts;\n\n\
    pub async fn prices(opts: &Opts) -> reqwest::Result<reqwest::Response> {\n\
    \x20   let client = reqwest::Client::builder()\n        .timeout(Duration::from_secs(opts.request_timeout_secs))\n        .build()?;\n\
    \x20   (|| async { client.get(\"https://api/prices\").send().await })\n\
    \x20       .retry(ExponentialBuilder::default().with_jitter().with_max_times(3))\n        .await\n}\n\n\
    pub async fn stop(opts: &Opts) {\n    tokio::time::sleep(Duration::from_secs(opts.shutdown_timeout_secs)).await;\n}\n";

#[test]
fn a_clap_default_a_retried_client_reads_blocks_and_a_shutdown_default_does_not() {
    let json = change(
        &[("src/config.rs", &clap_opts(30, 30)), ("src/fetch.rs", CLAP_FETCH)],
        &[("src/config.rs", &clap_opts(5, 30))],
    );
    assert_eq!(errors_in(&json, "src/config.rs").len(), 1, "{json}");

    let json = change(
        &[("src/config.rs", &clap_opts(30, 30)), ("src/fetch.rs", CLAP_FETCH)],
        &[("src/config.rs", &clap_opts(30, 3))],
    );
    assert!(timeouts_in(&json, "src/config.rs").is_empty(), "{json}");
}
