//! Hot reload: last good versions, the compiled-module cache across scopes (a restart), pins,
//! and swapping a module while other threads dispatch.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use super::guests::Guest;
use super::{Layer, problems, run};

fn version(n: u32) -> Vec<u8> {
    Guest::answer(&format!(r#"{{"payload":{{"n":{n},"text":"v{n}"}}}}"#)).wasm()
}

#[test]
fn a_corrupt_module_keeps_its_last_good_version_until_fixed() {
    let layer = Layer::temp();
    let path = layer.ext("x.wasm", version(1));
    let scope = layer.scope();
    assert_eq!(run(&scope).expect("v1").n, 1);
    layer.ext("x.wasm", b"\0asm\x01\0\0\0garbage");
    scope.reload();
    let found = problems(&scope);
    assert!(
        found
            .iter()
            .any(|p| p.starts_with(&path.display().to_string()) && p.contains("does not compile")),
        "{found:?}"
    );
    assert_eq!(run(&scope).expect("last good").n, 1);
    layer.ext("x.wasm", version(2));
    scope.reload();
    assert_eq!(problems(&scope), Vec::<String>::new());
    assert_eq!(run(&scope).expect("v2").n, 2);
}

#[test]
fn a_module_that_breaks_the_interface_keeps_the_last_good_version() {
    let layer = Layer::temp();
    layer.ext(
        "x.wat",
        Guest::answer(r#"{"payload":{"n":1,"text":""}}"#).wat(),
    );
    let scope = layer.scope();
    assert_eq!(run(&scope).expect("v1").n, 1);
    layer.ext("x.wat", r#"(module (memory (export "memory") 1))"#);
    scope.reload();
    assert!(
        problems(&scope)
            .iter()
            .any(|p| p.contains("hookpoint_alloc"))
    );
    assert_eq!(run(&scope).expect("last good").n, 1);
}

#[test]
fn text_that_does_not_assemble_is_reported_at_its_line_and_column() {
    let layer = Layer::temp();
    let path = layer.ext(
        "x.wat",
        Guest::answer(r#"{"payload":{"n":1,"text":""}}"#).wat(),
    );
    let scope = layer.scope();
    assert_eq!(run(&scope).expect("v1").n, 1);
    std::fs::write(
        &path,
        "(module\n  (memory (export \"memory\") 1))\n  (oops)\n",
    )
    .expect("write");
    scope.reload();
    let status = scope.status();
    let problem = status
        .problems
        .iter()
        .find(|p| p.path() == path)
        .unwrap_or_else(|| panic!("a problem for x.wat: {status:?}"));
    assert_eq!(
        (problem.line, problem.column),
        (Some(3), Some(3)),
        "{problem}"
    );
    assert!(
        problem.message.starts_with("not valid WebAssembly text: "),
        "{problem}"
    );
    assert!(!problem.message.contains('\n'), "{problem}");
    assert_eq!(run(&scope).expect("last good").n, 1);

    // Columns are characters, also after wide characters and past column 500.
    let wide = "(module (func (export \"日本語\") (i32.bogus)))";
    let long = format!("(module (data \"{}\") (bogus))", "x".repeat(600));
    for (text, column) in [(wide.to_owned(), 31), (long, 620)] {
        std::fs::write(&path, &text).expect("write");
        scope.reload();
        let status = scope.status();
        let problem = status
            .problems
            .iter()
            .find(|p| p.path() == path)
            .expect("a problem");
        assert_eq!(
            (problem.line, problem.column),
            (Some(1), Some(column)),
            "{problem}"
        );
    }
}

#[test]
fn a_module_made_group_writable_is_refused_and_its_last_good_version_runs() {
    use std::os::unix::fs::PermissionsExt;
    let layer = Layer::temp();
    let path = layer.ext("x.wasm", version(1));
    let scope = layer.scope();
    std::fs::write(&path, version(2)).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    scope.reload();
    assert!(
        problems(&scope)
            .iter()
            .any(|p| p.contains("writable by group or others"))
    );
    assert_eq!(run(&scope).expect("last good").n, 1, "v2 is never read");
}

#[test]
fn the_compiled_module_cache_survives_a_restart() {
    let layer = Layer::temp();
    layer.ext("x.wasm", version(1));
    let first = layer.scope();
    assert_eq!(run(&first).expect("dispatch").n, 1);
    let stats = first.wasm_stats();
    assert_eq!((stats.compiled, stats.written, stats.from_disk), (1, 1, 0));
    for _ in 0..3 {
        first.reload();
    }
    assert_eq!(
        first.wasm_stats().compiled,
        1,
        "reloads do not recompile an unchanged module"
    );
    drop(first);
    // A second scope has an empty memory cache, as a restarted process does.
    let second = layer.scope();
    let stats = second.wasm_stats();
    assert_eq!(
        (stats.compiled, stats.from_disk),
        (0, 1),
        "loaded from disk, not compiled"
    );
    assert_eq!(run(&second).expect("dispatch").n, 1);
}

#[test]
fn going_back_to_an_earlier_version_loads_it_from_the_disk_cache() {
    let layer = Layer::temp();
    layer.ext("x.wasm", version(1));
    let scope = layer.scope();
    layer.ext("x.wasm", version(2));
    scope.reload();
    layer.ext("x.wasm", version(1));
    scope.reload();
    let stats = scope.wasm_stats();
    assert_eq!((stats.compiled, stats.from_disk), (2, 1), "{stats:?}");
    assert_eq!(run(&scope).expect("dispatch").n, 1);
}

#[test]
fn a_damaged_cache_entry_is_recompiled() {
    let layer = Layer::temp();
    layer.ext("x.wasm", version(1));
    drop(layer.scope());
    let entries: Vec<_> = walk(&layer.cache_dir())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let mut bytes = std::fs::read(&entries[0]).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&entries[0], bytes).expect("write");
    let scope = layer.scope();
    let stats = scope.wasm_stats();
    assert_eq!((stats.compiled, stats.from_disk), (1, 0));
    assert_eq!(run(&scope).expect("dispatch").n, 1);
}

#[test]
fn a_cache_folder_others_can_write_is_not_used_and_the_status_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let layer = Layer::temp();
    layer.ext("x.wasm", version(1));
    std::fs::create_dir_all(layer.cache_dir()).expect("mkdir");
    std::fs::set_permissions(layer.cache_dir(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod");
    let first = layer.scope();
    let warnings = first.status().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.to_string().contains("compiled-module cache is off")
                && w.to_string().contains("mode 777")),
        "{warnings:?}"
    );
    assert_eq!(run(&first).expect("still runs").n, 1);
    assert_eq!(first.wasm_stats().written, 0);
    assert!(walk(&layer.cache_dir()).is_empty(), "nothing written there");
}

#[test]
fn a_sha256_pin_refuses_a_changed_module_and_keeps_the_verified_one() {
    use sha2::Digest;
    let layer = Layer::temp();
    let v1 = version(1);
    let sum: String = sha2::Sha256::digest(&v1)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    layer.put("g/x.wasm", &v1);
    let manifest = format!(r#"{{"wasm": "g/x.wasm", "sha256": "{sum}"}}"#);
    layer.ext("x.json", &manifest);
    let scope = layer.scope();
    assert_eq!(run(&scope).expect("verified").n, 1);
    layer.put("g/x.wasm", version(2));
    scope.reload();
    assert!(
        problems(&scope)
            .iter()
            .any(|p| p.contains("`sha256` pin does not match"))
    );
    assert_eq!(run(&scope).expect("last verified").n, 1);
}

#[test]
fn reloading_a_new_version_while_threads_dispatch_never_tears_a_call() {
    let layer = Layer::temp();
    layer.ext("x.wasm", version(1));
    let scope = layer.scope();
    let done = AtomicBool::new(false);
    let calls = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                while !done.load(Ordering::Acquire) {
                    let doc = run(&scope).expect("no call fails while reloading");
                    let whole = (doc.n == 1 && doc.text == "v1+tail")
                        || (doc.n == 2 && doc.text == "v2+tail");
                    assert!(whole, "a torn call: {doc:?}");
                    calls.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        for i in 0..20 {
            layer.ext("x.wasm", version(if i % 2 == 0 { 2 } else { 1 }));
            scope.reload();
            std::thread::sleep(Duration::from_millis(2));
        }
        done.store(true, Ordering::Release);
    });
    assert!(calls.load(Ordering::Relaxed) > 0);
    // The last reload installed version 1 (i = 19): every call from now on sees it.
    assert_eq!(run(&scope).expect("dispatch").n, 1);
}

#[cfg(all(feature = "watch", unix))]
#[test]
fn a_module_dropped_into_a_watched_folder_takes_effect() {
    let layer = Layer::temp();
    std::fs::create_dir_all(layer.root().join("extensions/wasm_doc")).expect("mkdir");
    let scope = layer
        .builder()
        .watch(true)
        .debounce(Duration::from_millis(20))
        .build()
        .expect("scope");
    let (tx, rx) = std::sync::mpsc::channel();
    scope.on_reload(move |e| {
        let _ = tx.send(e.generation);
    });
    layer.ext("x.wasm", version(4));
    rx.recv_timeout(Duration::from_secs(30))
        .expect("a reload followed the drop");
    while run(&scope).expect("dispatch").n != 4 {
        // A burst may take two reloads (the file, then its folder's change).
        rx.recv_timeout(Duration::from_secs(30))
            .expect("the module took effect");
    }
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_bad_module_is_not_recompiled_at_every_reload() {
    let layer = Layer::temp();
    layer.ext("x.wasm", version(1));
    let scope = layer.scope();
    // Valid WebAssembly that does not fit the interface: it compiles, then is refused.
    layer.ext("y.wat", r#"(module (memory (export "memory") 1))"#);
    scope.reload();
    let compiled = scope.wasm_stats().compiled;
    assert_eq!(compiled, 2, "x, then y");
    scope.reload();
    scope.reload();
    assert_eq!(
        scope.wasm_stats().compiled,
        compiled,
        "the refusal is remembered"
    );
    assert!(problems(&scope).iter().any(|p| p.contains("y.wat")));
}

#[cfg(all(feature = "watch", unix))]
/// A module whose answer is `n` and a text of `v<n>` repeated: the data section, last in the
/// file, is most of it, so half of one version over another answers a mixed text.
fn long_version(n: u32) -> Vec<u8> {
    let text = format!("v{n}").repeat(300);
    Guest::answer(&format!(r#"{{"payload":{{"n":{n},"text":"{text}"}}}}"#)).wasm()
}

#[cfg(all(feature = "watch", unix))]
#[test]
fn a_module_rewritten_in_place_in_two_writes_after_a_rename_save_is_never_loaded_torn() {
    use std::io::{Seek, SeekFrom, Write};
    let layer = Layer::temp();
    let path = layer.ext("x.wasm", long_version(1));
    let scope = layer
        .builder()
        .watch(true)
        .debounce(Duration::from_millis(20))
        .build()
        .expect("scope");
    let done = AtomicBool::new(false);
    let wait_for = |n: u32| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while run(&scope).expect("dispatch").n != n {
            assert!(
                std::time::Instant::now() < deadline,
                "version {n} never came"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Acquire) {
                let doc = run(&scope).expect("dispatch");
                let whole = format!("v{}", doc.n).repeat(300) + "+tail";
                assert_eq!(doc.text, whole, "a torn module answered");
            }
        });
        for round in 0..6u32 {
            let (saved, rewritten) = (2 * round + 2, 2 * round + 3);
            layer.ext("x.wasm", long_version(saved));
            wait_for(saved);
            let next = long_version(rewritten);
            assert_eq!(
                next.len(),
                std::fs::metadata(&path).expect("meta").len() as usize
            );
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .expect("open");
            let half = next.len() / 2;
            f.write_all(&next[..half]).expect("first write");
            f.flush().expect("flush");
            std::thread::sleep(Duration::from_millis(10));
            f.seek(SeekFrom::Start(half as u64)).expect("seek");
            f.write_all(&next[half..]).expect("second write");
            drop(f);
            wait_for(rewritten);
        }
        done.store(true, Ordering::Release);
    });
}

/// The order of the compiled-in `compiled_tail` extension of `wasm_doc`, as the scope lists it.
fn tail_order(scope: &hookpoint::Scope) -> i32 {
    scope
        .introspect()
        .into_iter()
        .find(|p| p.name == "wasm_doc")
        .and_then(|p| p.extensions.into_iter().find(|e| e.name == "compiled_tail"))
        .expect("compiled_tail listed")
        .order
}

/// Waits (at most `limit`) until the scope dispatches version `n`, reload after reload.
fn wait_for_version(
    scope: &hookpoint::Scope,
    rx: &std::sync::mpsc::Receiver<u64>,
    n: u32,
    limit: Duration,
) {
    let deadline = std::time::Instant::now() + limit;
    while run(scope).expect("dispatch").n != n {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        assert!(
            !left.is_zero(),
            "version {n} never ran: {:?}",
            problems(scope)
        );
        let _ = rx.recv_timeout(left.min(Duration::from_millis(100)));
    }
}

#[test]
fn a_reload_goes_on_without_a_module_still_compiling_and_the_scope_reloads_when_it_is_ready() {
    let layer = Layer::temp();
    layer.ext("x.wasm", version(1));
    let scope = layer
        .builder()
        .wasm_compile_wait(Duration::ZERO)
        .build()
        .expect("scope");
    let (tx, rx) = std::sync::mpsc::channel();
    scope.on_reload(move |e| {
        let _ = tx.send(e.generation);
    });
    // The first build did not wait either: the module joins at the reload its compile starts.
    wait_for_version(&scope, &rx, 1, Duration::from_secs(20));
    layer.ext("x.wasm", version(2));
    layer.ext("compiled_tail.json", r#"{"order": 60}"#);
    scope.reload();
    assert_eq!(
        tail_order(&scope),
        60,
        "the manifest's change applied at once"
    );
    let found = problems(&scope);
    if run(&scope).expect("dispatch").n == 1 {
        assert!(
            found.iter().any(|p| p.contains("is still compiling")),
            "{found:?}"
        );
    }
    wait_for_version(&scope, &rx, 2, Duration::from_secs(20));
    assert_eq!(problems(&scope), Vec::<String>::new());
    assert_eq!(scope.wasm_stats().compiled, 2);
}

#[test]
fn a_module_that_takes_long_to_compile_holds_no_reload() {
    let layer = Layer::temp();
    layer.ext("x.wasm", version(1));
    let wait = Duration::from_millis(100);
    let scope = layer
        .builder()
        .wasm_compile_wait(wait)
        .build()
        .expect("scope");
    let (tx, rx) = std::sync::mpsc::channel();
    scope.on_reload(move |e| {
        let _ = tx.send(e.generation);
    });
    let big = Guest::answer(r#"{"payload":{"n":2,"text":"big"}}"#)
        .with_fields(&super::guests::many_functions(1500))
        .wasm();
    layer.ext("x.wasm", &big);
    layer.ext("compiled_tail.json", r#"{"order": 60}"#);
    let started = std::time::Instant::now();
    scope.reload();
    let took = started.elapsed();
    assert_eq!(tail_order(&scope), 60, "the manifest's change applied");
    // Compiling 1,500 functions takes seconds in a debug build (1.5 s for 800 here, when a reload
    // compiled them itself); the reload waited `wait` for it.
    assert!(
        took < wait + Duration::from_millis(900),
        "the reload took {took:?}"
    );
    wait_for_version(&scope, &rx, 2, Duration::from_secs(60));
}

#[test]
fn superseded_compiles_of_a_big_module_keep_no_other_module_waiting() {
    let layer = Layer::temp();
    layer.ext("_5_big.wasm", version(1));
    layer.ext("_9_small.wasm", version(10));
    let scope = layer
        .builder()
        .wasm_compile_wait(Duration::from_millis(50))
        .build()
        .expect("scope");
    // The first compiles may outlast the short wait on a busy machine: wait for them here.
    let first = std::time::Instant::now();
    while run(&scope).expect("v10").n != 10 {
        assert!(
            first.elapsed() < Duration::from_secs(20),
            "the small module never answered last: {:?}",
            problems(&scope)
        );
        std::thread::sleep(Duration::from_millis(20));
        scope.reload();
    }
    // The big module saved again and again while it compiles: each reload supersedes the
    // compile before, which cannot be cancelled and goes on in the background.
    for i in 0..3 {
        let big = Guest::answer(&format!(r#"{{"payload":{{"n":{i},"text":"big"}}}}"#))
            .with_fields(&super::guests::many_functions(6000))
            .wasm();
        layer.ext("_5_big.wasm", &big);
        scope.reload();
    }
    layer.ext("_9_small.wasm", version(11));
    let started = std::time::Instant::now();
    scope.reload();
    while run(&scope).expect("dispatch").n != 11 {
        // Each big compile takes seconds in a debug build; the small module's takes a few ms.
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "the small module waited behind superseded compiles: {:?}",
            problems(&scope)
        );
        std::thread::sleep(Duration::from_millis(20));
        scope.reload();
    }
}

#[test]
fn a_module_whose_start_function_traps_keeps_the_last_good_version() {
    let layer = Layer::temp();
    let path = layer.ext("x.wasm", version(1));
    let scope = layer.scope();
    assert_eq!(run(&scope).expect("v1").n, 1);
    let trapping = Guest::answer(r#"{"payload":{"n":2,"text":"v2"}}"#)
        .with_fields("(func $boom unreachable) (start $boom)")
        .wasm();
    layer.ext("x.wasm", trapping);
    scope.reload();
    let found = problems(&scope);
    assert!(
        found
            .iter()
            .any(|p| p.starts_with(&path.display().to_string())
                && p.contains("cannot start: its start function traps")),
        "{found:?}"
    );
    assert_eq!(run(&scope).expect("the last good version").n, 1);
}

#[test]
fn a_module_whose_initial_memory_is_over_the_cap_keeps_the_last_good_version() {
    let layer = Layer::temp();
    layer.put("g/x.wasm", version(1));
    let manifest = layer.ext("x.json", r#"{"wasm": "g/x.wasm", "max_memory_mb": 1}"#);
    let scope = layer.scope();
    assert_eq!(run(&scope).expect("v1").n, 1);
    // Two pages of 64 KiB is under 1 MiB; 32 pages is 2 MiB, over it.
    let wat = Guest::answer(r#"{"payload":{"n":2,"text":"v2"}}"#)
        .wat()
        .replace(
            r#"(memory (export "memory") 1)"#,
            r#"(memory (export "memory") 32)"#,
        );
    layer.put("g/x.wasm", wat::parse_str(wat).expect("assembles"));
    scope.reload();
    let found = problems(&scope);
    assert!(
        found
            .iter()
            .any(|p| p.starts_with(&manifest.display().to_string())
                && p.contains("more memory than its cap of 1 MiB")),
        "{found:?}"
    );
    assert_eq!(run(&scope).expect("the last good version").n, 1);
}
