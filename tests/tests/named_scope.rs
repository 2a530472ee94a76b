//! `scope.enter(|| POINT.call(..))` and `scope.bind(POINT.call(..))` run the point's extensions
//! in `scope`: one that dispatches again reaches the same scope's snapshot (its overrides and
//! plugin toggles), sync and async.

use hookpoint::{Cx, Error, Scope, extension, point};
use hookpoint_tests::{manifest, project_scope};

point! {
    pub static OUTER: SyncPoint<Vec<String>> = "named_scope_outer";
    pub static INNER: SyncPoint<Vec<String>> = "named_scope_inner";
    pub static OUTER_ASYNC: AsyncPoint<Vec<String>> = "named_scope_outer_async";
}

#[extension(point = OUTER)]
fn outer(cx: &Cx<'_>, seen: &mut Vec<String>) -> Result<(), Error> {
    seen.push(format!("outer in {}", Scope::current().name()));
    assert_eq!(cx.scope().name(), Scope::current().name());
    INNER.call(seen)?;
    Ok(())
}

#[extension(point = OUTER_ASYNC)]
async fn outer_async(seen: &mut Vec<String>) -> Result<(), Error> {
    tokio::task::yield_now().await;
    seen.push(format!("outer in {}", Scope::current().name()));
    INNER.call(seen)?;
    Ok(())
}

#[extension(point = INNER)]
fn inner(seen: &mut Vec<String>) {
    seen.push("inner".into());
}

#[test]
fn nested_dispatch_stays_in_the_named_scope() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "named_scope_inner",
        "inner.json",
        r#"{"enabled": false}"#,
    );
    let scope = project_scope("named", dir.path());

    let mut seen = Vec::new();
    scope.enter(|| OUTER.call(&mut seen)).unwrap();
    assert_eq!(seen, ["outer in named"], "the scope disabled `inner`");

    let mut seen = Vec::new();
    OUTER.call(&mut seen).unwrap();
    assert_eq!(seen, ["outer in default", "inner"]);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut seen = Vec::new();
    rt.block_on(scope.bind(OUTER_ASYNC.call(&mut seen)))
        .unwrap();
    assert_eq!(seen, ["outer in named"]);
}

#[test]
fn enter_nests_and_restores_the_outer_scope_also_after_a_panic() {
    let a = hookpoint::ScopeBuilder::new("outer-a").build().unwrap();
    let b = hookpoint::ScopeBuilder::new("inner-b").build().unwrap();
    let names = a.enter(|| {
        let before = Scope::current().name().to_owned();
        let inner = b.enter(|| Scope::current().name().to_owned());
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            b.enter(|| -> u8 { panic!("an extension panicked") })
        }));
        assert!(panicked.is_err());
        let mut seen = Vec::new();
        OUTER.call(&mut seen).unwrap();
        (before, inner, Scope::current().name().to_owned(), seen)
    });
    assert_eq!(
        names,
        (
            "outer-a".to_owned(),
            "inner-b".to_owned(),
            "outer-a".to_owned(),
            vec!["outer in outer-a".to_owned(), "inner".to_owned()]
        ),
        "inside `a` again after the nested and the panicking `enter`"
    );
    assert_eq!(Scope::current().name(), "default");
}
