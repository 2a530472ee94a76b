//! The loader never takes a file half-written: every kind of override file rewritten in place
//! while it is read (a write injected between the check before reading and the read) keeps its
//! last good version, with a problem naming the file; and a reload the watcher starts leaves a
//! file modified within the debounce for the next reload.

use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fs::read::{FileReader, seam};
use crate::{LayerKind, LayerSpec, Scope, ScopeBuilder};

/// A builder for a scope with no watcher (the tests reload by hand).
fn unwatched(name: &str) -> ScopeBuilder {
    let b = ScopeBuilder::new(name);
    #[cfg(all(feature = "watch", unix))]
    let b = b.watch(false);
    b
}

fn app_layer() -> LayerSpec {
    LayerSpec::new(LayerKind::new("app"), 0)
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

hookpoint::point! {
    /// The point the loader tests' override files extend.
    #[serde]
    pub static TORN: SyncPoint<Doc> = "loader_torn_doc";
}

#[crate::extension(point = TORN, order = 1, name = "base")]
fn base(doc: &mut Doc) {
    doc.parts.push("base".into());
}

/// Writes `<root>/<rel>` with `mode`, by rename (as an editor saves).
fn put(root: &Path, rel: &str, content: &str, mode: u32) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, content).expect("write");
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode)).expect("chmod");
    std::fs::rename(&tmp, &path).expect("rename");
    path
}

/// While the guard lives, a read of `target` on this thread is interrupted by half of `next`
/// written in place over it (the first half: a writer that is not done), past a tick of the
/// coarsest file clock.
fn half_written_while_read(target: &Path, next: &str) -> seam::Guard {
    let target = std::fs::canonicalize(target).expect("target exists");
    let half = next.as_bytes()[..next.len() / 2].to_vec();
    seam::set(move |p| {
        if std::fs::canonicalize(p).is_ok_and(|p| p == target) {
            std::thread::sleep(Duration::from_millis(15));
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .expect("open");
            f.seek(SeekFrom::Start(0)).expect("seek");
            f.write_all(&half).expect("write");
        }
    })
}

fn scope(layer: &Path) -> Scope {
    unwatched("loader-torn")
        .layer(layer, app_layer())
        .build()
        .expect("scope")
}

#[cfg(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix)))]
fn run(scope: &Scope) -> Vec<String> {
    let mut doc = Doc::default();
    scope.enter(|| TORN.call(&mut doc)).expect("dispatch");
    doc.parts
}

/// The problem the scope's status has for `path`.
fn problem_of(scope: &Scope, path: &Path) -> String {
    let status = scope.status();
    status
        .problems
        .iter()
        .find(|p| p.path() == path)
        .map(|p| p.message.clone())
        .unwrap_or_else(|| panic!("a problem for {}: {status:?}", path.display()))
}

fn order_of_base(scope: &Scope) -> i32 {
    scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "loader_torn_doc")
        .and_then(|p| p.extensions.into_iter().find(|e| e.name == "base"))
        .expect("base listed")
        .order
}

#[test]
fn a_manifest_rewritten_while_it_is_read_keeps_its_last_good_version() {
    let layer = tempfile::tempdir().expect("tempdir");
    let v1 = r#"{"order": 11, "on_error": "log"}"#;
    let v2 = r#"{"order": 22, "on_error": "log"}"#;
    let path = put(
        layer.path(),
        "extensions/loader_torn_doc/base.json",
        v1,
        0o644,
    );
    let scope = scope(layer.path());
    assert_eq!(order_of_base(&scope), 11);
    {
        let _seam = half_written_while_read(&path, v2);
        scope.reload();
    }
    assert_eq!(
        order_of_base(&scope),
        11,
        "the half-written file never applies"
    );
    let why = problem_of(&scope, &path);
    assert!(why.contains("changed while it was read"), "{why}");
    assert!(why.contains("last good version stays active"), "{why}");
    put(
        layer.path(),
        "extensions/loader_torn_doc/base.json",
        v2,
        0o644,
    );
    scope.reload();
    assert_eq!(order_of_base(&scope), 22);
    assert!(scope.status().problems.is_empty(), "{:?}", scope.status());
}

#[cfg(all(feature = "command-hooks", unix))]
#[test]
fn a_command_hook_rewritten_while_it_is_read_runs_its_last_good_content() {
    let layer = tempfile::tempdir().expect("tempdir");
    // The answer is in the first half: half of "two" over "one" answers "two".
    let script = |v: &str| {
        let padding = "#".repeat(80);
        format!("#!/bin/sh\necho '{{\"payload\": {{\"parts\": [\"{v}\"]}}}}'\n{padding}\n")
    };
    let path = put(
        layer.path(),
        "extensions/loader_torn_doc/_5_hook.sh",
        &script("one"),
        0o755,
    );
    let scope = scope(layer.path());
    assert_eq!(run(&scope), ["one"]);
    {
        let _seam = half_written_while_read(&path, &script("two"));
        scope.reload();
    }
    // The file on disk is half of "two" over "one": it never runs.
    assert_eq!(run(&scope), ["one"]);
    assert!(problem_of(&scope, &path).contains("changed while it was read"));
    put(
        layer.path(),
        "extensions/loader_torn_doc/_5_hook.sh",
        &script("two"),
        0o755,
    );
    scope.reload();
    assert_eq!(run(&scope), ["two"]);
}

#[cfg(all(feature = "webui", unix))]
#[test]
fn a_web_ui_asset_rewritten_while_it_is_read_keeps_its_last_good_version() {
    let layer = tempfile::tempdir().expect("tempdir");
    let v1 = "<p>one one one one</p>";
    let path = put(
        layer.path(),
        "extensions/webui/banner/_10_hello.html",
        v1,
        0o644,
    );
    let scope = scope(layer.path());
    let served = |scope: &Scope| {
        let manifest = scope.webui_manifest();
        let assets = manifest.point("banner");
        assets
            .iter()
            .map(|a| a.bytes().to_vec())
            .collect::<Vec<_>>()
    };
    assert_eq!(served(&scope), [v1.as_bytes()]);
    {
        let _seam = half_written_while_read(&path, "<p>two two two two</p>");
        scope.reload();
    }
    assert_eq!(
        served(&scope),
        [v1.as_bytes()],
        "the last good version is served"
    );
    assert!(problem_of(&scope, &path).contains("changed while it was read"));
}

#[cfg(all(feature = "folder-plugins", unix))]
#[test]
fn a_plugin_config_rewritten_while_it_is_read_keeps_its_last_good_content() {
    let plugins = tempfile::tempdir().expect("tempdir");
    put(
        plugins.path(),
        "cfgplug/plugin.json",
        r#"{"name": "cfgplug", "description": "test", "version": "1.0", "config": {"level": 1}}"#,
        0o644,
    );
    let layer = tempfile::tempdir().expect("tempdir");
    let path = put(
        layer.path(),
        "plugins/cfgplug/config.json",
        r#"{"level": 11, "note": "a config of some length"}"#,
        0o644,
    );
    let scope = unwatched("loader-torn-config")
        .layer(layer.path(), app_layer())
        .plugin_root(plugins.path())
        .build()
        .expect("scope");
    let level = |scope: &Scope| {
        scope
            .plugin_config::<serde_json::Value>("cfgplug")
            .expect("config")["level"]
            .clone()
    };
    assert_eq!(level(&scope), 11);
    {
        let next = r#"{"level": 22, "note": "a config of some length"}"#;
        let _seam = half_written_while_read(&path, next);
        scope.reload();
    }
    assert_eq!(level(&scope), 11, "the half-written file never applies");
    assert!(problem_of(&scope, &path).contains("changed while it was read"));
}

#[cfg(all(feature = "wasm", unix))]
#[test]
fn a_wasm_module_rewritten_while_it_is_read_keeps_its_last_good_version() {
    let layer = tempfile::tempdir().expect("tempdir");
    let module = |v: &str| {
        let answer = format!(r#"{{"payload":{{"parts":["{v}"]}}}}"#);
        format!(
            r#"(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{}")
  (func (export "hookpoint_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "hookpoint_call") (param i32 i32) (result i64) (i64.const {})))"#,
            answer.replace('"', "\\\""),
            answer.len()
        )
    };
    // The answer is near the start: the first half of "two" over "one" still assembles.
    let path = put(
        layer.path(),
        "extensions/loader_torn_doc/_5_w.wat",
        &module("one"),
        0o644,
    );
    let scope = unwatched("loader-torn-wasm")
        .layer(layer.path(), app_layer())
        .wasm_cache(None)
        .build()
        .expect("scope");
    assert_eq!(run(&scope), ["one"]);
    // A new version saved by rename, rewritten in place while the reload reads it: an unchanged
    // module file is not read again, a changed one is.
    put(
        layer.path(),
        "extensions/loader_torn_doc/_5_w.wat",
        &module("two"),
        0o644,
    );
    {
        let _seam = half_written_while_read(&path, &module("six"));
        scope.reload();
    }
    assert_eq!(run(&scope), ["one"]);
    assert!(problem_of(&scope, &path).contains("changed while it was read"));
    put(
        layer.path(),
        "extensions/loader_torn_doc/_5_w.wat",
        &module("six"),
        0o644,
    );
    scope.reload();
    assert_eq!(run(&scope), ["six"]);
}

#[test]
fn a_reload_the_watcher_starts_leaves_a_file_modified_within_the_debounce_for_the_next() {
    let layer = tempfile::tempdir().expect("tempdir");
    let rel = "extensions/loader_torn_doc/base.json";
    let path = put(layer.path(), rel, r#"{"order": 11}"#, 0o644);
    let scope = scope(layer.path());
    put(layer.path(), rel, r#"{"order": 22}"#, 0o644);
    // As the watcher would with a debounce longer than the time since that write.
    scope.0.fs.mark_dirty(None);
    scope.rebuild_reading(FileReader::settled(Duration::from_secs(3600)));
    assert_eq!(order_of_base(&scope), 11);
    let why = problem_of(&scope, &path);
    assert!(why.contains("within the 3600000 ms debounce"), "{why}");
    scope.reload();
    assert_eq!(order_of_base(&scope), 22);
}

#[cfg(all(feature = "folder-plugins", unix))]
#[test]
fn a_reload_the_watcher_starts_leaves_a_plugin_json_modified_within_the_debounce_for_the_next() {
    let plugins = tempfile::tempdir().expect("tempdir");
    let manifest = |version: &str| {
        format!(r#"{{"name": "settle", "description": "test", "version": "{version}"}}"#)
    };
    let path = put(
        plugins.path(),
        "settle/plugin.json",
        &manifest("1.0"),
        0o644,
    );
    let scope = unwatched("loader-settled-plugin-json")
        .plugin_root(plugins.path())
        .build()
        .expect("scope");
    let version = |scope: &Scope| {
        scope
            .plugins()
            .into_iter()
            .find(|p| p.name == "settle")
            .and_then(|p| match p.source {
                crate::PluginSource::Folder { version, .. } => version,
                crate::PluginSource::Crate { .. } => None,
            })
    };
    assert_eq!(version(&scope).as_deref(), Some("1.0"));
    put(
        plugins.path(),
        "settle/plugin.json",
        &manifest("2.0"),
        0o644,
    );
    // As the watcher would with a debounce longer than the time since that write.
    scope.0.fs.mark_dirty(None);
    scope.rebuild_reading(FileReader::settled(Duration::from_secs(3600)));
    assert_eq!(version(&scope).as_deref(), Some("1.0"), "not read yet");
    let why = problem_of(&scope, &path);
    assert!(why.contains("within the 3600000 ms debounce"), "{why}");
    scope.reload();
    assert_eq!(version(&scope).as_deref(), Some("2.0"));
}

#[cfg(all(feature = "command-hooks", unix))]
#[test]
fn a_command_hook_runs_its_content_as_loaded_whatever_its_file_holds_now() {
    let layer = tempfile::tempdir().expect("tempdir");
    let script = |v: &str| {
        format!(
            "#!/bin/sh\necho \"{{\\\"payload\\\": {{\\\"parts\\\": [\\\"{v}\\\", \\\"$HOOKPOINT_HOOK_FILE\\\"]}}}}\"\n"
        )
    };
    let path = put(
        layer.path(),
        "extensions/loader_torn_doc/_5_hook.sh",
        &script("one"),
        0o755,
    );
    let scope = scope(layer.path());
    let shown = path.display().to_string();
    assert_eq!(run(&scope), ["one", shown.as_str()]);
    // Rewritten in place and not reloaded yet (a writer in the middle of its writes): what runs
    // is still what was loaded, and the file being written is not busy for its writer.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .expect("open");
    file.write_all(b"#!/bin/sh\nexit 3\n# half of the next ver")
        .expect("write");
    assert_eq!(run(&scope), ["one", shown.as_str()]);
    drop(file);
    assert_eq!(run(&scope), ["one", shown.as_str()]);
    put(
        layer.path(),
        "extensions/loader_torn_doc/_5_hook.sh",
        &script("two"),
        0o755,
    );
    scope.reload();
    assert_eq!(run(&scope), ["two", shown.as_str()]);
}
