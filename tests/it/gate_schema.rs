//! The checked-in JSON Schema of `.github/retrygate.yml` is the one the
//! config types generate. Regenerate it with
//! `RETRYGATE_BLESS=1 cargo test --test it gate_schema::`.

use retrygate::config::Config;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/retrygate.schema.json");

fn generated() -> String {
    format!("{}\n", serde_json::to_string_pretty(&Config::json_schema()).unwrap())
}

#[test]
fn the_checked_in_schema_is_the_generated_one() {
    let want = generated();
    if std::env::var_os("RETRYGATE_BLESS").is_some() {
        std::fs::write(PATH, &want).unwrap();
    }
    let have = std::fs::read_to_string(PATH).unwrap_or_default();
    assert!(
        have == want,
        "schemas/retrygate.schema.json is out of date with src/config.rs; run scripts/regen.sh"
    );
}

#[test]
fn the_schema_describes_every_key_and_forbids_unknown_ones() {
    let schema = Config::json_schema();
    let props = schema["properties"].as_object().unwrap();
    let keys: Vec<&str> = props.keys().map(String::as_str).collect();
    for key in
        ["mode", "agents", "require", "ledger", "replay", "protected_paths", "limits", "rules", "sign_off"]
    {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
    assert_eq!(schema["additionalProperties"], serde_json::json!(false), "unknown keys are errors");
    let text = serde_json::to_string(&schema).unwrap();
    assert!(text.contains("advisory") && text.contains("maintain"), "enums are listed");
    assert!(text.contains("Report, never block."), "doc comments become descriptions");
}
