//! SDK and library retry defaults, as data with their source: a layer for
//! every dependency manifest or import that brings a client which retries
//! on its own unless told otherwise. Such a layer has no host of its own
//! (an SDK calls whatever its caller configures): it is listed, and joins a
//! chain only through a client in the same file that calls a known host.

use super::{Attempts, Layer, Tier};

/// One library's default, with where it is documented.
pub(crate) struct SdkDefault {
    /// A word that shows the library is used (an import or a dependency name).
    pub(crate) marker: &'static str,
    pub(crate) library: &'static str,
    pub(crate) attempts: u32,
    pub(crate) retry_on: &'static str,
    pub(crate) source: &'static str,
}

/// The defaults retrygate knows (docs/layers.md restates them).
pub(crate) const DEFAULTS: &[SdkDefault] = &[
    SdkDefault {
        marker: "aws-config",
        library: "AWS SDK for Rust",
        attempts: 3,
        retry_on: "throttling, transient errors, 5xx",
        source: "AWS SDKs and Tools reference guide, retry behavior: standard mode, max attempts 3",
    },
    SdkDefault {
        marker: "@aws-sdk/",
        library: "AWS SDK for JavaScript v3",
        attempts: 3,
        retry_on: "throttling, transient errors, 5xx",
        source: "AWS SDKs and Tools reference guide, retry behavior: standard mode, max attempts 3",
    },
    SdkDefault {
        marker: "import boto3",
        library: "boto3 (legacy mode)",
        attempts: 5,
        retry_on: "throttling, transient errors, 5xx",
        source: "botocore retries guide: legacy mode, 5 total attempts",
    },
    SdkDefault {
        marker: "hashicorp/go-retryablehttp",
        library: "go-retryablehttp",
        attempts: 5,
        retry_on: "connection errors, 429, 5xx, any method",
        source: "go-retryablehttp: RetryMax defaults to 4",
    },
    SdkDefault {
        marker: "axios-retry",
        library: "axios-retry",
        attempts: 4,
        retry_on: "network errors (POST included) and idempotent 5xx",
        source: "axios-retry README: retries defaults to 3",
    },
    SdkDefault {
        marker: "from openai import",
        library: "openai (Python)",
        attempts: 3,
        retry_on: "connection errors, 408, 409, 429, 5xx",
        source: "openai-python README: max_retries defaults to 2",
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
            let (i, _) = text.lines().enumerate().find(|(_, l)| l.contains(d.marker))?;
            Some(Layer {
                tier: Tier::Sdk,
                source: format!("sdk ({})", d.library),
                name: d.library.to_string(),
                path: path.to_string(),
                line: i as u32 + 1,
                attempts: Attempts::Total(d.attempts),
                budget: None,
                retry_on: format!("{} (default; {})", d.retry_on, d.source),
                targets: Default::default(),
                decl_lines: vec![i as u32 + 1],
                via_env: Default::default(),
            })
        })
        .collect()
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
}
