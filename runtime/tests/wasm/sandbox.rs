//! The sandbox: traps, the time budget, the memory cap, grants, imports, and state that does not
//! leak between calls.

use hookpoint::ErrorKind;
use hookpoint::wasm::WasmError;

use super::guests::{Guest, counter, reader};
use super::{Layer, problems, run, wasm_error};

#[test]
fn a_trap_is_an_error_with_the_trap_message() {
    let layer = Layer::temp();
    layer.ext(
        "bad.wasm",
        Guest::answer("{}").with_body("unreachable").wasm(),
    );
    let e = run(&layer.scope()).expect_err("trap");
    assert_eq!((e.kind(), e.extension()), (ErrorKind::Wasm, Some("bad")));
    let WasmError::Trap { message, .. } = wasm_error(&e) else {
        panic!("not a trap: {e:?}");
    };
    assert!(message.contains("unreachable"), "{message}");
}

#[test]
fn a_runaway_recursion_traps_with_a_short_message() {
    let layer = Layer::temp();
    let guest = r#"(module
      (memory (export "memory") 1)
      (func $r (param i32) (result i32) (i32.add (call $r (local.get 0)) (i32.const 1)))
      (func (export "hookpoint_alloc") (param i32) (result i32) (i32.const 1024))
      (func (export "hookpoint_call") (param i32 i32) (result i64)
        (drop (call $r (i32.const 0)))
        (i64.const 0)))"#;
    layer.ext("deep.wat", guest);
    let e = run(&layer.scope()).expect_err("stack overflow");
    let WasmError::Trap { message, .. } = wasm_error(&e) else {
        panic!("not a trap: {e:?}");
    };
    assert!(
        message.starts_with("wasm trap: call stack exhausted"),
        "{message}"
    );
    assert!(message.contains("more frames"), "{message}");
    assert!(
        e.to_string().len() < 4096,
        "{} bytes: {e}",
        e.to_string().len()
    );
}

#[test]
fn an_infinite_loop_is_stopped_by_the_time_budget() {
    let layer = Layer::temp();
    layer.put(
        "g/spin.wasm",
        Guest::answer("{}").with_body("(loop $l (br $l))").wasm(),
    );
    layer.ext("spin.json", r#"{"wasm": "g/spin.wasm", "timeout_ms": 50}"#);
    let e = run(&layer.scope()).expect_err("interrupted");
    assert_eq!(
        (e.kind(), e.extension()),
        (ErrorKind::Timeout, Some("spin"))
    );
    assert!(
        matches!(wasm_error(&e), WasmError::TimedOut { after, .. } if after.as_millis() == 50),
        "{e:?}"
    );
    assert!(e.to_string().contains("time budget of 50 ms"), "{e}");
}

#[test]
fn a_memory_hungry_guest_is_stopped_by_the_cap() {
    let layer = Layer::temp();
    // Grows by 1 MiB until refused.
    let hog = "(loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))";
    layer.put("g/hog.wasm", Guest::answer("{}").with_body(hog).wasm());
    layer.ext("hog.json", r#"{"wasm": "g/hog.wasm", "max_memory_mb": 2}"#);
    let e = run(&layer.scope()).expect_err("capped");
    assert_eq!((e.kind(), e.extension()), (ErrorKind::Wasm, Some("hog")));
    assert!(
        matches!(wasm_error(&e), WasmError::MemoryCap { limit_bytes, .. } if *limit_bytes == 2 << 20),
        "{e:?}"
    );
}

#[test]
fn a_guest_cannot_read_a_file_without_a_grant() {
    let layer = Layer::temp();
    layer.put("secret.txt", "hunter2");
    layer.put("g/reader.wat", reader("secret.txt"));
    layer.ext("r.json", r#"{"wasm": "g/reader.wat"}"#);
    let e = run(&layer.scope()).expect_err("not granted");
    assert!(
        matches!(wasm_error(&e), WasmError::Failed { message, .. } if message == "read_file answered -1"),
        "{e:?}"
    );
    layer.ext(
        "r.json",
        r#"{"wasm": "g/reader.wat", "allowed_paths": ["secret.txt"]}"#,
    );
    let doc = run(&layer.scope()).expect("granted");
    assert_eq!(doc.text, "hunter2+tail");
}

#[test]
fn a_guest_that_imports_wasi_is_refused_at_load_with_why() {
    let layer = Layer::temp();
    let wasi = r#"(import "wasi_snapshot_preview1" "path_open"
        (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))"#;
    layer.ext("w.wasm", Guest::answer("{}").with_fields(wasi).wasm());
    let scope = layer.scope();
    let found = problems(&scope);
    assert!(
        found
            .iter()
            .any(|p| p.contains("imports `wasi_snapshot_preview1::path_open`")),
        "{found:?}"
    );
    assert_eq!(
        scope.snapshot().extension_names("wasm_doc"),
        ["compiled_tail"]
    );
}

#[test]
fn a_module_without_the_guest_interface_is_refused_with_why() {
    let layer = Layer::temp();
    layer.ext("m.wat", r#"(module (memory (export "memory") 1))"#);
    let found = problems(&layer.scope());
    assert!(
        found
            .iter()
            .any(|p| p.contains("has no function export `hookpoint_alloc`")),
        "{found:?}"
    );
}

#[test]
fn output_outside_the_guest_memory_is_a_bad_output() {
    let layer = Layer::temp();
    let wat = r#"(module (memory (export "memory") 1)
        (func (export "hookpoint_alloc") (param i32) (result i32) (i32.const 1024))
        (func (export "hookpoint_call") (param i32 i32) (result i64)
          (i64.or (i64.shl (i64.const 65000) (i64.const 32)) (i64.const 4096))))"#;
    layer.ext("o.wat", wat);
    let e = run(&layer.scope()).expect_err("bad output");
    assert!(
        matches!(wasm_error(&e), WasmError::BadOutput { .. }),
        "{e:?}"
    );
}

#[test]
fn state_does_not_leak_between_calls_unless_the_guest_keeps_it() {
    let layer = Layer::temp();
    layer.ext("fresh.wasm", counter(false).wasm());
    let scope = layer.scope();
    let counts: Vec<u32> = (0..3).map(|_| run(&scope).expect("dispatch").n).collect();
    assert_eq!(counts, [1, 1, 1], "every call starts from a fresh instance");
    layer.ext("fresh.wasm", counter(true).wasm());
    let scope = layer.scope();
    let counts: Vec<u32> = (0..3).map(|_| run(&scope).expect("dispatch").n).collect();
    assert_eq!(
        counts,
        [1, 2, 3],
        "hookpoint_keep_state: the instance is reused"
    );
}

#[test]
fn a_stateful_instance_that_trapped_is_not_reused() {
    let layer = Layer::temp();
    // Traps on its second call; the next call must start over (count 1), not see count 2.
    let g = counter(true).with_body(
        "(global.set $count (i32.add (global.get $count) (i32.const 1)))
         (if (i32.eq (global.get $count) (i32.const 2)) (then unreachable))
         (i32.store8 (i32.const 32) (i32.add (i32.const 48) (global.get $count)))",
    );
    layer.ext("c.wasm", g.wasm());
    let scope = layer.scope();
    assert_eq!(run(&scope).expect("first").n, 1);
    run(&scope).expect_err("second traps");
    assert_eq!(run(&scope).expect("third").n, 1, "a new instance");
}

#[test]
fn many_threads_dispatch_at_once_each_in_its_own_instance() {
    let layer = Layer::temp();
    layer.ext("fresh.wasm", counter(false).wasm());
    let scope = layer.scope();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..100 {
                    assert_eq!(run(&scope).expect("dispatch").n, 1);
                }
            });
        }
    });
}

#[test]
fn the_clock_answers_only_when_granted() {
    let layer = Layer::temp();
    let clock = Guest::answer("{}")
        .with_fields(r#"(import "hookpoint" "now_ms" (func $now (result i64)))"#)
        .with_body("(if (i64.lt_s (call $now) (i64.const 0)) (then unreachable))");
    layer.put("g/clock.wasm", clock.wasm());
    layer.ext("c.json", r#"{"wasm": "g/clock.wasm"}"#);
    let e = run(&layer.scope()).expect_err("no clock: now_ms answered -1");
    assert!(matches!(wasm_error(&e), WasmError::Trap { .. }), "{e:?}");
    layer.ext("c.json", r#"{"wasm": "g/clock.wasm", "clock": true}"#);
    run(&layer.scope()).expect("granted: now_ms told the time");
}
