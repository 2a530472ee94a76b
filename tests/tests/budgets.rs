//! Time budgets of async extensions (`timeout_ms`) and the slow-extension threshold.

use std::time::Duration;

use hookpoint::{ErrorKind, extension, point};
use hookpoint_tests::{manifest, project_scope};

point! {
    pub static BUDGETED: AsyncPoint<Vec<&'static str>> = "budget_budgeted";
    pub static LOGGED: AsyncPoint<Vec<&'static str>> = "budget_logged";
    pub static SLOW: SyncPoint<u8> = "budget_slow";
}

#[extension(point = BUDGETED, order = 1, timeout_ms = 50)]
async fn hangs(_: &mut Vec<&'static str>) {
    std::future::pending::<()>().await;
}

#[extension(point = BUDGETED, order = 2)]
async fn after_the_hang(v: &mut Vec<&'static str>) {
    v.push("after");
}

#[extension(point = LOGGED, order = 1, timeout_ms = 50, on_error = "log")]
async fn hangs_but_logged(_: &mut Vec<&'static str>) {
    std::future::pending::<()>().await;
}

#[extension(point = LOGGED, order = 2)]
async fn goes_on(v: &mut Vec<&'static str>) {
    v.push("went on");
}

#[extension(point = LOGGED, order = 3)]
async fn quick(v: &mut Vec<&'static str>) {
    tokio::time::sleep(Duration::from_millis(1)).await;
    v.push("quick");
}

#[extension(point = SLOW)]
fn takes_a_while(_: &mut u8) {
    std::thread::sleep(Duration::from_millis(30));
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn an_extension_past_its_budget_is_cancelled_with_an_error_naming_it() {
    let mut v = Vec::new();
    let err = rt().block_on(BUDGETED.call(&mut v)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert_eq!(err.extension(), Some("hangs"));
    assert!(err.to_string().contains("50 ms"), "{err}");
    assert!(v.is_empty(), "the chain stopped at the failing extension");
}

#[test]
fn the_error_policy_applies_to_a_timeout() {
    let mut v = Vec::new();
    rt().block_on(LOGGED.call(&mut v)).unwrap();
    assert_eq!(v, ["went on", "quick"]);
}

#[test]
fn a_manifest_gives_a_compiled_async_extension_a_budget() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "budget_logged",
        "quick.json",
        r#"{"timeout_ms": 5000}"#,
    );
    manifest(
        dir.path(),
        "budget_logged",
        "hangs_but_logged.json",
        r#"{"on_error": "propagate", "timeout_ms": 20}"#,
    );
    let scope = project_scope("budget-manifest", dir.path());
    let mut v = Vec::new();
    let err = rt().block_on(scope.bind(LOGGED.call(&mut v))).unwrap_err();
    assert_eq!(
        (err.kind(), err.extension()),
        (ErrorKind::Timeout, Some("hangs_but_logged"))
    );
    assert!(err.to_string().contains("20 ms"), "{err}");
    let info = scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "budget_logged")
        .unwrap();
    let quick = info.extensions.iter().find(|e| e.name == "quick").unwrap();
    assert_eq!(quick.timeout_ms, Some(5000));
}

#[test]
fn a_budget_on_a_sync_extension_is_refused_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        "budget_slow",
        "takes_a_while.json",
        r#"{"timeout_ms": 5}"#,
    );
    let scope = project_scope("budget-sync", dir.path());
    assert!(
        scope
            .status()
            .warnings
            .iter()
            .any(|w| w.to_string().contains("sync extension")),
        "{:?}",
        scope.status().warnings
    );
}

#[test]
fn an_extension_slower_than_the_threshold_is_logged_with_its_name_and_time() {
    let _serial = THRESHOLD.lock().unwrap_or_else(|p| p.into_inner());
    let (_, log) = capture(|| {
        hookpoint::observe::set_slow_threshold(Some(Duration::from_millis(10)));
        SLOW.call(&mut 0).unwrap();
        hookpoint::observe::set_slow_threshold(None);
    });
    assert!(log.contains("slow extension"), "{log}");
    assert!(log.contains("takes_a_while"), "{log}");
    assert!(log.contains("duration_us="), "{log}");
}

/// The process default threshold is process-wide: the tests that depend on it take turns.
static THRESHOLD: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_scope_threshold_applies_to_that_scope_whatever_the_process_default() {
    let _serial = THRESHOLD.lock().unwrap_or_else(|p| p.into_inner());
    let timed = hookpoint::ScopeBuilder::new("slow-timed")
        .slow_threshold(Some(Duration::from_millis(10)))
        .build()
        .unwrap();
    let quiet = hookpoint::ScopeBuilder::new("slow-quiet")
        .slow_threshold(None)
        .build()
        .unwrap();
    let follows = hookpoint::ScopeBuilder::new("slow-follows")
        .build()
        .unwrap();
    assert_eq!(follows.slow_threshold(), None);
    let (_, log) = capture(|| {
        follows.enter(|| SLOW.call(&mut 0)).unwrap();
        quiet.enter(|| SLOW.call(&mut 0)).unwrap();
    });
    assert!(
        !log.contains("slow extension"),
        "no threshold applies: {log}"
    );
    let (_, log) = capture(|| timed.enter(|| SLOW.call(&mut 0)).unwrap());
    assert!(
        log.contains("slow extension") && log.contains("takes_a_while"),
        "{log}"
    );

    hookpoint::observe::set_slow_threshold(Some(Duration::from_millis(10)));
    assert_eq!(follows.slow_threshold(), Some(Duration::from_millis(10)));
    assert_eq!(quiet.slow_threshold(), None);
    let (_, quiet_log) = capture(|| quiet.enter(|| SLOW.call(&mut 0)).unwrap());
    let (_, follows_log) = capture(|| follows.enter(|| SLOW.call(&mut 0)).unwrap());
    hookpoint::observe::set_slow_threshold(None);
    assert!(
        !quiet_log.contains("slow extension"),
        "opted out: {quiet_log}"
    );
    assert!(follows_log.contains("slow extension"), "{follows_log}");
}

fn capture<R>(f: impl FnOnce() -> R) -> (R, String) {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let r = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8_lossy(&buf.0.lock().unwrap()).into_owned();
    (r, text)
}
