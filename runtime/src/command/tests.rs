//! Tests of the command runner against real processes (sh and python3 scripts).

use super::output::{parse_output, render_stderr};
use super::*;
use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

/// Writes an executable (0o755) script into `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create script folder");
    }
    std::fs::write(&path, body).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod script");
    path
}

/// A `#!` line for python3 that does not go through wrappers (pyenv shims
/// add variables of their own), falling back to `env`.
fn python() -> String {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .map_or_else(|| "#!/usr/bin/env python3".to_owned(), |p| format!("#!{p}"))
}

fn sh_hook(dir: &Path, body: &str) -> CommandSpec {
    script(dir, "hook.sh", &format!("#!/bin/sh\n{body}\n"));
    CommandSpec::new(["./hook.sh"], dir)
}

fn py_hook(dir: &Path, body: &str) -> CommandSpec {
    script(dir, "hook.py", &format!("{}\n{body}\n", python()));
    CommandSpec::new(["./hook.py"], dir)
}

fn sync(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
    run_sync(spec, input)
}

async fn asynchronous(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
    run_async(spec, input).await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Runs `spec` with both runners; returns `[sync, async]` with the time
/// each took.
fn both(spec: &CommandSpec, input: &[u8]) -> [(Result<HookOutput, CommandError>, Duration); 2] {
    let start = Instant::now();
    let s = sync(spec, input);
    let s_time = start.elapsed();
    let start = Instant::now();
    let a = runtime().block_on(asynchronous(spec, input));
    let a_time = start.elapsed();
    [(s, s_time), (a, a_time)]
}

fn read_pid(path: &Path) -> i32 {
    let text = std::fs::read_to_string(path).expect("pid file");
    text.trim().parse().expect("pid")
}

/// Process state letter from /proc, `None` if the process is gone (or
/// /proc is unavailable).
fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.rsplit_once(')')?.1;
    after_name.trim_start().chars().next()
}

/// Waits up to 2 s for `pid` to be dead: gone, or a zombie (for
/// grandchildren, whose reaping is init's business).
fn assert_dead_soon(pid: i32) {
    let start = Instant::now();
    loop {
        match proc_state(pid) {
            None | Some('Z') | Some('X') => return,
            Some(state) if start.elapsed() > Duration::from_secs(2) => {
                panic!("process {pid} still alive (state {state})")
            }
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

// ------------------------------------------------------------ success

#[test]
fn empty_stdout_and_empty_object_mean_unchanged() {
    for body in [
        "cat >/dev/null",
        "echo '{}'",
        "printf ' \\n\\t\\r\\n'",
        "echo ' { } '",
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = sh_hook(dir.path(), body);
        for (result, _) in both(&spec, b"{\"x\":1}") {
            assert_eq!(result.expect(body), HookOutput::UNCHANGED, "{body}");
        }
    }
}

#[test]
fn payload_is_replaced_and_spec_env_is_visible() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = py_hook(
        dir.path(),
        "import json, os, sys\n\
         data = json.load(sys.stdin)\n\
         out = {'payload': {'got': data, 'point': os.environ['HOOKPOINT_POINT'],\n\
                'cwd': os.getcwd()}}\n\
         json.dump(out, sys.stdout)",
    );
    spec.env
        .push(("HOOKPOINT_POINT".to_owned(), "before-save".to_owned()));
    let payload = serde_json::json!({"text": "tab\there\u{0}nul", "n": [1, 2.5, null]});
    let input = hook_input("before-save", "ext.a", &payload);
    let cwd = std::fs::canonicalize(dir.path()).expect("canonicalize");
    for (result, _) in both(&spec, &input) {
        let Some(value) = result.expect("hook runs").payload else {
            panic!("expected Replace");
        };
        assert_eq!(value["got"]["point"], "before-save");
        assert_eq!(value["got"]["extension"], "ext.a");
        assert_eq!(value["got"]["payload"], payload);
        assert_eq!(value["point"], "before-save");
        assert_eq!(value["cwd"], cwd.to_str().expect("utf-8 path"));
    }
}

#[test]
fn payload_null_is_a_replacement() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = sh_hook(dir.path(), "echo '{\"payload\": null}'");
    for (result, _) in both(&spec, b"") {
        assert_eq!(result.expect("runs"), HookOutput::replace(Value::Null));
    }
}

#[test]
fn exit_zero_without_reading_a_large_input_succeeds() {
    let big = vec![b'x'; 5 * 1024 * 1024];
    for (body, expected) in [
        ("exit 0", HookOutput::UNCHANGED),
        (
            "echo '{\"payload\": 7}'",
            HookOutput::replace(serde_json::json!(7)),
        ),
        // Reads a little, then closes stdin and exits.
        ("head -c 10 >/dev/null", HookOutput::UNCHANGED),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = sh_hook(dir.path(), body);
        for (result, _) in both(&spec, &big) {
            assert_eq!(result.expect(body), expected, "{body}");
        }
    }
}

#[test]
fn large_stdout_before_reading_stdin_does_not_deadlock() {
    let dir = tempfile::tempdir().expect("tempdir");
    // ~900 KB of stdout (well over a pipe buffer) before touching a 2 MB stdin.
    let spec = py_hook(
        dir.path(),
        "import sys\n\
         sys.stdout.write('{\"payload\": \"' + 'y' * 900000 + '\"}')\n\
         sys.stdout.flush()\n\
         n = len(sys.stdin.buffer.read())\n\
         sys.stderr.write('read %d' % n)",
    );
    let input = vec![b' '; 2 * 1024 * 1024];
    for (result, took) in both(&spec, &input) {
        let Some(Value::String(s)) = result.expect("runs").payload else {
            panic!("expected a string payload");
        };
        assert_eq!(s.len(), 900_000);
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }
}

#[test]
fn five_megabyte_payload_with_control_characters_reaches_python_intact() {
    let dir = tempfile::tempdir().expect("tempdir");
    // json.load is strict: raw control characters inside strings are rejected.
    let spec = py_hook(
        dir.path(),
        "import json, sys\n\
         data = json.load(sys.stdin)\n\
         s = data['payload']['s']\n\
         json.dump({'payload': {'len': len(s), 'tail': s[-40:],\n\
                    'point': data['point'], 'ext': data['extension']}}, sys.stdout)",
    );
    let unit: String = (0u8..0x20).map(char::from).collect::<String>() + "\"\\/é€😀\u{7f}";
    let mut s = String::new();
    while s.len() < 5 * 1024 * 1024 {
        s.push_str(&unit);
    }
    let chars = s.chars().count();
    let payload = serde_json::json!({ "s": s });
    let input = hook_input("p\u{1}\n", "e\"\u{0}", &payload);
    assert!(input.len() > 5 * 1024 * 1024);
    for (result, _) in both(&spec, &input) {
        let Some(value) = result.expect("runs").payload else {
            panic!("expected Replace");
        };
        assert_eq!(value["len"], chars);
        let tail: String = s.chars().skip(chars - 40).collect();
        assert_eq!(value["tail"], tail);
        assert_eq!(value["point"], "p\u{1}\n");
        assert_eq!(value["ext"], "e\"\u{0}");
    }
}

#[test]
fn program_resolution() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body = "#!/bin/sh\necho '{\"payload\": \"ok\"}'\n";
    let abs = script(dir.path(), "sub/hook.sh", body);
    script(dir.path(), "bin/my-hook", body);
    let ok = HookOutput::replace(serde_json::json!("ok"));

    let cases = [
        CommandSpec::new(["./sub/hook.sh"], dir.path()),
        CommandSpec::new(["sub/hook.sh"], dir.path()),
        CommandSpec::new(["hook.sh"], dir.path().join("sub"))
            .tap_env("PATH", &dir.path().join("sub").display().to_string()),
        CommandSpec::new([abs.as_os_str()], "/"),
        // A bare name is looked up on PATH (spec.env overrides the host's).
        CommandSpec::new(["my-hook"], dir.path()).tap_env(
            "PATH",
            &format!("relative/dir::{}", dir.path().join("bin").display()),
        ),
    ];
    for spec in &cases {
        for (result, _) in both(spec, b"") {
            assert_eq!(result.expect("runs"), ok, "{spec:?}");
        }
    }

    // Relative PATH entries are ignored, even when they would match.
    let spec = CommandSpec::new(["my-hook"], dir.path()).tap_env("PATH", "bin");
    for (result, _) in both(&spec, b"") {
        assert!(
            matches!(&result, Err(CommandError::CouldNotStart { source, .. })
                if source.kind() == io::ErrorKind::NotFound),
            "{result:?}"
        );
    }
}

impl CommandSpec {
    fn tap_env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }
}

#[test]
fn environment_is_cleared_to_the_allow_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = py_hook(
        dir.path(),
        "import json, os\n\
         json.dump({'payload': dict(os.environ)}, open(1, 'w'))",
    )
    .tap_env("HOOKPOINT_POINT", "p")
    .tap_env("HOOKPOINT_EXTENSION", "e")
    .tap_env("HOOKPOINT_LAYER", "/layer")
    // Stop python from adding LC_CTYPE (PEP 538) to its own environment.
    .tap_env("PYTHONCOERCECLOCALE", "0");
    let extra: Vec<&str> = spec.env.iter().map(|(k, _)| k.as_str()).collect();
    for (result, _) in both(&spec, b"") {
        let Some(Value::Object(seen)) = result.expect("runs").payload else {
            panic!("expected an object");
        };
        for name in seen.keys() {
            assert!(
                ENV_ALLOW_LIST.contains(&name.as_str()) || extra.contains(&name.as_str()),
                "unexpected variable {name} in {seen:?}"
            );
        }
        for (name, value) in &spec.env {
            assert_eq!(seen[name], value.as_str());
        }
        for name in ENV_ALLOW_LIST {
            if let Ok(value) = std::env::var(name) {
                assert_eq!(seen[*name], value, "{name}");
            }
        }
        // Cargo sets this for test binaries; it must not leak through.
        assert!(!seen.contains_key("CARGO_MANIFEST_DIR"));
    }
}

// ------------------------------------------------------------ failures

#[test]
fn timeout_kills_and_reaps_the_hook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = sh_hook(dir.path(), "echo $$ > pid\nexec sleep 30");
    spec.timeout = Duration::from_millis(200);
    for (result, took) in both(&spec, b"") {
        assert!(
            matches!(&result, Err(CommandError::TimedOut { after, .. })
                if *after == Duration::from_millis(200)),
            "{result:?}"
        );
        assert!(took < Duration::from_secs(1), "took {took:?}");
        // We are the parent: if it were not reaped it would be a zombie.
        let pid = read_pid(&dir.path().join("pid"));
        assert_eq!(proc_state(pid), None, "hook {pid} not reaped");
    }
}

#[test]
fn timeout_is_not_defeated_by_a_grandchild_holding_the_pipes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = sh_hook(
        dir.path(),
        "sleep 30 &\necho $! > grandchild\necho $$ > pid\nwait",
    );
    spec.timeout = Duration::from_millis(200);
    for (result, took) in both(&spec, b"") {
        assert!(
            matches!(result, Err(CommandError::TimedOut { .. })),
            "{result:?}"
        );
        assert!(took < Duration::from_secs(1), "took {took:?}");
        assert_eq!(proc_state(read_pid(&dir.path().join("pid"))), None);
        assert_dead_soon(read_pid(&dir.path().join("grandchild")));
    }
}

#[test]
fn leftover_background_process_is_killed_when_the_hook_exits() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The background sleep inherits stdout and stderr; the hook itself
    // finishes immediately.
    let spec = sh_hook(
        dir.path(),
        "sleep 30 &\necho $! > grandchild\necho '{\"payload\": \"done\"}'",
    );
    for (result, took) in both(&spec, b"") {
        assert_eq!(
            result.expect("runs"),
            HookOutput::replace(serde_json::json!("done"))
        );
        assert!(took < Duration::from_secs(2), "took {took:?}");
        assert_dead_soon(read_pid(&dir.path().join("grandchild")));
    }
}

#[test]
fn dropping_the_async_future_kills_the_hook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = sh_hook(
        dir.path(),
        "echo $$ > pid\nsleep 30 &\necho $! > grandchild\nwait",
    );
    let result = runtime().block_on(async {
        tokio::time::timeout(Duration::from_millis(300), run_async(&spec, b"")).await
    });
    assert!(result.is_err(), "should still have been running");
    assert_dead_soon(read_pid(&dir.path().join("pid")));
    assert_dead_soon(read_pid(&dir.path().join("grandchild")));
}

#[test]
fn nonzero_exit_reports_code_and_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = sh_hook(dir.path(), "cat >/dev/null\necho 'no, because' >&2\nexit 3");
    for (result, _) in both(&spec, b"{}") {
        match result {
            Err(CommandError::ExitedNonZero { code, stderr, .. }) => {
                assert_eq!(code, 3);
                assert_eq!(stderr, "no, because\n");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn long_stderr_is_truncated_with_a_marker() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 'a' then 2-byte characters: the cut at MAX_STDERR_BYTES splits one.
    let spec = py_hook(
        dir.path(),
        "import sys\n\
         sys.stderr.buffer.write(('a' + 'é' * 50000).encode())\n\
         sys.exit(1)",
    );
    for (result, _) in both(&spec, b"") {
        let Err(CommandError::ExitedNonZero {
            code: 1, stderr, ..
        }) = result
        else {
            panic!("{result:?}");
        };
        let (kept, marker) = stderr.split_once('\n').expect("marker line");
        assert!(kept.len() <= MAX_STDERR_BYTES);
        assert_eq!(
            kept.len(),
            MAX_STDERR_BYTES - 1,
            "partial character dropped"
        );
        assert!(kept.starts_with("aé") && !kept.contains('\u{fffd}'));
        let total = 1 + 2 * 50000;
        let dropped = total - MAX_STDERR_BYTES;
        assert_eq!(
            marker,
            format!("[... {dropped} more bytes of stderr dropped]")
        );
    }
}

#[test]
fn death_by_signal_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = sh_hook(dir.path(), "echo dying >&2\nkill -9 $$");
    for (result, _) in both(&spec, b"") {
        match result {
            Err(CommandError::Signalled { signal, stderr, .. }) => {
                assert_eq!(signal, 9);
                assert_eq!(stderr, "dying\n");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn programs_that_cannot_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let plain = script(d, "plain.sh", "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    script(d, "bad-interp.sh", "#!/nonexistent/interp -x\nexit 0\n");
    script(d, "no-shebang", "echo this is not a binary\n");
    std::fs::create_dir(d.join("a-dir")).expect("mkdir");

    let cases: [(CommandSpec, &str); 7] = [
        (CommandSpec::new(["./missing.sh"], d), "missing"),
        (CommandSpec::new(["./plain.sh"], d), "not executable"),
        (CommandSpec::new(["./bad-interp.sh"], d), "bad interpreter"),
        (CommandSpec::new(["./no-shebang"], d), "ENOEXEC"),
        (CommandSpec::new(["./a-dir"], d), "directory"),
        (
            CommandSpec::new(["surely-not-a-real-program-xyz"], d),
            "not on PATH",
        ),
        (CommandSpec::new(Vec::<OsString>::new(), d), "empty argv"),
    ];
    for (spec, what) in &cases {
        for (result, _) in both(spec, b"input") {
            let Err(CommandError::CouldNotStart { program, source }) = &result else {
                panic!("{what}: {result:?}");
            };
            if *what == "bad interpreter" {
                assert_eq!(program, &d.join("./bad-interp.sh"));
                assert_eq!(source.kind(), io::ErrorKind::NotFound);
                let message = source.to_string();
                assert!(message.contains("/nonexistent/interp -x"), "{message}");
            }
            if *what == "not executable" {
                assert_eq!(source.kind(), io::ErrorKind::PermissionDenied);
            }
            if *what == "ENOEXEC" {
                assert_eq!(source.raw_os_error(), Some(8), "{source}");
            }
        }
    }
}

#[test]
fn unacceptable_stdout_is_bad_output() {
    for (body, needle) in [
        ("echo 'not json'", "not valid JSON"),
        ("echo '[1,2]'", "got an array"),
        ("echo '\"text\"'", "got a string"),
        ("echo '{\"payload\":1,\"extra\":2}'", "\"extra\""),
        ("echo '{}{}'", "not valid JSON"),
        ("printf '\\377\\376'", "not valid JSON"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = sh_hook(dir.path(), body);
        for (result, _) in both(&spec, b"") {
            let Err(CommandError::BadOutput { reason, .. }) = &result else {
                panic!("{body}: {result:?}");
            };
            assert!(reason.contains(needle), "{body}: {reason}");
        }
    }
}

#[test]
fn stdout_limit_is_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    // `{"payload":1}` padded with spaces to exactly N bytes.
    let spec = py_hook(
        dir.path(),
        "import sys\n\
         n = int(sys.argv[1])\n\
         head = b'{\"payload\":1}'\n\
         sys.stdout.buffer.write(head + b' ' * (n - len(head)))",
    );
    let mut at_limit = spec.clone();
    at_limit.argv.push(MAX_STDOUT_BYTES.to_string().into());
    for (result, _) in both(&at_limit, b"") {
        assert_eq!(result.expect("at limit"), HookOutput::replace(1.into()));
    }
    let mut over = spec;
    over.argv.push((MAX_STDOUT_BYTES + 1).to_string().into());
    for (result, _) in both(&over, b"") {
        assert!(
            matches!(&result, Err(CommandError::BadOutput { reason, .. })
                if reason.contains("longer than")),
            "{result:?}"
        );
    }
}

#[test]
fn flooding_stdout_kills_the_hook_promptly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = py_hook(
        dir.path(),
        "import os, sys, time\n\
         open('pid', 'w').write(str(os.getpid()))\n\
         sys.stdout.buffer.write(b'x' * (3 * 1024 * 1024))\n\
         sys.stdout.flush()\n\
         time.sleep(30)",
    );
    for (result, took) in both(&spec, b"") {
        assert!(
            matches!(&result, Err(CommandError::BadOutput { .. })),
            "{result:?}"
        );
        assert!(took < Duration::from_secs(3), "took {took:?}");
        assert_eq!(proc_state(read_pid(&dir.path().join("pid"))), None);
    }
}

#[test]
fn huge_timeout_means_no_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = sh_hook(dir.path(), "echo '{}'");
    spec.timeout = Duration::MAX;
    for (result, _) in both(&spec, b"") {
        assert_eq!(result.expect("runs"), HookOutput::UNCHANGED);
    }
}

// --------------------------------------------------- runtime contexts

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_runner_works_on_a_tokio_worker_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = sh_hook(dir.path(), "cat\n");
    let input = br#"{"payload": {"from": "worker"}}"#;
    // Directly on the worker thread running this test…
    let direct = sync(&spec, input).expect("runs");
    // …and on another worker via a spawned task, while async runs go on.
    let spec2 = spec.clone();
    let spawned = tokio::spawn(async move { sync(&spec2, input) });
    let concurrent = asynchronous(&spec, input).await.expect("runs");
    let spawned = spawned.await.expect("join").expect("runs");
    let expected = HookOutput::replace(serde_json::json!({"from": "worker"}));
    assert_eq!(direct, expected);
    assert_eq!(spawned, expected);
    assert_eq!(concurrent, expected);
}

#[tokio::test]
async fn sync_runner_works_inside_a_current_thread_runtime() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = sh_hook(dir.path(), "sleep 30");
    spec.timeout = Duration::from_millis(100);
    assert!(matches!(
        sync(&spec, b""),
        Err(CommandError::TimedOut { .. })
    ));
    assert!(matches!(
        asynchronous(&spec, b"").await,
        Err(CommandError::TimedOut { .. })
    ));
}

// ------------------------------------------------------------- pieces

#[test]
fn hook_input_is_strict_json_even_with_control_characters() {
    let all_controls: String = (0u32..0x20).filter_map(char::from_u32).collect();
    let point = format!("pt{all_controls}\u{7f}\u{2028}\"\\");
    let extension = "ext\u{0}\r\n";
    let payload = serde_json::json!({
        "k\u{1b}": [all_controls, "😀", 1.5, -0, true, null, {"nested": "\u{8}"}],
    });
    let bytes = hook_input(&point, extension, &payload);
    assert!(
        bytes.iter().all(|b| *b >= 0x20),
        "raw control byte in output"
    );
    assert!(std::str::from_utf8(&bytes).is_ok());
    let parsed: Value = serde_json::from_slice(&bytes).expect("valid JSON");
    assert_eq!(
        parsed,
        serde_json::json!({"point": point, "extension": extension, "payload": payload})
    );
    assert!(bytes.starts_with(b"{\"point\":"));
}

#[test]
fn hook_input_handles_five_megabytes() {
    let big: String = "line\nwith\ttabs\u{0}and \"quotes\" é\n".repeat(5 * 1024 * 1024 / 30);
    assert!(big.len() >= 5 * 1024 * 1024 - 64);
    let payload = serde_json::json!({"big": big, "list": vec![1; 1000]});
    let bytes = hook_input("p", "e", &payload);
    assert!(bytes.len() > big.len());
    assert!(bytes.iter().all(|b| *b >= 0x20));
    let parsed: Value = serde_json::from_slice(&bytes).expect("valid JSON");
    assert_eq!(parsed["payload"], payload);
}

#[test]
fn parse_output_rules() {
    let p = || PathBuf::from("hook");
    assert_eq!(parse_output(p(), b"").expect("ok"), HookOutput::UNCHANGED);
    assert_eq!(
        parse_output(p(), b" \r\n\t").expect("ok"),
        HookOutput::UNCHANGED
    );
    assert_eq!(
        parse_output(p(), b"{}\n").expect("ok"),
        HookOutput::UNCHANGED
    );
    assert_eq!(
        parse_output(p(), b"\n{\"payload\": {\"a\": [1]}}\n").expect("ok"),
        HookOutput::replace(serde_json::json!({"a": [1]}))
    );
    for bad in [
        &b"null"[..],
        b"1",
        b"true",
        b"{\"Payload\":1}",
        b"{",
        b"\x0c",
    ] {
        assert!(
            matches!(parse_output(p(), bad), Err(CommandError::BadOutput { .. })),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn stderr_rendering() {
    assert_eq!(render_stderr(b"plain".to_vec(), 0), "plain");
    assert_eq!(render_stderr(b"bad\xffbyte".to_vec(), 0), "bad\u{fffd}byte");
    // A cut multi-byte character is dropped, not shown as U+FFFD.
    let mut euro = "x€".as_bytes().to_vec();
    euro.pop();
    assert_eq!(
        render_stderr(euro, 5),
        "x\n[... 5 more bytes of stderr dropped]"
    );
    let mut emoji = "y😀".as_bytes().to_vec();
    emoji.truncate(2);
    assert_eq!(
        render_stderr(emoji, 1),
        "y\n[... 1 more bytes of stderr dropped]"
    );
    assert_eq!(
        render_stderr("zé".as_bytes().to_vec(), 1),
        "zé\n[... 1 more bytes of stderr dropped]"
    );
}

#[test]
fn errors_display_and_expose_the_program() {
    let err = CommandError::TimedOut {
        program: PathBuf::from("/layer/hook.sh"),
        after: Duration::from_millis(200),
    };
    assert_eq!(err.program(), Path::new("/layer/hook.sh"));
    assert_eq!(
        err.to_string(),
        "hook /layer/hook.sh timed out after 200ms and was killed"
    );
}

#[test]
fn a_held_folder_runs_its_own_program_whatever_its_path_names_now() {
    let base = tempfile::tempdir().expect("tempdir");
    let dir = base.path().join("plugin");
    let answer =
        |text: &str| format!("#!/bin/sh\ncat >/dev/null\necho '{{\"payload\": \"{text}\"}}'\n");
    script(&dir, "extensions/p/hook.sh", &answer("held"));
    script(
        &dir,
        "agents/dev/extensions/p/hook.sh",
        &answer("held profile"),
    );
    script(&dir, "hooks/shared.sh", &answer("held shared"));
    let held = HeldFolder {
        handle: std::sync::Arc::new(std::fs::File::open(&dir).expect("open")),
        path: dir.clone(),
    };
    // The folder moves away and another takes its path (a symlink would do the same).
    std::fs::rename(&dir, base.path().join("moved")).expect("move");
    script(&dir, "extensions/p/hook.sh", &answer("impostor"));
    script(&dir, "agents/dev/extensions/p/hook.sh", &answer("impostor"));
    script(&dir, "hooks/shared.sh", &answer("impostor"));
    for (cwd, program, want) in [
        (dir.clone(), dir.join("extensions/p/hook.sh"), "held"),
        (dir.clone(), PathBuf::from("./extensions/p/hook.sh"), "held"),
        (
            dir.join("agents/dev"),
            dir.join("agents/dev/extensions/p/hook.sh"),
            "held profile",
        ),
        (
            dir.join("agents/dev"),
            PathBuf::from("extensions/p/hook.sh"),
            "held profile",
        ),
        (
            dir.join("agents/dev"),
            dir.join("hooks/shared.sh"),
            "held shared",
        ),
        (
            dir.join("agents/dev"),
            PathBuf::from("../../hooks/shared.sh"),
            "held shared",
        ),
    ] {
        let mut spec = CommandSpec::new([program.as_os_str()], &cwd);
        spec.held = Some(held.clone());
        for (result, _) in both(&spec, b"{}") {
            assert_eq!(
                result.expect("runs").payload,
                Some(serde_json::json!(want)),
                "{program:?} in {cwd:?}"
            );
        }
    }
}

#[test]
fn a_held_folder_runs_no_program_or_script_a_symlink_in_it_leads_outside() {
    let base = tempfile::tempdir().expect("tempdir");
    let dir = base.path().join("plugin");
    let outside = base.path().join("outside");
    let answer =
        |text: &str| format!("#!/bin/sh\ncat >/dev/null\necho '{{\"payload\": \"{text}\"}}'\n");
    script(&outside, "evil.sh", &answer("outside"));
    script(&outside, "hooks/h.sh", &answer("outside"));
    script(&dir, "own.sh", &answer("inside"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::os::unix::fs::symlink(outside.join("evil.sh"), dir.join("install.sh")).expect("link");
    std::os::unix::fs::symlink(outside.join("hooks"), dir.join("hooks")).expect("link");
    std::os::unix::fs::symlink(dir.join("own.sh"), dir.join("alias.sh")).expect("link");
    let held = HeldFolder {
        handle: std::sync::Arc::new(std::fs::File::open(&dir).expect("open")),
        path: dir.clone(),
    };
    for argv in [
        vec!["./install.sh"],
        vec!["./hooks/h.sh"],
        vec!["sh", "hooks/h.sh"],
        vec!["sh", "./install.sh"],
    ] {
        let mut spec = CommandSpec::new(argv.clone(), &dir);
        spec.held = Some(held.clone());
        for (result, _) in both(&spec, b"{}") {
            let e = result.expect_err("refused");
            assert!(
                matches!(e, CommandError::CouldNotStart { .. })
                    && e.to_string().contains("symlink leaving the folder"),
                "{argv:?}: {e}"
            );
        }
    }
    // A symlink that stays inside is followed, as the layer scan follows one.
    let mut spec = CommandSpec::new(["./alias.sh"], &dir);
    spec.held = Some(held);
    for (result, _) in both(&spec, b"{}") {
        assert_eq!(
            result.expect("runs").payload,
            Some(serde_json::json!("inside"))
        );
    }
}

/// Holds `path` open for writing (so the kernel refuses to execute it) until `after` has passed.
fn held_open_for_writing(path: &Path, after: Duration) -> std::thread::JoinHandle<()> {
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open the script for writing");
    std::thread::spawn(move || {
        std::thread::sleep(after);
        drop(writer);
    })
}

#[test]
fn a_hook_briefly_open_for_writing_elsewhere_still_starts() {
    let dir = tempfile::tempdir().unwrap();
    let spec = sh_hook(dir.path(), "cat");
    let release = held_open_for_writing(&dir.path().join("hook.sh"), Duration::from_millis(30));
    let out = run_sync(&spec, br#"{"payload": 1}"#);
    release.join().unwrap();
    let out = out.expect("the start is retried while the file is busy");
    assert_eq!(out.payload, Some(serde_json::json!(1)));

    let release = held_open_for_writing(&dir.path().join("hook.sh"), Duration::from_millis(30));
    let out = runtime().block_on(run_async(&spec, br#"{"payload": 2}"#));
    release.join().unwrap();
    let out = out.expect("the async start is retried while the file is busy");
    assert_eq!(out.payload, Some(serde_json::json!(2)));
}

#[test]
fn a_hook_held_open_for_writing_for_good_fails_with_the_kernels_reason() {
    let dir = tempfile::tempdir().unwrap();
    let spec = sh_hook(dir.path(), "cat");
    let release = held_open_for_writing(&dir.path().join("hook.sh"), Duration::from_secs(2));
    let out = run_sync(&spec, b"{}");
    release.join().unwrap();
    match out {
        Err(CommandError::CouldNotStart { source, .. }) => {
            assert_eq!(source.kind(), io::ErrorKind::ExecutableFileBusy)
        }
        other => panic!("expected a busy refusal, got {other:?}"),
    }
}
