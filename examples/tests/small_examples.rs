//! The one-topic examples under `examples/small/`, run as a user runs them: `cargo test` builds
//! each next to this test (`target/<profile>/examples/<name>`); these tests run the binaries and
//! check what they print.

use std::process::Command;

/// Runs example `name` and returns its stdout (it must succeed).
fn run(name: &str) -> String {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target dir");
    let bin = dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: run the tests with `cargo test --workspace` (it builds the examples)",
        bin.display()
    );
    let out = Command::new(&bin).output().expect("the example starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn hello_point_runs_both_extensions_in_order() {
    assert_eq!(
        run("hello_point"),
        "Hello, world\nhello order 10\nworld order 20\n"
    );
}

#[test]
fn extensible_fn_rewrites_arguments_and_result() {
    assert_eq!(
        run("extensible_fn"),
        "1 items: 500 cents\n4 items: 1000 cents\n10 items: 2250 cents\n"
    );
}

#[test]
fn override_folder_disables_and_restores_on_reload() {
    assert_eq!(
        run("override_folder"),
        "compiled in: Welcome | Today: maintenance at 18:00\n\
         after the manifest: Welcome\n\
         after removing it: Welcome | Today: maintenance at 18:00\n"
    );
}

#[test]
fn command_hook_replaces_the_payload_when_it_answers() {
    assert_eq!(
        run("command_hook"),
        "URGENT: renew the certificate [\"triaged\", \"paged\"]\n\
         typo on the home page [\"triaged\"]\n"
    );
}

#[test]
fn plugin_crate_signs_until_disabled() {
    assert_eq!(
        run("plugin_crate"),
        "Your order has shipped.\n-- The Shop\nYour order has shipped.\n"
    );
}

#[test]
fn folder_plugin_installs_joins_and_uninstalls() {
    assert_eq!(
        run("folder_plugin"),
        "without the plugin: == my app ==\n\
         installed: [\"motd\"]\n\
         with the plugin: == my app == | Mind the gap.\n\
         uninstalled: [\"motd\"]\n\
         after removing it: == my app ==\n\
         install motd\n\
         uninstall motd\n"
    );
}

/// Built only with the examples' `wasm` feature, as `.ci/run` runs it: `cargo build -p
/// hookpoint-examples --features wasm --examples`, then `cargo test -p hookpoint-examples
/// --features wasm --test small_examples` (the example needs the wasm runtime).
#[cfg(feature = "wasm")]
#[test]
fn wasm_extension_allows_only_the_pending_call() {
    assert_eq!(run("wasm_extension"), "search: allowed\nshell: denied\n");
}
