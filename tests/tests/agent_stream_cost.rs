//! A streamed reply costs the runtime the same per chunk however long the text so far is.
//!
//! Measured without a clock: this test binary counts the bytes allocated on the test's own
//! thread (the agent runs on a current-thread runtime there). Work that copies or rebuilds the
//! text so far at each chunk — the log entry, the masking, the trace — allocates in proportion
//! to it, so a reply four times as long would allocate about sixteen times as much; per-chunk
//! work that depends only on the chunk allocates about four times as much.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookpoint_extensions::prelude::*;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting the bytes each thread asks for.
struct Counting;

// SAFETY: every call is forwarded to `System` unchanged; the counter is a const-initialized
// thread-local `Cell` without a destructor, so touching it neither allocates nor re-enters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|c| c.set(c.get() + layout.size() as u64));
        // SAFETY: the caller's contract for `alloc` is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation goes there).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATED.try_with(|c| c.set(c.get() + new_size as u64));
        // SAFETY: as for `dealloc`; the caller guarantees `new_size` is valid for `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocated() -> u64 {
    ALLOCATED.with(Cell::get)
}

/// Bytes allocated while an agent (with a secret, and traced) streams an answer of about
/// `len` bytes in 24-character chunks, and how many chunk points fired.
fn stream_cost(len: usize) -> (u64, usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let text = "lorem ipsum dolor sit amet, ".repeat(len / 28);
    let model = ScriptedModel::new("m").reply(ScriptedReply::respond(&text));
    let chunks = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&chunks);
    let mut agent = Agent::builder("stream-cost")
        .model(model)
        .secrets(SecretStore::from_pairs([(
            "API_KEY",
            "sk-TOPSECRET-0123456789",
        )]))
        .trace(move |t| {
            if t.point == "response_stream_chunk" {
                seen.fetch_add(1, Ordering::Relaxed);
            }
        })
        .build()
        .expect("agent");
    let before = allocated();
    let reply = rt.block_on(agent.send("write a lot")).expect("send");
    let cost = allocated() - before;
    assert_eq!(reply.text, text);
    (cost, chunks.load(Ordering::Relaxed))
}

#[test]
fn a_long_streamed_reply_costs_the_same_per_chunk_as_a_short_one() {
    let (short, short_chunks) = stream_cost(32 * 1024);
    let (long, long_chunks) = stream_cost(128 * 1024);
    assert!(
        short_chunks > 1000 && long_chunks > 3 * short_chunks,
        "{short_chunks} and {long_chunks} chunks"
    );
    let ratio = long as f64 / short as f64;
    eprintln!("{short} B for {short_chunks} chunks, {long} B for {long_chunks}: {ratio:.2}×");
    assert!(
        ratio < 6.0,
        "4× the text allocated {ratio:.1}× the bytes ({short} B for {short_chunks} chunks, \
         {long} B for {long_chunks}): the work per chunk grows with the text so far"
    );
}
