//! Copying the examples' shipped folders to a temporary place before they run, so edits made
//! while they run never touch the repository and every file has the mode hookpoint requires.

use std::io;
use std::path::Path;

/// Copies `src` into `dst` recursively. Files get mode 0755 when any execute bit is set (command
/// hooks), else 0644: never writable by group or others, which hookpoint refuses.
///
/// # Errors
/// A folder or file could not be read, created or copied.
pub fn copy_dir(src: &Path, dst: &Path) -> io::Result<()> {
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
