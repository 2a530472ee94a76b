//! Helpers shared by the behaviour tests: override folders written on disk.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hookpoint::{Scope, ScopeBuilder};

/// Writes `path` with `content` and permissions `mode`, creating folders.
pub fn write(path: &Path, content: impl AsRef<[u8]>, mode: u32) -> PathBuf {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, content).expect("write");
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    path.to_path_buf()
}

/// `<root>/extensions/<point>/<file>`.
pub fn ext_path(root: &Path, point: &str, file: &str) -> PathBuf {
    root.join("extensions").join(point).join(file)
}

/// Writes a manifest (mode 0644) at `<root>/extensions/<point>/<file>`.
pub fn manifest(root: &Path, point: &str, file: &str, json: &str) -> PathBuf {
    write(&ext_path(root, point, file), json, 0o644)
}

/// Writes an executable command hook (mode 0755) at `<root>/extensions/<point>/<file>`.
pub fn hook(root: &Path, point: &str, file: &str, script: &str) -> PathBuf {
    write(&ext_path(root, point, file), script, 0o755)
}

/// A `/bin/sh` hook that replaces the payload with `payload_json`.
pub fn sh_replacing(payload_json: &str) -> String {
    format!("#!/bin/sh\ncat >/dev/null\necho '{{\"payload\": {payload_json}}}'\n")
}

/// A project-only scope, trusted, not watched.
pub fn project_scope(name: &str, project: &Path) -> Scope {
    ScopeBuilder::new(name)
        .project(project)
        .trust_project(true)
        .watch(false)
        .build()
        .expect("scope builds")
}
