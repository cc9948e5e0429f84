//! The conformance matrix: for every language and retry form (a row, one
//! file under `tests/conformance/`), every change the gate is about (a
//! column) holds a positive and a negative fixture, or a written reason
//! why that form cannot express that change. A cell with neither fails,
//! and so does a fixture whose scan disagrees with it. docs/conformance.md
//! is generated from the same files (scripts/regen.sh).

use std::collections::BTreeMap;
use std::path::Path;

use retrygate::changeset::{ChangeSet, FileChange};
use retrygate::finding::{Kind, Severity};
use serde::Deserialize;

/// The columns: id, title, the kind a positive fixture must raise
/// (`None`: the column has a negative fixture only, the change passes).
const COLUMNS: &[(&str, &str, Option<Kind>)] = &[
    ("new-read", "new retry of a read (jitter, small bound): passes", None),
    ("new-write", "new retry of a write", Some(Kind::RetryNonIdempotent)),
    ("new-unbounded", "new unbounded retry", Some(Kind::RetryUnbounded)),
    ("moved-onto-write", "retry moved onto a function that writes", Some(Kind::RetryNonIdempotent)),
    ("widened-on-write", "conditions widened on a write", Some(Kind::RetryNonIdempotent)),
    ("count-raised-elsewhere", "count raised through a value in another file", Some(Kind::RetryCountRaised)),
    ("bound-removed", "bound removed", Some(Kind::RetryUnbounded)),
    ("jitter-removed", "jitter removed", Some(Kind::JitterRemoved)),
    ("timeout-lowered", "per-attempt timeout lowered", Some(Kind::TimeoutLowered)),
    ("retry-after-dropped", "Retry-After handling dropped", Some(Kind::RetryAfterIgnored)),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    language: String,
    form: String,
    /// The file extension of single-file fixtures.
    ext: String,
    cells: BTreeMap<String, Cell>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cell {
    #[serde(default)]
    pos: Option<Fixture>,
    #[serde(default)]
    neg: Option<Fixture>,
    /// Why this form cannot express this change.
    #[serde(default)]
    reason: Option<String>,
    /// A cell whose fixtures hold but whose positive (or negative) the
    /// engine still gets wrong: what is missing. The test checks it still
    /// fails, so the list stays exact; docs/conformance.md shows it open.
    #[serde(default)]
    open: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    #[serde(default)]
    base: Option<String>,
    #[serde(default)]
    head: Option<String>,
    #[serde(default)]
    path: Option<String>,
    /// Several files: each with its path, base and head (either may be
    /// absent: a file added or deleted).
    #[serde(default)]
    files: Vec<FileFixture>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFixture {
    path: String,
    #[serde(default)]
    base: Option<String>,
    #[serde(default)]
    head: Option<String>,
}

fn default_path(ext: &str) -> String {
    match ext {
        "java" => "app/src/main/java/app/Client.java".into(),
        "kt" => "app/src/main/kotlin/app/Client.kt".into(),
        "cs" => "App/Client.cs".into(),
        "go" => "client/client.go".into(),
        "rs" => "src/client.rs".into(),
        e => format!("app/client.{e}"),
    }
}

fn rows() -> Vec<(String, Row)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yml") {
            let text = std::fs::read_to_string(&p).unwrap();
            let row: Row = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            out.push((p.file_name().unwrap().to_string_lossy().into_owned(), row));
        }
    }
    out.sort_by(|a, b| (&a.1.language, &a.1.form).cmp(&(&b.1.language, &b.1.form)));
    out
}

/// The error kinds a fixture's change raises.
fn scan(ext: &str, f: &Fixture) -> Vec<(Kind, String)> {
    let mut files = Vec::new();
    if f.files.is_empty() {
        let path = f.path.clone().unwrap_or_else(|| default_path(ext));
        files.push(FileChange::from_texts(&path, f.base.as_deref(), f.head.as_deref()));
    } else {
        for x in &f.files {
            files.push(FileChange::from_texts(&x.path, x.base.as_deref(), x.head.as_deref()));
        }
    }
    let cs = ChangeSet::from_files(files);
    let v = retrygate::scan::scan_changeset(&cs).unwrap();
    v.findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.kind, format!("{}:{} {} ({})", f.path, f.line, f.message, f.rule)))
        .collect()
}

#[test]
fn every_cell_of_the_conformance_matrix_holds_fixtures_or_a_reason_and_they_hold() {
    let rows = rows();
    assert!(!rows.is_empty(), "no rows under tests/conformance");
    let mut failures = Vec::new();
    for (file, row) in &rows {
        for key in row.cells.keys() {
            if !COLUMNS.iter().any(|(id, _, _)| id == key) {
                failures.push(format!("{file}: unknown column `{key}`"));
            }
        }
        for (id, _, kind) in COLUMNS {
            let Some(cell) = row.cells.get(*id) else {
                failures.push(format!("{file}: column `{id}` is empty (give fixtures or a reason)"));
                continue;
            };
            if let Some(r) = &cell.reason {
                if r.trim().len() < 20 || cell.pos.is_some() || cell.neg.is_some() {
                    failures.push(format!("{file}: `{id}`: a reason stands alone and says why"));
                }
                continue;
            }
            match (kind, &cell.pos, &cell.neg) {
                (_, _, None) => failures.push(format!("{file}: `{id}` has no negative fixture")),
                (Some(_), None, _) => failures.push(format!("{file}: `{id}` has no positive fixture")),
                _ => {}
            }
            let mut wrong = Vec::new();
            if let (Some(k), Some(p)) = (kind, &cell.pos) {
                let got = scan(&row.ext, p);
                if !got.iter().any(|(g, _)| g == k) {
                    wrong.push(format!("{file}: `{id}` positive raised no {} error; got {:?}", k.id(), got));
                }
            }
            if let Some(n) = &cell.neg {
                let got = scan(&row.ext, n);
                if !got.is_empty() {
                    wrong.push(format!("{file}: `{id}` negative raised {:?}", got));
                }
            }
            match (&cell.open, wrong.is_empty()) {
                (None, _) => failures.extend(wrong),
                (Some(_), true) => {
                    failures.push(format!("{file}: `{id}` is marked open but now holds: remove `open`"))
                }
                (Some(_), false) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{} conformance failures:\n{}", failures.len(), failures.join("\n"));
}

/// The matrix as docs/conformance.md shows it.
fn render(rows: &[(String, Row)]) -> String {
    let mut out = String::from("| language | retry form |");
    for (_, title, _) in COLUMNS {
        out.push_str(&format!(" {title} |"));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|".repeat(COLUMNS.len()));
    out.push('\n');
    let mut reasons = Vec::new();
    for (file, row) in rows {
        out.push_str(&format!("| {} | {} |", row.language, row.form));
        for (id, _, _) in COLUMNS {
            let cell = match row.cells.get(*id) {
                Some(Cell { reason: Some(r), .. }) => {
                    reasons.push(format!("{}. {} × {}: {}", reasons.len() + 1, row.language, id, r.trim()));
                    format!("n/a ({})", reasons.len())
                }
                Some(Cell { open: Some(o), .. }) => {
                    reasons.push(format!(
                        "{}. {} × {} (open): {}",
                        reasons.len() + 1,
                        row.language,
                        id,
                        o.trim()
                    ));
                    format!("✗ open ({})", reasons.len())
                }
                Some(Cell { pos: Some(_), neg: Some(_), .. }) => "✓ + −".into(),
                Some(Cell { neg: Some(_), .. }) => "− (passes)".into(),
                _ => "**empty**".into(),
            };
            out.push_str(&format!(" {cell} |"));
        }
        out.push_str(&format!(" <!-- {file} -->\n"));
    }
    if !reasons.is_empty() {
        out.push_str("\nNotes: why a cell holds no fixture, and what an open cell still misses:\n\n");
        for r in reasons {
            out.push_str(&format!("{r}\n"));
        }
    }
    out
}

#[test]
fn docs_conformance_md_is_generated_from_the_rows() {
    let table = render(&rows());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/conformance.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- matrix:start -->\n", "<!-- matrix:end -->");
    let (Some(a), Some(b)) = (doc.find(start), doc.find(end)) else {
        panic!("docs/conformance.md has no matrix markers")
    };
    let current = &doc[a + start.len()..b];
    if current != table {
        if std::env::var_os("RETRYGATE_REGEN").is_some() {
            let new = format!("{}{}{}", &doc[..a + start.len()], table, &doc[b..]);
            std::fs::write(&path, new).unwrap();
        } else {
            panic!("docs/conformance.md is out of date; run scripts/regen.sh");
        }
    }
}
