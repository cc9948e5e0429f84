//! Retry amplification across layers: every place a request to a dependency
//! can be retried (the application's client, an SDK's default, a service-mesh
//! route, a proxy or gateway) as a [`Layer`], linked into chains, and one
//! figure per operation: the worst-case attempts one inbound request can
//! cause at the dependency.
//!
//! # Brief overview
//!
//! - [`declared`] reads the layers a set of files declares, one reader per
//!   layer type: [`istio`] (VirtualService `retries`), [`linkerd`]
//!   (ServiceProfile `isRetryable`/`retryBudget`, `retry.linkerd.io`
//!   annotations), [`envoy`] (route `retry_policy`, `retry_budget`),
//!   [`traefik`] (retry middleware in YAML, TOML and labels), [`nginx`]
//!   (`proxy_next_upstream`, `_tries`, and the ingress-nginx annotations),
//!   [`haproxy`] (`retries`, `option redispatch`), [`gocode`] (Istio and
//!   Envoy retry types built in Go code that generates routes), [`clients`]
//!   (the Rust analyzer's retry policies, and the base URLs they call), and
//!   [`sdk`] (library defaults, as data with their source).
//! - [`hosts`] turns what a reader would use to link layers (a base URL
//!   literal, an environment variable and its value in a manifest, a route's
//!   hosts, an upstream's servers, a Kubernetes Service name) into one host
//!   key.
//! - [`workloads`] reads which service calls which: a workload whose
//!   environment names another host (a Deployment's `env`, a Compose
//!   service's `environment`) calls it, so a request's chain goes on into
//!   that host's mesh routes.
//! - [`chain::operations`] links the layers of one revision into operations
//!   and multiplies; layers it cannot link are kept apart, never multiplied.
//! - [`compare::findings`] compares base and head: `retry-amplified` where
//!   the figure of a chain of two or more retrying layers grows past
//!   `limits.max_amplification`, reported at the layer that caused the growth.
//! - [`tree`] reads the candidate files of a revision from git; [`LayersAnalyzer`]
//!   runs it all as one analyzer of the scan.

pub(crate) mod chain;
pub(crate) mod clients;
pub(crate) mod compare;
mod dupkeys;
pub(crate) mod envoy;
pub(crate) mod gocode;
pub(crate) mod haproxy;
pub(crate) mod hosts;
pub(crate) mod istio;
pub(crate) mod linkerd;
pub(crate) mod nginx;
pub(crate) mod sdk;
pub(crate) mod traefik;
pub(crate) mod tree;
pub(crate) mod workloads;
mod yamldocs;

use std::collections::{BTreeMap, BTreeSet};

use super::testcode::ScanPaths;
use crate::changeset::{ChangeSet, FileChange, Git};
use crate::finding::Note;

/// Where a layer sits on the path from the application to the dependency;
/// chains are shown in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Tier {
    /// The application's own retry code.
    Client,
    /// A library or SDK's built-in retries.
    Sdk,
    /// A service-mesh route (Istio, Linkerd).
    Mesh,
    /// A proxy or gateway (nginx, Envoy, Traefik, HAProxy).
    Proxy,
}

impl Tier {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Tier::Client => "client",
            Tier::Sdk => "sdk",
            Tier::Mesh => "mesh",
            Tier::Proxy => "proxy",
        }
    }
}

/// How many attempts a layer may make for one request it receives.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Attempts {
    /// Total attempts, the first included.
    Total(u32),
    /// No limit.
    Unbounded,
    /// One attempt per server of an upstream (nginx with no `_tries`):
    /// the count when the upstream's servers are listed.
    PerServer(Option<u32>),
    /// Written as something retrygate cannot compute (a template, a name).
    Unknown(String),
}

impl Attempts {
    /// Whether the layer may send a request more than once.
    pub(crate) fn retries(&self) -> bool {
        match self {
            Attempts::Total(n) => *n > 1,
            Attempts::PerServer(Some(n)) => *n > 1,
            Attempts::Unbounded | Attempts::PerServer(None) | Attempts::Unknown(_) => true,
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Attempts::Total(n) => n.to_string(),
            Attempts::Unbounded => "unbounded".into(),
            Attempts::PerServer(Some(n)) => format!("{n} (one per upstream server)"),
            Attempts::PerServer(None) => "one per upstream server".into(),
            Attempts::Unknown(why) => format!("unknown ({why})"),
        }
    }
}

/// One place that retries requests, as the repository declares it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Layer {
    pub(crate) tier: Tier,
    /// What declares it: `istio`, `linkerd`, `envoy`, `nginx`, `traefik`,
    /// `haproxy`, `Rust (backon)`, `sdk (aws-sdk)`.
    pub(crate) source: String,
    /// The route, middleware, upstream or item it belongs to, as written.
    pub(crate) name: String,
    pub(crate) path: String,
    pub(crate) line: u32,
    pub(crate) attempts: Attempts,
    /// A retry budget that bounds the layer's retries as a share of its
    /// requests (0.2 = 20%): the layer is shown as bounded by it.
    pub(crate) budget: Option<f64>,
    /// What it retries on, as the reader would say it.
    pub(crate) retry_on: String,
    /// The hosts it sends to or serves ([`hosts::key`] form); empty when
    /// they cannot be told (a computed host, a template).
    pub(crate) targets: BTreeSet<String>,
    /// Every line that declares it (the count, the router that attaches a
    /// middleware, the tries bound): where a change to it is reported.
    #[serde(skip)]
    pub(crate) decl_lines: Vec<u32>,
    /// For a client: the environment variables it reads that may carry its
    /// base URL (their values are looked up in [`Declared::env`]).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) via_env: BTreeSet<String>,
}

impl Layer {
    /// Identity across base and head: the same file, source and name
    /// (line numbers move).
    pub(crate) fn key(&self) -> (String, String, String) {
        (self.path.clone(), self.source.clone(), self.name.clone())
    }

    /// `path:line`.
    pub(crate) fn location(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }
}

/// Everything one revision declares: its layers, the base URLs its
/// environment variables carry, the Kubernetes Services it names, and
/// notes about files that could not be read.
#[derive(Debug, Default, Clone)]
pub(crate) struct Declared {
    pub(crate) layers: Vec<Layer>,
    /// Environment variable name to the host keys of the URLs it is given
    /// in manifests, Compose files, Helm values and `.env` files.
    pub(crate) env: BTreeMap<String, BTreeSet<String>>,
    /// Kubernetes Service names (host keys).
    pub(crate) services: BTreeSet<String>,
    /// Files that could carry retries and could not be parsed:
    /// (path, line, message).
    pub(crate) unreadable: Vec<(String, u32, String)>,
    /// Traefik middlewares an `IngressRoute` uses, with that route's hosts.
    pub(crate) uses: Vec<(String, BTreeSet<String>)>,
    /// Workloads whose environment names another host ([`workloads`]).
    pub(crate) workloads: Vec<workloads::Workload>,
    /// Kubernetes Services with their selectors (host key, selector).
    pub(crate) selectors: Vec<(String, BTreeMap<String, String>)>,
}

/// A reader's one-line complaint about a file, with the line it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadError {
    pub(crate) line: u32,
    pub(crate) message: String,
}

/// Reads the layers `files` (path, text) declare, every Rust file's
/// retries included.
pub(crate) fn declared(files: &[(String, String)]) -> Declared {
    declared_with(files, |_| true)
}

/// Reads the layers `files` declare, modelling the retries of the Rust
/// files `rust` accepts. Files are read in parallel.
fn declared_with(files: &[(String, String)], rust: impl Fn(&str) -> bool + Sync) -> Declared {
    use rayon::prelude::*;
    let parts: Vec<Declared> = files
        .par_iter()
        .map(|(path, text)| {
            let mut d = Declared::default();
            read_file(path, text, &mut d, rust(text), false);
            d
        })
        .collect();
    merge(parts.iter())
}

/// The models of both sides of a change, each file read once: a file the
/// same at the base and the head (the same path and text) is read once for
/// both, and the Rust files' clients are modelled only when a mesh or proxy
/// layer exists on either side (clients matter only in a chain with one),
/// and then only in the Rust files that name a host (a URL literal or an
/// environment read: the clients of the others could join no chain).
/// The result is what [`declared_with`] gives for each side with that
/// choice of Rust files, except that a JSON file the same on both sides
/// and not among the `changed` paths is skimmed first and not parsed when
/// it holds nothing a reader starts from ([`yamldocs::read_shaped`]): the
/// only difference is that such a file gives no read error, and the scan
/// reports read errors of changed files only.
fn declared_sides(
    base: &[(String, String)],
    head: &[(String, String)],
    changed: &std::collections::HashSet<&str>,
) -> (Declared, Declared) {
    use rayon::prelude::*;
    // The distinct files, and for each side the index of each of its files.
    let mut distinct: Vec<(&str, &str)> = base.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let base_at: std::collections::HashMap<&str, usize> =
        distinct.iter().enumerate().map(|(i, (p, _))| (*p, i)).collect();
    let mut head_idx = Vec::with_capacity(head.len());
    let mut skim = vec![false; distinct.len()];
    for (p, t) in head {
        match base_at.get(p.as_str()) {
            Some(&i) if distinct[i].1 == t.as_str() => {
                head_idx.push(i);
                skim[i] = !changed.contains(p.as_str());
            }
            _ => {
                head_idx.push(distinct.len());
                distinct.push((p, t));
                skim.push(false);
            }
        }
    }
    let read = |i: usize, rust: bool| {
        let (path, text) = distinct[i];
        let mut d = Declared::default();
        read_file(path, text, &mut d, rust, skim[i]);
        d
    };
    let mut parts: Vec<Declared> = (0..distinct.len()).into_par_iter().map(|i| read(i, false)).collect();
    let sides =
        |parts: &[Declared]| (merge(parts[..base.len()].iter()), merge(head_idx.iter().map(|&i| &parts[i])));
    let (base_model, head_model) = sides(&parts);
    let routed = |d: &Declared| d.layers.iter().any(|l| matches!(l.tier, Tier::Mesh | Tier::Proxy));
    if !routed(&base_model) && !routed(&head_model) {
        return (base_model, head_model);
    }
    // Only a Rust file's reading depends on whether its clients are modelled.
    let again: Vec<(usize, Declared)> = (0..distinct.len())
        .into_par_iter()
        .filter(|&i| is_rust(distinct[i].0) && names_a_host(distinct[i].1))
        .map(|i| (i, read(i, true)))
        .collect();
    for (i, d) in again {
        parts[i] = d;
    }
    sides(&parts)
}

/// One revision's model from the readings of its files, in file order.
fn merge<'a>(parts: impl Iterator<Item = &'a Declared>) -> Declared {
    let mut out = Declared::default();
    for d in parts {
        out.layers.extend(d.layers.iter().cloned());
        for (k, v) in &d.env {
            out.env.entry(k.clone()).or_default().extend(v.iter().cloned());
        }
        out.services.extend(d.services.iter().cloned());
        out.unreadable.extend(d.unreadable.iter().cloned());
        out.uses.extend(d.uses.iter().cloned());
        out.workloads.extend(d.workloads.iter().cloned());
        out.selectors.extend(d.selectors.iter().cloned());
    }
    for l in &mut out.layers {
        if l.source == "traefik" {
            if let Some(name) = l.name.strip_prefix("Middleware ") {
                for (used, hosts) in &out.uses {
                    if used == name {
                        l.targets.extend(hosts.iter().cloned());
                    }
                }
            }
        }
        l.targets.retain(|t| !t.is_empty());
    }
    out.layers.sort_by(|a, b| (a.tier, &a.path, a.line).cmp(&(b.tier, &b.path, b.line)));
    out
}

/// The extension [`read_file`] sends to the Rust reader.
fn is_rust(path: &str) -> bool {
    path.to_ascii_lowercase().rsplit_once('.').is_some_and(|(_, e)| e == "rs")
}

/// Whether a Rust file names a host its clients could be linked by.
fn names_a_host(text: &str) -> bool {
    text.contains("://") || text.contains("env::var") || text.contains("env!(")
}

/// Sends one file to every reader that wants it; Rust files only when
/// `rust` says so; JSON skimmed first with `skim` ([`yamldocs::read_shaped`]).
fn read_file(path: &str, text: &str, out: &mut Declared, rust: bool, skim: bool) {
    let lower = path.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if matches!(ext, "yaml" | "yml" | "json") {
        if let Err(e) = yamldocs::read_shaped(path, text, out, skim) {
            out.unreadable.push((path.to_string(), e.line, e.message));
        }
    }
    if nginx::wants(&lower, text) {
        match nginx::read(path, text) {
            Ok(layers) => out.layers.extend(layers),
            Err(e) => out.unreadable.push((path.to_string(), e.line, e.message)),
        }
    }
    if haproxy::wants(&lower, text) {
        out.layers.extend(haproxy::read(path, text));
    }
    if ext == "toml" {
        out.layers.extend(traefik::read_toml(path, text));
    }
    if ext == "go" {
        out.layers.extend(gocode::read(path, text));
    }
    if ext == "rs" && rust {
        match clients::read_rust(path, text) {
            Ok(layers) => out.layers.extend(layers),
            Err(e) => out.unreadable.push((path.to_string(), e.line, e.message)),
        }
    }
    if ext == "env" || lower.ends_with("/.env") || lower == ".env" {
        hosts::read_dotenv(text, &mut out.env);
    }
    out.layers.extend(traefik::read_labels(path, text));
    out.layers.extend(sdk::read(path, text));
}

/// Whether a text mentions anything a layer reader looks for: the scan
/// builds the layer model only when a changed file does.
pub(crate) fn mentions_layers(path: &str, text: &str) -> bool {
    const WORDS: &[&str] = &[
        "VirtualService",
        "httpReqRetries",
        "retryOn",
        "retry_on",
        "retries",
        "proxy_next_upstream",
        "proxy-next-upstream",
        "retry_policy",
        "num_retries",
        "NumRetries",
        "HTTPRetry",
        "retryBudget",
        "retry_budget",
        "isRetryable",
        "retry.linkerd.io",
        ".retry.attempts",
        "redispatch",
        "ServiceProfile",
        "Middleware",
    ];
    static WORDS_AC: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    let ac = WORDS_AC.get_or_init(|| super::any_word(WORDS));
    ac.is_match(text) || (path.ends_with(".rs") && super::rust::is_retry_relevant(text))
}

/// The layers analyzer of the scan: builds the layer model of the base and
/// the head trees when a changed file mentions a layer or retry code, and
/// compares their figures.
pub(crate) struct LayersAnalyzer {
    git: Option<Git>,
    base: String,
    head: String,
    max_amplification: u32,
    paths: ScanPaths,
}

impl LayersAnalyzer {
    /// An analyzer for `cs` that reads the base and head trees of its
    /// repository (none for a change set built in memory: then only the
    /// changed files are read).
    pub(crate) fn for_changeset(cs: &ChangeSet, max_amplification: u32, paths: ScanPaths) -> LayersAnalyzer {
        let is_commit = cs.head.len() >= 40 && cs.head.bytes().any(|b| b != b'0');
        let git = if is_commit { Git::open(&cs.repo).ok() } else { None };
        LayersAnalyzer { git, base: cs.merge_base.clone(), head: cs.head.clone(), max_amplification, paths }
    }
}

impl super::Analyzer for LayersAnalyzer {
    fn name(&self) -> &str {
        "layers"
    }

    fn wants(&self, path: &str) -> bool {
        tree::is_candidate(path)
    }

    fn analyze_set(&self, files: &[&FileChange]) -> super::FileResult {
        let relevant = files.iter().any(|f| {
            [f.base.text(), f.head.text()].into_iter().flatten().any(|t| mentions_layers(&f.path, t))
        });
        let mut result = super::FileResult::default();
        if !relevant {
            return result;
        }
        let sides = match &self.git {
            Some(git) => match tree::read_both(git, &self.base, &self.head, files, &self.paths) {
                Ok(sides) => Some(sides),
                Err(e) => {
                    result.notes.push(Note::blocking(
                            None,
                            format!("could not read the repository's mesh and proxy files ({e}), so retry amplification across layers was not checked; run retrygate again in a complete clone"),
                        ));
                    None
                }
            },
            None => Some(tree::from_changes(files, &self.paths)),
        };
        let Some((base, head)) = sides else { return result };
        result.notes.extend(base.notes.iter().chain(&head.notes).cloned());
        let changed: std::collections::HashSet<&str> =
            files.iter().flat_map(|f| [Some(f.path.as_str()), f.old_path.as_deref()]).flatten().collect();
        let (base_model, head_model) = declared_sides(&base.files, &head.files, &changed);
        let changed: Vec<&FileChange> = files.to_vec();
        let (findings, notes) = compare::findings(&base_model, &head_model, &changed, self.max_amplification);
        result.findings = findings;
        result.notes.extend(notes);
        result
    }

    fn analyze(&self, file: &FileChange) -> super::FileResult {
        self.analyze_set(&[file])
    }
}

/// Every operation one revision declares, for `retrygate layers`.
#[derive(Debug, Clone)]
pub struct AtRevision {
    /// The commit id.
    pub(crate) rev: String,
    /// Each operation with the layers that retry it, worst chain first.
    pub operations: Vec<chain::Operation>,
    /// Files that could carry retries and could not be parsed.
    pub unreadable: Vec<(String, u32, String)>,
    pub(crate) notes: Vec<Note>,
    /// `limits.max_amplification` of the config at this revision.
    pub(crate) max_amplification: u32,
}

/// The layers and operations of revision `rev` of the repository at
/// `repo`, with the `paths` and `limits` of the config at that revision.
pub fn at_revision(repo: &std::path::Path, rev: &str) -> anyhow::Result<AtRevision> {
    let git = Git::open(repo)?;
    let sha = git.resolve_commit(rev)?;
    let config = crate::config::Config::at_base(&git, &sha)?.config;
    let paths = ScanPaths::from_config(&config.paths)?;
    let side = tree::read(&git, &sha, &[], false, &paths, None)?;
    // Rust files are parsed with syn: on threads with the analysis stack.
    let pool =
        rayon::ThreadPoolBuilder::new().stack_size(super::rust::bounds::ANALYSIS_STACK_BYTES).build()?;
    let model = pool.install(|| declared(&side.files));
    Ok(AtRevision {
        rev: sha,
        operations: chain::operations(&model),
        unreadable: model.unreadable,
        notes: side.notes,
        max_amplification: config.limits.amplification(),
    })
}

/// The example this module's doc used to carry (the items are internal,
/// so it runs here rather than as a doctest).
#[cfg(test)]
mod example {
    #[test]
    fn a_mesh_route_of_three_retries_is_four_tries() {
        use super::{chain, declared};
        let files = vec![(
            "mesh/payments.yaml".to_string(),
            "kind: VirtualService\nspec:\n  hosts: [payments]\n  http:\n  - retries: { attempts: 3 }\n    route:\n    - destination: { host: payments }\n".to_string(),
        )];
        let model = declared(&files);
        let ops = chain::operations(&model);
        assert_eq!(ops[0].figure(), chain::Figure::Known(4.0));
    }
}
