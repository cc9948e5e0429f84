//! Renders the rule table of `docs/rules.md` from the loaded rules, so the
//! documentation is generated from the rules themselves and checked by a test.

use super::spec::Rule;

/// Marks the start of the generated table in `docs/rules.md`.
pub const BEGIN: &str = "<!-- BEGIN GENERATED RULE TABLE (retrygate rules list --format markdown) -->";
/// Marks the end of the generated table.
pub const END: &str = "<!-- END GENERATED RULE TABLE -->";

/// One Markdown section per pack (the rule file), one table row per rule.
pub fn markdown_table(rules: &[Rule]) -> String {
    let mut out = String::new();
    let mut current = "";
    for r in rules {
        if r.source != current {
            current = &r.source;
            let name =
                std::path::Path::new(current).file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
            out.push_str(&format!(
                "\n### `{name}`\n\n| rule | kind | severity | languages | when | What | Why | Example | Use instead |\n|---|---|---|---|---|---|---|---|---|\n"
            ));
        }
        let langs: Vec<&str> = r.languages.iter().map(|l| l.name()).collect();
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
            r.id,
            r.kind.id(),
            r.severity,
            langs.join(", "),
            r.when.as_str(),
            cell(&r.docs.what),
            cell(&r.docs.why),
            code_cell(&r.docs.example),
            code_cell(&r.docs.use_instead),
        ));
    }
    out
}

/// The generated table of docs/rules.md: every pack's rules, then the
/// settings floor's and the syntax-tree analyzer's checks (which no pack
/// file holds).
pub fn rules_and_floor_table(rules: &[Rule]) -> String {
    let mut out = markdown_table(rules);
    out.push_str(&checks_table(
        "The settings floor (`src/analyze/knobs`)",
        crate::analyze::knobs::CHECKS,
        "error or warning (the What says when)",
        "all the gate reads",
    ));
    out.push_str(&checks_table(
        "The syntax-tree analyzer (`src/analyze/trees`)",
        crate::analyze::trees::CHECKS,
        "error",
        "python, javascript, typescript, go, java",
    ));
    out.push_str(&checks_table(
        "The operation model (`src/analyze/operations`)",
        crate::analyze::operations::CHECKS,
        "error or warning (the What says when)",
        "python, javascript, typescript, go, java, kotlin, csharp, ruby, php",
    ));
    out
}

/// One analyzer's checks (which no pack file holds) as a table under
/// `title`, in the packs' columns.
fn checks_table(
    title: &str,
    checks: &[(&str, crate::finding::Kind, crate::finding::KindDoc)],
    severity: &str,
    languages: &str,
) -> String {
    let mut out = format!(
        "\n### {title}\n\n| rule | kind | severity | languages | when | What | Why | Example | Use instead |\n|---|---|---|---|---|---|---|---|---|\n"
    );
    for (id, kind, d) in checks {
        out.push_str(&format!(
            "| `{id}` | `{}` | {severity} | {languages} | changed | {} | {} | {} | {} |\n",
            kind.id(),
            cell(d.what),
            cell(d.why),
            code_cell(d.example),
            code_cell(d.use_instead),
        ));
    }
    out
}

fn cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

fn code_cell(s: &str) -> String {
    format!("`{}`", cell(s).replace('`', "'"))
}

/// Replaces the generated part of `doc` with `table`; `None` when the markers are missing.
pub fn splice(doc: &str, table: &str) -> Option<String> {
    let start = doc.find(BEGIN)? + BEGIN.len();
    let end = doc.find(END)?;
    if end < start {
        return None;
    }
    Some(format!("{}\n\n{}\n\n{}", &doc[..start], table.trim_matches('\n'), &doc[end..]))
}
