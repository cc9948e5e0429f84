//! The checked-in JSON Schema of the replay report (`retrygate replay
//! --report`, with `--base` its `comparison`) is the one the report types
//! generate. Regenerate it with
//! `RETRYGATE_BLESS=1 cargo test --test it replay_schema::`.

use retrygate::replay::ReplayReport;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/replay-report.schema.json");

fn generated() -> String {
    format!("{}\n", serde_json::to_string_pretty(&ReplayReport::json_schema()).unwrap())
}

#[test]
fn the_checked_in_replay_report_schema_is_the_generated_one() {
    let want = generated();
    if std::env::var_os("RETRYGATE_BLESS").is_some() {
        std::fs::write(PATH, &want).unwrap();
    }
    let have = std::fs::read_to_string(PATH).unwrap_or_default();
    assert!(
        have == want,
        "schemas/replay-report.schema.json is out of date with src/replay/; run \
         RETRYGATE_BLESS=1 cargo test --test it replay_schema::"
    );
}

#[test]
fn the_replay_report_schema_describes_both_sides_and_the_comparison() {
    let schema = ReplayReport::json_schema();
    let text = serde_json::to_string(&schema).unwrap();
    for key in
        ["comparison", "base_commit", "head_commit", "findings", "attempts_max", "undecided", "seen_in"]
    {
        assert!(text.contains(&format!("\"{key}\"")), "{key} missing from the schema");
    }
}
