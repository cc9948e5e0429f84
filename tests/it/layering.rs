//! The library's layering, enforced. retrygate is one crate, not a workspace
//! (docs/architecture.md, "Layers", says why); this test is what keeps its
//! modules layered: each top-level module may name only the modules below it,
//! and the crates that reach the outside world (the network, the command line)
//! are confined to the one module that owns them. A violation names the file
//! and line and the rule it breaks.

use std::path::{Path, PathBuf};

/// Each library module and the modules it may use (`crate::X`). The order is
/// bottom-up; docs/architecture.md shows the same table.
const LAYERS: &[(&str, &[&str])] = &[
    ("bounded", &[]),
    ("text", &[]),
    ("yaml", &[]),
    ("duration", &[]),
    ("http", &[]),
    ("finding", &["text"]),
    ("changeset", &["bounded", "text", "finding"]),
    ("config", &["bounded", "yaml", "text", "finding", "changeset"]),
    ("analyze", &["bounded", "text", "yaml", "finding", "config", "changeset"]),
    ("ledger", &["bounded", "text", "yaml", "finding", "config", "changeset"]),
    ("replay", &["bounded", "text", "yaml", "duration", "http", "finding", "config"]),
    (
        "decision",
        &["bounded", "text", "yaml", "finding", "config", "changeset", "analyze", "ledger", "replay"],
    ),
    (
        "printer",
        &[
            "bounded",
            "text",
            "yaml",
            "http",
            "finding",
            "config",
            "changeset",
            "analyze",
            "ledger",
            "replay",
            "decision",
        ],
    ),
    (
        "gate",
        &[
            "bounded",
            "text",
            "yaml",
            "finding",
            "config",
            "changeset",
            "analyze",
            "ledger",
            "replay",
            "decision",
            "printer",
        ],
    ),
    (
        "scan",
        &[
            "bounded",
            "text",
            "yaml",
            "finding",
            "config",
            "changeset",
            "analyze",
            "decision",
            "printer",
            "gate",
        ],
    ),
    (
        "github",
        &[
            "bounded",
            "text",
            "yaml",
            "duration",
            "http",
            "finding",
            "config",
            "changeset",
            "analyze",
            "ledger",
            "replay",
            "decision",
            "printer",
            "gate",
        ],
    ),
];

/// Uses that break the layers on purpose, each with its reason: a module may
/// name exactly this path of a module above it, nothing else of it.
const EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "config",
    "analyze::rust::checks",
    "`rules.disable` is validated against the one declaration of Rust check ids, a table of data",
)];

/// Outside crates only one module may use: the network and the command line
/// stay at the edges.
/// (hyper is named in `github` too: octocrab's raw responses are hyper types.)
const CONFINED: &[(&str, &[&str])] =
    &[("octocrab", &["github"]), ("hyper", &["replay", "github"]), ("clap", &[])];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every library file with its top-level module (the binary's files left out).
fn library_files() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.into_iter().filter_map(|f| module_of(&f).map(|m| (f, m))).collect()
}

/// The library module a file belongs to, or `None` for the binary's files.
fn module_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.trim_end_matches(".rs").to_string();
    let lib = LAYERS.iter().any(|(m, _)| *m == first);
    lib.then_some(first)
}

/// The paths a line names through `crate::` (`gate::check`), including each
/// item of `crate::{a, b::c}`.
fn crate_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The lines of a file that are code: comments dropped, string literals
/// blanked (test fixtures quote Rust), and nothing from the first
/// `#[cfg(test)]` on (unit tests sit at the end of a file and may use anything).
fn code_lines(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, without_strings(l)))
        .collect()
}

fn without_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quoted = false;
    let mut escaped = false;
    for c in line.chars() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
        } else if c == '"' {
            quoted = true;
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn every_library_module_uses_only_the_modules_below_it() {
    let mut violations = Vec::new();
    for (file, module) in &library_files() {
        let allowed = LAYERS.iter().find(|(m, _)| *m == module).unwrap().1;
        for (n, line) in code_lines(file) {
            for path in crate_paths(&line) {
                let used = path.split("::").next().unwrap_or_default().to_string();
                let excepted = EXCEPTIONS.iter().any(|(m, p, _)| *m == module && path.starts_with(p));
                if used != *module && !allowed.contains(&used.as_str()) && !excepted {
                    violations.push(format!(
                        "{}:{n}: `{module}` uses `crate::{used}`, which is not below it in the layers",
                        file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering broken (tests/it/layering.rs, LAYERS):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_network_and_the_command_line_stay_in_their_modules() {
    let mut violations = Vec::new();
    for (file, module) in &library_files() {
        let text = std::fs::read_to_string(file).unwrap();
        // A local module of the same name (`libs::octocrab`) is not the crate.
        let local: Vec<bool> = CONFINED.iter().map(|(k, _)| text.contains(&format!("mod {k};"))).collect();
        for (n, line) in code_lines(file) {
            for (&(krate, owners), &local) in CONFINED.iter().zip(&local) {
                let named = line.contains(&format!("{krate}::")) || line.contains(&format!("use {krate}"));
                if named && !local && !owners.contains(&module.as_str()) {
                    let owner =
                        if owners.is_empty() { "the binary".to_string() } else { owners.join(" and ") };
                    violations.push(format!(
                        "{}:{n}: `{krate}` is used in `{module}`; only {owner} may use it",
                        file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn every_library_module_has_a_layer() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    for line in lib.lines() {
        let Some(name) = line.trim().strip_prefix("pub mod ").and_then(|l| l.strip_suffix(';')) else {
            continue;
        };
        assert!(
            LAYERS.iter().any(|(m, _)| *m == name),
            "src/lib.rs declares `{name}`, which LAYERS does not place"
        );
    }
}

#[test]
fn crate_paths_reads_single_and_grouped_uses() {
    assert_eq!(crate_paths("use crate::text::short_sha;"), ["text::short_sha"]);
    assert_eq!(crate_paths("use crate::{finding::Finding, config};"), ["finding::Finding", "config"]);
    assert_eq!(
        crate_paths("let x = crate::gate::check(a, crate::decision::X);"),
        ["gate::check", "decision::X"]
    );
    assert_eq!(without_strings(r#"let s = "use crate::net::x;"; crate::a"#), "let s = ; crate::a");
}

/// Rust source from a pull request is parsed only through
/// `analyze::rust::parse`, which bounds the tree's depth before syn
/// recurses into it: a second pass that called syn on the same file
/// directly once aborted the binary on a tower of 200,000 `*`. (Tokens
/// taken from a file that passed the check, a macro's body, may be parsed
/// again with `syn::parse2`: they are no deeper than the file.)
#[test]
fn rust_source_is_parsed_only_behind_the_depth_check() {
    let mut violations = Vec::new();
    for (file, _) in &library_files() {
        if file.ends_with("analyze/rust/parse.rs") {
            continue;
        }
        for (n, line) in code_lines(file) {
            for call in ["syn::parse_file", "syn::parse_str"] {
                if line.contains(call) {
                    violations.push(format!(
                        "{}:{n}: `{call}` parses around the depth check; use analyze::rust::parse",
                        file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}
