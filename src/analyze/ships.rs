//! What ships, read from the build: Rust code that Cargo builds only for
//! the project's own use, and .NET test and benchmark projects, do not
//! block, like test code.
//!
//! Folder names say little about what a crate is for (a `simulation/` or
//! `tools/` crate may ship, a `src/bin/smoke.rs` of a tool crate does not),
//! so the decision is read from the manifests of the head tree:
//!
//! - **Build tooling**: the crate named `xtask`, or the one the `xtask`
//!   alias of `.cargo/config.toml` runs (`run --package NAME`): cargo's
//!   convention for a project's automation (release, codegen, smoke tests
//!   against a local server), run by developers and CI, never installed.
//! - **Test support**: a library crate (no binary) that other crates of the
//!   repository list only under `[dev-dependencies]`, never under
//!   `[dependencies]` or `[build-dependencies]`, and that is not a
//!   published library (`publish = false`, or no `description` or license,
//!   which crates.io requires): only their tests link it.
//! - **Cargo targets at their own paths**: a `[[bench]]`, `[[example]]` or
//!   `[[test]]` with a `path` outside the default folders.
//!
//! - **.NET test and benchmark projects**: a `.csproj`/`.fsproj`/`.vbproj`
//!   that references Microsoft.NET.Test.Sdk, xUnit, NUnit or MSTest (or
//!   sets `IsTestProject`, or uses the MSTest SDK), or BenchmarkDotNet: the
//!   whole folder of the project.
//!
//! - **Go test support**: a Go file (not `_test.go`) that imports `testing`
//!   or a test framework (testify, ginkgo, gomega, gocheck), and an
//!   `internal/` package that other packages of the module import only
//!   from `_test.go` files. Only `internal/` packages are decided by their
//!   importers: Go lets nothing outside the module import them, whereas a
//!   library's public packages are imported by its users, not by its own
//!   code, and are the product. Both hold at the base too
//!   when the file existed there, so a change cannot add the import, or
//!   drop the product's last importer, to exempt itself.
//!
//! `publish = false` is not read as tooling: applications set it on the
//! crate they ship. A crate nothing else names is not decided either.
//! Where the manifests cannot be read, nothing is decided here and the
//! path rules of [`super::testcode`] apply alone.

use std::collections::{BTreeMap, BTreeSet};

use crate::changeset::git::Blob;
use crate::changeset::{ChangeSet, Git, Side};

/// The largest manifest read; a bigger `Cargo.toml` is not a real one.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Paths of the head tree that the build says do not ship, each with why.
#[derive(Debug, Default, Clone)]
pub(crate) struct Build {
    /// (folder, why): everything under the folder.
    crates: Vec<(String, String)>,
    /// (file, why).
    files: BTreeMap<String, String>,
}

impl Build {
    /// Why `path` does not ship, or `None`.
    pub(crate) fn reason(&self, path: &str) -> Option<&str> {
        if let Some(why) = self.files.get(path) {
            return Some(why);
        }
        self.crates
            .iter()
            .filter(|(dir, _)| dir.is_empty() || path.starts_with(&format!("{dir}/")))
            .max_by_key(|(dir, _)| dir.len())
            .map(|(_, why)| why.as_str())
    }

    /// Reads the head tree of `cs`: its `Cargo.toml` files, `.cargo/config.toml`
    /// and the file list (to tell a crate with a binary). `None` when the
    /// change has no repository to read or git fails.
    pub(crate) fn of_head(cs: &ChangeSet) -> Option<Build> {
        if cs.head.bytes().all(|b| b == b'0') {
            return None;
        }
        let git = Git::open(&cs.repo).ok()?;
        let tree = git.tree_files(&cs.head).ok()?;
        let wanted: Vec<&(String, String)> = tree
            .iter()
            .filter(|(p, _)| {
                is_manifest(p)
                    || is_dotnet_project(p)
                    || is_go_mod(p)
                    || p == ".cargo/config.toml"
                    || p == ".cargo/config"
            })
            .collect();
        if !wanted.iter().any(|(p, _)| is_manifest(p) || is_dotnet_project(p) || is_go_mod(p)) {
            return None;
        }
        let ids: Vec<String> = wanted.iter().map(|(_, id)| id.clone()).collect();
        let texts = git.read_blobs(&ids, MAX_MANIFEST_BYTES).ok()?;
        let mut manifests = Vec::new();
        let mut projects = Vec::new();
        let mut go_mods = Vec::new();
        let mut config = None;
        for ((path, _), blob) in wanted.iter().zip(texts) {
            let Blob::Bytes(bytes) = blob else { continue };
            let Ok(text) = String::from_utf8(bytes) else { continue };
            if is_manifest(path) {
                manifests.push((path.clone(), text));
            } else if is_dotnet_project(path) {
                projects.push((path.clone(), text));
            } else if is_go_mod(path) {
                go_mods.push((path.clone(), text));
            } else {
                config = Some(text);
            }
        }
        let files: BTreeSet<&str> = tree.iter().map(|(p, _)| p.as_str()).collect();
        let mut build = Build::from_manifests(&manifests, config.as_deref(), &files);
        build.add_dotnet_projects(&projects);
        if !go_mods.is_empty() {
            build.add_go_test_support(&git, cs, &go_mods);
        }
        Some(build)
    }

    /// Go: decides each changed Go file of the head (not `_test.go`, whose
    /// path already says test) that is test support, as the module doc says.
    fn add_go_test_support(&mut self, git: &Git, cs: &ChangeSet, go_mods: &[(String, String)]) {
        for file in cs.files.iter().filter(|f| f.path.ends_with(".go") && !f.path.ends_with("_test.go")) {
            let Side::Text(head) = &file.head else { continue };
            let base = match &file.base {
                Side::Text(t) => Some(t.as_str()),
                _ => None,
            };
            if let Some(framework) =
                go_test_import(head).filter(|_| base.is_none_or(|b| go_test_import(b).is_some()))
            {
                self.files.insert(
                    file.path.clone(),
                    format!("not shipped (Go test support: the file imports `{framework}`, which product code does not)"),
                );
                continue;
            }
            let Some(import) = go_import_path(&file.path, go_mods) else { continue };
            if !import.split('/').any(|seg| seg == "internal") {
                continue;
            }
            if go_package_name(head) == Some("main") {
                continue;
            }
            let dir = file.path.rsplit_once('/').map_or("", |(d, _)| d);
            let tested_only = |rev: &str| {
                go_importers(git, rev, &import, dir)
                    .is_some_and(|i| !i.is_empty() && i.iter().all(|p| p.ends_with("_test.go")))
            };
            if tested_only(&cs.head) && (base.is_none() || tested_only(&cs.merge_base)) {
                self.files.insert(
                    file.path.clone(),
                    format!("not shipped (Go test support: package `{import}` is imported only by `_test.go` files)"),
                );
            }
        }
    }

    /// .NET: a project that references a test framework or test SDK (its
    /// `dotnet test` target) or a benchmark runner is not shipped; its
    /// folder is decided. The product's projects reference neither, and
    /// `IsPackable`/`OutputType` say nothing (services set both).
    pub(crate) fn add_dotnet_projects(&mut self, projects: &[(String, String)]) {
        for (path, text) in projects {
            let Some(why) = dotnet_test_project(text) else { continue };
            let dir = path.rsplit_once('/').map_or(String::new(), |(d, _)| d.to_string());
            self.crates.push((dir, format!("not shipped (a .NET {why}; {path})")));
        }
    }

    /// The decision from manifests (`(path of Cargo.toml, text)`), the
    /// cargo config's text, and the tree's file paths.
    pub(crate) fn from_manifests(
        manifests: &[(String, String)],
        cargo_config: Option<&str>,
        files: &BTreeSet<&str>,
    ) -> Build {
        let read: Vec<(String, Manifest)> = manifests
            .iter()
            .map(|(path, text)| {
                let dir = path.strip_suffix("Cargo.toml").unwrap_or("").trim_end_matches('/').to_string();
                (dir, Manifest::read(text))
            })
            .collect();
        let xtask_alias = cargo_config.and_then(xtask_package);
        let mut build = Build::default();
        for (dir, m) in &read {
            let Some(name) = &m.name else { continue };
            let join = |p: &str| if dir.is_empty() { p.to_string() } else { format!("{dir}/{p}") };
            for (kind, path) in &m.targets {
                build.files.insert(
                    join(path.trim_start_matches("./")),
                    format!("not shipped (a Cargo `[[{kind}]]` target of crate `{name}`, {dir}/Cargo.toml)")
                        .replace(" /Cargo.toml", " Cargo.toml"),
                );
            }
            let manifest = join("Cargo.toml");
            if name == "xtask" || xtask_alias.as_deref() == Some(name.as_str()) {
                build.crates.push((
                    dir.clone(),
                    format!(
                        "not shipped (crate `{name}` is build tooling: cargo's `xtask` convention for a project's automation, run as `cargo xtask`; {manifest})"
                    ),
                ));
                continue;
            }
            // A `[[bin]]` table, `src/main.rs`, or any file under `src/bin/`.
            let bin_dir = join("src/bin/");
            let has_binary = m.has_bin
                || files.contains(join("src/main.rs").as_str())
                || files.range(bin_dir.as_str()..).next().is_some_and(|f| f.starts_with(&bin_dir));
            let dev = read.iter().filter(|(_, o)| o.dev_deps.contains(name)).count();
            let normal = read.iter().any(|(_, o)| o.deps.contains(name));
            // A published library is the product even when the repository's
            // other crates only test with it (a middleware crate next to
            // its siblings).
            let published = !m.publish_false && m.described && m.licensed;
            if !has_binary && !published && dev > 0 && !normal {
                build.crates.push((
                    dir.clone(),
                    format!(
                        "not shipped (crate `{name}` is test support: other crates list it only under [dev-dependencies]; {manifest})"
                    ),
                ));
            }
        }
        build
    }
}

fn is_go_mod(path: &str) -> bool {
    path == "go.mod" || path.ends_with("/go.mod")
}

/// Imports that only tests make: the standard library's test driver and
/// the common test frameworks.
const GO_TEST_IMPORTS: &[&str] = &[
    "testing",
    "github.com/stretchr/testify",
    "github.com/onsi/ginkgo",
    "github.com/onsi/gomega",
    "gopkg.in/check.v1",
];

/// The test import of a Go file, if it makes one.
fn go_test_import(text: &str) -> Option<&'static str> {
    let imports = go_imports(text);
    GO_TEST_IMPORTS.iter().copied().find(|t| {
        imports.iter().any(|i| i == t || i.strip_prefix(t).is_some_and(|rest| rest.starts_with('/')))
    })
}

/// The import paths of a Go file's import declarations (before its first
/// other declaration).
fn go_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for raw in text.lines() {
        let line = raw.trim();
        if in_block {
            if line.starts_with(')') {
                in_block = false;
            } else if let Some(path) = quoted(line) {
                out.push(path.to_string());
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("import") {
            let rest = rest.trim_start();
            if rest.starts_with('(') {
                in_block = true;
            } else if let Some(path) = quoted(rest) {
                out.push(path.to_string());
            }
        } else if ["func ", "type ", "var ", "const "].iter().any(|k| line.starts_with(k)) {
            break;
        }
    }
    out
}

/// The first double-quoted string of an import line (after an optional alias).
fn quoted(line: &str) -> Option<&str> {
    let start = line.find('"')? + 1;
    let len = line.get(start..)?.find('"')?;
    line.get(start..start + len)
}

/// The `package` clause's name.
fn go_package_name(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("package "))
        .map(|n| n.split_whitespace().next().unwrap_or(""))
}

/// The import path of the package holding `path`: its nearest `go.mod`'s
/// module path plus the folder below it. `None` for a module's root
/// package (its users' entry point) or a file outside any module.
fn go_import_path(path: &str, go_mods: &[(String, String)]) -> Option<String> {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    go_mods
        .iter()
        .filter_map(|(m, text)| {
            let mod_dir = m.strip_suffix("go.mod")?.trim_end_matches('/');
            let rel = if mod_dir.is_empty() || dir == mod_dir {
                dir.strip_prefix(mod_dir)?
            } else {
                dir.strip_prefix(mod_dir)?.strip_prefix('/')?
            };
            let module =
                text.lines().find_map(|l| l.trim().strip_prefix("module "))?.trim().trim_matches('"');
            Some((mod_dir.len(), rel, module))
        })
        .max_by_key(|(len, _, _)| *len)
        .filter(|(_, rel, _)| !rel.is_empty())
        .map(|(_, rel, module)| format!("{module}/{rel}"))
}

/// The Go files at `rev` outside `dir` that import `import`; `None` when
/// git cannot tell (nothing is decided then). `git grep` exits 1 when
/// nothing matches, which is an empty list, not a failure.
fn go_importers(git: &Git, rev: &str, import: &str, dir: &str) -> Option<Vec<String>> {
    let pattern = format!("\"{import}\"");
    let out = match git.run(&["grep", "-l", "-F", "-e", &pattern, rev, "--", "*.go"]) {
        Ok(out) => out,
        Err(crate::changeset::ChangeSetError::Git { stderr, .. }) if stderr.is_empty() => String::new(),
        Err(_) => return None,
    };
    let prefix = format!("{rev}:");
    Some(
        out.lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .filter(|p| p.rsplit_once('/').map_or("", |(d, _)| d) != dir)
            .map(str::to_string)
            .collect(),
    )
}

fn is_dotnet_project(path: &str) -> bool {
    [".csproj", ".fsproj", ".vbproj"].iter().any(|e| path.ends_with(e))
}

/// What a .NET project file says it is, when it is a test or benchmark
/// project: the packages `dotnet test` needs (Microsoft.NET.Test.Sdk, the
/// xUnit, NUnit and MSTest frameworks, the MSTest SDK) or BenchmarkDotNet,
/// referenced as packages, or `IsTestProject` set.
fn dotnet_test_project(text: &str) -> Option<&'static str> {
    let compact: String =
        text.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
    let references = |pkg: &str| {
        compact.contains(&format!("include=\"{pkg}\""))
            || (compact.contains(&format!("include=\"{pkg}.")) && pkg != "microsoft.net.test.sdk")
    };
    if compact.contains("<istestproject>true</istestproject>")
        || compact.contains("sdk=\"mstest.sdk")
        || ["microsoft.net.test.sdk", "xunit", "xunit.v3", "nunit", "mstest.testframework", "mstest"]
            .iter()
            .any(|p| references(p))
    {
        return Some("test project: it references a test framework, so it is built for `dotnet test`");
    }
    if references("benchmarkdotnet") {
        return Some("benchmark project: it references BenchmarkDotNet");
    }
    None
}

fn is_manifest(path: &str) -> bool {
    path == "Cargo.toml" || path.ends_with("/Cargo.toml")
}

/// What the decision reads of one `Cargo.toml`.
#[derive(Debug, Default)]
struct Manifest {
    name: Option<String>,
    /// `publish = false`, or no `description` or no `license`/`license-file`
    /// (crates.io refuses a crate without them): not a published library.
    publish_false: bool,
    described: bool,
    licensed: bool,
    has_bin: bool,
    /// (kind, path) of `[[bench]]`, `[[example]]` and `[[test]]` tables
    /// with a `path`.
    targets: Vec<(String, String)>,
    /// Package names under `[dependencies]` / `[build-dependencies]`
    /// (any target's), and under `[dev-dependencies]`.
    deps: BTreeSet<String>,
    dev_deps: BTreeSet<String>,
}

impl Manifest {
    /// A line reader for the parts of TOML that manifests use for these
    /// keys: `[table]` and `[[array]]` headers, `key = "string"` and
    /// `name = { package = "..", .. }` on one line. Anything else is skipped.
    fn read(text: &str) -> Manifest {
        let mut m = Manifest::default();
        let mut table = String::new();
        let mut array_table = false;
        // A `[dependencies.NAME]` table, until its `package = ".."` says more.
        let mut dotted_dep: Option<(bool, String)> = None;
        for raw in text.lines() {
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            if let Some(h) = line.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")) {
                table = h.trim().to_string();
                array_table = true;
                dotted_dep = None;
                if table == "bin" {
                    m.has_bin = true;
                }
                continue;
            }
            if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                table = h.trim().to_string();
                array_table = false;
                dotted_dep = dep_table(&table)
                    .and_then(|(dev, rest)| rest.map(|name| (dev, unquote(name).to_string())));
                if let Some((dev, name)) = &dotted_dep {
                    m.add_dep(*dev, name.clone());
                }
                continue;
            }
            let Some((key, value)) = line.split_once('=') else { continue };
            let (key, value) = (unquote(key.trim()), value.trim());
            if array_table {
                if key == "path" && matches!(table.as_str(), "bench" | "example" | "test") {
                    m.targets.push((table.clone(), unquote(value).to_string()));
                }
                continue;
            }
            if table == "package" {
                match key {
                    "name" => m.name = Some(unquote(value).to_string()),
                    "publish" => m.publish_false = value == "false" || value.starts_with("[]"),
                    "description" | "description.workspace" => m.described = true,
                    "license" | "license-file" | "license.workspace" | "license-file.workspace" => {
                        m.licensed = true
                    }
                    _ => {}
                }
                continue;
            }
            if let Some((dev, _)) = &dotted_dep {
                // `package = ".."`: the table's name was a rename.
                if key == "package" {
                    m.add_dep(*dev, unquote(value).to_string());
                }
                continue;
            }
            if let Some((dev, None)) = dep_table(&table) {
                // Dotted keys are the same dependency: `NAME.workspace =
                // true`, `NAME.path = ".."`, and `NAME.package = ".."` for a
                // rename (crate names hold no dot).
                let package = match key.split_once('.') {
                    Some((_, "package")) => unquote(value),
                    Some((name, _)) => unquote(name),
                    None => inline_value(value, "package").unwrap_or(key),
                };
                m.add_dep(dev, package.to_string());
            }
        }
        m
    }

    fn add_dep(&mut self, dev: bool, name: String) {
        if dev {
            self.dev_deps.insert(name);
        } else {
            self.deps.insert(name);
        }
    }
}

/// Whether a table holds dependencies: `Some((dev, NAME))` for
/// `[dependencies.NAME]`, `Some((dev, None))` for `[dependencies]`, with
/// `target.'cfg(..)'.` prefixes and `workspace.` left aside.
fn dep_table(table: &str) -> Option<(bool, Option<&str>)> {
    let rest = match table.strip_prefix("target.") {
        // `target.'cfg(unix)'.dependencies`: skip the quoted or bare target.
        Some(t) => {
            let after = if let Some(q) = t.strip_prefix('\'') {
                q.split_once('\'').map(|(_, r)| r)?
            } else if let Some(q) = t.strip_prefix('"') {
                q.split_once('"').map(|(_, r)| r)?
            } else {
                t.split_once('.').map(|(_, r)| r).map(|r| r.trim_start_matches('.'))?
            };
            after.trim_start_matches('.')
        }
        None => table,
    };
    for (kind, dev) in [("dev-dependencies", true), ("dependencies", false), ("build-dependencies", false)] {
        if rest == kind {
            return Some((dev, None));
        }
        if let Some(name) = rest.strip_prefix(kind).and_then(|r| r.strip_prefix('.')) {
            return Some((dev, Some(name)));
        }
    }
    None
}

/// `KEY = "v"` inside an inline table `{ .. }`.
fn inline_value<'t>(value: &'t str, key: &str) -> Option<&'t str> {
    let inner = value.strip_prefix('{')?.trim_end().strip_suffix('}')?;
    inner.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (unquote(k.trim()) == key).then(|| unquote(v.trim()))
    })
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    s.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .or_else(|| s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))
        .unwrap_or(s)
}

/// The line without a `#` comment (a `#` inside a string is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..i],
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    line
}

/// The package the `xtask` alias of a cargo config runs:
/// `xtask = "run --package NAME --"`, `-p NAME`, `--package=NAME`, or the
/// array form `["run", "-p", "NAME"]`.
fn xtask_package(config: &str) -> Option<String> {
    let mut in_alias = false;
    for raw in config.lines() {
        let line = strip_comment(raw).trim();
        if line.starts_with('[') {
            in_alias = line == "[alias]";
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = unquote(key.trim());
        if !(in_alias && key == "xtask" || key == "alias.xtask") {
            continue;
        }
        let words: Vec<&str> = value
            .split(|c: char| c.is_whitespace() || matches!(c, '[' | ']' | ',' | '"' | '\''))
            .filter(|w| !w.is_empty())
            .collect();
        for (i, w) in words.iter().enumerate() {
            if let Some(p) = w.strip_prefix("--package=") {
                return Some(p.to_string());
            }
            if (*w == "--package" || *w == "-p") && i + 1 < words.len() {
                return Some(words[i + 1].to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(manifests: &[(&str, &str)], config: Option<&str>, files: &[&str]) -> Build {
        let m: Vec<(String, String)> =
            manifests.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
        Build::from_manifests(&m, config, &files.iter().copied().collect())
    }

    #[test]
    fn the_xtask_crate_and_the_one_its_alias_runs_are_build_tooling() {
        let b = build(
            &[
                ("Cargo.toml", "[workspace]\nmembers = [\"app\", \"xtask\"]\n"),
                ("xtask/Cargo.toml", "[package]\nname = \"xtask\"\npublish = false\n"),
                ("app/Cargo.toml", "[package]\nname = \"app\"\n"),
            ],
            None,
            &["xtask/src/main.rs", "app/src/main.rs"],
        );
        assert!(b.reason("xtask/src/commands/smoke.rs").is_some_and(|w| w.contains("build tooling")));
        assert_eq!(b.reason("app/src/main.rs"), None);
        // Named otherwise, run by the alias.
        let b = build(
            &[("tools/ci/Cargo.toml", "[package]\nname = \"ci-tasks\"\n")],
            Some("[alias]\nxtask = \"run --package ci-tasks --\"\nrover = \"run -p rover --\"\n"),
            &[],
        );
        assert!(b.reason("tools/ci/src/main.rs").is_some());
        // Another alias (a project's own binary run by `cargo rover`) is not tooling.
        let b = build(
            &[("Cargo.toml", "[package]\nname = \"rover\"\n")],
            Some("[alias]\nrover = \"run --package rover --\"\n"),
            &["src/main.rs"],
        );
        assert_eq!(b.reason("src/main.rs"), None);
    }

    #[test]
    fn a_library_only_dev_dependencies_name_is_test_support_and_one_a_crate_depends_on_is_not() {
        let manifests = [
            ("core/Cargo.toml", "[package]\nname = \"core\"\n\n[dev-dependencies]\ntest-utils = { path = \"../test-utils\" }\n"),
            ("server/Cargo.toml", "[package]\nname = \"server\"\n\n[dependencies]\ncore = { path = \"../core\" }\n\n[target.'cfg(unix)'.dev-dependencies.fixtures]\npath = \"../fixtures\"\n"),
            ("test-utils/Cargo.toml", "[package]\nname = \"test-utils\"\n"),
            ("fixtures/Cargo.toml", "[package]\nname = \"fixtures\"\n"),
            ("helpers/Cargo.toml", "[package]\nname = \"helpers\"\n"),
            ("middleware/Cargo.toml", "[package]\nname = \"middleware\"\ndescription = \"Retry middleware.\"\nlicense = \"MIT\"\n"),
            ("tracing-mw/Cargo.toml", "[package]\nname = \"tracing-mw\"\n[dev-dependencies]\nmiddleware = { path = \"../middleware\" }\n"),
            ("mixed/Cargo.toml", "[package]\nname = \"mixed\"\n"),
            ("app/Cargo.toml", "[package]\nname = \"app\"\n[dependencies]\nmine = { package = \"mixed\", path = \"../mixed\" }\npayments-client.workspace = true\nledger.package = \"ledger-core\"\n[dev-dependencies]\nmixed = { path = \"../mixed\" }\n"),
            ("payments-client/Cargo.toml", "[package]\nname = \"payments-client\"\n"),
            ("ledger-core/Cargo.toml", "[package]\nname = \"ledger-core\"\n"),
            ("itest/Cargo.toml", "[package]\nname = \"itest\"\n[dev-dependencies]\npayments-client = { workspace = true }\nledger-core.workspace = true\n"),
        ];
        let b = build(&manifests, None, &["server/src/main.rs"]);
        assert!(b.reason("test-utils/src/lib.rs").is_some_and(|w| w.contains("test support")));
        assert!(b.reason("fixtures/src/lib.rs").is_some(), "a dotted dev-dependency table");
        // Depended on for real (here under a rename), or named by nobody: ships.
        assert_eq!(b.reason("mixed/src/lib.rs"), None);
        assert_eq!(b.reason("core/src/lib.rs"), None);
        assert_eq!(b.reason("helpers/src/lib.rs"), None);
        // Dotted keys under [dependencies] are dependencies too.
        assert_eq!(b.reason("payments-client/src/lib.rs"), None, "`NAME.workspace = true`");
        assert_eq!(b.reason("ledger-core/src/lib.rs"), None, "`NAME.package = \"..\"` renames");
        assert_eq!(b.reason("middleware/src/lib.rs"), None, "a published library is the product");
        // A crate with a binary is not a test library.
        for binary in ["test-utils/src/main.rs", "test-utils/src/bin/serve.rs"] {
            let b = build(&manifests, None, &[binary]);
            assert_eq!(b.reason("test-utils/src/lib.rs"), None, "{binary}");
        }
    }

    #[test]
    fn bench_example_and_test_targets_at_their_own_paths_do_not_ship() {
        let b = build(
            &[(
                "engine/Cargo.toml",
                "[package]\nname = \"engine\" # the core\n\n[[bench]]\nname = \"load\"\npath = \"perf/load.rs\"\nharness = false\n\n[[bin]]\nname = \"engine\"\npath = \"src/main.rs\"\n",
            )],
            None,
            &[],
        );
        assert!(b.reason("engine/perf/load.rs").is_some_and(|w| w.contains("[[bench]]")));
        assert_eq!(b.reason("engine/src/main.rs"), None, "a [[bin]] target ships");
        assert_eq!(b.reason("engine/perf/other.rs"), None);
    }

    #[test]
    fn a_dotnet_project_that_references_a_test_framework_or_a_benchmark_runner_does_not_ship() {
        let mut b = Build::default();
        let test = "<Project Sdk=\"Microsoft.NET.Sdk\">\n  <ItemGroup>\n    <PackageReference Include=\"Microsoft.NET.Test.Sdk\" />\n    <PackageReference Include=\"xunit.v3\"/>\n  </ItemGroup>\n</Project>\n";
        let bench = "<Project Sdk=\"Microsoft.NET.Sdk\">\n  <ItemGroup>\n    <PackageReference Include=\"BenchmarkDotNet\" Version=\"0.14.0\" />\n  </ItemGroup>\n</Project>\n";
        let mstest = "<Project Sdk=\"MSTest.Sdk/3.6.1\">\n</Project>\n";
        // A service: packable off, an executable, references a library
        // whose name starts like a test framework's.
        let app = "<Project Sdk=\"Microsoft.NET.Sdk.Web\">\n  <PropertyGroup>\n    <OutputType>Exe</OutputType>\n    <IsPackable>false</IsPackable>\n  </PropertyGroup>\n  <ItemGroup>\n    <PackageReference Include=\"Nunitext.Client\" />\n    <ProjectReference Include=\"..\\Lib\\Lib.csproj\" />\n  </ItemGroup>\n</Project>\n";
        b.add_dotnet_projects(&[
            ("src/Testing/SlowTests/SlowTests.csproj".into(), test.into()),
            ("bench/Perf/Perf.csproj".into(), bench.into()),
            ("Api.Checks/Api.Checks.csproj".into(), mstest.into()),
            ("src/Service/Service.csproj".into(), app.into()),
        ]);
        assert!(b
            .reason("src/Testing/SlowTests/Agents/scale.cs")
            .is_some_and(|w| w.contains("test project")));
        assert!(b.reason("bench/Perf/Runner.cs").is_some_and(|w| w.contains("BenchmarkDotNet")));
        assert!(b.reason("Api.Checks/Tests.cs").is_some());
        assert_eq!(b.reason("src/Service/Program.cs"), None);
        assert_eq!(b.reason("src/Testing/Other/Program.cs"), None, "a folder name alone decides nothing");
    }

    #[test]
    fn go_imports_are_read_from_blocks_aliases_and_single_lines_and_stop_at_code() {
        let text = "package suite\n\nimport \"fmt\"\nimport (\n\tst \"github.com/stretchr/testify/suite\"\n\t\"net/http\"\n)\n\nfunc f() { _ = \"testing\" }\n";
        assert_eq!(go_imports(text), ["fmt", "github.com/stretchr/testify/suite", "net/http"]);
        assert_eq!(go_test_import(text), Some("github.com/stretchr/testify"));
        assert_eq!(
            go_test_import("package p\n\nimport \"testingx/fake\"\n"),
            None,
            "a prefix is not the package"
        );
        assert_eq!(go_package_name(text), Some("suite"));
    }

    #[test]
    fn a_go_import_path_is_the_nearest_modules_path_and_the_root_package_has_none() {
        let mods = vec![
            ("go.mod".to_string(), "module example.com/shop\n".to_string()),
            ("tools/go.mod".to_string(), "module example.com/shop/tools\n".to_string()),
        ];
        assert_eq!(
            go_import_path("internal/fake/x.go", &mods).as_deref(),
            Some("example.com/shop/internal/fake")
        );
        assert_eq!(go_import_path("tools/gen/x.go", &mods).as_deref(), Some("example.com/shop/tools/gen"));
        assert_eq!(go_import_path("shop.go", &mods), None);
        assert_eq!(go_import_path("tools/main.go", &mods), None);
    }
}
