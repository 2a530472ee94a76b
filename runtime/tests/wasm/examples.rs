//! The example guests shipped with the code: `runtime/guests/allow.wat` (the one in
//! `guide/chapters/07-webassembly.md`), the same hook in C (`runtime/guests/allow.c`), and the
//! agent demo's prompt policy.

use serde_json::json;

use super::{CALL, Call, Layer, PROMPT, Prompt};

const ALLOW_WAT: &str = include_str!("../../guests/allow.wat");
const ALLOW_C: &str = include_str!("../../guests/allow.c");
const DEMO_POLICY: &str =
    include_str!("../../../examples/agent/project/extensions/system_prompt/_90_policy.wat");

/// Dispatches `wasm_call` on a call with `status`, through the layer's extensions.
fn decide(layer: &Layer, status: &str) -> Call {
    let mut call = Call {
        tool: "shell".into(),
        args: json!({"cmd": "echo \"status\":\"pending\"", "cwd": "/srv"}),
        status: status.into(),
    };
    layer
        .scope()
        .enter(|| CALL.call(&mut call))
        .expect("dispatch");
    call
}

/// What every version of the `allow` hook must do.
fn allows_pending_calls_and_leaves_others(layer: &Layer) {
    let call = decide(layer, "pending");
    assert_eq!(call.status, "allowed");
    assert_eq!(
        call.args["cmd"], "echo \"status\":\"pending\"",
        "a quoted look-alike is left"
    );
    assert_eq!(decide(layer, "denied").status, "denied");
}

#[test]
fn the_readme_guest_in_wat_allows_pending_calls_and_leaves_others() {
    let layer = Layer::temp();
    layer.put("extensions/wasm_call/allow.wat", ALLOW_WAT);
    allows_pending_calls_and_leaves_others(&layer);
}

#[test]
#[ignore = "needs clang and lld (Debian: apt-get install clang lld); .ci/run installs them and runs it"]
fn the_same_guest_in_c_behaves_the_same() {
    let layer = Layer::temp();
    let src = layer.put("src/allow.c", ALLOW_C);
    let out = layer.root().join("extensions/wasm_call/allow.wasm");
    std::fs::create_dir_all(out.parent().expect("parent")).expect("mkdir");
    let status = std::process::Command::new("clang")
        .args([
            "--target=wasm32",
            "-O2",
            "-nostdlib",
            "-fno-builtin",
            "-Wl,--no-entry",
            "-o",
        ])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("clang runs (apt-get install clang lld)");
    assert!(status.success(), "clang compiled allow.c");
    allows_pending_calls_and_leaves_others(&layer);
}

#[test]
fn the_demo_policy_guest_appends_one_prompt_section() {
    let layer = Layer::temp();
    layer.put("extensions/wasm_prompt/_90_policy.wat", DEMO_POLICY);
    let scope = layer.scope();
    let section =
        "Policy (a wasm extension): ask before any command that deletes or overwrites files.";
    for parts in [
        vec![],
        vec![
            "You are \"ada\" [an agent].".to_owned(),
            "Tools: a]b".to_owned(),
        ],
    ] {
        let mut prompt = Prompt {
            agent_name: "ada".into(),
            parts: parts.clone(),
            tools: vec![json!({"name": "shell", "enum": ["]"]})],
        };
        scope.enter(|| PROMPT.call(&mut prompt)).expect("dispatch");
        let mut want = parts;
        want.push(section.to_owned());
        assert_eq!(prompt.parts, want);
        assert_eq!(prompt.tools.len(), 1);
    }
}
