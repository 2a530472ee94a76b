//! Managed-only command hooks (Claude Code's `allowManagedHooksOnly`) and SHA-256 pinned
//! commands (Extism's hash pinning): a changed pinned program is refused, its last verified
//! content keeps running, and the status says why.

use hookpoint::{LayerKind, LayerSpec, ScopeBuilder, point};
use hookpoint_tests::user_layer;
use hookpoint_tests::{hook, manifest, write};
use serde::{Deserialize, Serialize};
use sha2::Digest;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Doc {
    pub parts: Vec<String>,
}

point! {
    #[serde]
    pub static GUARDED: SyncPoint<Doc> = "managed_guarded";
}

fn appending(part: &str) -> String {
    format!("#!/bin/sh\ncat >/dev/null\necho '{{\"payload\": {{\"parts\": [\"{part}\"]}}}}'\n")
}

fn run(scope: &hookpoint::Scope) -> Vec<String> {
    let mut doc = Doc::default();
    scope.enter(|| GUARDED.call(&mut doc)).unwrap();
    doc.parts
}

#[test]
fn only_managed_layers_run_command_hooks_when_asked() {
    let managed = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    hook(
        &managed.path().join("ops"),
        "managed_guarded",
        "_1_ok.sh",
        &appending("managed"),
    );
    hook(
        user.path(),
        "managed_guarded",
        "_2_user.sh",
        &appending("user"),
    );
    let scope = ScopeBuilder::new("managed-only")
        .layer(user.path(), user_layer())
        .layer(
            managed.path().join("ops"),
            LayerSpec::new(LayerKind::new("ops"), 15),
        )
        .managed(managed.path())
        .managed_hooks_only(true)
        .watch(false)
        .build()
        .unwrap();
    assert_eq!(run(&scope), ["managed"]);
    let info = scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "managed_guarded")
        .unwrap();
    let user_hook = info
        .inactive
        .iter()
        .find(|i| i.name == "user")
        .expect("listed inactive");
    assert!(user_hook.why.contains("managed"), "{}", user_hook.why);
}

#[test]
fn a_pinned_program_runs_and_a_changed_one_is_refused_with_the_last_verified_kept() {
    let dir = tempfile::tempdir().unwrap();
    let program = write(&dir.path().join("hooks/pinned.sh"), appending("v1"), 0o755);
    let hash = hex(&sha2::Sha256::digest(std::fs::read(&program).unwrap()));
    let pin = manifest(
        dir.path(),
        "managed_guarded",
        "_1_pinned.json",
        &format!(r#"{{"command": ["./hooks/pinned.sh"], "sha256": "{hash}"}}"#),
    );
    let scope = ScopeBuilder::new("pinned")
        .layer(dir.path(), user_layer())
        .watch(false)
        .build()
        .unwrap();
    assert_eq!(run(&scope), ["v1"]);
    write(&program, appending("v2, tampered"), 0o755);
    scope.reload();
    assert_eq!(
        run(&scope),
        ["v1"],
        "the last verified content keeps running"
    );
    let problem = scope
        .status()
        .problems
        .into_iter()
        .find(|p| p.path() == pin)
        .expect("the mismatch is reported");
    assert!(problem.message.contains("does not match"), "{problem}");
}

#[test]
fn a_pin_that_never_matched_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("hooks/pinned.sh"), appending("x"), 0o755);
    manifest(
        dir.path(),
        "managed_guarded",
        "_1_pinned.json",
        &format!(
            r#"{{"command": ["./hooks/pinned.sh"], "sha256": "{}"}}"#,
            "0".repeat(64)
        ),
    );
    let scope = ScopeBuilder::new("pinned-never")
        .layer(dir.path(), user_layer())
        .watch(false)
        .build()
        .unwrap();
    assert!(run(&scope).is_empty());
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
