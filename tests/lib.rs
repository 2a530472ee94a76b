//! Helpers shared by the behaviour tests: override folders written on disk.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hookpoint::{LayerKind, LayerSpec, Scope, ScopeBuilder};

/// The layers the behaviour tests use, highest first: a project's folder (whose code runs only
/// when `trusted`), a user's folder, and a plugin's folder (present while the plugin is enabled).
pub fn project_layer(trusted: bool) -> LayerSpec {
    LayerSpec::new(LayerKind::new("project"), 20).trusted(trusted)
}

/// A user's folder (below the project's).
pub fn user_layer() -> LayerSpec {
    LayerSpec::new(LayerKind::new("user"), 10)
}

/// The folder of the linked plugin `name` (below the user's).
pub fn plugin_layer(name: &str) -> LayerSpec {
    LayerSpec::new(LayerKind::PLUGIN, 0).plugin(name)
}

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
        .layer(project, project_layer(true))
        .watch(false)
        .build()
        .expect("scope builds")
}

/// A `/bin/sh` hook that appends the string `part` to the `parts` list of a payload shaped
/// `{"parts": [..strings..]}`.
pub fn sh_appending(part: &str) -> String {
    r#"#!/bin/sh
parts=$(sed -n 's/.*"payload":{"parts":\[\(.*\)\]}}$/\1/p')
[ -n "$parts" ] && parts="$parts,"
printf '{"payload":{"parts":[%s"%s"]}}' "$parts" 'PART'
"#
    .replace("PART", part)
}

/// Writes version `tag` of the folder plugin `name` into `parent/name/` and returns that folder:
/// a `plugin.json` whose `install` and `uninstall` append `install <tag>` and `uninstall <tag>`
/// to `log`, and per name in `hooks` a command hook on `point` (orders 10, 20, ..) that appends
/// `<hook>:<tag>` to the payload's `parts` ([`sh_appending`]).
pub fn versioned_plugin(
    parent: &Path,
    name: &str,
    tag: &str,
    log: &Path,
    point: &str,
    hooks: &[&str],
) -> PathBuf {
    let dir = parent.join(name);
    write(
        &dir.join("plugin.json"),
        format!(
            r#"{{"name": "{name}", "version": "{tag}", "install": ["./install.sh"], "uninstall": ["./uninstall.sh"]}}"#
        ),
        0o644,
    );
    for event in ["install", "uninstall"] {
        write(
            &dir.join(format!("{event}.sh")),
            format!(
                "#!/bin/sh\ncat >/dev/null\necho '{event} {tag}' >> '{}'\n",
                log.display()
            ),
            0o755,
        );
    }
    for (i, hook) in hooks.iter().enumerate() {
        let file = format!("_{}_{hook}.sh", (i + 1) * 10);
        write(
            &ext_path(&dir, point, &file),
            sh_appending(&format!("{hook}:{tag}")),
            0o755,
        );
    }
    dir
}

/// The lines of a log file (none when it does not exist).
pub fn log_lines(log: &Path) -> Vec<String> {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Polls `ok` every 10 ms until it holds; panics naming `what` after `limit`.
pub fn wait_until(what: &str, limit: std::time::Duration, mut ok: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
