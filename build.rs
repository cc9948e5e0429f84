//! Lists the retry-library data files (`rules/libraries/*.yml`) for the
//! binary to embed, so that adding a library is adding a file: no list in
//! the code to keep in step.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new("rules/libraries");
    println!("cargo:rerun-if-changed=rules/libraries");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "yml"))
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("&[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={f}");
        let _ =
            writeln!(out, "    ({f:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/\", {f:?}))),");
    }
    out.push(']');
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("libraries.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("build.rs: cannot write {}: {e}", dest.display());
    }
}
