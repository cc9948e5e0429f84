//! The Rust check ids through the binary: `rules.disable` in a real
//! repository's base config (a known id drops its findings, an unknown
//! `rust/` id stops the scan with the nearest known id), and `explain` for a
//! Rust check.

use crate::common;

use std::process::Output;

use common::Repo;

const BIN: &str = env!("CARGO_BIN_EXE_retrygate");

const BASE: &str = "use backon::{ExponentialBuilder, Retryable};\n\
fn fetch() {\n    (|| get()).retry(ExponentialBuilder::default().with_jitter().with_max_times(3));\n}\n";
const HEAD: &str = "use backon::{ExponentialBuilder, Retryable};\n\
fn fetch() {\n    (|| get()).retry(ExponentialBuilder::default().with_max_times(5));\n}\n";

/// A repository whose base config is `config`, with a head that drops
/// backon's jitter and raises its count.
fn repo(config: &str) -> Repo {
    let repo = Repo::new();
    repo.write(".github/retrygate.yml", config);
    repo.write("src/lib.rs", BASE);
    repo.commit("base");
    repo.branch("feature");
    repo.write("src/lib.rs", HEAD);
    repo.commit("head");
    repo
}

fn scan(repo: &Repo) -> Output {
    std::process::Command::new(BIN)
        .args(["scan", "--repo"])
        .arg(repo.path())
        .args(["--base", "main", "--head", "feature", "--format", "json"])
        .output()
        .expect("run retrygate")
}

fn rules(out: &Output) -> Vec<String> {
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    json["findings"].as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_disabled_rust_check_drops_only_its_findings() {
    let all = scan(&repo("mode: enforce\n"));
    let mut found = rules(&all);
    found.sort();
    assert_eq!(found, ["rust/backon-attempts", "rust/backon-jitter"]);
    let out = scan(&repo("rules:\n  disable: [rust/backon-jitter]\n"));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(rules(&out), ["rust/backon-attempts"]);
}

#[test]
fn an_unknown_rust_check_in_the_base_config_stops_the_scan_naming_the_nearest() {
    let out = scan(&repo("rules:\n  disable:\n    - rust/backon-jiter\n"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(".github/retrygate.yml:3: rules.disable: \"rust/backon-jiter\" is not a Rust check; did you mean \"rust/backon-jitter\"?"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no verdict is printed: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn explain_documents_a_rust_check() {
    let out = std::process::Command::new(BIN).args(["explain", "rust/client-timeout"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text.starts_with("rust/client-timeout (finding kinds: timeout-lowered)\n  What it flags: "),
        "{text}"
    );
    assert!(text.contains("Use instead: "), "{text}");
    let unknown = std::process::Command::new(BIN).args(["explain", "rust/client-jitter"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2), "an id that is not declared is not explained");
}
