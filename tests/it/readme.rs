//! The README is the front door: its generated parts must match the code.

#[test]
fn readme_kind_table_matches_the_kinds_docs() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("<!-- kinds:start -->\n").expect("README lacks the kinds:start marker");
    let end = readme.find("<!-- kinds:end -->").expect("README lacks the kinds:end marker");
    let in_readme = &readme[start + "<!-- kinds:start -->\n".len()..end];
    assert_eq!(
        in_readme,
        retrygate::finding::kinds_markdown_table(),
        "README's finding-kind table is out of date: run scripts/regen.sh"
    );
}

/// docs/rust.md's table of Rust checks is generated from
/// `src/analyze/rust/checks/`; with `RETRYGATE_UPDATE_README=1` this test
/// rewrites it instead of failing.
#[test]
fn rust_check_table_matches_the_declarations() {
    const START: &str = "<!-- rust-checks:start -->\n";
    const END: &str = "<!-- rust-checks:end -->";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rust.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let start = readme.find(START).expect("docs/rust.md lacks the rust-checks:start marker") + START.len();
    let end = readme.find(END).expect("docs/rust.md lacks the rust-checks:end marker");
    let table = retrygate::analyze::rust::checks::markdown_table();
    if std::env::var_os("RETRYGATE_UPDATE_README").is_some() {
        std::fs::write(path, format!("{}{table}{}", &readme[..start], &readme[end..])).unwrap();
        return;
    }
    assert_eq!(
        &readme[start..end],
        table,
        "docs/rust.md's Rust check table is out of date: run scripts/regen.sh"
    );
}

#[test]
fn readme_names_the_two_commands_and_ci_runs_the_test_one() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    assert!(readme.contains("cargo run --release -- demo"));
    assert!(readme.contains("./scripts/test.sh"));
    let ci = std::fs::read_to_string(format!("{root}/.ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "./scripts/test.sh"), ".ci/run must run ./scripts/test.sh");
}

/// The README's minimal config is one the gate accepts.
#[test]
fn readme_minimal_config_validates() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let start = readme.find("```yaml\n").expect("README lacks its yaml config block") + "```yaml\n".len();
    let len = readme[start..].find("```").expect("unclosed yaml block");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retrygate.yml");
    std::fs::write(&path, &readme[start..start + len]).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_retrygate"))
        .args(["config", "validate"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

/// The README is the front door: short, and free of dated lab notes.
#[test]
fn readme_stays_a_front_door() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines; move detail to docs/ (the guide)");
    for month in [
        "January",
        "February",
        "March",
        "April",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ] {
        assert!(
            !readme.contains(&format!(" {month} ")),
            "README.md has dated prose ({month}); figures live in docs/benchmarks.md"
        );
    }
}
