//! A snapshot's drop can run user code: a registered closure's captured value with a `Drop` that
//! dispatches (and even registers) on the same thread. This thread's copy of the default
//! snapshot releases retired snapshots while it refreshes, so that code re-enters the refresh.
//!
//! A binary of its own: the default scope here sees only this file's registrations.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use hookpoint::{Registration, Scope, extension, point};

point! {
    /// The closure under test drops its own registration here.
    pub static OUTER: SyncPoint<u32> = "reentrant_outer";
    /// Dispatched inside `OUTER`'s closure, after the removal: a nested refresh retires the old
    /// snapshot. Never empty (a compiled-in extension), so every call dispatches.
    pub static NESTED: SyncPoint<u32> = "reentrant_nested";
    /// Dispatched from the captured value's `Drop`.
    pub static FROM_DROP: SyncPoint<u32> = "reentrant_from_drop";
}

#[extension(point = NESTED)]
fn nested_count(n: &mut u32) {
    *n += 10;
}

/// Dispatches `FROM_DROP` when dropped: first alone, then with a closure it registers (a
/// publish while the thread's copy is refreshing), and records what the closures counted.
struct DispatchesOnDrop {
    seen: Arc<AtomicU32>,
}

impl Drop for DispatchesOnDrop {
    fn drop(&mut self) {
        let mut n = 0u32;
        FROM_DROP.call(&mut n).expect("dispatch from a drop");
        let _guard = Scope::default_scope()
            .register(&FROM_DROP)
            .name("late")
            .run(|n: &mut u32| *n += 1)
            .expect("register from a drop");
        FROM_DROP
            .call(&mut n)
            .expect("dispatch after registering from a drop");
        self.seen.fetch_add(100 + n, Ordering::SeqCst);
    }
}

#[test]
fn a_snapshot_whose_drop_dispatches_is_released_safely() {
    let default = Scope::default_scope();
    let seen = Arc::new(AtomicU32::new(0));
    let me: Arc<Mutex<Option<Registration>>> = Arc::default();
    let slot = me.clone();
    let noisy = DispatchesOnDrop { seen: seen.clone() };
    let guard = default
        .register(&OUTER)
        .name("self_removing")
        .run(move |n: &mut u32| {
            let _keep = &noisy;
            *n += 1;
            // Publishes a snapshot without this closure; the running one is still in use.
            drop(slot.lock().unwrap().take());
            // A nested dispatch refreshes this thread's copy: the old snapshot is retired.
            NESTED.call(n).expect("nested dispatch");
        })
        .expect("register");
    *me.lock().unwrap() = Some(guard);
    // Warm this thread's copy so the next dispatch refreshes it rather than loading anew.
    NESTED.call(&mut 0).unwrap();
    let mut n = 0u32;
    OUTER.call(&mut n).unwrap();
    assert_eq!(n, 11, "the closure, then the nested dispatch");
    assert_eq!(seen.load(Ordering::SeqCst), 0, "still retired, not dropped");
    // After another publish, the next dispatch at depth 0 refreshes this thread's copy and
    // releases the retired snapshot, and with it the closure.
    let _other = default
        .register(&NESTED)
        .name("other")
        .run(|_: &mut u32| {})
        .unwrap();
    let mut n = 0u32;
    NESTED.call(&mut n).unwrap();
    assert_eq!(n, 10);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        101,
        "the drop dispatched twice, the second time with its own closure"
    );
    // The thread's copy is still sound: it sees a new registration.
    let _again = default
        .register(&OUTER)
        .name("again")
        .run(|n: &mut u32| *n += 7)
        .unwrap();
    let mut n = 0u32;
    OUTER.call(&mut n).unwrap();
    assert_eq!(n, 7);
}
