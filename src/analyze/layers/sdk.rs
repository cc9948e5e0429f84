//! SDK and library retry defaults, as data with their source: a layer for
//! every dependency manifest or import that brings a client which retries
//! on its own unless told otherwise, with the count a file of code sets
//! instead where it does. Such a layer has no host of its own (an SDK calls
//! whatever its caller configures): in a file of code it carries the hosts
//! that file calls, and joins a chain when that is exactly one known host.

use super::{hosts, Attempts, Layer, Tier};

/// One library's default, with where it is documented.
pub(crate) struct SdkDefault {
    /// A word that shows the library is used (an import or a dependency name).
    pub(crate) marker: &'static str,
    pub(crate) library: &'static str,
    pub(crate) attempts: u32,
    pub(crate) retry_on: &'static str,
    pub(crate) source: &'static str,
    /// How code sets the count instead (`RetryMax`, `max_retries`): where
    /// a file of code does, the default is not what it gets. The count is
    /// read when a whole number follows (`RetryMax = 2`), as retries after
    /// the first try when `counts_retries` is `Some(true)`; `None` where
    /// the setting's meaning depends on more than the number (boto3's
    /// `max_attempts` counts retries in legacy mode and tries in standard
    /// mode), so the count is unknown.
    pub(crate) overrides: &'static [&'static str],
    pub(crate) counts_retries: Option<bool>,
}

/// The defaults retrygate knows (docs/layers.md restates them).
pub(crate) const DEFAULTS: &[SdkDefault] = &[
    SdkDefault {
        marker: "aws-config",
        library: "AWS SDK for Rust",
        attempts: 3,
        retry_on: "throttling, transient errors, 5xx",
        source: "AWS SDKs and Tools reference guide, retry behavior: standard mode, max attempts 3",
        overrides: &["retry_config(", "RetryConfig::"],
        counts_retries: Some(false),
    },
    SdkDefault {
        marker: "@aws-sdk/",
        library: "AWS SDK for JavaScript v3",
        attempts: 3,
        retry_on: "throttling, transient errors, 5xx",
        source: "AWS SDKs and Tools reference guide, retry behavior: standard mode, max attempts 3",
        overrides: &["maxAttempts", "retryStrategy"],
        counts_retries: Some(false),
    },
    SdkDefault {
        marker: "import boto3",
        library: "boto3 (legacy mode)",
        attempts: 5,
        retry_on: "throttling, transient errors, 5xx",
        source: "botocore retries guide: legacy mode, 5 total attempts",
        overrides: &["max_attempts", "total_max_attempts"],
        counts_retries: None,
    },
    SdkDefault {
        marker: "hashicorp/go-retryablehttp",
        library: "go-retryablehttp",
        attempts: 5,
        retry_on: "connection errors, 429, 5xx, any method",
        source: "go-retryablehttp: RetryMax defaults to 4",
        overrides: &["RetryMax"],
        counts_retries: Some(true),
    },
    SdkDefault {
        marker: "axios-retry",
        library: "axios-retry",
        attempts: 4,
        retry_on: "network errors (POST included) and idempotent 5xx",
        source: "axios-retry README: retries defaults to 3",
        overrides: &["retries"],
        counts_retries: Some(true),
    },
    SdkDefault {
        marker: "from openai import",
        library: "openai (Python)",
        attempts: 3,
        retry_on: "connection errors, 408, 409, 429, 5xx",
        source: "openai-python README: max_retries defaults to 2",
        overrides: &["max_retries"],
        counts_retries: Some(true),
    },
];

/// The SDK layers a file brings in.
pub(crate) fn read(path: &str, text: &str) -> Vec<Layer> {
    let manifest = path.ends_with("Cargo.toml")
        || path.ends_with("package.json")
        || path.ends_with("go.mod")
        || path.ends_with("requirements.txt");
    let code = [".py", ".js", ".ts", ".go", ".rs"].iter().any(|e| path.ends_with(e));
    if !manifest && !code {
        return Vec::new();
    }
    DEFAULTS
        .iter()
        .filter_map(|d| {
            // One search of the whole text first: most files name no SDK,
            // and splitting every file into lines per SDK was most of this.
            if !text.contains(d.marker) {
                return None;
            }
            let (i, _) = text.lines().enumerate().find(|(_, l)| l.contains(d.marker))?;
            let attempts = if code { overridden(d, text) } else { None };
            // What a file of code calls is what its retrying client is
            // pointed at (the chain links it only when that is one host).
            let (targets, via_env) = if code {
                (
                    hosts::urls_in(text).into_iter().map(|(_, h, _)| h).collect(),
                    hosts::env_reads(text)
                        .into_iter()
                        .map(|(_, n)| n)
                        .filter(|n| super::clients::carries_address(n))
                        .collect(),
                )
            } else {
                Default::default()
            };
            let (attempts, retry_on) = match attempts {
                Some(a) => (a, format!("{} (its count set in this file)", d.retry_on)),
                None => (Attempts::Total(d.attempts), format!("{} (default; {})", d.retry_on, d.source)),
            };
            Some(Layer {
                tier: Tier::Sdk,
                source: format!("sdk ({})", d.library),
                name: d.library.to_string(),
                path: path.to_string(),
                line: i as u32 + 1,
                attempts,
                budget: None,
                retry_on,
                targets,
                decl_lines: vec![i as u32 + 1],
                via_env,
            })
        })
        .collect()
}

/// The count a file of code sets for the library instead of its default:
/// the number after the setting when there is one, else unknown.
fn overridden(d: &SdkDefault, text: &str) -> Option<Attempts> {
    let (setting, rest) =
        d.overrides.iter().find_map(|o| text.find(o).map(|at| (*o, &text[at + o.len()..])))?;
    let value = rest.trim_start_matches([' ', '=', ':', '(', '"', '\'']);
    let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
    let after = value[digits.len()..].lines().next().unwrap_or("").trim_start();
    // `RetryMax = retries` or `RetryMax = 2 * n`: a count that is not a literal.
    let literal =
        !digits.is_empty() && !after.starts_with(|c: char| c.is_alphanumeric() || "*+-/.".contains(c));
    Some(match (digits.parse::<u32>(), d.counts_retries) {
        (Ok(n), Some(true)) if literal => Attempts::Total(n.saturating_add(1)),
        (Ok(n), Some(false)) if literal => Attempts::Total(n.max(1)),
        _ => Attempts::Unknown(format!("{setting} set in code")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dependency_brings_its_default_and_other_files_nothing() {
        let l = read("Cargo.toml", "[dependencies]\naws-config = \"1\"\n");
        assert_eq!((l.len(), l[0].attempts.clone(), l[0].line), (1, Attempts::Total(3), 2));
        assert!(l[0].retry_on.contains("standard mode"));
        assert!(read("README.md", "aws-config").is_empty());
        assert!(read("Cargo.toml", "[dependencies]\nserde = \"1\"\n").is_empty());
    }

    #[test]
    fn code_that_sets_the_count_is_not_given_the_default() {
        let go = "import \"github.com/hashicorp/go-retryablehttp\"\nfunc c(n int) { cl := retryablehttp.NewClient()\n cl.RetryMax = n }\n";
        assert_eq!(read("hook.go", go)[0].attempts, Attempts::Unknown("RetryMax set in code".into()));
        let literal = go.replace("cl.RetryMax = n", "cl.RetryMax = 2");
        assert_eq!(read("hook.go", &literal)[0].attempts, Attempts::Total(3));
        assert!(read("hook.go", &literal)[0].retry_on.contains("set in this file"));
        // Only the import: the library's default.
        let plain = "import \"github.com/hashicorp/go-retryablehttp\"\nfunc c() { retryablehttp.Get(u) }\n";
        assert_eq!(read("hook.go", plain)[0].attempts, Attempts::Total(5));
        let py = "import boto3\nfrom botocore.config import Config\ns3 = boto3.client('s3', config=Config(retries={'max_attempts': 10}))\n";
        assert_eq!(read("s3.py", py)[0].attempts, Attempts::Unknown("max_attempts set in code".into()));
    }
}
