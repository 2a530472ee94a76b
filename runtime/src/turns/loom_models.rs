//! Loom models of turn-taking (`RUSTFLAGS="--cfg loom" cargo test -p hookpoint --lib --release
//! loom_models`): [`Turns`] itself, on loom's lock and condition variable.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::Turns;

/// Two threads toggling one plugin: one holds the turn at a time, both get it (no deadlock, no
/// lost wake-up: loom fails a model whose threads all block), and the holder asking again is
/// refused instead of waiting.
#[test]
fn loom_models_two_toggles_take_turns() {
    loom::model(|| {
        let turns = Arc::new(Turns::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let toggle = {
            let (turns, inside, done) =
                (Arc::clone(&turns), Arc::clone(&inside), Arc::clone(&done));
            move || {
                let turn = turns
                    .take("memory")
                    .expect("another thread's turn is waited for");
                assert_eq!(
                    inside.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two threads held the turn"
                );
                assert!(
                    turns.take("memory").is_err(),
                    "the holder asking again must be refused"
                );
                inside.fetch_sub(1, Ordering::SeqCst);
                drop(turn);
                done.fetch_add(1, Ordering::SeqCst);
            }
        };
        let other = thread::spawn(toggle.clone());
        toggle();
        other.join().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 2);
    });
}

/// Turns for different names do not wait for each other.
#[test]
fn loom_models_turns_for_different_names_are_independent() {
    loom::model(|| {
        let turns = Arc::new(Turns::default());
        let held = turns.take("a").unwrap();
        let other = {
            let turns = Arc::clone(&turns);
            thread::spawn(move || drop(turns.take("b").unwrap()))
        };
        // Joined while "a" is held: a wait on "a" would deadlock, which loom reports.
        other.join().unwrap();
        drop(held);
    });
}
