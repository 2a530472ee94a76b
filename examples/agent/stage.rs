//! The demo's folders, staged: the shipped project layer (`examples/agent/project`) and plugin
//! root (`examples/agent/plugins`) are copied to `<temp dir>/hookpoint-agent-demo-<pid>/`, so
//! `--watch` edits never touch the repository and file modes are exactly what hookpoint requires
//! (no group/other write). Dropping the [`Staged`] deletes the copy.

use std::path::{Path, PathBuf};

pub use hookpoint_examples::staging::copy_dir;

/// The staged copy: `root/project` (the project layer) and `root/plugins` (the plugin root).
pub struct Staged {
    root: PathBuf,
    /// The project layer folder.
    pub project: PathBuf,
    /// The folder-plugin root (one subfolder per plugin).
    pub plugins: PathBuf,
}

impl Staged {
    /// Copies both shipped folders to a fresh `<temp dir>/hookpoint-agent-demo-<pid>/`.
    pub fn new() -> std::io::Result<Staged> {
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("agent");
        let root =
            std::env::temp_dir().join(format!("hookpoint-agent-demo-{}", std::process::id()));
        if root.exists() {
            std::fs::remove_dir_all(&root)?;
        }
        let staged = Staged {
            project: root.join("project"),
            plugins: root.join("plugins"),
            root,
        };
        copy_dir(&shipped.join("project"), &staged.project)?;
        copy_dir(&shipped.join("plugins"), &staged.plugins)?;
        Ok(staged)
    }

    /// Where the shipped copy of the plugin `name` is (the repository's, never edited).
    pub fn shipped_plugin(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("agent")
            .join("plugins")
            .join(name)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
