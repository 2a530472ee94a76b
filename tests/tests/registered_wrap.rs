//! Wrap closures registered at run time (guide `guide/chapters/03-wrap-points-and-registering.md`):
//! they nest among a wrap point's compiled-in extensions by order, may call `next` zero, one or
//! several times, and leave with their guard.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use hookpoint::introspect::RunsAs;
use hookpoint::{AsyncNext, Cx, Error, Next, Origin, ScopeBuilder, extension, point};
use hookpoint_tests::{manifest, project_scope};

point! {
    /// outer(10) inner(30), compiled in.
    pub static REGW_NEST: WrapPoint<Vec<String>, String> = "regw_nest";
    pub static REGW_PLAIN: WrapPoint<u32, u32> = "regw_plain";
    pub static REGW_ASYNC: AsyncWrapPoint<Vec<String>, String> = "regw_async";
}

fn layer(
    tag: &str,
    log: &mut Vec<String>,
    next: &mut Next<'_, Vec<String>, String>,
) -> Result<String, Error> {
    log.push(format!("{tag}>"));
    let r = next.run(log)?;
    log.push(format!("<{tag}"));
    Ok(format!("{tag}({r})"))
}

#[extension(point = REGW_NEST, order = 10)]
fn outer(log: &mut Vec<String>, mut next: Next<'_, Vec<String>, String>) -> Result<String, Error> {
    layer("outer", log, &mut next)
}

#[extension(point = REGW_NEST, order = 30)]
fn inner(log: &mut Vec<String>, mut next: Next<'_, Vec<String>, String>) -> Result<String, Error> {
    layer("inner", log, &mut next)
}

fn core(log: &mut Vec<String>) -> Result<String, Error> {
    log.push("core".into());
    Ok("core".into())
}

#[test]
fn a_registered_wrap_closure_nests_by_order_until_its_guard_goes() {
    let scope = ScopeBuilder::new("regw-nest").build().unwrap();
    let line = line!() + 2;
    let guard = scope
        .register(&REGW_NEST)
        .name("mid")
        .order(20)
        .wrap(
            |log: &mut Vec<String>, mut next: Next<'_, Vec<String>, String>| {
                layer("mid", log, &mut next)
            },
        )
        .unwrap();
    let mut log = Vec::new();
    let r = scope.enter(|| REGW_NEST.call(&mut log, core)).unwrap();
    assert_eq!(r, "outer(mid(inner(core)))");
    assert_eq!(
        log,
        [
            "outer>", "mid>", "inner>", "core", "<inner", "<mid", "<outer"
        ]
    );
    let points = scope.introspect();
    let p = points.iter().find(|p| p.name == "regw_nest").unwrap();
    let mid = p.extensions.iter().find(|e| e.name == "mid").unwrap();
    assert_eq!(mid.runs_as, RunsAs::Registered);
    assert_eq!(
        mid.origin,
        Origin::Registered {
            file: file!(),
            line
        }
    );
    drop(guard);
    let r = scope
        .enter(|| REGW_NEST.call(&mut Vec::new(), core))
        .unwrap();
    assert_eq!(r, "outer(inner(core))");
}

#[test]
fn a_registered_wrap_closure_needs_no_type_written() {
    let scope = ScopeBuilder::new("regw-inferred").build().unwrap();
    let _plus = scope
        .register(&REGW_PLAIN)
        .name("plus_one")
        .wrap(|n, mut next| Ok(next.run(n)? + 1))
        .unwrap();
    let _seen = scope
        .register(&REGW_PLAIN)
        .name("context")
        .order(10)
        .wrap_cx(|cx, n, mut next| {
            assert_eq!(cx.scope().name(), "regw-inferred");
            Ok(next.run(n)? * 10)
        })
        .unwrap();
    let out = scope.enter(|| REGW_PLAIN.call(&mut 4, |n| Ok(*n))).unwrap();
    assert_eq!(
        out, 41,
        "plus_one (outer) around context (inner) around the step"
    );
}

#[test]
fn a_registered_wrap_closure_may_answer_retry_or_see_the_context() {
    let scope = ScopeBuilder::new("regw-plain").build().unwrap();
    // Outermost: answers 0 itself (the inner step never runs for it).
    let _cache = scope
        .register(&REGW_PLAIN)
        .name("cache")
        .order(1)
        .wrap(
            |n: &mut u32, mut next: Next<'_, u32, u32>| -> Result<u32, Error> {
                if *n == 0 {
                    return Ok(100);
                }
                next.run(n)
            },
        )
        .unwrap();
    // Then: retries once when the rest fails.
    let _retry = scope
        .register(&REGW_PLAIN)
        .name("retry")
        .order(2)
        .wrap_cx(|cx: &Cx<'_>, n: &mut u32, mut next: Next<'_, u32, u32>| {
            assert_eq!(cx.scope().name(), "regw-plain");
            next.run(n).or_else(|_| next.run(n))
        })
        .unwrap();
    let calls = AtomicU32::new(0);
    let step = |n: &mut u32| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            return Err(Error::msg("busy"));
        }
        Ok(*n * 2)
    };
    assert_eq!(scope.enter(|| REGW_PLAIN.call(&mut 0, step)).unwrap(), 100);
    assert_eq!(calls.load(Ordering::SeqCst), 0, "answered from the cache");
    assert_eq!(scope.enter(|| REGW_PLAIN.call(&mut 21, step)).unwrap(), 42);
    assert_eq!(calls.load(Ordering::SeqCst), 2, "failed once, retried once");
}

#[test]
fn a_manifest_disables_a_registered_wrap_closure() {
    let dir = tempfile::tempdir().unwrap();
    manifest(dir.path(), "regw_nest", "mid.json", r#"{"enabled": false}"#);
    let scope = project_scope("regw-manifest", dir.path());
    let _g = scope
        .register(&REGW_NEST)
        .name("mid")
        .order(20)
        .wrap(
            |log: &mut Vec<String>, mut next: Next<'_, Vec<String>, String>| {
                layer("mid", log, &mut next)
            },
        )
        .unwrap();
    let r = scope
        .enter(|| REGW_NEST.call(&mut Vec::new(), core))
        .unwrap();
    assert_eq!(r, "outer(inner(core))");
}

#[test]
fn async_wrap_closures_nest_on_async_wrap_points() {
    let scope = ScopeBuilder::new("regw-async").build().unwrap();
    let seen = Arc::new(AtomicU32::new(0));
    let count = seen.clone();
    let _g = scope
        .register(&REGW_ASYNC)
        .name("twice")
        .wrap_async(
            move |log: &mut Vec<String>, mut next: AsyncNext<'_, Vec<String>, String>| {
                count.fetch_add(1, Ordering::SeqCst);
                Box::pin(async move {
                    let first = next.run(log).await?;
                    let second = next.run(log).await?;
                    Ok(format!("{first}+{second}"))
                })
            },
        )
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut log = Vec::new();
    let r = rt
        .block_on(scope.bind(REGW_ASYNC.call(&mut log, |log| {
            Box::pin(async move {
                log.push("core".to_owned());
                Ok::<_, Error>(log.len().to_string())
            })
        })))
        .unwrap();
    assert_eq!(r, "1+2");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[test]
fn a_registered_name_taken_by_a_compiled_in_wrap_extension_is_refused() {
    let scope = ScopeBuilder::new("regw-dup").build().unwrap();
    let err = scope
        .register(&REGW_NEST)
        .name("outer")
        .wrap(|log: &mut Vec<String>, mut next: Next<'_, Vec<String>, String>| next.run(log))
        .unwrap_err();
    assert_eq!(err.kind(), hookpoint::ErrorKind::Duplicate);
    assert!(err.to_string().contains("compiled in at"), "{err}");
}

#[test]
fn by_name_on_a_wrap_point_a_plain_closure_is_refused_with_how_to_wrap() {
    let scope = ScopeBuilder::new("regw-by-name").build().unwrap();
    let err = scope
        .register_named::<u32>("regw_plain")
        .name("plain")
        .run(|n: &mut u32| *n += 1)
        .unwrap_err();
    assert_eq!(err.kind(), hookpoint::ErrorKind::PayloadMismatch);
    let text = err.to_string();
    assert!(
        text.contains("the point is a wrap point (`wrap(u32) -> u32`)")
            && text.contains("register on its typed constant")
            && text.contains(".wrap(|request, next| ..)")
            && !text.contains("but this closure takes"),
        "{text}"
    );
}
