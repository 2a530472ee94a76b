//! WebAssembly extensions (issue targets: a wasm extension that rewrites one field of a ~200-byte
//! JSON payload ≤ 5 µs a call, JSON both ways included, beside the same hook as a command hook and
//! as a compiled-in extension; reload of a changed module with a warm cache ≤ 10 ms; cold compile
//! time reported).
//!
//! `cargo bench -p hookpoint --features wasm --bench wasm`

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use hookpoint::{LayerKind, LayerSpec, Scope, ScopeBuilder, extension, point};
use serde::{Deserialize, Serialize};

/// A tool call, ~200 bytes as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolCall {
    pub(crate) tool: String,
    pub(crate) args: Args,
    pub(crate) status: String,
    pub(crate) reason: String,
    pub(crate) requested_by: String,
    pub(crate) attempt: u32,
    pub(crate) tags: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Args {
    pub(crate) cmd: String,
    pub(crate) cwd: String,
    pub(crate) env: BTreeMap<String, String>,
}

point! {
    /// Wasm and command-hook extensions attach here.
    #[serde]
    pub static BENCH_HOOKED: SyncPoint<ToolCall> = "bench_wasm_hooked";
    /// The compiled-in extension.
    #[serde]
    pub static BENCH_NATIVE: SyncPoint<ToolCall> = "bench_wasm_native";
}

#[extension(point = BENCH_NATIVE)]
fn allow(call: &mut ToolCall) {
    if call.status == "pending" {
        call.status.replace_range(.., "allowed");
    }
}

const ALLOW_WAT: &str = include_str!("../guests/allow.wat");
const ALLOW_PY: &str = include_str!("../guests/allow.py");

fn tool_call() -> ToolCall {
    ToolCall {
        tool: "shell".into(),
        args: Args {
            cmd: "ls -la /srv/app/releases".into(),
            cwd: "/srv/app".into(),
            env: BTreeMap::from([("LANG".into(), "C.UTF-8".into())]),
        },
        status: "pending".into(),
        reason: String::new(),
        requested_by: "agent-7".into(),
        attempt: 1,
        tags: vec!["fs".into(), "read-only".into()],
    }
}

/// A scope whose user layer holds `files` (relative path, content), with its own module cache.
fn scope_with(root: &Path, files: &[(&str, &str)]) -> Scope {
    for (rel, content) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
    }
    ScopeBuilder::new("bench-wasm")
        .layer(root, LayerSpec::new(LayerKind::new("app"), 0))
        .watch(false)
        .wasm_cache(Some(root.join("cache")))
        .build()
        .unwrap()
}

fn calls(c: &mut Criterion) {
    let mut call = tool_call();
    assert!(serde_json::to_vec(&call).unwrap().len() >= 190);
    let mut g = c.benchmark_group("wasm_call");
    let mut bench = |name: &str, dispatch: &dyn Fn(&mut ToolCall)| {
        call.status.replace_range(.., "pending");
        dispatch(&mut call);
        assert_eq!(call.status, "allowed", "{name} rewrote the field");
        g.bench_function(name, |b| {
            b.iter(|| {
                call.status.replace_range(.., "pending");
                dispatch(black_box(&mut call));
            })
        });
    };
    let plain = scope_with(tempfile::tempdir().unwrap().path(), &[]);
    bench("compiled-in extension", &|c| {
        plain.enter(|| BENCH_NATIVE.call(c)).unwrap();
    });
    let fresh_dir = tempfile::tempdir().unwrap();
    let wat = [("extensions/bench_wasm_hooked/allow.wat", ALLOW_WAT)];
    let fresh = scope_with(fresh_dir.path(), &wat);
    bench("wasm, fresh instance per call", &|c| {
        fresh.enter(|| BENCH_HOOKED.call(c)).unwrap();
    });
    let kept_dir = tempfile::tempdir().unwrap();
    let keep = ALLOW_WAT.replace(
        "(module",
        "(module (global (export \"hookpoint_keep_state\") i32 (i32.const 1))",
    );
    let wat = [("extensions/bench_wasm_hooked/allow.wat", keep.as_str())];
    let kept = scope_with(kept_dir.path(), &wat);
    bench("wasm, instance kept (hookpoint_keep_state)", &|c| {
        kept.enter(|| BENCH_HOOKED.call(c)).unwrap();
    });
    g.bench_function("JSON both ways alone (serde, no guest)", |b| {
        b.iter(|| {
            let prefix = br#"{"point":"p","extension":"x","payload":"#;
            let mut input = prefix.to_vec();
            serde_json::to_writer(&mut input, black_box(&call)).unwrap();
            input.push(b'}');
            let text = std::str::from_utf8(&input).unwrap();
            let back: ToolCall = serde_json::from_str(&text[prefix.len()..text.len() - 1]).unwrap();
            black_box(back)
        })
    });
    g.finish();
    command_hook(c, &mut call);
}

/// The same hook as a process per call (needs `python3`; skipped without it).
fn command_hook(c: &mut Criterion, call: &mut ToolCall) {
    if std::process::Command::new("python3")
        .arg("-c")
        .arg("")
        .status()
        .is_err()
    {
        eprintln!("wasm_call/command hook: skipped, no python3");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("hooks/allow.py", ALLOW_PY),
        (
            "extensions/bench_wasm_hooked/allow.json",
            r#"{"command": ["python3", "hooks/allow.py"]}"#,
        ),
    ];
    let scope = scope_with(dir.path(), &files);
    let mut g = c.benchmark_group("wasm_call");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("command hook (python3, a process per call)", |b| {
        b.iter(|| {
            call.status.replace_range(.., "pending");
            scope
                .enter(|| BENCH_HOOKED.call(black_box(&mut *call)))
                .unwrap();
            assert_eq!(call.status, "allowed");
        })
    });
    g.finish();
}

/// Two versions of the guest: the same code, different bytes.
fn versions() -> [String; 2] {
    let b = ALLOW_WAT.replace("(module", "(module (data (i32.const 200) \"v2\")");
    [ALLOW_WAT.to_owned(), b]
}

fn reloads(c: &mut Criterion) {
    let mut g = c.benchmark_group("wasm_reload");
    let dir = tempfile::tempdir().unwrap();
    let rel = "extensions/bench_wasm_hooked/allow.wat";
    let scope = scope_with(dir.path(), &[(rel, ALLOW_WAT)]);
    let path = dir.path().join(rel);
    let [a, b] = versions();
    // Both versions compiled once, so each switch below finds the other in the disk cache.
    std::fs::write(&path, &b).unwrap();
    scope.reload();
    g.bench_function(
        "changed module, warm cache (reload of the scope)",
        |bench| {
            let mut flip = false;
            bench.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    flip = !flip;
                    std::fs::write(&path, if flip { &a } else { &b }).unwrap();
                    let t = Instant::now();
                    black_box(scope.reload());
                    total += t.elapsed();
                }
                total
            })
        },
    );
    let compiled = scope.wasm_stats().compiled;
    assert_eq!(
        compiled,
        2,
        "the switches never compiled: {:?}",
        scope.wasm_stats()
    );
    g.bench_function("unchanged module (reload of the scope)", |bench| {
        bench.iter(|| black_box(scope.reload()))
    });
    g.sample_size(10);
    g.bench_function("new module, cold compile (reload of the scope)", |bench| {
        let mut n = 0u64;
        bench.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let fresh = ALLOW_WAT.replace(
                    "(module",
                    &format!("(module (data (i32.const 300) \"{n}\")"),
                );
                std::fs::write(&path, fresh).unwrap();
                let t = Instant::now();
                black_box(scope.reload());
                total += t.elapsed();
            }
            total
        })
    });
    let big = big_module(500);
    let big_size = wat::parse_str(&big).unwrap().len();
    let name = format!(
        "new module of {} KiB (500 more functions), cold compile",
        big_size / 1024
    );
    g.bench_function(name, |bench| {
        let mut n = 0u64;
        bench.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let fresh = big.replacen(
                    "(module",
                    &format!("(module (data (i32.const 300) \"{n}\")"),
                    1,
                );
                std::fs::write(&path, fresh).unwrap();
                let t = Instant::now();
                black_box(scope.reload());
                total += t.elapsed();
            }
            total
        })
    });
    g.finish();
}

/// The guest plus `n` more functions (copies of its search loop), for a module of a realistic
/// size.
fn big_module(n: usize) -> String {
    let find = ALLOW_WAT
        .split("  ;; The index of `needle` in `hay`, or -1.")
        .nth(1)
        .and_then(|rest| rest.split("  ;; One call:").next())
        .unwrap();
    // The module without its closing parenthesis.
    let module = ALLOW_WAT.trim_end();
    let mut out = module[..module.len() - 1].to_owned();
    out.push('\n');
    for i in 0..n {
        out.push_str(&find.replacen("(func $find", &format!("(func $f{i} (export \"f{i}\")"), 1));
    }
    out.push(')');
    out
}

criterion_group!(benches, calls, reloads);
criterion_main!(benches);
