//! Rust retries whose policy or count is held somewhere other than the
//! retry call (issue 52): a policy kept in a struct field and built where
//! the field is set, a count read from the environment with its default
//! written beside the variable's name, a count returned by a function
//! that takes nothing (a serde default), and a sender that calls itself
//! again with the request it was handed. Each through the binary on a real
//! git repository, with a case that must stay quiet beside each one.

use crate::common;

use serde_json::Value;

fn change(files_base: &[(&str, &str)], files_head: &[(&str, &str)]) -> (Option<i32>, Value) {
    common::scan_crate_change(files_base, files_head)
}

/// `(kind, severity, line)` of every finding in `path`.
fn findings_in(json: &Value, path: &str) -> Vec<(String, String, u64)> {
    json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["path"] == path)
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("kind"), s("severity"), f["line"].as_u64().unwrap_or_default())
        })
        .collect()
}

fn has(json: &Value, path: &str, kind: &str, severity: &str) -> bool {
    findings_in(json, path).iter().any(|(k, s, _)| k == kind && s == severity)
}

/// A store client whose retry policy is a field built in `new`: `ctor` is
/// the field's value, `uses` the imports (and the `Policy` alias), `body`
/// the methods.
fn store(ctor: &str, uses: &str, body: &str) -> String {
    format!(
        "use std::time::Duration;\n{uses}\n\npub struct Store {{\n    client: reqwest::Client,\n    policy: Policy,\n}}\n\n\
         impl Store {{\n    pub fn new() -> Self {{\n        Self {{\n            client: reqwest::Client::new(),\n            policy: {ctor},\n        }}\n    }}\n\n\
         {body}\n}}\n"
    )
}

const ONCE: &str = "    pub async fn save(&self, url: &str) -> Result<(), reqwest::Error> {\n        self.client.METHOD(url).send().await?;\n        Ok(())\n    }\n";

/// Every retry entry point the analyzer knows, given a policy held in a
/// field: backoff's `retry_notify`, tokio-retry's `Retry::spawn`, backon's
/// `.retry(..)`. Each `(uses, field value, head body with METHOD)`.
fn forms() -> Vec<(&'static str, &'static str, &'static str, String)> {
    vec![
        (
            "backoff retry_notify",
            "use backoff::{ExponentialBackoff, ExponentialBackoffBuilder};\ntype Policy = ExponentialBackoff;",
            "ExponentialBackoffBuilder::new().with_max_elapsed_time(Some(Duration::from_secs(120))).build()",
            "    pub async fn save(&self, url: &str) -> Result<(), reqwest::Error> {\n        backoff::future::retry_notify(\n            self.policy.clone(),\n            || async {\n                self.client.METHOD(url).send().await?;\n                Ok(())\n            },\n            |e, d| log(e, d),\n        )\n        .await\n    }\n".to_string(),
        ),
        (
            "tokio-retry spawn",
            "use tokio_retry::strategy::ExponentialBackoff;\nuse tokio_retry::Retry;\ntype Policy = ExponentialBackoff;",
            "ExponentialBackoff::from_millis(100)",
            "    pub async fn save(&self, url: &str) -> Result<(), reqwest::Error> {\n        Retry::spawn(self.policy.clone().take(3), || async {\n            self.client.METHOD(url).send().await?;\n            Ok(())\n        })\n        .await\n    }\n".to_string(),
        ),
        (
            "backon retry",
            "use backon::{ExponentialBuilder, Retryable};\ntype Policy = ExponentialBuilder;",
            "ExponentialBuilder::default().with_jitter().with_max_times(3)",
            "    pub async fn save(&self, url: &str) -> Result<(), reqwest::Error> {\n        (|| async {\n            self.client.METHOD(url).send().await?;\n            Ok(())\n        })\n        .retry(self.policy)\n        .await\n    }\n".to_string(),
        ),
    ]
}

#[test]
fn a_new_retry_of_a_post_through_a_policy_held_in_a_field_blocks_in_every_form() {
    for (name, uses, ctor, retried) in forms() {
        let base = store(ctor, uses, &ONCE.replace("METHOD", "post"));
        let head = store(ctor, uses, &retried.replace("METHOD", "post"));
        let (code, json) = change(&[("src/store.rs", &base)], &[("src/store.rs", &head)]);
        assert_eq!(code, Some(1), "{name}: {json:#}");
        assert!(has(&json, "src/store.rs", "retry-non-idempotent", "error"), "{name}: {json:#}");
    }
}

#[test]
fn a_new_retry_of_a_get_through_a_policy_held_in_a_field_does_not_block() {
    for (name, uses, ctor, retried) in forms() {
        let base = store(ctor, uses, &ONCE.replace("METHOD", "get"));
        let head = store(ctor, uses, &retried.replace("METHOD", "get"));
        let (_, json) = change(&[("src/store.rs", &base)], &[("src/store.rs", &head)]);
        assert!(!has(&json, "src/store.rs", "retry-non-idempotent", "error"), "{name}: {json:#}");
    }
}

#[test]
fn a_count_raised_where_a_held_policy_is_built_is_reported() {
    let uses = "use backon::{ExponentialBuilder, Retryable};\ntype Policy = ExponentialBuilder;";
    let retried = &forms()[2].3.replace("METHOD", "get");
    let base = store("ExponentialBuilder::default().with_jitter().with_max_times(3)", uses, retried);
    let head = store("ExponentialBuilder::default().with_jitter().with_max_times(10)", uses, retried);
    let (code, json) = change(&[("src/store.rs", &base)], &[("src/store.rs", &head)]);
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "src/store.rs", "retry-count-raised", "error"), "{json:#}");
}

#[test]
fn a_field_set_to_two_different_policies_is_not_guessed() {
    // Which of the two the retry runs with is decided at run time: the
    // retry of a GET is not read as either policy's.
    let uses = "use backon::{ExponentialBuilder, Retryable};\ntype Policy = ExponentialBuilder;";
    let retried = forms()[2].3.replace("METHOD", "get");
    let two = "    pub fn patient() -> Self {\n        Self { client: reqwest::Client::new(), policy: ExponentialBuilder::default().with_max_times(50) }\n    }\n";
    let base = store("ExponentialBuilder::default().with_jitter().with_max_times(3)", uses, &retried);
    let head = store(
        "ExponentialBuilder::default().with_jitter().with_max_times(3)",
        uses,
        &format!("{retried}{two}"),
    );
    let (_, json) = change(&[("src/store.rs", &base)], &[("src/store.rs", &head)]);
    assert!(!has(&json, "src/store.rs", "retry-count-raised", "error"), "{json:#}");
}

const CONFIG_BASE: &str = "pub struct Config {\n    pub region: String,\n}\n\nimpl Config {\n    pub fn from_env() -> Result<Self, Error> {\n        Ok(Self {\n            region: env(\"APP_REGION\", \"us-west-1\".to_string())?,\n        })\n    }\n}\n";

fn config_head(default: &str) -> String {
    format!(
        "pub struct Config {{\n    pub region: String,\n    pub sdk_max_attempts: u32,\n}}\n\nimpl Config {{\n    pub fn from_env() -> Result<Self, Error> {{\n        Ok(Self {{\n            region: env(\"APP_REGION\", \"us-west-1\".to_string())?,\n            sdk_max_attempts: env(\"APP_SDK_MAX_ATTEMPTS\", {default})?,\n        }})\n    }}\n}}\n"
    )
}

fn cdn(count: &str) -> String {
    format!(
        "use std::sync::Arc;\nuse aws_config::retry::RetryConfig;\nuse crate::config::Config;\n\n\
         pub fn client(config: &Arc<Config>, shared: &aws_config::SdkConfig) -> aws_sdk_cloudfront::Client {{\n    \
         let builder = aws_sdk_cloudfront::config::Builder::from(shared)\n        .retry_config(RetryConfig::standard().with_max_attempts({count}));\n    \
         aws_sdk_cloudfront::Client::from_conf(builder.build())\n}}\n"
    )
}

#[test]
fn a_count_moved_into_a_setting_read_with_a_higher_default_blocks() {
    let (code, json) = change(
        &[("src/config.rs", CONFIG_BASE), ("src/cdn.rs", &cdn("3"))],
        &[("src/config.rs", &config_head("6")), ("src/cdn.rs", &cdn("config.sdk_max_attempts"))],
    );
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "src/cdn.rs", "retry-count-raised", "error"), "{json:#}");
}

#[test]
fn a_count_moved_into_a_setting_read_with_the_same_default_passes() {
    let (code, json) = change(
        &[("src/config.rs", CONFIG_BASE), ("src/cdn.rs", &cdn("3"))],
        &[("src/config.rs", &config_head("3")), ("src/cdn.rs", &cdn("config.sdk_max_attempts"))],
    );
    assert!(findings_in(&json, "src/cdn.rs").is_empty(), "{json:#}");
    assert_eq!(code, Some(0), "{json:#}");
}

fn serde_config(retries: &str, cache: &str) -> String {
    format!(
        "// Settings of the resolver; retries are the resolver's own.\n#[derive(serde::Deserialize)]\npub struct Config {{\n    #[serde(default = \"default_resolver_retries\")]\n    pub resolver_retries: u16,\n    #[serde(default = \"default_cache_entries\")]\n    pub cache_entries: u32,\n}}\n\n\
         fn default_resolver_retries() -> u16 {{ {retries} }}\n\nfn default_cache_entries() -> u32 {{\n    {cache}\n}}\n"
    )
}

#[test]
fn a_retry_count_returned_by_a_default_function_raised_is_reported() {
    let (_, json) = change(
        &[("src/config.rs", &serde_config("5", "100"))],
        &[("src/config.rs", &serde_config("10", "100"))],
    );
    let found = findings_in(&json, "src/config.rs");
    assert!(found.iter().any(|(k, s, l)| k == "retry-count-raised" && s == "error" && *l == 10), "{json:#}");
}

#[test]
fn a_default_function_that_is_no_retry_count_or_went_down_is_not_reported() {
    let (code, json) = change(
        &[("src/config.rs", &serde_config("5", "100"))],
        &[("src/config.rs", &serde_config("3", "900"))],
    );
    assert!(findings_in(&json, "src/config.rs").is_empty(), "{json:#}");
    assert_eq!(code, Some(0), "{json:#}");
}

/// A GitHub-style client whose sender is handed built requests; the file
/// also builds a POST that goes through it.
fn sender(resend: &str) -> String {
    format!(
        "use reqwest::{{Client, Request, Response}};\nuse std::time::Duration;\n\n\
         pub struct Api {{\n    client: Client,\n}}\n\n\
         impl Api {{\n    pub async fn comment(&self, url: &str, body: String) -> Result<Response, reqwest::Error> {{\n        \
         let req = self.client.post(url).body(body).build()?;\n        self.send(req, 2).await\n    }}\n\n    \
         async fn send(&self, req: Request, remaining: usize) -> Result<Response, reqwest::Error> {{\n        \
         let resp = self.client.execute(req.try_clone().unwrap()).await?;\n{resend}        Ok(resp)\n    }}\n}}\n"
    )
}

const RESEND: &str = "        if resp.headers().contains_key(\"x-ratelimit-reset\") && remaining > 0 {\n            tokio::time::sleep(Duration::from_secs(1)).await;\n            return Box::pin(self.send(req, remaining - 1)).await;\n        }\n";

#[test]
fn a_sender_that_calls_itself_again_with_the_request_it_was_handed_is_a_retry_of_its_writes() {
    let (code, json) = change(&[("src/api.rs", &sender(""))], &[("src/api.rs", &sender(RESEND))]);
    assert_eq!(code, Some(1), "{json:#}");
    assert!(has(&json, "src/api.rs", "retry-non-idempotent", "error"), "{json:#}");
}

/// A crawler that recurses into the pages it finds: it sends new requests,
/// not the one it was handed, so it is no retry.
fn crawler(recurse: &str) -> String {
    format!(
        "use reqwest::Client;\nuse std::time::Duration;\n\n\
         pub struct Crawler {{\n    client: Client,\n}}\n\n\
         impl Crawler {{\n    async fn crawl(&self, url: String, depth: usize) -> Result<(), reqwest::Error> {{\n        \
         let page = self.client.get(&url).send().await?.text().await?;\n        \
         self.client.post(\"/index\").body(page.clone()).send().await?;\n{recurse}        Ok(())\n    }}\n}}\n"
    )
}

#[test]
fn a_walk_that_recurses_into_new_work_is_not_a_retry() {
    let recurse = "        for link in links(&page) {\n            tokio::time::sleep(Duration::from_millis(100)).await;\n            Box::pin(self.crawl(link, depth + 1)).await?;\n        }\n";
    let (code, json) = change(&[("src/crawl.rs", &crawler(""))], &[("src/crawl.rs", &crawler(recurse))]);
    assert!(findings_in(&json, "src/crawl.rs").is_empty(), "{json:#}");
    assert_eq!(code, Some(0), "{json:#}");
}

#[test]
fn a_held_wrapper_that_counts_its_own_retries_is_not_read_as_the_builder_it_delegates_to() {
    // The builder inside has no elapsed-time limit; the wrapper stops after
    // `max_retries` itself, so the retry is not unbounded.
    let wrapper = "#[derive(Clone)]\nstruct Limited {\n    max_retries: usize,\n    retries: usize,\n    exp: ExponentialBackoff,\n}\n\n\
        impl Default for Limited {\n    fn default() -> Self {\n        Self { max_retries: 5, retries: 0, exp: ExponentialBackoffBuilder::new().with_max_elapsed_time(None).build() }\n    }\n}\n\n\
        impl backoff::backoff::Backoff for Limited {\n    fn next_backoff(&mut self) -> Option<Duration> {\n        self.retries += 1;\n        if self.retries > self.max_retries { None } else { self.exp.next_backoff() }\n    }\n    fn reset(&mut self) { self.retries = 0; }\n}\n";
    let uses = "use backoff::{ExponentialBackoff, ExponentialBackoffBuilder};\ntype Policy = Limited;";
    let retried = forms()[0].3.replace("METHOD", "get");
    let base = store("Limited::default()", uses, &ONCE.replace("METHOD", "get"));
    let head = store("Limited::default()", uses, &retried);
    let (code, json) = change(
        &[("src/store.rs", &format!("{base}\n{wrapper}"))],
        &[("src/store.rs", &format!("{head}\n{wrapper}"))],
    );
    assert!(!has(&json, "src/store.rs", "retry-unbounded", "error"), "{json:#}");
    assert_eq!(code, Some(0), "{json:#}");
}
