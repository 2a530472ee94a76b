//! Defects found by programs written from the README alone: by-name dispatch and command hooks
//! of declared `#[serde]` points, listing and dispatch agreeing on hooks nobody can run, and the
//! position of a manifest's bad token. (The `#[extensible]` ones: `extensible_lints.rs`,
//! `async.rs`.)

use hookpoint::{Scope, extension, point};
use hookpoint_tests::{hook, manifest, project_scope, sh_replacing};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub text: String,
}

point! {
    #[serde]
    pub static DECLARED: SyncPoint<Note> = "defects_declared_serde";
}

#[extension(point = DECLARED, order = 1)]
fn compiled(note: &mut Note) {
    note.text.push_str("compiled;");
}

#[extension(point = "defects_undeclared", order = 1)]
fn undeclared_compiled(note: &mut Note) {
    note.text.push_str("compiled;");
}

#[test]
fn by_name_dispatch_of_a_serde_point_runs_its_command_hooks() {
    let dir = tempfile::tempdir().unwrap();
    hook(
        dir.path(),
        "defects_declared_serde",
        "_0_hook.sh",
        &sh_replacing(r#"{"text": "hooked;"}"#),
    );
    let scope = project_scope("defects-by-name", dir.path());
    let by_name = scope.enter(|| {
        let mut note = Note::default();
        hookpoint::call_sync("defects_declared_serde", &mut note).map(|_| note.text)
    });
    assert_eq!(by_name.unwrap(), "hooked;compiled;");
    let by_site = scope.enter(|| {
        let mut note = Note::default();
        hookpoint::call!("defects_declared_serde", &mut note).map(|_| note.text)
    });
    assert_eq!(by_site.unwrap(), "hooked;compiled;");
    let typed = {
        let mut note = Note::default();
        scope.enter(|| DECLARED.call(&mut note)).map(|_| note.text)
    };
    assert_eq!(typed.unwrap(), "hooked;compiled;");
}

#[test]
fn a_hook_on_an_undeclared_point_is_listed_inactive_and_dispatch_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let path = hook(
        dir.path(),
        "defects_undeclared",
        "_5_hook.sh",
        &sh_replacing(r#"{"text": "x"}"#),
    );
    let scope = project_scope("defects-undeclared", dir.path());
    let info = scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "defects_undeclared")
        .unwrap();
    let names: Vec<&str> = info.extensions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["undeclared_compiled"]);
    let hook_entry = info
        .inactive
        .iter()
        .find(|i| i.name == "hook")
        .expect("hook listed inactive");
    assert!(
        hook_entry.why.contains("not declared with `point!`"),
        "{}",
        hook_entry.why
    );
    assert!(
        scope.status().problems.iter().any(|p| p.path() == path),
        "{:?}",
        scope.status()
    );
    let mut note = Note::default();
    scope
        .enter(|| hookpoint::call_sync("defects_undeclared", &mut note))
        .expect("dispatch runs what the listing shows");
    assert_eq!(note.text, "compiled;");
}

#[test]
fn a_manifest_error_is_reported_at_the_offending_token() {
    let dir = tempfile::tempdir().unwrap();
    let path = manifest(
        dir.path(),
        "defects_declared_serde",
        "compiled.json",
        "{\n\"enabled\": fals\n}",
    );
    let scope: Scope = project_scope("defects-position", dir.path());
    let problem = scope
        .status()
        .problems
        .into_iter()
        .find(|p| p.path() == path)
        .expect("the bad manifest is reported");
    assert_eq!(
        (problem.line, problem.column),
        (Some(2), Some(12)),
        "{problem}"
    );
}

#[test]
fn a_mismatch_on_a_point_with_only_command_hooks_names_the_declared_type_and_a_hook() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "defects_declared_serde",
        "compiled.json",
        r#"{"enabled": false}"#,
    );
    hook(
        dir.path(),
        "defects_declared_serde",
        "_0_rep.sh",
        &sh_replacing(r#"{"text": "hooked;"}"#),
    );
    let scope = project_scope("defects-mismatch-hooks", dir.path());
    let err = scope
        .enter(|| hookpoint::call_sync("defects_declared_serde", &mut 5u64))
        .unwrap_err();
    assert_eq!(err.kind(), hookpoint::ErrorKind::PayloadMismatch);
    let text = err.to_string();
    assert!(text.contains("engine_defects::Note"), "{text}");
    assert!(text.contains("u64"), "{text}");
    assert_eq!(err.extension(), Some("rep"), "{text}");
}

/// Polls `fut` to completion on this thread without any runtime: a thread-parking waker, as a
/// minimal executor (or another async runtime) would.
fn block_on_without_tokio<F: std::future::Future>(fut: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

#[test]
fn an_async_dispatch_outside_tokio_runs_command_hooks() {
    let dir = tempfile::tempdir().unwrap();
    hook(
        dir.path(),
        "defects_declared_serde",
        "_0_hook.sh",
        &sh_replacing(r#"{"text": "hooked;"}"#),
    );
    let scope = project_scope("defects-no-tokio", dir.path());
    let mut note = Note::default();
    block_on_without_tokio(scope.bind(hookpoint::call_async("defects_declared_serde", &mut note)))
        .expect("no panic, no error");
    assert_eq!(note.text, "hooked;compiled;");
}
