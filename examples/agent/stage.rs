//! The demo's folders, staged: the shipped project layer (`examples/agent/project`) and plugin
//! root (`examples/agent/plugins`) are copied to `<temp dir>/hookpoint-agent-demo-<pid>/`, so
//! `--watch` edits never touch the repository and file modes are exactly what hookpoint requires
//! (no group/other write). Dropping the [`Staged`] deletes the copy.

use std::path::{Path, PathBuf};

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

/// Copies `src` into `dst` recursively; files get mode 0755 if any execute bit is set, else 0644.
pub fn copy_dir(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let to = dst.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to)?;
        } else {
            std::fs::copy(entry.path(), &to)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = entry.metadata()?.permissions().mode();
                let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode))?;
            }
        }
    }
    Ok(())
}
