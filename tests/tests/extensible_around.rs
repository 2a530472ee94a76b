//! The `.../around` wrap point of `#[extensible]` fns: around extensions are outermost, each
//! `next.run` runs start extensions, body and end extensions once; zero (a cached answer), one or
//! several runs (retry); arguments cloned for each run when `Clone`, moved once otherwise; async
//! fns, methods, by-name attachment, manifests, introspection and validation.
//!
//! Each behaviour gets its own extensible fn: extensions attach to a fn for the whole binary.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookpoint::ScopeBuilder;
use hookpoint::{
    AsyncNext, CallArgs, CallEnd, CallStart, Error, Next, PointKind, extensible, extension,
};
use hookpoint_tests::{manifest, project_scope};

/// An application error that can carry a hookpoint error.
#[derive(Debug, PartialEq)]
pub enum AppError {
    Busy(u32),
    Hook(String),
}

impl From<Error> for AppError {
    fn from(e: Error) -> Self {
        AppError::Hook(e.to_string())
    }
}

// ---------------------------------------------------------------------------------------------
// Nesting: around extensions (by order) outside start extensions, body and end extensions.

static NEST_LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn log(s: impl Into<String>) {
    NEST_LOG.lock().unwrap().push(s.into());
}

#[extensible]
pub fn nested(n: u32) -> u32 {
    log(format!("body({n})"));
    n + 1
}

#[extension(point = NESTED_AROUND, order = 1)]
fn nest_outer(
    req: &mut CallArgs<(u32,)>,
    mut next: Next<'_, CallArgs<(u32,)>, u32>,
) -> Result<u32, Error> {
    log("outer>");
    let r = next.run(req)?;
    log(format!("<outer({r})"));
    Ok(r * 10)
}

#[extension(point = NESTED_AROUND, order = 2)]
fn nest_inner(
    req: &mut CallArgs<(u32,)>,
    mut next: Next<'_, CallArgs<(u32,)>, u32>,
) -> Result<u32, Error> {
    log("inner>");
    req.args_mut()
        .expect("u32 is Clone: the request keeps it")
        .0 += 1;
    let r = next.run(req)?;
    log(format!("<inner({r})"));
    Ok(r)
}

#[extension(point = NESTED_START)]
fn nest_start(call: &mut CallStart<(u32,), u32>) {
    log(format!("start({})", call.args.0));
}

#[extension(point = NESTED_END)]
fn nest_end(call: &mut CallEnd<u32>) {
    log(format!("end({})", call.result));
    call.result += 100;
}

#[test]
fn around_extensions_are_outermost_and_each_run_is_start_body_end() {
    NEST_LOG.lock().unwrap().clear();
    assert_eq!(nested(1), 1030);
    assert_eq!(
        *NEST_LOG.lock().unwrap(),
        [
            "outer>",
            "inner>",
            "start(2)",
            "body(2)",
            "end(3)",
            "<inner(103)",
            "<outer(103)"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Retry: `next` runs the whole fn again; a fn's own `Err` is the response `Ok(Err(..))`.

static FLAKY_CALLS: AtomicUsize = AtomicUsize::new(0);
static FLAKY_FAILURES: AtomicUsize = AtomicUsize::new(0);
static FLAKY_STARTS: AtomicUsize = AtomicUsize::new(0);

#[extensible]
pub fn flaky(question: String) -> Result<String, AppError> {
    let n = FLAKY_CALLS.fetch_add(1, Ordering::SeqCst) as u32;
    if FLAKY_FAILURES
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |f| f.checked_sub(1))
        .is_ok()
    {
        return Err(AppError::Busy(n));
    }
    Ok(format!("answer to {question}"))
}

/// Runs the fn up to three times while it answers `Err`.
#[extension(point = FLAKY_AROUND)]
fn flaky_retry(
    req: &mut CallArgs<(String,)>,
    mut next: Next<'_, CallArgs<(String,)>, Result<String, AppError>>,
) -> Result<Result<String, AppError>, Error> {
    let mut last = next.run(req)?;
    for _ in 1..3 {
        if last.is_ok() {
            break;
        }
        last = next.run(req)?;
    }
    Ok(last)
}

#[extension(point = FLAKY_START)]
fn flaky_start(_: &mut CallStart<(String,), Result<String, AppError>>) {
    FLAKY_STARTS.fetch_add(1, Ordering::SeqCst);
}

static FLAKY_LOCK: Mutex<()> = Mutex::new(());

fn flaky_runs(failures: usize) -> (Result<String, AppError>, usize, usize) {
    let _one = FLAKY_LOCK.lock().unwrap();
    FLAKY_CALLS.store(0, Ordering::SeqCst);
    FLAKY_STARTS.store(0, Ordering::SeqCst);
    FLAKY_FAILURES.store(failures, Ordering::SeqCst);
    let r = flaky("why".into());
    (
        r,
        FLAKY_CALLS.load(Ordering::SeqCst),
        FLAKY_STARTS.load(Ordering::SeqCst),
    )
}

#[test]
fn a_retry_runs_the_whole_fn_again_with_a_clone_of_the_arguments() {
    assert_eq!(flaky_runs(0), (Ok("answer to why".into()), 1, 1));
    assert_eq!(flaky_runs(2), (Ok("answer to why".into()), 3, 3));
    assert_eq!(flaky_runs(5), (Err(AppError::Busy(2)), 3, 3));
}

// ---------------------------------------------------------------------------------------------
// Cache: an around extension that answers without `next` (the fn does not run at all).

static LOOKUP_BODY: AtomicUsize = AtomicUsize::new(0);
static LOOKUP_STARTS: AtomicUsize = AtomicUsize::new(0);

#[extensible]
pub fn lookup(key: String) -> String {
    LOOKUP_BODY.fetch_add(1, Ordering::SeqCst);
    format!("computed {key}")
}

#[extension(point = LOOKUP_AROUND)]
fn lookup_cache(
    req: &mut CallArgs<(String,)>,
    mut next: Next<'_, CallArgs<(String,)>, String>,
) -> Result<String, Error> {
    if req.args().is_some_and(|(key,)| key == "hit") {
        return Ok("cached".into());
    }
    next.run(req)
}

#[extension(point = LOOKUP_START)]
fn lookup_start(_: &mut CallStart<(String,), String>) {
    LOOKUP_STARTS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn an_around_extension_answers_without_running_the_fn() {
    let body = LOOKUP_BODY.load(Ordering::SeqCst);
    let start = LOOKUP_STARTS.load(Ordering::SeqCst);
    assert_eq!(lookup("hit".into()), "cached");
    assert_eq!(LOOKUP_BODY.load(Ordering::SeqCst), body, "no body");
    assert_eq!(LOOKUP_STARTS.load(Ordering::SeqCst), start, "no start");
    assert_eq!(lookup("miss".into()), "computed miss");
    assert_eq!(LOOKUP_BODY.load(Ordering::SeqCst), body + 1);
}

// ---------------------------------------------------------------------------------------------
// Arguments that are not `Clone`: the first run moves them, a second one is an error.

/// Not `Clone`.
pub struct Ticket(u32);

static TICKET_BODY: AtomicUsize = AtomicUsize::new(0);

#[extensible]
pub fn redeem(ticket: Ticket) -> Result<u32, AppError> {
    TICKET_BODY.fetch_add(1, Ordering::SeqCst);
    Ok(ticket.0)
}

#[extension(point = REDEEM_AROUND)]
fn redeem_twice(
    req: &mut CallArgs<(Ticket,)>,
    mut next: Next<'_, CallArgs<(Ticket,)>, Result<u32, AppError>>,
) -> Result<Result<u32, AppError>, Error> {
    assert!(!req.clones_args());
    assert_eq!(req.args().map(|(t,)| t.0), Some(7));
    let first = next.run(req)?;
    assert_eq!(first, Ok(7));
    assert!(req.args().is_none(), "moved into the first run");
    next.run(req)
}

#[test]
fn a_second_run_with_arguments_that_are_not_clone_is_an_error() {
    let before = TICKET_BODY.load(Ordering::SeqCst);
    let Err(AppError::Hook(message)) = redeem(Ticket(7)) else {
        panic!("the second run fails");
    };
    assert!(
        message.contains("_functions/extensible_around/redeem/around")
            && message.contains("not all `Clone`"),
        "{message}"
    );
    assert_eq!(TICKET_BODY.load(Ordering::SeqCst), before + 1, "ran once");
}

// ---------------------------------------------------------------------------------------------
// Async fns: `async` around extensions with `AsyncNext`.

static FETCH_CALLS: AtomicUsize = AtomicUsize::new(0);

#[extensible(around)]
pub async fn fetch(page: u32) -> Result<String, AppError> {
    let n = FETCH_CALLS.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    if n == 0 {
        return Err(AppError::Busy(page));
    }
    Ok(format!("page {page}"))
}

#[extension(point = FETCH_AROUND)]
async fn fetch_retry(
    req: &mut CallArgs<(u32,)>,
    mut next: AsyncNext<'_, CallArgs<(u32,)>, Result<String, AppError>>,
) -> Result<Result<String, AppError>, Error> {
    match next.run(req).await? {
        Ok(text) => Ok(Ok(text)),
        Err(_) => next.run(req).await,
    }
}

#[test]
fn an_async_fn_retries_through_an_async_around_extension() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let text = rt.block_on(async { tokio::spawn(fetch(3)).await.unwrap() });
    assert_eq!(text, Ok("page 3".into()));
    assert_eq!(FETCH_CALLS.load(Ordering::SeqCst), 2);
}

// ---------------------------------------------------------------------------------------------
// Methods of an `#[extensible]` impl.

pub struct Counter {
    hits: AtomicUsize,
    total: u32,
}

#[extensible]
impl Counter {
    #[extensible]
    pub fn bump(&self, by: u32) -> usize {
        self.hits.fetch_add(by as usize, Ordering::SeqCst) + by as usize
    }

    #[extensible]
    pub fn add(&mut self, n: u32) -> u32 {
        self.total += n;
        self.total
    }
}

#[extension(point = Counter::BUMP_AROUND)]
fn bump_twice(
    req: &mut CallArgs<(u32,)>,
    mut next: Next<'_, CallArgs<(u32,)>, usize>,
) -> Result<usize, Error> {
    next.run(req)?;
    next.run(req)
}

/// Attached by name: the same point as `Counter::ADD_AROUND`.
#[extension(point = "_functions/extensible_around/Counter/add/around")]
fn add_thrice(
    req: &mut CallArgs<(u32,)>,
    mut next: Next<'_, CallArgs<(u32,)>, u32>,
) -> Result<u32, Error> {
    next.run(req)?;
    next.run(req)?;
    next.run(req)
}

#[test]
fn methods_taking_self_or_mut_self_run_again_on_the_same_receiver() {
    let mut c = Counter {
        hits: AtomicUsize::new(0),
        total: 0,
    };
    assert_eq!(c.bump(2), 4);
    assert_eq!(c.hits.load(Ordering::SeqCst), 4);
    assert_eq!(c.add(5), 15);
    assert_eq!(c.total, 15);
    assert_eq!(
        Counter::ADD_AROUND.name(),
        "_functions/extensible_around/Counter/add/around"
    );
}

// ---------------------------------------------------------------------------------------------
// Manifests, introspection, validation.

static MANAGED_BODY: AtomicUsize = AtomicUsize::new(0);

#[extensible]
pub fn managed(n: u32) -> u32 {
    MANAGED_BODY.fetch_add(1, Ordering::SeqCst);
    n
}

#[extension(point = MANAGED_AROUND)]
fn managed_double(
    req: &mut CallArgs<(u32,)>,
    mut next: Next<'_, CallArgs<(u32,)>, u32>,
) -> Result<u32, Error> {
    Ok(next.run(req)? * 2)
}

#[test]
fn a_manifest_disables_an_around_extension() {
    let dir = tempfile::tempdir().unwrap();
    manifest(
        dir.path(),
        MANAGED_AROUND.name(),
        "managed_double.json",
        r#"{"enabled": false}"#,
    );
    let scope = project_scope("around-disable", dir.path());
    assert_eq!(scope.enter(|| managed(4)), 4);
    assert_eq!(managed(4), 8, "enabled in the default scope");
}

#[test]
fn introspection_shows_the_around_point_as_a_wrap_point() {
    let points = hookpoint::introspect();
    let around = points
        .iter()
        .find(|p| p.name == "_functions/extensible_around/managed/around")
        .expect("declared by #[extensible]");
    assert_eq!(around.kind, Some(PointKind::Wrap));
    let payload = around.payload_type.as_deref().unwrap();
    assert!(
        payload.starts_with("wrap(") && payload.ends_with("CallArgs<(u32,)>) -> u32"),
        "{payload}"
    );
    assert_eq!(around.extensions[0].name, "managed_double");
    let fetch = points
        .iter()
        .find(|p| p.name == "_functions/extensible_around/fetch/around")
        .unwrap();
    assert_eq!(fetch.kind, Some(PointKind::AsyncWrap));
}

/// A misspelt around point.
#[extension(point = "_functions/extensible_around/managed/arund")]
fn typo_around(
    req: &mut CallArgs<(u32,)>,
    mut next: Next<'_, CallArgs<(u32,)>, u32>,
) -> Result<u32, Error> {
    next.run(req)
}

#[test]
fn validation_knows_the_around_points_and_hints_one_for_a_typo() {
    // Every other around extension of this binary attaches to a point #[extensible] creates.
    let report = hookpoint::validate().unwrap_err();
    assert_eq!(report.diagnostics.len(), 1, "{report}");
    let typo = &report.diagnostics[0];
    assert_eq!(typo.extension.as_deref(), Some("typo_around"));
    assert!(
        typo.message
            .contains("nearest known point: `_functions/extensible_around/managed/around`"),
        "{}",
        typo.message
    );
}

// ---------------------------------------------------------------------------------------------
// Closures registered at run time on the typed around point.

#[extensible]
pub fn squared(n: u64) -> u64 {
    n * n
}

#[extensible(around)]
pub async fn halved(n: u64) -> u64 {
    n / 2
}

#[test]
fn closures_registered_at_run_time_wrap_the_fn() {
    let scope = ScopeBuilder::new("around-registered").build().unwrap();
    let _twice = scope
        .register(&SQUARED_AROUND)
        .name("sum_of_two_runs")
        .wrap(|req, mut next| Ok(next.run(req)? + next.run(req)?))
        .unwrap();
    let _plus = scope
        .register(&HALVED_AROUND)
        .name("plus_one")
        .wrap_async(|req, mut next| Box::pin(async move { Ok(next.run(req).await? + 1) }))
        .unwrap();
    assert_eq!(scope.enter(|| squared(3)), 18);
    assert_eq!(squared(3), 9, "only in that scope");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(scope.bind(halved(10))), 6);
    assert_eq!(rt.block_on(halved(10)), 5);
}

// Fns that get no around point.

pub struct Owner {
    pub name: String,
}

/// An argument that borrows: the request would have a lifetime `next` cannot pass on.
#[extensible]
pub fn greet_owner(owner: &Owner, greeting: String) -> String {
    format!("{greeting}, {}", owner.name)
}

/// An async fn whose future is not `Send`: without `#[extensible(around)]` it is as before.
#[extensible]
pub async fn not_send(n: u32) -> u32 {
    let shared = std::rc::Rc::new(n);
    tokio::task::yield_now().await;
    *shared + 1
}

#[test]
fn a_borrowing_argument_or_an_unasked_async_fn_gets_no_around_point() {
    assert_eq!(
        greet_owner(&Owner { name: "Ada".into() }, "Hi".into()),
        "Hi, Ada"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(not_send(1)), 2);
    let names: Vec<String> = hookpoint::introspect()
        .into_iter()
        .map(|p| p.name)
        .collect();
    for f in ["greet_owner", "not_send"] {
        let base = format!("_functions/extensible_around/{f}");
        assert!(
            names.contains(&format!("{base}/start")),
            "{f} has its start point"
        );
        assert!(
            !names.contains(&format!("{base}/around")),
            "{f} has no around point"
        );
    }
    assert!(
        names.contains(&"_functions/extensible_around/halved/around".to_owned()),
        "an async fn asked with `around` has one"
    );
}
