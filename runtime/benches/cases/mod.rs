//! The benchmarked cases, shared by the criterion benchmark (`dispatch.rs`) and the instruction
//! counts (`instructions.rs`): each case is one fn that runs its subject once on
//! `black_box`ed inputs, and sits in a group with its baseline.
//!
//! - `dispatch/{1,10,100}`: a typed `point!` `SyncPoint` vs a hand-written loop over a
//!   `&[fn(&mut Payload)]` of the same handler fns; at 10 also `call_sync("name")` and `call!`.
//! - `empty_point`: a typed point with no extension vs an empty fn call.
//! - `extensible_sync`, `extensible_async`, `extensible_hooked`: an `#[extensible]` fn (no
//!   extensions; 1 start + 1 end extension) vs the same fn undecorated.
//! - `wrap/0`: a `WrapPoint` with no extension around an inner step vs calling the step;
//!   `wrap/3`: three wrap extensions vs the same three layers nested by hand as closures.
//!
//! Entry points are `#[inline(never)]` and called through `black_box`ed fn pointers, so neither
//! side can be folded into the measurement loop.

#![allow(dead_code)]

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use hookpoint::{CallEnd, CallStart, Error, Next, Outcome, extensible, extension, point};

/// The payload every dispatched handler receives.
pub struct Payload(u64);

point! {
    static P0: SyncPoint<Payload> = "bench/p0";
    static P1: SyncPoint<Payload> = "bench/p1";
    static P10: SyncPoint<Payload> = "bench/p10";
    static P100: SyncPoint<Payload> = "bench/p100";
}

/// Emits one `#[extension(point = $point, order = N)]` handler per `name = N` and a slice `$hand`
/// of the same fns, in dispatch order, for the hand-written baseline.
macro_rules! extensions {
    ($point:ident, $hand:ident: $($f:ident = $n:tt),* $(,)?) => {
        $(
            #[extension(point = $point, order = $n)]
            fn $f(p: &mut Payload) {
                p.0 = p.0.wrapping_add($n);
            }
        )*
        static $hand: &[fn(&mut Payload)] = &[$($f),*];
    };
}

extensions!(P1, HAND1: h1_0 = 0);
extensions!(P10, HAND10:
    h10_0 = 0, h10_1 = 1, h10_2 = 2, h10_3 = 3, h10_4 = 4, h10_5 = 5, h10_6 = 6, h10_7 = 7,
    h10_8 = 8, h10_9 = 9
);
extensions!(P100, HAND100:
    h100_0 = 0, h100_1 = 1, h100_2 = 2, h100_3 = 3, h100_4 = 4, h100_5 = 5, h100_6 = 6, h100_7 = 7,
    h100_8 = 8, h100_9 = 9, h100_10 = 10, h100_11 = 11, h100_12 = 12, h100_13 = 13, h100_14 = 14, h100_15 = 15,
    h100_16 = 16, h100_17 = 17, h100_18 = 18, h100_19 = 19, h100_20 = 20, h100_21 = 21, h100_22 = 22, h100_23 = 23,
    h100_24 = 24, h100_25 = 25, h100_26 = 26, h100_27 = 27, h100_28 = 28, h100_29 = 29, h100_30 = 30, h100_31 = 31,
    h100_32 = 32, h100_33 = 33, h100_34 = 34, h100_35 = 35, h100_36 = 36, h100_37 = 37, h100_38 = 38, h100_39 = 39,
    h100_40 = 40, h100_41 = 41, h100_42 = 42, h100_43 = 43, h100_44 = 44, h100_45 = 45, h100_46 = 46, h100_47 = 47,
    h100_48 = 48, h100_49 = 49, h100_50 = 50, h100_51 = 51, h100_52 = 52, h100_53 = 53, h100_54 = 54, h100_55 = 55,
    h100_56 = 56, h100_57 = 57, h100_58 = 58, h100_59 = 59, h100_60 = 60, h100_61 = 61, h100_62 = 62, h100_63 = 63,
    h100_64 = 64, h100_65 = 65, h100_66 = 66, h100_67 = 67, h100_68 = 68, h100_69 = 69, h100_70 = 70, h100_71 = 71,
    h100_72 = 72, h100_73 = 73, h100_74 = 74, h100_75 = 75, h100_76 = 76, h100_77 = 77, h100_78 = 78, h100_79 = 79,
    h100_80 = 80, h100_81 = 81, h100_82 = 82, h100_83 = 83, h100_84 = 84, h100_85 = 85, h100_86 = 86, h100_87 = 87,
    h100_88 = 88, h100_89 = 89, h100_90 = 90, h100_91 = 91, h100_92 = 92, h100_93 = 93, h100_94 = 94, h100_95 = 95,
    h100_96 = 96, h100_97 = 97, h100_98 = 98, h100_99 = 99
);

type Dispatch = fn(&mut Payload) -> Result<Outcome, Error>;
type Hand = fn(&[fn(&mut Payload)], &mut Payload);

#[inline(never)]
fn hand_loop(handlers: &[fn(&mut Payload)], p: &mut Payload) {
    for f in handlers {
        f(p);
    }
}

#[inline(never)]
fn typed1(p: &mut Payload) -> Result<Outcome, Error> {
    P1.call(p)
}

#[inline(never)]
fn typed10(p: &mut Payload) -> Result<Outcome, Error> {
    P10.call(p)
}

#[inline(never)]
fn typed100(p: &mut Payload) -> Result<Outcome, Error> {
    P100.call(p)
}

#[inline(never)]
fn string10(p: &mut Payload) -> Result<Outcome, Error> {
    hookpoint::call_sync("bench/p10", p)
}

#[inline(never)]
fn call_macro10(p: &mut Payload) -> Result<Outcome, Error> {
    hookpoint::call!("bench/p10", p)
}

#[inline(never)]
fn typed0(p: &mut Payload) -> Result<Outcome, Error> {
    P0.call(p)
}

#[inline(never)]
fn empty_fn(_p: &mut Payload) -> Result<Outcome, Error> {
    Ok(Outcome::default())
}

pub fn run_dispatch(f: Dispatch) -> u64 {
    let f = black_box(f);
    let mut p = Payload(black_box(1));
    let ok = f(black_box(&mut p)).is_ok();
    black_box(ok);
    p.0
}

pub fn run_hand(handlers: &'static [fn(&mut Payload)]) -> u64 {
    let f: Hand = black_box(hand_loop);
    let mut p = Payload(black_box(1));
    f(black_box(handlers), black_box(&mut p));
    p.0
}

/// A little real work: sum a 16-element array read through a reference.
macro_rules! sum16_body {
    ($a:expr) => {
        $a.iter().fold(0u64, |s, x| s.wrapping_add(*x))
    };
}

#[inline(never)]
fn sum16_plain(a: &[u64; 16]) -> u64 {
    sum16_body!(a)
}

#[extensible]
#[inline(never)]
fn sum16_ext(a: &[u64; 16]) -> u64 {
    sum16_body!(a)
}

#[inline(never)]
async fn asum16_plain(a: &[u64; 16]) -> u64 {
    sum16_body!(a)
}

#[extensible]
#[inline(never)]
async fn asum16_ext(a: &[u64; 16]) -> u64 {
    sum16_body!(a)
}

/// Polls a future that never waits once, with a no-op waker (no executor in the measurement).
#[inline(always)]
fn poll_once<F: Future>(fut: F) -> F::Output {
    let fut = pin!(fut);
    match fut.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => unreachable!("the benchmarked futures never wait"),
    }
}

#[inline(never)]
fn poll_plain(a: &[u64; 16]) -> u64 {
    poll_once(asum16_plain(a))
}

#[inline(never)]
fn poll_ext(a: &[u64; 16]) -> u64 {
    poll_once(asum16_ext(a))
}

#[extensible]
#[inline(never)]
fn sum16_hooked(a: &[u64; 16]) -> u64 {
    sum16_body!(a)
}

fn start_work(args: &mut (&[u64; 16],)) {
    black_box(&mut args.0);
}

fn end_work(result: &mut u64) {
    *result = result.wrapping_add(1);
}

#[extension(point = SUM16_HOOKED_START)]
fn hooked_start(call: &mut CallStart<(&[u64; 16],), u64>) {
    start_work(&mut call.args);
}

#[extension(point = SUM16_HOOKED_END)]
fn hooked_end(call: &mut CallEnd<u64>) {
    end_work(&mut call.result);
}

/// What the two extensions do, written by hand: a start fn and an end fn through fn pointers.
#[inline(never)]
fn sum16_hand_hooked(a: &[u64; 16], start: fn(&mut (&[u64; 16],)), end: fn(&mut u64)) -> u64 {
    let mut args = (a,);
    start(&mut args);
    let mut r = sum16_body!(args.0);
    end(&mut r);
    r
}

type Sum = fn(&[u64; 16]) -> u64;
type HandHooked = fn(&[u64; 16], fn(&mut (&[u64; 16],)), fn(&mut u64)) -> u64;

fn run_hand_hooked(a: &[u64; 16]) -> u64 {
    let f: HandHooked = black_box(sum16_hand_hooked);
    f(black_box(a), black_box(start_work), black_box(end_work))
}

fn run_sum(f: Sum, a: &[u64; 16]) -> u64 {
    black_box(f)(black_box(a))
}

point! {
    static W0: WrapPoint<Payload, u64> = "bench/w0";
    static W3: WrapPoint<Payload, u64> = "bench/w3";
}

/// One layer of the wrap cases: one add, then the rest of the nest.
macro_rules! wrap_layers {
    ($($f:ident = $n:tt),*) => {
        $(
            #[extension(point = W3, order = $n)]
            fn $f(p: &mut Payload, mut next: Next<'_, Payload, u64>) -> Result<u64, Error> {
                p.0 = p.0.wrapping_add($n);
                next.run(p)
            }
        )*
    };
}

wrap_layers!(w3_1 = 1, w3_2 = 2, w3_3 = 3);

type Step = fn(&mut Payload) -> Result<u64, Error>;
type HandLayer =
    fn(&mut Payload, &mut dyn FnMut(&mut Payload) -> Result<u64, Error>) -> Result<u64, Error>;

/// The inner step of the wrap cases.
#[inline(never)]
fn wrap_inner(p: &mut Payload) -> Result<u64, Error> {
    Ok(p.0)
}

macro_rules! hand_layer {
    ($f:ident = $n:tt) => {
        fn $f(
            p: &mut Payload,
            next: &mut dyn FnMut(&mut Payload) -> Result<u64, Error>,
        ) -> Result<u64, Error> {
            p.0 = p.0.wrapping_add($n);
            next(p)
        }
    };
}

hand_layer!(hand_w1 = 1);
hand_layer!(hand_w2 = 2);
hand_layer!(hand_w3 = 3);

static HAND_LAYERS: [HandLayer; 3] = [hand_w1, hand_w2, hand_w3];

/// The three layers nested by hand: each a fn pointer given the rest as a `&mut dyn FnMut`.
#[inline(never)]
fn hand_nest3(layers: &[HandLayer; 3], p: &mut Payload, inner: Step) -> Result<u64, Error> {
    layers[0](p, &mut |p| {
        layers[1](p, &mut |p| layers[2](p, &mut |p| inner(p)))
    })
}

#[inline(never)]
fn wrap0(p: &mut Payload, inner: Step) -> Result<u64, Error> {
    W0.call(p, inner)
}

#[inline(never)]
fn wrap3(p: &mut Payload, inner: Step) -> Result<u64, Error> {
    W3.call(p, inner)
}

#[inline(never)]
fn step_direct(p: &mut Payload, inner: Step) -> Result<u64, Error> {
    inner(p)
}

type WrapCall = fn(&mut Payload, Step) -> Result<u64, Error>;

fn run_wrap(f: WrapCall) -> u64 {
    let mut p = Payload(black_box(1));
    black_box(f)(black_box(&mut p), black_box(wrap_inner)).unwrap_or(0)
}

fn run_hand_nest() -> u64 {
    let f: fn(&[HandLayer; 3], &mut Payload, Step) -> Result<u64, Error> = black_box(hand_nest3);
    let mut p = Payload(black_box(1));
    f(
        black_box(&HAND_LAYERS),
        black_box(&mut p),
        black_box(wrap_inner),
    )
    .unwrap_or(0)
}

/// One benchmarked subject: its group (shared with its baseline), its name, one run.
pub struct Case {
    /// The criterion group, e.g. `dispatch/1`.
    pub group: &'static str,
    /// The name inside the group, e.g. `typed_point`.
    pub name: &'static str,
    /// Runs the subject once.
    pub run: fn() -> u64,
    /// The baseline's name in the same group (`None` for a baseline).
    pub baseline: Option<&'static str>,
}

static SUM_INPUT: [u64; 16] = [1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 40, 43, 46];

fn sum_input() -> &'static [u64; 16] {
    black_box(&SUM_INPUT)
}

macro_rules! case {
    ($group:literal, $name:literal, $baseline:expr, $run:expr) => {
        Case {
            group: $group,
            name: $name,
            run: $run,
            baseline: $baseline,
        }
    };
}

/// Every case, baselines first in each group.
pub static CASES: &[Case] = &[
    case!("dispatch/1", "hand_loop", None, || run_hand(HAND1)),
    case!("dispatch/1", "typed_point", Some("hand_loop"), || {
        run_dispatch(typed1)
    }),
    case!("dispatch/10", "hand_loop", None, || run_hand(HAND10)),
    case!("dispatch/10", "typed_point", Some("hand_loop"), || {
        run_dispatch(typed10)
    }),
    case!("dispatch/10", "call_macro", Some("hand_loop"), || {
        run_dispatch(call_macro10)
    }),
    case!("dispatch/10", "call_sync_str", Some("hand_loop"), || {
        run_dispatch(string10)
    }),
    case!("dispatch/100", "hand_loop", None, || run_hand(HAND100)),
    case!("dispatch/100", "typed_point", Some("hand_loop"), || {
        run_dispatch(typed100)
    }),
    case!("empty_point", "empty_fn", None, || run_dispatch(empty_fn)),
    case!("empty_point", "typed_point", Some("empty_fn"), || {
        run_dispatch(typed0)
    }),
    case!("extensible_sync", "plain_fn", None, || run_sum(
        sum16_plain,
        sum_input()
    )),
    case!("extensible_sync", "extensible", Some("plain_fn"), || {
        run_sum(sum16_ext, sum_input())
    }),
    case!("extensible_async", "plain_fn", None, || run_sum(
        poll_plain,
        sum_input()
    )),
    case!("extensible_async", "extensible", Some("plain_fn"), || {
        run_sum(poll_ext, sum_input())
    }),
    case!("extensible_hooked", "hand_start_end", None, || {
        run_hand_hooked(sum_input())
    }),
    case!(
        "extensible_hooked",
        "extensible_1start_1end",
        Some("hand_start_end"),
        || { run_sum(sum16_hooked, sum_input()) }
    ),
    case!("wrap/0", "inner_step", None, || run_wrap(step_direct)),
    case!("wrap/0", "wrap_point", Some("inner_step"), || run_wrap(
        wrap0
    )),
    case!("wrap/3", "hand_nested", None, run_hand_nest),
    case!("wrap/3", "wrap_point", Some("hand_nested"), || run_wrap(
        wrap3
    )),
];

/// Checks that each subject does the same work as its baseline, and warms every cache (the
/// default scope, the call sites).
pub fn check() {
    for (f, hand) in [
        (typed1 as Dispatch, HAND1),
        (typed10, HAND10),
        (typed100, HAND100),
    ] {
        assert_eq!(run_dispatch(f), run_hand(hand));
    }
    assert_eq!(run_dispatch(string10), run_hand(HAND10));
    assert_eq!(run_dispatch(call_macro10), run_hand(HAND10));
    assert_eq!(run_dispatch(typed0), 1);
    let a = &SUM_INPUT;
    let want = sum16_plain(a);
    assert_eq!(sum16_ext(a), want);
    assert_eq!(poll_plain(a), want);
    assert_eq!(poll_ext(a), want);
    assert_eq!(sum16_hooked(a), want + 1);
    assert_eq!(sum16_hand_hooked(a, start_work, end_work), want + 1);
    assert_eq!(run_wrap(wrap0), 1);
    assert_eq!(run_wrap(wrap3), 7);
    assert_eq!(run_hand_nest(), 7);
    for case in CASES {
        black_box((case.run)());
    }
}
