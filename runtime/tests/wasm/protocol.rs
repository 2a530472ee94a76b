//! The protocol: a wasm extension gets a command hook's input and answers like one (plus
//! `{"error": ...}`), with the override rules of any extension file.

use hookpoint::wasm::WasmError;
use hookpoint::{ErrorKind, LayerKind, LayerSpec};
use serde_json::json;

use super::guests::Guest;
use super::{DOC, DOC_ASYNC, Doc, Layer, WRAP, WRAP_ASYNC, problems, run, wasm_error};

#[test]
fn payload_answer_replaces_the_payload_and_later_extensions_see_it() {
    let layer = Layer::temp();
    layer.ext(
        "x.wasm",
        Guest::answer(r#"{"payload":{"n":2,"text":"wasm"}}"#).wasm(),
    );
    let doc = run(&layer.scope()).expect("dispatch");
    assert_eq!((doc.n, doc.text.as_str()), (2, "wasm+tail"));
}

#[test]
fn empty_answer_leaves_the_payload() {
    let layer = Layer::temp();
    layer.ext("x.wasm", Guest::answer("{}").wasm());
    layer.ext("y.wasm", Guest::answer("").wasm());
    let doc = run(&layer.scope()).expect("dispatch");
    assert_eq!((doc.n, doc.text.as_str()), (0, "start+tail"));
}

#[test]
fn error_answer_fails_the_extension_with_its_message_and_leaves_the_payload() {
    let layer = Layer::temp();
    let path = layer.ext(
        "gate.wasm",
        Guest::answer(r#"{"error":"no ticket"}"#).wasm(),
    );
    let scope = layer.scope();
    let mut doc = Doc::default();
    let e = scope
        .enter(|| DOC.call(&mut doc))
        .expect_err("the guest said no");
    assert_eq!(e.kind(), ErrorKind::Wasm);
    assert_eq!(e.extension(), Some("gate"));
    assert_eq!(
        wasm_error(&e),
        &WasmError::Failed {
            module: path,
            message: "no ticket".into()
        }
    );
    assert!(e.to_string().contains("no ticket"), "{e}");
    assert_eq!(
        doc,
        Doc::default(),
        "the payload is left, and the chain stopped"
    );
}

#[test]
fn continue_false_stops_the_chain() {
    let layer = Layer::temp();
    layer.ext(
        "stop.wasm",
        Guest::answer(r#"{"continue":false,"stopReason":"done"}"#).wasm(),
    );
    let scope = layer.scope();
    let mut doc = Doc::default();
    let outcome = scope.enter(|| DOC.call(&mut doc)).expect("dispatch");
    assert_eq!(outcome.stopped_by(), Some("stop"));
    assert_eq!(doc.text, "", "compiled_tail did not run");
}

#[test]
fn the_guest_gets_the_command_hook_input() {
    let layer = Layer::temp();
    layer.ext(
        "_-1_look.wasm",
        Guest::echo(r#"{"payload":{"n":1,"text":"","seen":"#, "}}").wasm(),
    );
    let doc = run(&layer.scope()).expect("dispatch");
    assert_eq!(
        doc.seen,
        Some(
            json!({"point": "wasm_doc", "extension": "look", "payload": {"n": 0, "text": "start"}})
        )
    );
}

#[test]
fn a_wat_text_file_is_a_wasm_extension_too() {
    let layer = Layer::temp();
    layer.ext(
        "t.wat",
        Guest::answer(r#"{"payload":{"n":7,"text":"text"}}"#).wat(),
    );
    let doc = run(&layer.scope()).expect("dispatch");
    assert_eq!(doc.n, 7);
}

#[test]
fn a_manifest_runs_a_module_of_its_layer_with_order_and_error_policy() {
    let layer = Layer::temp();
    layer.put(
        "guests/fails.wasm",
        Guest::answer(r#"{"error":"boom"}"#).wasm(),
    );
    layer.put(
        "guests/sets.wasm",
        Guest::answer(r#"{"payload":{"n":3,"text":"late"}}"#).wasm(),
    );
    layer.ext("_60_late.json", r#"{"wasm": "guests/sets.wasm"}"#);
    layer.ext(
        "early.json",
        r#"{"wasm": "guests/fails.wasm", "on_error": "log", "order": -5}"#,
    );
    let scope = layer.scope();
    assert_eq!(problems(&scope), Vec::<String>::new());
    let doc = run(&scope).expect("the failing one only logs");
    assert_eq!(
        (doc.n, doc.text.as_str()),
        (3, "late"),
        "late (60) ran after the tail (50)"
    );
    let info = scope.introspect();
    let p = info.iter().find(|p| p.name == "wasm_doc").expect("listed");
    let shown: Vec<_> = p
        .extensions
        .iter()
        .map(|e| {
            (
                e.name.as_str(),
                e.order,
                e.runs_as.as_str(),
                e.on_error.as_str(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("early", -5, "wasm", "log"),
            ("compiled_tail", 50, "sync", "propagate"),
            ("late", 60, "wasm", "propagate")
        ]
    );
}

#[test]
fn a_module_path_leaving_the_layer_is_refused() {
    let layer = Layer::temp();
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("x.wasm"), Guest::answer("{}").wasm()).expect("write");
    let rel = format!(
        "../{}/x.wasm",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    let manifest = layer.ext("x.json", format!(r#"{{"wasm": "{rel}"}}"#));
    let scope = layer.scope();
    let found = problems(&scope);
    assert!(
        found
            .iter()
            .any(|p| p.starts_with(&manifest.display().to_string())
                && p.contains("outside the layer folder")),
        "{found:?}"
    );
    assert_eq!(
        scope.snapshot().extension_names("wasm_doc"),
        ["compiled_tail"]
    );
}

#[test]
fn a_replacing_payload_that_does_not_fit_the_type_is_an_error_and_leaves_the_payload() {
    let layer = Layer::temp();
    layer.ext("x.wasm", Guest::answer(r#"{"payload":{"n":"two"}}"#).wasm());
    let scope = layer.scope();
    let mut doc = Doc::default();
    let e = scope.enter(|| DOC.call(&mut doc)).expect_err("bad payload");
    assert_eq!(e.kind(), ErrorKind::Wasm);
    assert!(e.to_string().contains("does not deserialize"), "{e}");
    assert_eq!(doc, Doc::default());
}

#[test]
fn async_dispatch_runs_wasm_extensions() {
    let layer = Layer::temp();
    layer.put(
        "extensions/wasm_doc_async/x.wasm",
        Guest::answer(r#"{"payload":{"n":9,"text":"async"}}"#).wasm(),
    );
    let scope = layer.scope();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("rt");
    let mut doc = Doc::default();
    rt.block_on(scope.bind(DOC_ASYNC.call(&mut doc)))
        .expect("dispatch");
    assert_eq!((doc.n, doc.text.as_str()), (9, "async"));
}

#[test]
fn a_point_not_declared_serde_refuses_wasm_extensions() {
    let layer = Layer::temp();
    layer.put("extensions/wasm_plain/x.wasm", Guest::answer("{}").wasm());
    let scope = layer.scope();
    let found = problems(&scope);
    assert!(
        found
            .iter()
            .any(|p| p.contains("does not accept wasm extensions")),
        "{found:?}"
    );
    let info = scope.introspect();
    let p = info
        .iter()
        .find(|p| p.name == "wasm_plain")
        .expect("listed");
    assert_eq!(p.inactive.len(), 1);
    assert!(
        p.inactive[0].why.contains("#[serde]"),
        "{}",
        p.inactive[0].why
    );
}

#[test]
fn an_untrusted_layer_runs_no_wasm() {
    let layer = Layer::temp();
    layer.ext(
        "x.wasm",
        Guest::answer(r#"{"payload":{"n":1,"text":"p"}}"#).wasm(),
    );
    let build = |trust| layer.checkout_scope(trust);
    let untrusted = build(false);
    assert_eq!(run(&untrusted).expect("dispatch").n, 0);
    let warnings = untrusted.status().warnings;
    assert!(
        warnings
            .iter()
            .any(|w| w.to_string().contains("untrusted checkout layer")),
        "{warnings:?}"
    );
    assert_eq!(run(&build(true)).expect("dispatch").n, 1);
}

#[test]
fn a_higher_layer_disables_or_changes_a_wasm_extension_by_name() {
    let layer = Layer::temp();
    layer.ext("x.wasm", Guest::answer(r#"{"error":"boom"}"#).wasm());
    let profile = |manifest: &str| {
        layer.put("higher/extensions/wasm_doc/x.json", manifest);
        let higher = LayerSpec::new(LayerKind::new("higher"), 10);
        let builder = layer.builder().layer(layer.root().join("higher"), higher);
        builder.build().expect("scope")
    };
    let scope = profile(r#"{"on_error": "log", "order": 70}"#);
    run(&scope).expect("the higher layer's manifest made the error a log line");
    let info = scope.introspect();
    let x = info
        .iter()
        .find(|p| p.name == "wasm_doc")
        .and_then(|p| p.extensions.iter().find(|e| e.name == "x"))
        .expect("x listed");
    assert_eq!(
        (x.order, x.runs_as, x.on_error),
        (
            70,
            hookpoint::introspect::RunsAs::Wasm,
            hookpoint::ErrorPolicy::Log
        )
    );
    let scope = profile(r#"{"enabled": false}"#);
    assert_eq!(
        scope.snapshot().extension_names("wasm_doc"),
        ["compiled_tail"]
    );
}

#[test]
fn match_skips_a_wasm_extension_for_payloads_it_rejects() {
    let layer = Layer::temp();
    layer.put(
        "guests/x.wasm",
        Guest::answer(r#"{"payload":{"n":5,"text":"go"}}"#).wasm(),
    );
    layer.ext(
        "x.json",
        r#"{"wasm": "guests/x.wasm", "match": {"/text": "go*"}}"#,
    );
    let scope = layer.scope();
    assert_eq!(
        run(&scope).expect("no match").n,
        0,
        "text is `start`: skipped"
    );
    let mut doc = Doc {
        text: "gone".into(),
        ..Doc::default()
    };
    scope.enter(|| DOC.call(&mut doc)).expect("dispatch");
    assert_eq!(doc.n, 5);
}

#[test]
fn wasm_manifest_keys_are_checked_with_clear_errors() {
    let cases = [
        (r#"{"allowed_paths": ["data"]}"#, "it needs `wasm`"),
        (
            r#"{"wasm": "g.wasm", "command": ["./x"]}"#,
            "either `command` or `wasm`",
        ),
        (r#"{"wasm": ""}"#, "must not be empty"),
        (
            r#"{"wasm": "g.wasm", "max_memory_mb": 0}"#,
            "between 1 and 1024",
        ),
        (
            r#"{"wasm": "g.wasm", "allowed_env": [""]}"#,
            "must not be empty",
        ),
        (
            r#"{"wasm": "g.wasm", "clock": "yes"}"#,
            "expected a boolean",
        ),
        (
            r#"{"wasm": "g.wasm", "allowed_paths": ["../up"]}"#,
            "without `..`",
        ),
    ];
    for (manifest, why) in cases {
        let layer = Layer::temp();
        layer.put("g.wasm", Guest::answer("{}").wasm());
        layer.ext("x.json", manifest);
        let found = problems(&layer.scope());
        assert!(
            found.iter().any(|p| p.contains(why)),
            "{manifest}: {found:?}"
        );
    }
}

hookpoint::point! {
    /// A compiled-in extension writes a value there before a wasm extension runs.
    #[serde]
    pub static DOC_OUTGOING: SyncPoint<Doc> = "wasm_doc_outgoing";
}

const OUTGOING_VALUE: &str = "value-only-the-application-may-see";

#[hookpoint::extension(point = DOC_OUTGOING, order = -10, name = "writes_the_value")]
fn writes_the_value(doc: &mut Doc) {
    doc.text = format!("the value is {OUTGOING_VALUE}");
}

/// Process-wide, so it touches only this test's value.
fn hide_the_value(v: &mut serde_json::Value) {
    if let Some(text) = v.get_mut("text")
        && let Some(s) = text.as_str()
        && s.contains(OUTGOING_VALUE)
    {
        *text = s.replace(OUTGOING_VALUE, "(hidden)").into();
    }
}

#[test]
fn a_module_gets_the_payload_through_the_outgoing_filters_whatever_wrote_it() {
    hookpoint::add_outgoing_filter(hide_the_value);
    let layer = Layer::temp();
    layer.put(
        "extensions/wasm_doc_outgoing/_0_look.wasm",
        Guest::echo(r#"{"payload":{"n":1,"text":"","seen":"#, "}}").wasm(),
    );
    let scope = layer.scope();
    let mut doc = Doc::default();
    scope
        .enter(|| DOC_OUTGOING.call(&mut doc))
        .expect("dispatch");
    let seen = doc.seen.expect("the module ran").to_string();
    assert!(
        !seen.contains(OUTGOING_VALUE) && seen.contains("the value is (hidden)"),
        "the module saw {seen}"
    );
}

/// Calls the sync wrap point with `doc`; the inner step marks what it got.
fn call_wrap(scope: &hookpoint::Scope, doc: &mut Doc) -> Result<Doc, hookpoint::Error> {
    scope.enter(|| {
        WRAP.call(doc, |req| {
            Ok(Doc {
                text: format!("inner saw {}", req.text),
                ..req.clone()
            })
        })
    })
}

#[test]
fn on_a_wrap_point_a_response_answers_and_nothing_inside_runs() {
    let layer = Layer::temp();
    layer.put(
        "extensions/wasm_wrap/cache.wasm",
        Guest::answer(r#"{"response":{"n":7,"text":"cached"}}"#).wasm(),
    );
    let out = call_wrap(&layer.scope(), &mut Doc::default()).expect("dispatch");
    assert_eq!((out.n, out.text.as_str()), (7, "cached"));
}

#[test]
fn on_a_wrap_point_a_payload_rewrites_the_request_and_the_nest_goes_on() {
    let layer = Layer::temp();
    layer.put(
        "extensions/wasm_wrap/rewrite.wasm",
        Guest::answer(r#"{"payload":{"n":1,"text":"rewritten"}}"#).wasm(),
    );
    let out = call_wrap(&layer.scope(), &mut Doc::default()).expect("dispatch");
    assert_eq!((out.n, out.text.as_str()), (1, "inner saw rewritten"));
}

#[test]
fn on_a_wrap_point_a_bad_answer_is_a_clear_error() {
    for (answer, why) in [
        (r#"{"continue":false}"#, "needs a `response` to answer with"),
        (
            r#"{"response":{"n":"seven"}}"#,
            "does not deserialize into the point's response type",
        ),
    ] {
        let layer = Layer::temp();
        layer.put(
            "extensions/wasm_wrap/bad.wasm",
            Guest::answer(answer).wasm(),
        );
        let e = call_wrap(&layer.scope(), &mut Doc::default()).expect_err(answer);
        assert_eq!(e.kind(), ErrorKind::Wasm, "{e}");
        assert_eq!(e.extension(), Some("bad"));
        assert!(e.to_string().contains(why), "{answer}: {e}");
    }
}

#[test]
fn on_a_wrap_point_a_failed_answer_changes_nothing() {
    // A rewrite with a stop and no response is an error; logged, the rest runs as if the
    // extension were absent: on the request as it was, with no response left behind.
    // (The first answer, which is good, shows the module runs.)
    for (answer, seen) in [
        (
            r#"{"payload":{"n":1,"text":"rewritten"}}"#,
            (1, "rewritten"),
        ),
        (
            r#"{"payload":{"n":1,"text":"rewritten"},"continue":false}"#,
            (5, "asked"),
        ),
        (
            r#"{"payload":{"n":"one"},"response":{"n":2,"text":"answered"}}"#,
            (5, "asked"),
        ),
    ] {
        let layer = Layer::temp();
        layer.put("guests/half.wasm", Guest::answer(answer).wasm());
        layer.put(
            "extensions/wasm_wrap/half.json",
            r#"{"wasm": "guests/half.wasm", "on_error": "log"}"#,
        );
        let mut doc = Doc {
            n: 5,
            text: "asked".into(),
            seen: None,
        };
        let out = call_wrap(&layer.scope(), &mut doc).expect("the failure is only logged");
        let inner_saw = format!("inner saw {}", seen.1);
        assert_eq!(
            (out.n, out.text.as_str()),
            (seen.0, inner_saw.as_str()),
            "{answer}"
        );
        assert_eq!((doc.n, doc.text.as_str()), seen, "{answer}");
    }
}

#[test]
fn a_response_on_a_point_that_is_not_a_wrap_point_is_an_error() {
    let layer = Layer::temp();
    layer.ext(
        "answer.wasm",
        Guest::answer(r#"{"response":{"n":1}}"#).wasm(),
    );
    let e = run(&layer.scope()).expect_err("not a wrap point");
    assert!(e.to_string().contains("answers a wrap point only"), "{e}");
}

#[test]
fn on_an_async_wrap_point_a_response_answers_too() {
    let layer = Layer::temp();
    layer.put(
        "extensions/wasm_wrap_async/cache.wasm",
        Guest::answer(r#"{"response":{"n":9,"text":"cached"}}"#).wasm(),
    );
    let scope = layer.scope();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut doc = Doc::default();
    let out = rt
        .block_on(scope.bind(WRAP_ASYNC.call(&mut doc, |_| {
            Box::pin(async { Err(hookpoint::Error::msg("the inner step ran")) })
        })))
        .expect("dispatch");
    assert_eq!((out.n, out.text.as_str()), (9, "cached"));
}
