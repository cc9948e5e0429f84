//! The general shapes of a project that is its own retry library (an SDK or
//! API client), through the binary on a real git repository: a qualified
//! retry count raised in the product blocks; the same setting raised in test
//! code is a note, in documentation, a changelog or vendored code is not
//! read, and a count lowered is not reported.

use crate::common;

use common::{scan_json as scan, Repo};
use serde_json::Value;

/// `(path, rule, severity)` of every finding.
fn summary(json: &Value) -> Vec<(String, String, String)> {
    let mut all: Vec<(String, String, String)> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("path"), s("rule"), s("severity"))
        })
        .collect();
    all.sort();
    all
}

fn defaults(retries: u32) -> String {
    format!("\"\"\"Client defaults.\"\"\"\n\nmax_network_retries = {retries}\nopen_timeout = 30\n")
}

#[test]
fn a_qualified_retry_count_raised_blocks_in_the_product_only() {
    let repo = Repo::new();
    for path in ["sdk/settings.py", "tests/test_settings.py", "vendor/other/settings.py", "sdk/legacy.py"] {
        repo.write(path, defaults(if path == "sdk/legacy.py" { 4 } else { 0 }));
    }
    repo.write("CHANGELOG.md", "## 1.0\n- max_network_retries = 0\n");
    repo.write("docs/retries.md", "```python\nmax_network_retries = 0\n```\n");
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "change"]);
    for path in ["sdk/settings.py", "tests/test_settings.py", "vendor/other/settings.py"] {
        repo.write(path, defaults(2));
    }
    repo.write("sdk/legacy.py", defaults(1));
    repo.write("CHANGELOG.md", "## 1.1\n- max_network_retries = 2\n");
    repo.write("docs/retries.md", "```python\nmax_network_retries = 2\n```\n");
    repo.commit("retry network errors by default");
    let (code, json) = scan(&repo);
    assert_eq!(code, Some(1), "{json:#}");
    assert_eq!(
        summary(&json),
        [
            (
                "sdk/settings.py".to_string(),
                "python/retry-count-name-raised".to_string(),
                "error".to_string()
            ),
            (
                "tests/test_settings.py".to_string(),
                "python/retry-count-name-raised".to_string(),
                "note".to_string()
            ),
        ],
        "{json:#}"
    );
    let message = json["findings"][0]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("retry count raised from 0 to 2 (1 -> 3 attempts)"), "{message}");
}

#[test]
fn a_qualified_retry_count_lowered_or_a_delay_between_retries_raised_passes() {
    let repo = Repo::new();
    repo.write("sdk/settings.py", "max_network_retries = 4\ndelay_between_retries = 1\n");
    repo.commit("base");
    repo.git(&["checkout", "-q", "-b", "change"]);
    repo.write("sdk/settings.py", "max_network_retries = 2\ndelay_between_retries = 5\n");
    repo.commit("fewer retries, longer pauses");
    let (code, json) = scan(&repo);
    assert_eq!(code, Some(0), "{json:#}");
    assert!(summary(&json).is_empty(), "{json:#}");
}
