//! The agent demo, run as a user runs it: `cargo test` builds the example next to this test
//! (`target/<profile>/examples/agent`); these tests run that binary and check what it prints.

use std::path::PathBuf;
use std::process::Command;

/// The demo binary `cargo test` built beside this test's own binary.
fn demo() -> Command {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/agent_demo-<hash> → target/<profile>/examples/agent
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target dir");
    let bin: PathBuf = dir
        .join("examples")
        .join(format!("agent{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: run the tests with `cargo test --workspace` (it builds the examples)",
        bin.display()
    );
    Command::new(bin)
}

fn run(args: &[&str]) -> String {
    let memory = tempfile::tempdir().expect("tempdir");
    let out = demo()
        .args(args)
        .arg("--memory-dir")
        .arg(memory.path())
        .output()
        .expect("the demo starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "demo failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_session_fires_every_point_and_loads_the_folder_plugin() {
    let out = run(&["--trace", "off"]);
    assert!(out.contains("all 53 points of the runtime fired"), "{out}");
    assert!(out.contains("plugin    welcome (folder plugin "), "{out}");
    let python = Command::new("python3").arg("--version").output().is_ok();
    if python {
        assert!(
            out.contains("banner    welcome: hello from the `welcome` folder plugin"),
            "{out}"
        );
    } else {
        assert!(
            out.contains("welcome") && out.contains("unhealthy"),
            "{out}"
        );
    }
    // Sixteen scripted tasks (three in the middleware scene), and one more asking the MCP time
    // server when it is installed.
    let tasks = if mcp_installed(&out) { 17 } else { 16 };
    assert!(
        out.contains(&format!("Observability: {tasks} tasks")),
        "{out}"
    );
}

/// Whether the demo found `mcp-server-time` (it then says so in its `mcp` status line); with
/// `HOOKPOINT_REQUIRE_MCP=1` (CI) it must have.
fn mcp_installed(out: &str) -> bool {
    let installed = out.contains("mcp       time [stdio: ");
    if std::env::var("HOOKPOINT_REQUIRE_MCP").as_deref() == Ok("1") {
        assert!(
            installed,
            "HOOKPOINT_REQUIRE_MCP=1 but the demo found no MCP server:\n{out}"
        );
    }
    installed
}

#[test]
fn the_mcp_time_server_answers_through_the_chain_when_installed() {
    let out = run(&["--trace", "off"]);
    if !mcp_installed(&out) {
        eprintln!("skipped: mcp-server-time is not installed (see README, `mcp` plugin)");
        return;
    }
    assert!(out.contains("you › What time is it in Tokyo?"), "{out}");
    let call = out
        .lines()
        .find(|l| l.contains("tool      time.get_current_time (ok) → "))
        .unwrap_or_else(|| panic!("no MCP tool call in:\n{out}"));
    assert!(call.contains("Asia/Tokyo"), "{call}");
    assert!(
        out.contains("tools: time.get_current_time, time.convert_time"),
        "{out}"
    );
}

#[test]
fn the_session_shows_an_approval_resumed_a_subordinate_a_compaction_and_a_guardrail() {
    let out = run(&["--trace", "off"]);
    let has = |s: &str| assert!(out.contains(s), "missing `{s}` in:\n{out}");
    has(
        r#"waiting   call-0 shell {"command":"make deploy ENV=production"} (shell commands change the machine)"#,
    );
    has("the agent is dropped (a restart)");
    has(r#"tool      shell {"command":"make deploy ENV=staging"} → $ make deploy ENV=staging"#);
    has("A1        Built with `make`, deployed with `make deploy` (source: README.md).");
    has("summarised,");
    has("every tool call still paired");
    has("guardrail `no_card_numbers` tripped: the message holds what looks like a card number");
}

#[test]
fn watch_applies_an_override_then_uninstalls_and_reinstalls_the_folder_plugin() {
    let out = run(&["--trace", "off", "--watch", "--watch-seconds", "1"]);
    let watch: Vec<&str> = out.lines().filter(|l| l.starts_with("--watch:")).collect();
    let text = watch.join("\n");
    assert!(
        text.contains("system_prompt now runs [") && text.contains("\"signature_footer\"]"),
        "{text}"
    );
    let removed = watch
        .iter()
        .position(|l| l.contains("plugin welcome removed (uninstalled; its extensions left the snapshot); banners runs [\"model_banner\"]"));
    let back = watch.iter().position(|l| {
        l.contains("reloaded")
            && l.contains("plugin welcome (folder plugin")
            && l.contains("\"welcome\"]")
    });
    assert!(
        matches!((removed, back), (Some(r), Some(b)) if r < b),
        "expected the plugin to leave, then come back:\n{text}"
    );
}

#[test]
fn the_demo_shows_a_retried_429_a_cached_answer_and_a_tool_call_limit() {
    let out = run(&[]);
    assert!(out.contains("attempt: 0 → 2"), "{out}");
    assert!(
        out.contains("model.call                  demo_cache"),
        "the cached answer's model.call runs no inner model: {out}"
    );
    assert!(
        out.contains("stopped   limit `tool_calls.calculator` per task reached: 1 of 1"),
        "{out}"
    );
}
