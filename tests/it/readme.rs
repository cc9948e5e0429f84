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
    // Exactly that command, with no arguments: its output may be redirected.
    assert!(
        ci.lines().any(|l| {
            let mut words = l.split_whitespace();
            words.next() == Some("./scripts/test.sh")
                && words.all(|w| w.starts_with('>') || w == "2>&1" || w == "&")
        }),
        ".ci/run must run ./scripts/test.sh"
    );
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

fn figures_check(root: &std::path::Path) -> std::process::Output {
    std::process::Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/figures.py"))
        .arg("--root")
        .arg(root)
        .arg("check")
        .output()
        .expect("python3 runs scripts/figures.py (scripts/test.sh installs python3)")
}

/// Every measured figure in README.md and docs/ is the generator's: the
/// tables match what `scripts/figures.py render` writes from
/// benches/figures.json, and no measured figure is written by hand outside
/// a generated block.
#[test]
fn figures_are_written_by_the_generator() {
    let out = figures_check(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The check fails on a hand-edited figure table and on a measured figure
/// written into prose, each with a message that says what to do.
#[test]
fn figures_check_catches_hand_written_figures() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = |dir: &std::path::Path| {
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        std::fs::create_dir_all(dir.join("benches")).unwrap();
        std::fs::copy(root.join("README.md"), dir.join("README.md")).unwrap();
        std::fs::copy(root.join("benches/figures.json"), dir.join("benches/figures.json")).unwrap();
        for e in std::fs::read_dir(root.join("docs")).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join("docs").join(e.file_name())).unwrap();
        }
    };

    // The untouched copy passes: the failures below are the edits'.
    let clean = tempfile::tempdir().unwrap();
    copy(clean.path());
    assert_eq!(figures_check(clean.path()).status.code(), Some(0));

    let table = tempfile::tempdir().unwrap();
    copy(table.path());
    let bench = table.path().join("docs/benchmarks.md");
    let text = std::fs::read_to_string(&bench).unwrap();
    let edited = text
        .replace("<!-- figures:end -->", "| a figure | typed | by hand | - | - | - |\n<!-- figures:end -->");
    assert_ne!(text, edited);
    std::fs::write(&bench, edited).unwrap();
    let out = figures_check(table.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "docs/benchmarks.md (figures) differs from benches/figures.json; run `scripts/figures.py render`"
        ),
        "{stdout}"
    );

    let prose = tempfile::tempdir().unwrap();
    copy(prose.path());
    let limits = prose.path().join("docs/limits.md");
    let mut text = std::fs::read_to_string(&limits).unwrap();
    text.push_str("\nOn a quiet machine the scan took 1.7 s per commit.\n");
    std::fs::write(&limits, text).unwrap();
    let out = figures_check(prose.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("a measured figure outside a generated block: docs/limits.md:")
            && stdout.contains("the scan took 1.7 s per commit"),
        "{stdout}"
    );
    assert!(stdout.contains("their history in CHANGELOG.md"), "{stdout}");
}
