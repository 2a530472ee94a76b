//! `#[extensible]` behaviour: start extensions rewrite arguments or short-circuit with
//! a result or an error, end extensions see every outcome and may rewrite it, point names, typed
//! attachment, methods, async fns, generic fns.
//!
//! Each behaviour gets its own extensible fn: extensions attach to a fn for the whole binary.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookpoint::{CallEnd, CallStart, Error, ErrorKind, PointKind, extensible, extension};

fn current_thread_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// An application error that can carry a hookpoint error.
#[derive(Debug, PartialEq)]
pub enum AppError {
    Denied(String),
    Hook(String),
}

impl From<Error> for AppError {
    fn from(e: Error) -> Self {
        AppError::Hook(e.to_string())
    }
}

// ---------------------------------------------------------------------------------------------
// Start extensions replace the arguments; typed attachment with `<FN>_START`.

static ARGS_BODY: AtomicUsize = AtomicUsize::new(0);

#[extensible]
pub fn build_prompt(base: String, times: u32) -> String {
    ARGS_BODY.fetch_add(1, Ordering::SeqCst);
    base.repeat(times as usize)
}

#[extension(point = BUILD_PROMPT_START, order = 1)]
fn replace_prompt_args(call: &mut CallStart<(String, u32), String>) {
    call.args = (format!("[{}]", call.args.0), call.args.1 + 1);
}

#[extension(point = BUILD_PROMPT_START, order = 2)]
fn sees_replaced_args(call: &mut CallStart<(String, u32), String>) {
    // Runs after `replace_prompt_args` and sees its rewrite.
    assert!(
        call.args.0.starts_with('['),
        "later start extension sees earlier rewrite"
    );
}

#[test]
fn start_extension_replaces_arguments_before_the_body_runs() {
    let before = ARGS_BODY.load(Ordering::SeqCst);
    assert_eq!(build_prompt("ab".into(), 1), "[ab][ab]");
    assert_eq!(ARGS_BODY.load(Ordering::SeqCst), before + 1);
}

// ---------------------------------------------------------------------------------------------
// A start extension that sets a result skips the body; end extensions still run.

static SHORT_BODY: AtomicUsize = AtomicUsize::new(0);
static SHORT_END_SAW: Mutex<Vec<u32>> = Mutex::new(Vec::new());

#[extensible]
pub fn cached_lookup(key: u32) -> u32 {
    SHORT_BODY.fetch_add(1, Ordering::SeqCst);
    key * 2
}

#[extension(point = CACHED_LOOKUP_START)]
fn serve_from_cache(call: &mut CallStart<(u32,), u32>) {
    if call.args.0 == 7 {
        call.result = Some(700);
    }
}

#[extension(point = CACHED_LOOKUP_END)]
fn record_lookup_end(end: &mut CallEnd<u32>) {
    SHORT_END_SAW.lock().unwrap().push(end.result);
    end.result += 1;
}

#[test]
fn start_result_skips_body_and_end_extensions_still_run() {
    let before = SHORT_BODY.load(Ordering::SeqCst);
    assert_eq!(cached_lookup(7), 701);
    assert_eq!(
        SHORT_BODY.load(Ordering::SeqCst),
        before,
        "body must be skipped"
    );
    assert!(
        SHORT_END_SAW.lock().unwrap().contains(&700),
        "end extension saw the start result"
    );
    // Without a preset result the body runs.
    assert_eq!(cached_lookup(3), 7);
    assert_eq!(SHORT_BODY.load(Ordering::SeqCst), before + 1);
}

// A later start extension may take back an earlier one's result: the body then runs.

static CLEARED_BODY: AtomicUsize = AtomicUsize::new(0);

#[extensible]
pub fn second_opinion(x: u32) -> u32 {
    CLEARED_BODY.fetch_add(1, Ordering::SeqCst);
    x + 1
}

#[extension(point = SECOND_OPINION_START, order = 1)]
fn early_answer(call: &mut CallStart<(u32,), u32>) {
    call.result = Some(999);
}

#[extension(point = SECOND_OPINION_START, order = 2)]
fn take_back_answer(call: &mut CallStart<(u32,), u32>) {
    assert_eq!(
        call.result,
        Some(999),
        "sees what the earlier start extension set"
    );
    call.result = None;
}

#[test]
fn later_start_extension_can_clear_a_result_so_the_body_runs() {
    let before = CLEARED_BODY.load(Ordering::SeqCst);
    assert_eq!(second_opinion(1), 2);
    assert_eq!(CLEARED_BODY.load(Ordering::SeqCst), before + 1);
}

// ---------------------------------------------------------------------------------------------
// A start extension that sets Err skips the body; the end extension sees the Err and clears it.

static DENY_BODY: AtomicUsize = AtomicUsize::new(0);
static DENY_END_SAW: Mutex<Vec<Result<u32, AppError>>> = Mutex::new(Vec::new());

#[extensible]
pub fn guarded_action(x: u32) -> Result<u32, AppError> {
    DENY_BODY.fetch_add(1, Ordering::SeqCst);
    Ok(x)
}

#[extension(point = GUARDED_ACTION_START)]
fn deny_action(call: &mut CallStart<(u32,), Result<u32, AppError>>) {
    if call.args.0 == 0 {
        call.result = Some(Err(AppError::Denied("zero".into())));
    }
}

#[extension(point = GUARDED_ACTION_END)]
fn recover_denied(end: &mut CallEnd<Result<u32, AppError>>) {
    let seen = match &end.result {
        Ok(v) => Ok(*v),
        Err(AppError::Denied(m)) => Err(AppError::Denied(m.clone())),
        Err(AppError::Hook(m)) => Err(AppError::Hook(m.clone())),
    };
    DENY_END_SAW.lock().unwrap().push(seen);
    if matches!(end.result, Err(AppError::Denied(_))) {
        end.result = Ok(42);
    }
}

#[test]
fn start_error_skips_body_and_end_sees_it_and_can_clear_it_to_ok() {
    let before = DENY_BODY.load(Ordering::SeqCst);
    assert_eq!(guarded_action(0), Ok(42));
    assert_eq!(
        DENY_BODY.load(Ordering::SeqCst),
        before,
        "body must be skipped"
    );
    assert!(
        DENY_END_SAW
            .lock()
            .unwrap()
            .contains(&Err(AppError::Denied("zero".into()))),
        "end extension saw the start error"
    );
    assert_eq!(guarded_action(5), Ok(5));
    assert_eq!(DENY_BODY.load(Ordering::SeqCst), before + 1);
}

// ---------------------------------------------------------------------------------------------
// End extensions replace the result, in ascending order, each seeing the previous rewrite.

#[extensible]
pub fn render(name: &str) -> String {
    format!("hello {name}")
}

#[extension(point = RENDER_END, order = 20)]
fn render_second(end: &mut CallEnd<String>) {
    end.result.push_str(" [second]");
}

#[extension(point = RENDER_END, order = 10)]
fn render_first(end: &mut CallEnd<String>) {
    end.result = end.result.to_uppercase();
}

#[extension(point = RENDER_START)]
fn render_reads_borrowed_arg(call: &mut CallStart<(&str,), String>) {
    assert_eq!(call.args.0, "bob");
}

#[test]
fn end_extensions_replace_the_result_in_ascending_order() {
    assert_eq!(render("bob"), "HELLO BOB [second]");
}

// ---------------------------------------------------------------------------------------------
// An end extension replaces one Err with another.

#[extensible]
pub fn flaky_io() -> Result<u32, AppError> {
    Err(AppError::Denied("raw".into()))
}

#[extension(point = FLAKY_IO_END)]
fn translate_error(end: &mut CallEnd<Result<u32, AppError>>) {
    if let Err(AppError::Denied(m)) = &end.result {
        end.result = Err(AppError::Hook(format!("translated {m}")));
    }
}

#[test]
fn end_extension_replaces_an_error_with_another_error() {
    assert_eq!(flaky_io(), Err(AppError::Hook("translated raw".into())));
}

// ---------------------------------------------------------------------------------------------
// A failing start extension becomes the call's Err; the other start extensions and the end
// extensions still run and see it.

static START_FAIL_BODY: AtomicUsize = AtomicUsize::new(0);
static START_FAIL_LATER_START_SAW_ERR: AtomicUsize = AtomicUsize::new(0);
static START_FAIL_END_SAW: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[extensible]
pub fn checked_fetch(url: String) -> Result<String, Error> {
    START_FAIL_BODY.fetch_add(1, Ordering::SeqCst);
    Ok(url)
}

#[extension(point = CHECKED_FETCH_START, order = 1)]
fn refuse_fetch(call: &mut CallStart<(String,), Result<String, Error>>) -> Result<(), Error> {
    if call.args.0.starts_with("http:") {
        return Err(Error::msg("plain http refused"));
    }
    Ok(())
}

#[extension(point = CHECKED_FETCH_START, order = 2)]
fn later_start_sees_error(call: &mut CallStart<(String,), Result<String, Error>>) {
    if matches!(call.result, Some(Err(_))) {
        START_FAIL_LATER_START_SAW_ERR.fetch_add(1, Ordering::SeqCst);
    }
}

#[extension(point = CHECKED_FETCH_END)]
fn end_sees_start_failure(end: &mut CallEnd<Result<String, Error>>) {
    let s = match &end.result {
        Ok(v) => format!("ok:{v}"),
        Err(e) => format!("err:{}", e.extension().unwrap_or("?")),
    };
    START_FAIL_END_SAW.lock().unwrap().push(s);
}

#[test]
fn failing_start_extension_becomes_the_call_error_and_end_extensions_see_it() {
    let before = START_FAIL_BODY.load(Ordering::SeqCst);
    let err = checked_fetch("http://x".into()).unwrap_err();
    assert_eq!(
        START_FAIL_BODY.load(Ordering::SeqCst),
        before,
        "body must be skipped"
    );
    assert_eq!(err.extension(), Some("refuse_fetch"));
    assert_eq!(err.point(), Some(CHECKED_FETCH_START.name()));
    assert!(err.to_string().contains("plain http refused"), "{err}");
    assert_eq!(START_FAIL_LATER_START_SAW_ERR.load(Ordering::SeqCst), 1);
    assert!(
        START_FAIL_END_SAW
            .lock()
            .unwrap()
            .contains(&"err:refuse_fetch".to_owned())
    );
    assert_eq!(checked_fetch("https://x".into()).unwrap(), "https://x");
}

// The same with a user error type that converts from hookpoint::Error.

#[extensible]
pub fn app_step(n: u32) -> Result<u32, AppError> {
    Ok(n)
}

#[extension(point = APP_STEP_START)]
fn app_step_fails(_: &mut CallStart<(u32,), Result<u32, AppError>>) -> Result<(), Error> {
    Err("nope".into())
}

#[test]
fn failing_start_extension_error_converts_into_the_fn_error_type() {
    match app_step(1) {
        Err(AppError::Hook(m)) => {
            assert!(m.contains("extension `app_step_fails`"), "{m}");
            assert!(m.contains("nope"), "{m}");
        }
        other => panic!("expected the extension's error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// A failing end extension does not skip the later end extensions; they see the Err.

static END_FAIL_LATER_SAW: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[extensible]
pub fn finish_turn(n: u32) -> Result<u32, Error> {
    Ok(n)
}

#[extension(point = FINISH_TURN_END, order = 1)]
fn end_fails(_: &mut CallEnd<Result<u32, Error>>) -> Result<(), Error> {
    Err("end boom".into())
}

#[extension(point = FINISH_TURN_END, order = 2)]
fn later_end_sees_error(end: &mut CallEnd<Result<u32, Error>>) {
    let s = match &end.result {
        Ok(v) => format!("ok:{v}"),
        Err(e) => format!("err:{}:{}", e.extension().unwrap_or("?"), e.message()),
    };
    END_FAIL_LATER_SAW.lock().unwrap().push(s);
}

#[test]
fn failing_end_extension_does_not_skip_later_end_extensions() {
    let err = finish_turn(3).unwrap_err();
    assert_eq!(err.extension(), Some("end_fails"));
    assert_eq!(err.point(), Some(FINISH_TURN_END.name()));
    assert_eq!(err.kind(), ErrorKind::Extension);
    assert_eq!(
        *END_FAIL_LATER_SAW.lock().unwrap(),
        ["err:end_fails:end boom"]
    );
}

// ---------------------------------------------------------------------------------------------
// A fn that cannot return an error panics with point and extension when an extension fails.

#[extensible]
pub fn infallible_sum(a: u32, b: u32) -> u32 {
    a + b
}

#[extension(point = INFALLIBLE_SUM_START)]
fn panicky_ext(_: &mut CallStart<(u32, u32), u32>) -> Result<(), Error> {
    Err("cannot report this".into())
}

#[test]
#[should_panic(
    expected = "point `_functions/extensible/infallible_sum/start`, extension `panicky_ext`"
)]
fn non_result_fn_panics_naming_point_and_extension_when_an_extension_fails() {
    let _ = infallible_sum(1, 2);
}

// ---------------------------------------------------------------------------------------------
// Async fns.

static ASYNC_BODY: AtomicUsize = AtomicUsize::new(0);

#[extensible]
pub async fn fetch_reply(prompt: String) -> Result<String, Error> {
    ASYNC_BODY.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    Ok(format!("reply to {prompt}"))
}

#[extension(point = FETCH_REPLY_START)]
async fn async_start_rewrites(call: &mut CallStart<(String,), Result<String, Error>>) {
    tokio::task::yield_now().await;
    call.args.0.push_str(" (rewritten)");
}

#[extension(point = FETCH_REPLY_END, order = 1)]
fn sync_end_on_async_fn(end: &mut CallEnd<Result<String, Error>>) {
    if let Ok(s) = &mut end.result {
        s.push('!');
    }
}

#[extension(point = FETCH_REPLY_END, order = 2)]
async fn async_end_on_async_fn(end: &mut CallEnd<Result<String, Error>>) {
    tokio::task::yield_now().await;
    if let Ok(s) = &mut end.result {
        s.push('?');
    }
}

#[test]
fn async_fn_runs_async_and_sync_start_and_end_extensions() {
    let before = ASYNC_BODY.load(Ordering::SeqCst);
    let out = current_thread_rt()
        .block_on(fetch_reply("hi".into()))
        .unwrap();
    assert_eq!(out, "reply to hi (rewritten)!?");
    // `async_extensible_future_is_send` may run the body concurrently: at least this call ran it.
    assert!(ASYNC_BODY.load(Ordering::SeqCst) > before);
}

#[test]
fn async_extensible_future_is_send() {
    fn assert_send<T: Send>(t: T) -> T {
        t
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let out = rt
        .block_on(async { tokio::spawn(assert_send(fetch_reply("sent".into()))).await })
        .unwrap()
        .unwrap();
    assert_eq!(out, "reply to sent (rewritten)!?");
}

// ---------------------------------------------------------------------------------------------
// Methods (`&self`, `&mut self`), associated fns, async methods, in a module.

pub mod agent {
    use hookpoint::{Error, extensible};

    pub struct Agent {
        pub name: String,
        pub turns: u32,
    }

    #[extensible]
    impl Agent {
        #[extensible]
        pub fn create(name: String) -> Agent {
            Agent { name, turns: 0 }
        }

        #[extensible]
        pub fn greet(&self, who: String) -> String {
            format!("{} greets {who}", self.name)
        }

        #[extensible]
        pub fn take_turn(&mut self, by: u32) -> u32 {
            self.turns += by;
            self.turns
        }

        #[extensible]
        pub async fn handle(&mut self, msg: String) -> Result<String, Error> {
            self.turns += 1;
            Ok(format!("{} handled {msg}", self.name))
        }

        /// Not marked: no points.
        pub fn plain(&self) -> u32 {
            self.turns
        }
    }
}

use agent::Agent;

#[extension(point = Agent::CREATE_START)]
fn rename_new_agents(call: &mut CallStart<(String,), Agent>) {
    call.args.0 = format!("agent-{}", call.args.0);
}

#[extension(point = Agent::GREET_START)]
fn greet_reads_receiver(call: &mut CallStart<(String,), String, &Agent>) {
    let name = call.receiver().name.clone();
    call.args.0 = format!("{} (seen by {name})", call.args.0);
}

#[extension(point = Agent::TAKE_TURN_END)]
fn take_turn_mutates_receiver(end: &mut CallEnd<u32, &mut Agent>) {
    end.receiver_mut().turns += 100;
    end.result += 1000;
}

#[extension(point = Agent::HANDLE_START)]
async fn handle_start(call: &mut CallStart<(String,), Result<String, Error>, &mut Agent>) {
    call.receiver_mut().turns += 10;
    call.args.0 = call.args.0.to_uppercase();
}

#[extension(point = Agent::HANDLE_END)]
fn handle_end(end: &mut CallEnd<Result<String, Error>, &mut Agent>) {
    let turns = end.receiver().turns;
    if let Ok(s) = &mut end.result {
        s.push_str(&format!(" after {turns} turns"));
    }
}

#[test]
fn associated_fn_without_self_is_extensible() {
    let a = Agent::create("x".into());
    assert_eq!(a.name, "agent-x");
}

#[test]
fn shared_self_method_start_extension_sees_the_receiver() {
    let a = Agent::create("ann".into());
    assert_eq!(
        a.greet("bob".into()),
        "agent-ann greets bob (seen by agent-ann)"
    );
}

#[test]
fn mut_self_method_end_extension_mutates_receiver_and_result() {
    let mut a = Agent::create("m".into());
    assert_eq!(a.take_turn(2), 1002);
    assert_eq!(a.turns, 102);
    assert_eq!(a.plain(), 102);
}

#[test]
fn async_mut_self_method_runs_start_body_and_end() {
    let mut a = Agent::create("z".into());
    let out = current_thread_rt()
        .block_on(a.handle("ping".into()))
        .unwrap();
    assert_eq!(out, "agent-z handled PING after 11 turns");
    assert_eq!(a.turns, 11);
}

// ---------------------------------------------------------------------------------------------
// Generic fns: an extension attached to one instantiation runs only for it.

#[extensible]
pub fn describe<T: std::fmt::Debug + 'static>(value: T) -> String {
    format!("{value:?}")
}

#[extension(point = "_functions/extensible/describe/start")]
fn describe_u32_only(call: &mut CallStart<(u32,), String>) {
    call.args.0 += 1000;
}

#[extension(point = "_functions/extensible/describe/end")]
fn describe_string_end_only(end: &mut CallEnd<String>) {
    // The end payload `CallEnd<String>` is the same for every instantiation of `describe`.
    end.result.push('.');
}

#[test]
fn generic_fn_extension_runs_only_for_its_instantiation() {
    assert_eq!(describe(1u32), "1001.");
    assert_eq!(describe(1u64), "1.");
    assert_eq!(describe("s"), "\"s\".");
    assert_eq!(describe(vec![1u8]), "[1].");
    let info = hookpoint::introspect()
        .into_iter()
        .find(|p| p.name == "_functions/extensible/describe/start")
        .expect("listed");
    // The generic fn's payload, written as the macro saw it, reads like a type name.
    assert_eq!(
        info.payload_type.as_deref(),
        Some("hookpoint::CallStart<(T,), String, ()>")
    );
}

// ---------------------------------------------------------------------------------------------
// No extensions: the fn just runs.

#[extensible]
pub fn untouched(a: u32, (b, c): (u32, u32)) -> u32 {
    a + b + c
}

#[test]
fn extensible_fn_without_extensions_runs_its_body() {
    assert_eq!(untouched(1, (2, 3)), 6);
}

// ---------------------------------------------------------------------------------------------
// Point names: `_functions/<crate>/<module path>/<Type>/<fn>/start|end`.

#[test]
fn point_names_follow_module_path_type_and_fn() {
    assert_eq!(
        BUILD_PROMPT_START.name(),
        "_functions/extensible/build_prompt/start"
    );
    assert_eq!(
        BUILD_PROMPT_END.name(),
        "_functions/extensible/build_prompt/end"
    );
    assert_eq!(
        FETCH_REPLY_START.name(),
        "_functions/extensible/fetch_reply/start"
    );
    assert_eq!(
        Agent::CREATE_START.name(),
        "_functions/extensible/agent/Agent/create/start"
    );
    assert_eq!(
        Agent::GREET_END.name(),
        "_functions/extensible/agent/Agent/greet/end"
    );
    assert_eq!(
        Agent::TAKE_TURN_START.name(),
        "_functions/extensible/agent/Agent/take_turn/start"
    );
    assert_eq!(
        Agent::HANDLE_END.name(),
        "_functions/extensible/agent/Agent/handle/end"
    );
}

#[test]
fn introspection_lists_extensible_points_with_kind_and_extensions() {
    let points = hookpoint::introspect();
    let find = |name: &str| {
        points.iter().find(|p| p.name == name).unwrap_or_else(|| {
            panic!(
                "`{name}` not listed; have: {:?}",
                points.iter().map(|p| &p.name).collect::<Vec<_>>()
            )
        })
    };
    let p = find("_functions/extensible/build_prompt/start");
    assert_eq!(p.kind, Some(PointKind::Sync));
    let names: Vec<&str> = p.extensions.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["replace_prompt_args", "sees_replaced_args"]);
    assert!(
        p.declared_at
            .as_deref()
            .unwrap()
            .contains("tests/tests/extensible.rs")
    );

    let p = find("_functions/extensible/agent/Agent/handle/start");
    assert_eq!(p.kind, Some(PointKind::Async));
    assert_eq!(p.extensions[0].name, "handle_start");
    assert_eq!(
        p.extensions[0].runs_as,
        hookpoint::introspect::RunsAs::Async
    );

    // Declared points are listed even without extensions.
    let p = find("_functions/extensible/untouched/end");
    assert!(p.extensions.is_empty());
    find("_functions/extensible/agent/Agent/create/end");
    find("_functions/extensible/describe/start");
    assert!(
        !points.iter().any(|p| p.name.contains("Agent/plain")),
        "an unmarked method has no points"
    );
}

#[test]
fn validate_is_clean_for_extensible_fns_and_their_extensions() {
    if let Err(report) = hookpoint::validate() {
        panic!("{report}");
    }
}

// ---------------------------------------------------------------------------------------------
// The body stays the original body: `?`, early `return`, argument patterns, `mut` arguments.

#[extensible]
pub fn parse_sum(text: &str) -> Result<u32, AppError> {
    if text.is_empty() {
        return Ok(0);
    }
    let mut sum = 0;
    for part in text.split('+') {
        sum += part
            .trim()
            .parse::<u32>()
            .map_err(|e| AppError::Denied(e.to_string()))?;
    }
    Ok(sum)
}

#[extension(point = PARSE_SUM_END)]
fn parse_sum_doubles(end: &mut CallEnd<Result<u32, AppError>>) {
    if let Ok(v) = &mut end.result {
        *v *= 2;
    }
}

#[test]
fn body_with_question_mark_and_early_return_keeps_working() {
    assert_eq!(parse_sum(""), Ok(0));
    assert_eq!(parse_sum("1 + 2"), Ok(6));
    assert!(matches!(parse_sum("1 + x"), Err(AppError::Denied(_))));
}

#[extensible]
pub fn sum_pair((a, b): (u32, u32), mut c: u32) -> u32 {
    c += 1;
    a + b + c
}

#[extension(point = SUM_PAIR_START)]
fn sum_pair_replaces_tuple(call: &mut CallStart<((u32, u32), u32), u32>) {
    call.args.0 = (10, 20);
}

#[test]
fn pattern_and_mut_arguments_are_bound_after_start_extensions() {
    assert_eq!(sum_pair((1, 2), 3), 34);
}

// ---------------------------------------------------------------------------------------------
// Borrowed results, `Self` in signatures, impls with lifetime and type parameters.

#[extensible]
pub fn first_word(text: &str) -> &str {
    text.split(' ').next().unwrap_or("")
}

#[extension(point = FIRST_WORD_END)]
fn redact_secret(end: &mut CallEnd<&str>) {
    if end.result == "secret" {
        end.result = "[redacted]";
    }
}

#[test]
fn fn_returning_a_borrow_can_be_rewritten_by_end_extensions() {
    let owned = String::from("hello world");
    assert_eq!(first_word(&owned), "hello");
    assert_eq!(first_word("secret plan"), "[redacted]");
}

pub mod shapes {
    use hookpoint::extensible;

    #[derive(Debug, Clone, PartialEq)]
    pub struct Point {
        pub x: i32,
        pub y: i32,
    }

    #[extensible]
    impl Point {
        #[extensible]
        pub fn add(&self, other: &Self) -> Self {
            Point {
                x: self.x + other.x,
                y: self.y + other.y,
            }
        }
    }

    pub struct View<'a> {
        pub data: &'a [u32],
    }

    // The payload key names the owner type with lifetimes elided, not `Self` (which carries `'a`).
    #[extensible]
    impl<'a> View<'a> {
        #[extensible]
        pub fn total(&self) -> u32 {
            self.data.iter().sum()
        }
    }

    pub struct Boxed<T>(pub T);

    #[extensible]
    impl<T: std::fmt::Debug + 'static> Boxed<T> {
        #[extensible]
        pub fn show(&self) -> String {
            format!("{:?}", self.0)
        }
    }
}

use shapes::{Boxed, Point, View};

#[extension(point = Point::ADD_START)]
fn add_reads_self_typed_args(call: &mut CallStart<(&Point,), Point, &Point>) {
    if call.receiver().x == 0 && call.args.0.x == 0 {
        call.result = Some(Point { x: -1, y: -1 });
    }
}

#[extension(point = View::TOTAL_END)]
fn view_total_plus_len(end: &mut CallEnd<u32, &View<'_>>) {
    end.result += end.receiver().data.len() as u32 * 100;
}

#[extension(point = "_functions/extensible/shapes/Boxed/show/end")]
fn boxed_u8_only(end: &mut CallEnd<String, &Boxed<u8>>) {
    end.result = format!("u8:{}", end.receiver().0);
}

#[test]
fn method_with_self_in_its_signature_is_extensible() {
    let a = Point { x: 1, y: 2 };
    assert_eq!(a.add(&Point { x: 3, y: 4 }), Point { x: 4, y: 6 });
    let zero = Point { x: 0, y: 5 };
    assert_eq!(zero.add(&Point { x: 0, y: 1 }), Point { x: -1, y: -1 });
    assert_eq!(
        Point::ADD_START.name(),
        "_functions/extensible/shapes/Point/add/start"
    );
}

#[test]
fn method_of_an_impl_with_a_lifetime_parameter_is_extensible() {
    let data = vec![1, 2, 3];
    let view = View { data: &data };
    assert_eq!(view.total(), 306);
    assert_eq!(
        View::TOTAL_END.name(),
        "_functions/extensible/shapes/View/total/end"
    );
}

#[test]
fn method_of_a_generic_impl_runs_extensions_of_its_instantiation_only() {
    assert_eq!(Boxed(7u8).show(), "u8:7");
    assert_eq!(Boxed(7u16).show(), "7");
    assert_eq!(Boxed("s").show(), "\"s\"");
}

// ---------------------------------------------------------------------------------------------
// Extension policy, `&Cx`, and recursion through an extensible fn.

static LOGGED_BODY: AtomicUsize = AtomicUsize::new(0);

#[extensible]
pub fn tolerant(x: u32) -> u32 {
    LOGGED_BODY.fetch_add(1, Ordering::SeqCst);
    x + 1
}

#[extension(point = TOLERANT_START, on_error = "log")]
fn tolerant_failure(_: &mut CallStart<(u32,), u32>) -> Result<(), Error> {
    Err("logged, not fatal".into())
}

#[extension(point = TOLERANT_END)]
fn tolerant_end_sees_cx(cx: &hookpoint::Cx<'_>, end: &mut CallEnd<u32>) {
    assert_eq!(cx.point(), TOLERANT_END.name());
    assert_eq!(cx.depth(), 1);
    end.result *= 10;
}

#[test]
fn on_error_log_extension_failure_does_not_affect_the_call() {
    let before = LOGGED_BODY.load(Ordering::SeqCst);
    assert_eq!(
        tolerant(1),
        20,
        "no panic for a non-Result fn: the error is only logged"
    );
    assert_eq!(LOGGED_BODY.load(Ordering::SeqCst), before + 1);
}

#[extensible]
pub fn recurse_via_extension(n: u32) -> Result<u32, Error> {
    Ok(n)
}

#[extension(point = RECURSE_VIA_EXTENSION_START)]
fn call_self_again(call: &mut CallStart<(u32,), Result<u32, Error>>) -> Result<(), Error> {
    recurse_via_extension(call.args.0 + 1)?;
    Ok(())
}

#[test]
fn extensible_fn_called_from_its_own_start_extension_hits_the_depth_limit() {
    let err = recurse_via_extension(0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DepthLimit, "{err}");
}

// ---------------------------------------------------------------------------------------------
// A body's items and `use`s are the body's own, as in a plain fn: one that shadows a name of the
// signature (the return type, a type or pattern of an argument) leaves the signature as written.

pub mod shadowing {
    use hookpoint::extensible;

    #[derive(Debug, PartialEq)]
    pub struct Out(pub u32);

    pub mod other {
        pub struct Out;
    }

    #[extensible]
    pub fn body_struct_shadows_the_return_type(x: u32) -> Out {
        #[allow(dead_code)]
        struct Out;
        crate::shadowing::Out(x)
    }

    #[extensible]
    pub fn body_use_shadows_the_return_type(x: u32) -> Out {
        #[allow(unused_imports)]
        use other::Out;
        crate::shadowing::Out(x + 1)
    }

    #[extensible]
    pub async fn async_body_struct_shadows_the_return_type(x: u32) -> Out {
        #[allow(dead_code)]
        struct Out;
        crate::shadowing::Out(x + 2)
    }

    #[extensible]
    pub fn body_struct_shadows_an_argument_pattern(Out(x): Out) -> u32 {
        #[allow(dead_code)]
        struct Out;
        x + 3
    }

    pub struct Holder(pub u32);

    #[extensible]
    impl Holder {
        #[extensible]
        pub fn wrap(&self) -> Out {
            #[allow(unused_imports)]
            use other::Out;
            crate::shadowing::Out(self.0 + 4)
        }
    }
}

#[extension(point = shadowing::BODY_STRUCT_SHADOWS_THE_RETURN_TYPE_END)]
fn shadowed_result_is_the_signatures_type(end: &mut CallEnd<shadowing::Out>) {
    end.result.0 *= 10;
}

#[test]
fn body_items_shadowing_signature_names_leave_the_signature_as_written() {
    use shadowing::*;
    assert_eq!(body_struct_shadows_the_return_type(1), Out(10));
    assert_eq!(body_use_shadows_the_return_type(1), Out(2));
    assert_eq!(
        current_thread_rt().block_on(async_body_struct_shadows_the_return_type(1)),
        Out(3)
    );
    assert_eq!(body_struct_shadows_an_argument_pattern(Out(1)), 4);
    assert_eq!(Holder(1).wrap(), Out(5));
}
