//! The binary alone owns the command line and the exit codes: no source file
//! of the library (every file `src/lib.rs` reaches through `mod`
//! declarations) may name the argument parser (`clap`) or the binary's
//! exit-code type (`Exit` in `src/cli/mod.rs`). A library function returns a
//! verdict, an outcome or an error; the binary chooses 0, 1 or 2.
//!
//! The exit-code type is matched by the ways code uses it (`Exit::Pass`,
//! `cli::Exit`, `Result<Exit>`, ...), not by the bare word: the Rust
//! analyzer has a private visitor of its own called `Exit` (a loop exit),
//! which has nothing to do with exit codes.

use std::path::{Path, PathBuf};

/// How library code would use the binary's exit-code type, or exit itself.
const EXIT_CODE_USES: &[&str] = &[
    "Exit::Pass",
    "Exit::Fail",
    "Exit::Error",
    "cli::Exit",
    "Result<Exit>",
    "-> Exit",
    "ExitCode",
    "process::exit",
];

/// What `text` says that a library file must not: one line per offence,
/// `line: what`.
fn offences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if has_word(line, "clap") {
            out.push(format!("{}: names clap", i + 1));
        }
        for pattern in EXIT_CODE_USES {
            if has_word(line, pattern) {
                out.push(format!("{}: uses the exit-code type ({pattern})", i + 1));
            }
        }
    }
    out
}

/// Whether `word` occurs in `line` with no identifier character before or
/// after it (where `word` itself starts or ends with one).
fn has_word(line: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let (starts_ident, ends_ident) = (word.starts_with(ident), word.ends_with(ident));
    line.match_indices(word).any(|(at, _)| {
        let glued_before = starts_ident && line[..at].chars().next_back().is_some_and(ident);
        let glued_after = ends_ident && line[at + word.len()..].chars().next().is_some_and(ident);
        !glued_before && !glued_after
    })
}

/// The modules a file declares: `mod x;`, `pub mod x;`, `pub(crate) mod x;`
/// (inline `mod x { ... }` blocks live in the file itself).
fn declared_modules(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
                .or_else(|| l.strip_prefix("pub(crate) mod "))?;
            let name = rest.strip_suffix(';')?.trim();
            name.chars().all(|c| c.is_alphanumeric() || c == '_').then(|| name.to_string())
        })
        .collect()
}

/// Every source file of the crate rooted at `root`, following `mod` declarations.
fn module_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(file) = todo.pop() {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let parent = file.parent().expect("a source file has a folder");
        // `lib.rs`, `main.rs` and `mod.rs` declare their children beside them;
        // `a.rs` declares them in `a/`.
        let dir =
            if matches!(stem, "lib" | "main" | "mod") { parent.to_path_buf() } else { parent.join(stem) };
        for name in declared_modules(&text) {
            let flat = dir.join(format!("{name}.rs"));
            let nested = dir.join(&name).join("mod.rs");
            let child = if flat.is_file() { flat } else { nested };
            assert!(child.is_file(), "{} declares `mod {name}`, but neither file exists", file.display());
            todo.push(child);
        }
        files.push(file);
    }
    files.sort();
    files
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_library_file_names_clap_or_the_exit_code_type() {
    let library = module_files(&src().join("lib.rs"));
    // The walk reaches deep library modules, and not the binary's.
    assert!(library.contains(&src().join("github/action.rs")), "{library:?}");
    assert!(library.contains(&src().join("analyze/rules/mod.rs")), "{library:?}");
    assert!(library.iter().all(|f| !f.starts_with(src().join("cli"))), "{library:?}");
    let mut found = Vec::new();
    for file in &library {
        let text = std::fs::read_to_string(file).unwrap();
        for o in offences(&text) {
            found.push(format!("{}:{o}", file.strip_prefix(src()).unwrap_or(file).display()));
        }
    }
    assert!(
        found.is_empty(),
        "the library must not parse arguments or pick exit codes (move that code to src/cli/, the binary's):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_binary_owns_the_command_line() {
    let binary = module_files(&src().join("main.rs"));
    for owned in ["cli/mod.rs", "cli/demo.rs", "cli/replay_client.rs", "cli/github.rs"] {
        assert!(binary.contains(&src().join(owned)), "{owned} is not a module of the binary: {binary:?}");
    }
    let cli = std::fs::read_to_string(src().join("cli/mod.rs")).unwrap();
    assert!(!offences(&cli).is_empty(), "the scan no longer recognises the binary's own clap and Exit");
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    assert!(!declared_modules(&lib).contains(&"cli".to_string()), "src/lib.rs declares the binary's `cli`");
}

#[test]
fn the_scan_flags_clap_and_exit_codes_and_nothing_else() {
    assert_eq!(offences("use clap::Args;"), ["1: names clap"]);
    assert_eq!(offences("fn a() {}\n#[derive(clap::ValueEnum)]"), ["2: names clap"]);
    assert_eq!(offences("    Ok(Exit::Fail)"), ["1: uses the exit-code type (Exit::Fail)"]);
    assert_eq!(
        offences("pub fn run() -> anyhow::Result<Exit> {"),
        ["1: uses the exit-code type (Result<Exit>)"]
    );
    assert_eq!(offences("use crate::cli::Exit;"), ["1: uses the exit-code type (cli::Exit)"]);
    assert_eq!(offences("std::process::exit(2)"), ["1: uses the exit-code type (process::exit)"]);
    // Neighbours that are not the parser or the exit-code type.
    assert!(offences("let clapped = 1; // clapper").is_empty());
    assert!(offences("struct Exit(bool);\nlet mut v = Exit(false);").is_empty());
    assert!(offences("status: std::process::ExitStatus,").is_empty());
    assert!(offences("fn wait() -> ExitStatus {").is_empty());
    assert!(offences("fn leave() -> ExitCodes {").is_empty());
}

#[test]
fn module_declarations_are_read_as_the_compiler_reads_them() {
    let text = "pub mod a;\nmod b;\npub(crate) mod c;\nmod inline {\n}\nlet s = \"mod d;\";\n// mod e;\n";
    assert_eq!(declared_modules(text), ["a", "b", "c"]);
}

/// The binary's files: `src/main.rs` and every file under `src/cli/`.
fn binary_files() -> Vec<PathBuf> {
    let mut files = vec![src().join("main.rs")];
    let mut dirs = vec![src().join("cli")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files
}

#[test]
fn the_binary_uses_the_facade_never_the_testing_module() {
    // `retrygate::testing` re-exports internals for the integration tests
    // and promises nothing; a command built on it would hang on internals.
    let files = binary_files();
    assert!(files.len() > 5, "the binary's files were not found: {files:?}");
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if has_word(line, "retrygate::testing") {
                found.push(format!("{}:{}", f.display(), i + 1));
            }
        }
    }
    assert!(found.is_empty(), "the binary uses retrygate::testing at {found:?}");
    assert!(has_word("use retrygate::testing::markdown;", "retrygate::testing"));
}
