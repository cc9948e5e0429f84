//! The base side of a differential replay: a detached `git worktree` of the
//! base revision in a temporary directory, removed when the replay is done
//! (also on an error or a panic, by `Drop`), so the main checkout is never
//! touched and the base's own files (client code, build files) are the ones
//! that run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A checkout of the base revision that removes itself.
#[derive(Debug)]
pub struct BaseWorktree {
    repo: PathBuf,
    path: PathBuf,
    // Keeps the directory alive; removed after git has forgotten the worktree.
    _dir: tempfile::TempDir,
}

impl BaseWorktree {
    /// `git worktree add --detach` of `sha` (a full commit id already
    /// resolved in `repo`). The error carries git's own words.
    pub fn add(repo: &Path, sha: &str) -> anyhow::Result<BaseWorktree> {
        let dir = tempfile::Builder::new().prefix("retrygate-base-").tempdir().map_err(|e| {
            anyhow::anyhow!("cannot create a temporary directory for the base's worktree: {e}")
        })?;
        let path = dir.path().join("base");
        let out = Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["worktree", "add", "--detach", "--quiet"])
            .arg(&path)
            .arg(sha)
            .output()
            .map_err(|e| anyhow::anyhow!("cannot run git to check out the base: {e}"))?;
        if !out.status.success() {
            anyhow::bail!(
                "cannot check out the base {sha} in a worktree: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(BaseWorktree { repo: repo.to_path_buf(), path, _dir: dir })
    }

    /// The worktree's root.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for BaseWorktree {
    fn drop(&mut self) {
        // Best effort: a worktree git still lists after its directory is
        // gone is pruned by the next `git worktree prune`, and says so.
        let _ = Command::new("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["worktree", "remove", "--force", "--force"])
            .arg(&self.path)
            .output();
        let _ = Command::new("git").arg("-C").arg(&self.repo).args(["worktree", "prune"]).output();
    }
}
