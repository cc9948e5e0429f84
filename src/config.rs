//! retrygate's configuration, `.github/retrygate.yml` (README, "Configuration"; docs/gate.md).
//!
//! [`Config::from_yaml_str`] is the only way in: it refuses oversized input
//! before parsing, rejects unknown keys and wrong types with the file, line
//! and key in the message, fills the documented defaults, and validates every
//! glob. The gate and the sign-off read the file from the base commit with
//! [`Config::at_base`] (a pull request cannot weaken its own gate); the agent
//! hooks read it from the working tree.
//!
//! ```
//! let c = retrygate::config::Config::from_yaml_str("protected_paths: [\"app/\"]\n", "retrygate.yml").unwrap();
//! assert!(c.protected().unwrap().is_protected("app/checkout.rs"));
//! assert_eq!(c.ledger.path, ".tool_ledger.jsonl");
//! ```

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the configuration lives in a repository.
pub const CONFIG_PATH: &str = ".github/retrygate.yml";

/// Larger configs are refused unread: a real one is a few hundred bytes, and
/// YAML parsing cost grows with input.
pub(crate) const MAX_CONFIG_BYTES: usize = 1 << 20;

// The config's `mode:`; the job `retrygate github` runs is `github::ActionMode`.
/// Whether a block is enforced or only reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "Mode")]
pub enum Enforcement {
    /// Block the merge on what blocks (the default).
    #[default]
    Enforce,
    /// Report, never block.
    Advisory,
}

/// What makes a pull request agent-authored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Agents {
    /// Author logins; `*` matches any run of characters (`*[bot]`).
    pub(crate) logins: Vec<String>,
    pub(crate) branch_prefixes: Vec<String>,
    pub(crate) labels: Vec<String>,
    /// Commit trailer e-mail addresses (`Co-authored-by: ... <addr>`).
    pub(crate) trailers: Vec<String>,
}

impl Default for Agents {
    fn default() -> Agents {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect();
        Agents {
            logins: v(&["Copilot", "*[bot]"]),
            branch_prefixes: v(&["codex/", "claude/", "copilot/", "cursor/", "devin/"]),
            labels: v(&["agent"]),
            trailers: v(&["noreply@anthropic.com", "cursoragent@cursor.com"]),
        }
    }
}

/// Evidence demanded of agent pull requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Require {
    pub(crate) ledger: bool,
    /// Demanded when the change touches retry or HTTP-client code.
    pub replay: bool,
}

impl Default for Require {
    fn default() -> Require {
        Require { ledger: true, replay: true }
    }
}

/// Where the tool-call ledger is found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LedgerConfig {
    /// Path in the repository, relative to its root.
    pub path: String,
    /// Name of the Actions artifact that may carry it instead.
    pub artifact: String,
}

impl Default for LedgerConfig {
    fn default() -> LedgerConfig {
        LedgerConfig { path: ".tool_ledger.jsonl".into(), artifact: "tool-ledger".into() }
    }
}

/// How the 429 replay is run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ReplayConfig {
    /// The command to replay; off (`None`) until set.
    pub command: Option<String>,
    /// A bundled scenario or a scenario file at the base, or a list of them
    /// run into one report (kept here as `a,b,c`).
    #[serde(deserialize_with = "scenario_list")]
    #[schemars(with = "ScenarioSpec")]
    pub scenario: String,
    /// How many clients the replay starts at once against the server.
    pub clients: u32,
    /// Whether a replay report made by a fork's own pull_request run may
    /// make that fork's pull request pass. Off by default: the fork's code
    /// wrote the report, so it is evidence the fork could fake, and a fork
    /// agent PR that needs a replay then needs a maintainer's sign-off
    /// (docs/github.md, "Trust model").
    pub(crate) trust_fork_reports: bool,
    /// Whether an agent's pull request is blocked (`replay-coverage`) when
    /// the replay never called an operation whose retry the change touched.
    /// Off by default: a replay harness rarely calls every endpoint, and a
    /// default that blocked every pull request whose replay covers a subset
    /// would be signed off by habit. The line naming each such operation is
    /// in the comment either way (docs/replay.md, "Coverage").
    pub(crate) require_coverage: bool,
}

/// `replay.scenario`: one name or path, or a list of them.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum ScenarioSpec {
    One(String),
    List(Vec<String>),
}

fn scenario_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match ScenarioSpec::deserialize(d)? {
        ScenarioSpec::One(s) => Ok(s),
        ScenarioSpec::List(list) if list.is_empty() => {
            Err(serde::de::Error::custom("replay.scenario is an empty list; name at least one scenario"))
        }
        ScenarioSpec::List(list) => Ok(list.join(",")),
    }
}

impl Default for ReplayConfig {
    fn default() -> ReplayConfig {
        ReplayConfig {
            command: None,
            scenario: "default".into(),
            clients: 8,
            trust_fork_reports: false,
            require_coverage: false,
        }
    }
}

/// Optional hard ceilings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Limits {
    /// Most total attempts a retry may make; off (`None`) until set.
    pub(crate) max_attempts: Option<u32>,
    /// Most attempts one inbound request may cause at a dependency through
    /// two or more retrying layers; [`DEFAULT_MAX_AMPLIFICATION`] until set
    /// (docs/layers.md).
    pub(crate) max_amplification: Option<u32>,
}

/// `limits.max_amplification` when unset: the 3 attempts per request the
/// Google SRE book allows one layer (docs/layers.md).
pub(crate) const DEFAULT_MAX_AMPLIFICATION: u32 = 3;

impl Limits {
    /// `limits.max_amplification`, or its default.
    pub(crate) fn amplification(&self) -> u32 {
        self.max_amplification.unwrap_or(DEFAULT_MAX_AMPLIFICATION)
    }
}

/// Rule packs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct Rules {
    /// Rule ids to switch off.
    pub(crate) disable: Vec<String>,
    /// Extra rule-pack directories; none until set.
    pub(crate) extra: Vec<String>,
}

/// Which changed files the analyzers read, and which of them are test code.
/// Both lists use the `protected_paths` pattern rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Paths {
    /// Files the analyzers never read (vendored or generated code). When
    /// set (even to `[]`) it replaces the default, the vendored folders
    /// (`vendor/`, `vendored/`, pip's `_vendor/`, `third_party/`, `node_modules/`, Yarn's `.yarn/` and `.pnp.cjs` at any depth). The policy
    /// still sees them: gate edits, protected paths and the ledger cover
    /// every changed file.
    pub ignore: Option<Vec<String>>,
    /// Test code: findings there are notes that do not block. When set (even
    /// to `[]`) it replaces the default test patterns; Rust `#[cfg(test)]`
    /// items and `#[test]` functions stay test code either way.
    pub(crate) tests: Option<Vec<String>>,
    /// Code that ships, whatever the test patterns and the build say
    /// (`tools/loadgen/` that runs in production): findings there block.
    /// `#[cfg(test)]` items and `#[test]` functions stay test code.
    pub(crate) shipped: Vec<String>,
}

/// A repository permission level, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Permission {
    Read,
    Triage,
    Write,
    Maintain,
    Admin,
}

// The config's `sign_off:`; an accepted sign-off is `github::signoff::SignOff`.
/// How a maintainer lifts a block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
#[schemars(rename = "SignOff")]
pub struct SignOffConfig {
    pub(crate) command: String,
    pub(crate) min_permission: Permission,
}

impl Default for SignOffConfig {
    fn default() -> SignOffConfig {
        SignOffConfig { command: "/retrygate sign-off".into(), min_permission: Permission::Write }
    }
}

/// The whole configuration, defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub(crate) mode: Enforcement,
    pub(crate) agents: Agents,
    /// What an agent's pull request must bring (a ledger, a replay).
    pub require: Require,
    /// Where the ledger is and how it is checked.
    pub ledger: LedgerConfig,
    /// How the 429 replay is run and which reports are believed.
    pub replay: ReplayConfig,
    /// Paths an agent may not edit without a sign-off. An entry ending in
    /// `/` is a directory and everything under it; any other entry is a glob
    /// (`*` stays within one directory, `**` crosses directories) matched
    /// against the repository-relative path, and a plain path also covers
    /// everything under it.
    pub(crate) protected_paths: Vec<String>,
    pub(crate) limits: Limits,
    /// Which changed files the analyzers read, and which are test code.
    pub paths: Paths,
    pub(crate) rules: Rules,
    pub(crate) sign_off: SignOffConfig,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mode: Enforcement::default(),
            agents: Agents::default(),
            require: Require::default(),
            ledger: LedgerConfig::default(),
            replay: ReplayConfig::default(),
            protected_paths: vec!["app/".into(), "infra/".into(), "clients/".into()],
            limits: Limits::default(),
            paths: Paths::default(),
            rules: Rules::default(),
            sign_off: SignOffConfig::default(),
        }
    }
}

/// The config in force for a pull request and where it came from
/// ([`Config::at_base`]).
#[derive(Debug, Clone)]
pub struct BaseConfig {
    /// The configuration, defaults filled in.
    pub config: Config,
    /// `1a2b3c4:.github/retrygate.yml`, or `defaults (no .github/retrygate.yml at base 1a2b3c4)`.
    pub source: String,
}

/// What to do about a bad config at the base commit.
const FIX_AT_BASE: &str = "the gate reads its config from the base commit, so fix it there (a pull request cannot change its own gate)";

/// Why a configuration was refused: file, line and what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}{}: {message}; {fix}", .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub(crate) source_name: String,
    pub(crate) line: Option<usize>,
    pub(crate) message: String,
    pub(crate) fix: String,
}

/// Why a file over [`MAX_CONFIG_BYTES`] is not a config.
const TOO_LARGE_HINT: &str = "a retrygate config is a few hundred bytes";

impl ConfigError {
    /// The file is over [`MAX_CONFIG_BYTES`]: refused before it is parsed.
    /// `size` is the file's size when it is known (a read that stopped at
    /// the limit knows only that it is larger).
    pub(crate) fn too_large(source_name: &str, size: Option<u64>) -> ConfigError {
        let limit = MAX_CONFIG_BYTES >> 10;
        ConfigError {
            source_name: source_name.to_string(),
            line: None,
            message: match size {
                Some(size) => format!("the file is {size} bytes, over the {limit} KiB limit"),
                None => format!("the file is over the {limit} KiB limit"),
            },
            fix: format!("{TOO_LARGE_HINT}; check that this is the right file"),
        }
    }
}

const FIX_SCHEMA: &str = "compare with docs/gate.md (\"Config from the base\") or schemas/retrygate.schema.json; keys are mode, agents, require, ledger, replay, protected_paths, limits, paths, rules, sign_off";

impl Config {
    /// Parses and validates a configuration; `source_name` names it in errors.
    pub fn from_yaml_str(text: &str, source_name: &str) -> Result<Config, ConfigError> {
        let err = |line: Option<usize>, message: String, fix: &str| ConfigError {
            source_name: source_name.to_string(),
            line,
            message,
            fix: fix.to_string(),
        };
        if text.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::too_large(source_name, Some(text.len() as u64)));
        }
        crate::yaml::check(text).map_err(|r| err(Some(r.line), r.message, FIX_SCHEMA))?;
        // An empty document (or one holding only comments) means "defaults".
        let parsed: Option<Config> = serde_yaml::from_str(text).map_err(|e| {
            let line = e.location().map(|l| l.line());
            err(line, e.to_string(), FIX_SCHEMA)
        })?;
        let config = parsed.unwrap_or_default();
        if let Err(e) = config.protected_checked() {
            return Err(ConfigError { line: line_of(text, &e.pattern), ..e.into_config_error(source_name) });
        }
        let path_lists = [
            ("paths.ignore", config.paths.ignore.as_ref()),
            ("paths.tests", config.paths.tests.as_ref()),
            ("paths.shipped", Some(&config.paths.shipped)),
        ];
        for (key, patterns) in path_lists {
            for pattern in patterns.into_iter().flatten() {
                if let Err(e) = ProtectedPaths::compile(std::slice::from_ref(pattern)) {
                    return Err(err(
                        line_of(text, pattern),
                        format!("{key}: invalid glob \"{pattern}\": {}", e.error.kind()),
                        "fix the pattern: `dir/` is a directory, `**/tests/` one at any depth, `*` stays within a directory, `[...]` is a character class",
                    ));
                }
            }
        }
        if config.replay.clients == 0 {
            return Err(err(
                line_of(text, "clients"),
                "replay.clients: must be at least 1".into(),
                "set replay.clients to the number of concurrent clients to replay (default 8)",
            ));
        }
        for id in &config.rules.disable {
            if let Err(nearest) = crate::analyze::rust::checks::check_id(id) {
                return Err(err(
                    line_of(text, id),
                    format!("rules.disable: \"{id}\" is not a Rust check"),
                    &format!("did you mean \"{nearest}\"? `retrygate rules list` lists every check id"),
                ));
            }
        }
        Ok(config)
    }

    /// Reads `.github/retrygate.yml` under `root`; defaults when absent.
    pub fn load_from_worktree(root: &Path) -> Result<Config, ConfigError> {
        let path = root.join(CONFIG_PATH);
        let err = |message: String| ConfigError {
            source_name: CONFIG_PATH.into(),
            line: None,
            message,
            fix: "make the file readable, or remove it to use the defaults".into(),
        };
        let text = match crate::bounded::read_regular_string(&path, MAX_CONFIG_BYTES as u64) {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return Ok(Config::default()),
            Err(crate::bounded::BoundedReadError::TooLarge { .. }) => {
                return Err(ConfigError::too_large(
                    CONFIG_PATH,
                    std::fs::metadata(&path).ok().map(|m| m.len()),
                ))
            }
            Err(e) => return Err(err(format!("cannot read: {e}"))),
        };
        Config::from_yaml_str(&text, CONFIG_PATH)
    }

    /// The config in force for a pull request: `.github/retrygate.yml` at
    /// the base commit `base_sha` (`git show BASE:PATH`, never the head: a
    /// pull request cannot weaken its own gate), or the defaults when the
    /// base has none. The gate and the sign-off both read it through here, so
    /// they agree on the limit ([`MAX_CONFIG_BYTES`]) and on the errors: an
    /// oversized, non-UTF-8 or invalid file is an error naming
    /// `SHORT_SHA:.github/retrygate.yml` (and the line and key), ending in
    /// what to do.
    pub fn at_base(git: &crate::changeset::Git, base_sha: &str) -> anyhow::Result<BaseConfig> {
        use crate::changeset::git::Blob;
        let short = crate::text::short_sha(base_sha);
        let name = format!("{short}:{CONFIG_PATH}");
        match git.read_blob_at(base_sha, CONFIG_PATH, MAX_CONFIG_BYTES as u64)? {
            None | Some(Blob::Missing) => Ok(BaseConfig {
                config: Config::default(),
                source: format!("defaults (no {CONFIG_PATH} at base {short})"),
            }),
            Some(Blob::TooLarge(size)) => {
                let e = ConfigError::too_large(&name, Some(size));
                Err(anyhow::anyhow!(
                    "{}",
                    ConfigError { fix: format!("{TOO_LARGE_HINT}; {FIX_AT_BASE}"), ..e }
                ))
            }
            Some(Blob::Bytes(bytes)) => {
                let text = String::from_utf8(bytes).map_err(|e| {
                    anyhow::anyhow!(
                        "{name}: not UTF-8 text (byte {}); {FIX_AT_BASE}",
                        e.utf8_error().valid_up_to()
                    )
                })?;
                let config =
                    Config::from_yaml_str(&text, &name).map_err(|e| anyhow::anyhow!("{e}; {FIX_AT_BASE}"))?;
                Ok(BaseConfig { config, source: name })
            }
        }
    }

    /// The JSON Schema of the file, generated from these types (so it can
    /// never drift from what [`Config::from_yaml_str`] accepts); checked in as
    /// `schemas/retrygate.schema.json` for editors.
    pub fn json_schema() -> serde_json::Value {
        let mut schema = serde_json::to_value(schemars::schema_for!(Config)).unwrap_or_default();
        if let Some(obj) = schema.as_object_mut() {
            obj.insert("title".into(), "retrygate configuration (.github/retrygate.yml)".into());
        }
        schema
    }

    /// The compiled `protected_paths` matcher: the only way to build one.
    /// The patterns are compiled again and an invalid one is an error, so a
    /// config built by hand (not through [`Config::from_yaml_str`]) cannot
    /// turn a bad pattern into a matcher that protects nothing.
    pub fn protected(&self) -> Result<ProtectedPaths, ConfigError> {
        self.protected_checked().map_err(|e| e.into_config_error(CONFIG_PATH))
    }

    fn protected_checked(&self) -> Result<ProtectedPaths, BadPattern> {
        ProtectedPaths::compile(&self.protected_paths)
    }
}

/// A `protected_paths` entry that is not a valid glob.
#[derive(Debug)]
pub(crate) struct BadPattern {
    pub(crate) pattern: String,
    pub(crate) error: globset::Error,
}

impl BadPattern {
    fn into_config_error(self, source_name: &str) -> ConfigError {
        ConfigError {
            source_name: source_name.to_string(),
            line: None,
            message: format!("protected_paths: invalid glob \"{}\": {}", self.pattern, self.error.kind()),
            fix: "fix the pattern: `dir/` protects a directory, `**/*.tf` any depth, `[...]` is a character class".into(),
        }
    }
}

/// The 1-based line of the first occurrence of `needle`, for errors found
/// after parsing.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// The globs one `protected_paths` entry stands for.
fn protected_globs(pattern: &str) -> Vec<String> {
    let p = pattern.trim_start_matches("./");
    if let Some(dir) = p.strip_suffix('/') {
        vec![format!("{dir}/**")]
    } else {
        // A plain path or a glob: the path itself, and anything under it.
        vec![p.to_string(), format!("{p}/**")]
    }
}

/// Decides whether a repository-relative path is protected. The same
/// compiled pattern list serves `paths.ignore` and `paths.tests`.
#[derive(Debug, Clone)]
pub struct ProtectedPaths {
    set: GlobSet,
    patterns: Vec<String>,
}

impl ProtectedPaths {
    /// Compiles the patterns, failing on the first invalid glob. Crate-private:
    /// [`Config::protected`] and [`Paths`]'s matchers are the ways in, so an
    /// invalid pattern can never become an empty matcher that protects nothing.
    pub(crate) fn compile(patterns: &[String]) -> Result<ProtectedPaths, BadPattern> {
        let mut b = GlobSetBuilder::new();
        let mut owners = Vec::new();
        for p in patterns {
            for g in protected_globs(p) {
                let glob = GlobBuilder::new(&g)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|error| BadPattern { pattern: p.clone(), error })?;
                b.add(glob);
                owners.push(p.clone());
            }
        }
        let set = b.build().map_err(|error| BadPattern { pattern: patterns.join(", "), error })?;
        Ok(ProtectedPaths { set, patterns: owners })
    }

    /// Whether `path` (repository-relative, `/`-separated) is protected.
    pub fn is_protected(&self, path: &str) -> bool {
        self.matching(path).is_some()
    }

    /// The configured entry that protects `path`, if any.
    pub(crate) fn matching(&self, path: &str) -> Option<&str> {
        self.set.matches(path).first().map(|&i| self.patterns[i].as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_or_comment_only_files_give_the_documented_defaults() {
        for text in ["", "# nothing here\n", "---\n"] {
            let c = Config::from_yaml_str(text, "r.yml").unwrap();
            assert_eq!(c, Config::default(), "{text:?}");
        }
        let c = Config::default();
        assert_eq!(c.mode, Enforcement::Enforce);
        assert_eq!(c.protected_paths, ["app/", "infra/", "clients/"]);
        assert_eq!(c.limits.max_attempts, None, "limits are off until set");
        assert_eq!(c.replay.command, None, "replay.command is off until set");
        assert!(c.rules.extra.is_empty(), "rules.extra is off until set");
        assert_eq!((c.replay.scenario.as_str(), c.replay.clients), ("default", 8));
        assert_eq!(c.sign_off.min_permission, Permission::Write);
        assert!(c.agents.logins.contains(&"*[bot]".to_string()));
        assert!(c.require.ledger && c.require.replay);
        assert!(!c.replay.require_coverage, "coverage is shown, not required, until set");
        // A partial section keeps the defaults of the keys it leaves out.
        let c =
            Config::from_yaml_str("require: { ledger: false }\nreplay: { clients: 2 }\n", "r.yml").unwrap();
        assert!(!c.require.ledger && c.require.replay);
        assert_eq!((c.replay.clients, c.replay.scenario.as_str()), (2, "default"));
        assert_eq!(c.protected_paths, ["app/", "infra/", "clients/"]);
    }

    #[test]
    fn replay_scenario_may_be_a_list() {
        let c = Config::from_yaml_str("replay: { scenario: [post, lost-response] }\n", "r.yml").unwrap();
        assert_eq!(c.replay.scenario, "post,lost-response");
        let e = Config::from_yaml_str("replay: { scenario: [] }\n", "r.yml").unwrap_err().to_string();
        assert!(e.contains("replay.scenario is an empty list"), "{e}");
    }

    #[test]
    fn the_design_example_parses_in_full() {
        let text = r#"
mode: advisory
agents:
  logins: ["Copilot", "*[bot]"]
  branch_prefixes: ["codex/"]
  labels: ["agent"]
  trailers: ["noreply@anthropic.com"]
require:
  ledger: true
  replay: false
ledger: { path: .tool_ledger.jsonl, artifact: tool-ledger }
replay: { command: "cargo test --test replay_429", scenario: default, clients: 8 }
protected_paths: ["app/", "infra/", "clients/", "**/*.tf"]
limits: { max_attempts: 3 }
rules: { disable: ["rust/loop-attempts"], extra: [".github/retrygate-rules/"] }
sign_off: { command: "/retrygate sign-off", min_permission: maintain }
"#;
        let c = Config::from_yaml_str(text, "r.yml").unwrap();
        assert_eq!(c.mode, Enforcement::Advisory);
        assert!(!c.require.replay);
        assert_eq!(c.replay.command.as_deref(), Some("cargo test --test replay_429"));
        assert_eq!(c.limits.max_attempts, Some(3));
        assert_eq!(c.sign_off.min_permission, Permission::Maintain);
        assert_eq!(c.agents.branch_prefixes, ["codex/"]);
        assert!(c.protected().unwrap().is_protected("modules/net/main.tf"));
    }

    #[test]
    fn rules_disable_refuses_an_unknown_rust_check_and_names_the_nearest() {
        let ok = Config::from_yaml_str(
            "rules:\n  disable: [rust/backon-jitter, python/retries-raised]\n",
            "r.yml",
        );
        assert_eq!(ok.unwrap().rules.disable.len(), 2, "known Rust ids and rule-pack ids pass");
        let err =
            Config::from_yaml_str("rules:\n  disable:\n    - rust/backon-jiter\n", ".github/retrygate.yml")
                .unwrap_err()
                .to_string();
        assert_eq!(
            err,
            ".github/retrygate.yml:3: rules.disable: \"rust/backon-jiter\" is not a Rust check; did you mean \"rust/backon-jitter\"? `retrygate rules list` lists every check id"
        );
        assert!(!err.contains('\n'));
    }

    #[test]
    fn unknown_keys_name_the_file_line_and_key() {
        let err = Config::from_yaml_str("mode: enforce\nrequire:\n  ledgr: true\n", ".github/retrygate.yml")
            .unwrap_err();
        let msg = err.to_string();
        assert_eq!(err.line, Some(3), "{msg}");
        assert!(msg.starts_with(".github/retrygate.yml:3: "), "{msg}");
        assert!(msg.contains("unknown field `ledgr`"), "{msg}");
        assert!(msg.contains("require"), "the message names the enclosing key: {msg}");
        let top = Config::from_yaml_str("protected: []\n", "r.yml").unwrap_err();
        assert!(top.to_string().contains("unknown field `protected`"), "{top}");
    }

    /// Every kind of bad config and the whole one-line error it gets, as
    /// `retrygate config validate` and the gate print it: one snapshot
    /// (`src/snapshots/`), reviewed when a message changes.
    #[test]
    fn every_config_error_names_the_file_line_and_key_and_what_to_do() {
        let cases = [
            "mode: enforce\nrequire:\n  ledgr: true\n",
            "protected: []\n",
            "limits:\n  max_attempts: lots\n",
            "mode: strict\n",
            "protected_paths: app/\n",
            "sign_off: { min_permission: owner }\n",
            "mode: enforce\nprotected_paths:\n  - \"app/[\"\n",
            "replay: { clients: 0 }\n",
            "mode: enforce\npaths:\n  ignore: [\"vendor/{a\"]\n",
            "paths:\n  tests:\n    - \"qa/\"\n    - \"[z-a]\"\n",
            "paths: { test: [] }\n",
            "paths: { ignore: vendor }\n",
            "rules: { disable: [\"rust/backon-max-time\"] }\n",
            "mode: [unclosed\n",
        ];
        let mut out = String::new();
        for text in cases {
            let err = Config::from_yaml_str(text, ".github/retrygate.yml").unwrap_err();
            out.push_str(&format!("{text:?}\n  {err}\n"));
        }
        insta::assert_snapshot!(out);
    }

    #[test]
    fn wrong_types_name_the_line_of_the_key() {
        let cases = [
            ("limits:\n  max_attempts: lots\n", 2),
            ("mode: strict\n", 1),
            ("protected_paths: app/\n", 1),
            ("sign_off: { min_permission: owner }\n", 1),
        ];
        for (text, line) in cases {
            let err = Config::from_yaml_str(text, "r.yml").unwrap_err();
            assert_eq!(err.line, Some(line), "{text:?}: {err}");
        }
    }

    #[test]
    fn bad_globs_are_refused_with_their_line() {
        let err =
            Config::from_yaml_str("mode: enforce\nprotected_paths:\n  - \"app/[\"\n", "r.yml").unwrap_err();
        let msg = err.to_string();
        assert_eq!(err.line, Some(3), "{msg}");
        assert!(msg.contains("invalid glob \"app/[\""), "{msg}");
        let zero = Config::from_yaml_str("replay: { clients: 0 }\n", "r.yml").unwrap_err();
        assert!(zero.to_string().contains("replay.clients: must be at least 1"), "{zero}");
    }

    #[test]
    fn paths_ignore_and_tests_parse_and_default_to_unset() {
        let c = Config::default();
        assert_eq!(c.paths.ignore, None, "unset: the vendored folders are ignored");
        assert_eq!(c.paths.tests, None, "unset: the default test patterns apply");
        let c = Config::from_yaml_str("paths:\n  ignore: [\"vendor/**\"]\n  tests: []\n", "r.yml").unwrap();
        assert_eq!(c.paths.ignore, Some(vec!["vendor/**".to_string()]));
        assert_eq!(c.paths.tests, Some(vec![]), "an empty list is set: no path is test code");
        let c = Config::from_yaml_str("paths: { tests: [\"qa/\"] }\n", "r.yml").unwrap();
        assert_eq!(c.paths.tests, Some(vec!["qa/".to_string()]));
        assert_eq!(c.paths.ignore, None);
        let c = Config::from_yaml_str("paths: { ignore: [] }\n", "r.yml").unwrap();
        assert_eq!(c.paths.ignore, Some(vec![]), "an empty list is set: every file is scanned");
    }

    #[test]
    fn bad_path_globs_name_their_key_and_line() {
        for (text, key, line) in [
            ("mode: enforce\npaths:\n  ignore: [\"vendor/{a\"]\n", "paths.ignore", 3),
            ("paths:\n  tests:\n    - \"qa/\"\n    - \"[z-a]\"\n", "paths.tests", 4),
            ("paths:\n  shipped: [\"tools/[\"]\n", "paths.shipped", 2),
        ] {
            let err = Config::from_yaml_str(text, "r.yml").unwrap_err();
            let msg = err.to_string();
            assert!(msg.starts_with(&format!("r.yml:{line}: {key}: invalid glob")), "{msg}");
            assert!(msg.contains("fix the pattern"), "{msg}");
        }
        let typo = Config::from_yaml_str("paths: { test: [] }\n", "r.yml").unwrap_err();
        assert!(typo.to_string().contains("unknown field `test`"), "{typo}");
        let scalar = Config::from_yaml_str("paths: { ignore: vendor }\n", "r.yml").unwrap_err();
        assert!(scalar.to_string().contains("paths.ignore"), "{scalar}");
    }

    #[test]
    fn oversized_input_is_refused_before_parsing() {
        let big = format!("# {}\n", "x".repeat(MAX_CONFIG_BYTES));
        let err = Config::from_yaml_str(&big, "r.yml").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("r.yml: the file is {} bytes, over the 1024 KiB limit; a retrygate config is a few hundred bytes; check that this is the right file", big.len())
        );
        // The same error from the working tree, without reading the file.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".github")).unwrap();
        std::fs::write(dir.path().join(CONFIG_PATH), &big).unwrap();
        let err = Config::load_from_worktree(dir.path()).unwrap_err();
        assert_eq!(err, ConfigError::too_large(CONFIG_PATH, Some(big.len() as u64)));
        // A config just under the limit is parsed.
        let fits = format!("# {}\n", "x".repeat(MAX_CONFIG_BYTES - 3));
        assert!(Config::from_yaml_str(&fits, "r.yml").is_ok());
    }

    #[test]
    fn a_billion_laughs_document_is_an_error_not_a_hang() {
        // Anchors under known keys: the expansion meets a type error on its
        // first element (a list where a string belongs), before expanding.
        let typed = "agents:\n  labels: &l [\"a\", \"b\"]\n  logins: [*l, *l, *l]\n";
        let err = Config::from_yaml_str(typed, "bomb.yml").unwrap_err();
        assert!(err.to_string().contains("agents.logins"), "{err}");
        let mut text = String::from(
            "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!("a{i}: &a{i} [*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p}]\n"));
        }
        text.push_str("protected_paths: *a9\n");
        let err = Config::from_yaml_str(&text, "bomb.yml").unwrap_err();
        assert!(err.to_string().starts_with("bomb.yml:1: unknown field `a0`"), "{err}");
        // The typed schema fails before expanding; serde_yaml's own alias
        // budget is what stops an untyped read of the same document.
        let untyped: Result<serde_yaml::Value, _> = serde_yaml::from_str(&text);
        assert!(untyped.unwrap_err().to_string().contains("repetition limit exceeded"));
    }

    #[test]
    fn protected_path_semantics() {
        let c = Config {
            protected_paths: vec!["app/".into(), "infra".into(), "*.lock".into()],
            ..Config::default()
        };
        let p = c.protected().unwrap();
        assert_eq!(p.matching("app/x/y.rs"), Some("app/"));
        assert!(!p.is_protected("application/x.rs"), "a directory entry is not a prefix of other names");
        assert!(!p.is_protected("app"), "app/ names what is under the directory");
        assert!(p.is_protected("infra") && p.is_protected("infra/main.tf"));
        assert!(p.is_protected("Cargo.lock"));
        assert!(!p.is_protected("sub/Cargo.lock"), "* stays within one directory");
        assert!(!p.is_protected("src/app/x.rs"));
    }

    #[test]
    fn a_bad_pattern_set_by_hand_is_an_error_not_a_matcher_that_protects_nothing() {
        // Reached without from_yaml_str: a library caller building a Config.
        let c = Config { protected_paths: vec!["app/".into(), "clients/[".into()], ..Config::default() };
        let e = c.protected().unwrap_err();
        assert!(
            e.to_string().starts_with(".github/retrygate.yml: protected_paths: invalid glob \"clients/[\""),
            "{e}"
        );
        // The same pattern through the file names its line.
        let e =
            Config::from_yaml_str("mode: enforce\nprotected_paths: [\"clients/[\"]\n", "r.yml").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.to_string().contains("invalid glob \"clients/[\""), "{e}");
    }
}
