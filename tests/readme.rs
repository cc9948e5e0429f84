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
        "README's finding-kind table is out of date: paste the output of `cargo run -- explain --markdown` between the markers"
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
