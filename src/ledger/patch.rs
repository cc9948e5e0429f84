//! Which files a Codex `apply_patch` touches.
//!
//! Codex sends file edits as one patch in its own envelope, not as
//! `file_path`/`content`:
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/a.rs
//! *** Move to: src/b.rs
//! @@
//! -old
//! +new
//! *** Add File: docs/new.md
//! +text
//! *** Delete File: old.txt
//! *** End Patch
//! ```
//!
//! Only the header lines matter here; hunk lines always start with ` `, `+`
//! or `-`, so a header inside file content cannot be mistaken for one.

/// What a patch does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatchOp {
    Add(String),
    Update { path: String, move_to: Option<String> },
    Delete(String),
}

/// A path the patch leaves behind, or removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Touched {
    pub(crate) path: String,
    /// The patch removes the file (a delete, or the origin of a move).
    pub(crate) removed: bool,
}

/// Reads the file operations of a patch, in order.
pub(crate) fn parse_patch(patch: &str) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    for raw in patch.lines() {
        let line = raw.trim_end_matches('\r');
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            ops.push(PatchOp::Add(p.trim().to_string()));
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            ops.push(PatchOp::Update { path: p.trim().to_string(), move_to: None });
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            ops.push(PatchOp::Delete(p.trim().to_string()));
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            if let Some(PatchOp::Update { move_to, .. }) = ops.last_mut() {
                *move_to = Some(p.trim().to_string());
            }
        }
    }
    ops.retain(|op| match op {
        PatchOp::Add(p) | PatchOp::Delete(p) => !p.is_empty(),
        PatchOp::Update { path, .. } => !path.is_empty(),
    });
    ops
}

/// Every path a patch touches, each once, in first-touched order; a move
/// touches its origin (removed) and its destination.
pub(crate) fn touched(ops: &[PatchOp]) -> Vec<Touched> {
    let mut out: Vec<Touched> = Vec::new();
    // Indexed: a patch naming 200,000 files must not cost 200,000² compares.
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut put = |path: &str, removed: bool| match index.get(path) {
        Some(&i) => out[i].removed = removed,
        None => {
            index.insert(path.to_string(), out.len());
            out.push(Touched { path: path.to_string(), removed });
        }
    };
    for op in ops {
        match op {
            PatchOp::Add(p) => put(p, false),
            PatchOp::Delete(p) => put(p, true),
            PatchOp::Update { path, move_to: None } => put(path, false),
            PatchOp::Update { path, move_to: Some(to) } => {
                put(path, true);
                put(to, false);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_header() {
        let patch = "*** Begin Patch\r\n*** Update File: src/a.rs\r\n*** Move to: src/b.rs\r\n@@\r\n-x\r\n+*** Add File: not/a/header\r\n*** Add File: docs/new.md\n+hi\n*** Delete File: old.txt\n*** Update File: app/x.py\n@@ def f():\n-a\n+b\n*** End Patch\n";
        let ops = parse_patch(patch);
        assert_eq!(
            ops,
            vec![
                PatchOp::Update { path: "src/a.rs".into(), move_to: Some("src/b.rs".into()) },
                PatchOp::Add("docs/new.md".into()),
                PatchOp::Delete("old.txt".into()),
                PatchOp::Update { path: "app/x.py".into(), move_to: None },
            ]
        );
        let t = touched(&ops);
        let paths: Vec<(&str, bool)> = t.iter().map(|t| (t.path.as_str(), t.removed)).collect();
        assert_eq!(
            paths,
            [
                ("src/a.rs", true),
                ("src/b.rs", false),
                ("docs/new.md", false),
                ("old.txt", true),
                ("app/x.py", false)
            ]
        );
    }

    #[test]
    fn a_patch_without_headers_touches_nothing() {
        assert!(parse_patch("just text\n+*** Delete File: x\n").is_empty());
        assert!(parse_patch("*** Add File: \n").is_empty());
    }
}
