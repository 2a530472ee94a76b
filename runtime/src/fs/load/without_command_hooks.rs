//! A build without the `command-hooks` feature refuses what would run a process: an executable
//! file and a manifest's `command` in a layer are problems that name the feature, nothing of
//! them runs, and the rest of the layer still applies.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{LayerKind, LayerSpec, Scope, ScopeBuilder};

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Steps {
    pub done: Vec<String>,
}

hookpoint::point! {
    /// The point the refused command hooks would extend.
    #[serde]
    pub static STEPS: SyncPoint<Steps> = "loader_no_command_hooks";
}

#[crate::extension(point = STEPS, order = 1, name = "compiled")]
fn compiled(steps: &mut Steps) {
    steps.done.push("compiled".into());
}

fn put(root: &Path, rel: &str, content: &str, mode: u32) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, content).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    path
}

fn scope(layer: &Path) -> Scope {
    let b = ScopeBuilder::new("loader-no-command-hooks");
    #[cfg(all(feature = "watch", unix))]
    let b = b.watch(false);
    b.layer(layer, LayerSpec::new(LayerKind::new("app"), 0))
        .build()
        .expect("scope")
}

fn problem_of(scope: &Scope, path: &Path) -> String {
    let status = scope.status();
    status
        .problems
        .iter()
        .find(|p| p.path() == path)
        .inspect(|p| assert_eq!(p.code, crate::diagnostic::Code::CommandHookRefused, "{p:?}"))
        .map(|p| p.message.clone())
        .unwrap_or_else(|| panic!("a problem for {}: {status:?}", path.display()))
}

#[test]
fn command_hooks_in_a_layer_are_refused_with_a_problem_naming_the_feature() {
    let layer = tempfile::tempdir().expect("tempdir");
    let marker = layer.path().join("ran");
    let script = format!(
        "#!/bin/sh\ntouch {}\necho '{{\"payload\": {{\"done\": [\"hook\"]}}}}'\n",
        marker.display()
    );
    let exe = put(
        layer.path(),
        "extensions/loader_no_command_hooks/_5_hook.sh",
        &script,
        0o755,
    );
    let manifest = put(
        layer.path(),
        "extensions/loader_no_command_hooks/by_manifest.json",
        r#"{"command": ["/bin/sh", "-c", "echo '{}'"]}"#,
        0o644,
    );
    // A manifest that changes the compiled-in extension still applies.
    put(
        layer.path(),
        "extensions/loader_no_command_hooks/compiled.json",
        r#"{"order": 7}"#,
        0o644,
    );
    let scope = scope(layer.path());

    let why = problem_of(&scope, &exe);
    assert!(
        why.contains("an executable file runs as a command hook"),
        "{why}"
    );
    assert!(
        why.contains("this build has no command hooks; enable hookpoint's `command-hooks` feature"),
        "{why}"
    );
    let why = problem_of(&scope, &manifest);
    assert!(why.contains("`command` runs a command hook"), "{why}");
    assert!(why.contains("`command-hooks` feature"), "{why}");

    let mut steps = Steps::default();
    scope.enter(|| STEPS.call(&mut steps)).expect("dispatch");
    assert_eq!(
        steps.done,
        ["compiled"],
        "nothing of the refused files runs"
    );
    assert!(!marker.exists(), "no process was started");
    let point = scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "loader_no_command_hooks")
        .expect("point listed");
    let names: Vec<(&str, i32)> = point
        .extensions
        .iter()
        .map(|e| (e.name.as_str(), e.order))
        .collect();
    assert_eq!(
        names,
        [("compiled", 7)],
        "only the compiled-in extension, reordered"
    );
}
