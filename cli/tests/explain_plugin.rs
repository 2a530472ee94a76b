//! `explain` on a plugin's extension: enabled, then switched off in the scope.

use hookpoint::ScopeBuilder;
use hookpoint::cli::{Exit, run_from};

hookpoint::link!(hookpoint_plugin_memory);

fn explain(scope: &hookpoint::Scope) -> String {
    let mut out = Vec::new();
    let exit = run_from(
        scope,
        [
            "hookpoint",
            "explain",
            "monologue_end",
            "memorize_fragments",
        ],
        &mut out,
    );
    assert_eq!(exit, Exit::Ok, "{}", String::from_utf8_lossy(&out));
    String::from_utf8(out).expect("utf-8")
}

#[test]
fn explain_names_the_plugin_and_says_when_it_is_off() {
    let scope = ScopeBuilder::new("cli-plugin")
        .watch(false)
        .build()
        .expect("scope");
    let on = explain(&scope);
    assert!(on.contains("memorize_fragments: runs"), "{on}");
    assert!(
        on.contains("from plugin `memory`, enabled in this scope"),
        "{on}"
    );
    scope.set_plugin_enabled("memory", false).expect("toggle");
    let off = explain(&scope);
    assert!(
        off.contains("memorize_fragments: does not run: plugin `memory` is disabled"),
        "{off}"
    );
    assert!(
        off.contains("from plugin `memory`, disabled in this scope"),
        "{off}"
    );
}
