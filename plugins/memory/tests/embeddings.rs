//! Embeddings: the OpenAI-compatible client against a fake endpoint on 127.0.0.1, vectors of
//! another dimension refused, recall by meaning (a paraphrase sharing no word), words and
//! hybrid, and the switch to a new embedding model in the background.

mod common;

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use common::embed::{Toy, concepts, server};
use hookpoint_extensions::{log::LogKind, model::ScriptedModel, payloads::MemoryKind};
use hookpoint_plugin_memory::{
    EmbedError, EmbedFuture, Embedder, OpenAiEmbedder, store, use_embedder,
};
use serde_json::json;

fn five(_: &str) -> usize {
    5
}

fn six_for_wide(model: &str) -> usize {
    if model == "wide" { 6 } else { 5 }
}

#[test]
fn the_endpoint_client_sends_model_and_texts_and_orders_the_answer() {
    let (url, seen) = server(five);
    let client = OpenAiEmbedder::new(&url, "fake").api_key("sk-test");
    let texts = ["I drink tea".to_owned(), "it rains".to_owned()];
    let vectors = common::rt().block_on(client.embed(&texts)).unwrap();
    assert_eq!(
        vectors,
        [concepts("I drink tea", 5), concepts("it rains", 5)]
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.bodies[0], json!({"model": "fake", "input": texts}));
    assert_eq!(seen.auth[0], "Bearer sk-test");
}

#[test]
fn an_endpoint_error_names_the_url_and_the_status() {
    let (url, _) = server(five);
    let client = OpenAiEmbedder::new(&url, "broken");
    let err = common::rt()
        .block_on(client.embed(&["x".to_owned()]))
        .unwrap_err();
    let EmbedError::Endpoint {
        url: called,
        reason,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(called, &format!("{url}/embeddings"));
    assert!(
        reason.starts_with("500") && reason.contains("model not loaded"),
        "{reason}"
    );
}

#[test]
fn vectors_of_another_dimension_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _) = server(six_for_wide);
    let scope = common::scope(
        "dimension",
        dir.path(),
        json!({"embedding": {"provider": "openai", "url": url, "model": "wide"}}),
    );
    let db = store(&scope).unwrap();
    db.add_embedded(
        MemoryKind::Fragment,
        "I drink tea",
        "",
        "seed",
        "wide",
        &[1.0; 5],
    )
    .unwrap();
    let wide = hookpoint_plugin_memory::embedder_from(
        &scope
            .enter(|| hookpoint_plugin_memory::MEMORY.config())
            .unwrap()
            .embedding
            .clone()
            .unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(use_embedder(&scope, wide).wait(), Ok(0));
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(&mut agent, &model, "Remember that I take the bus.");
    assert_eq!(
        db.count(None).unwrap(),
        1,
        "nothing of the refused memory is written"
    );
    let warnings = common::log(&agent, LogKind::Warning);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("memory could not store")
                && w.contains("dimension 6")
                && w.contains("dimension 5")),
        "{warnings:?}"
    );
}

fn toy_scope(name: &str, dir: &std::path::Path, config: serde_json::Value) -> hookpoint::Scope {
    let scope = common::scope(name, dir, config);
    store(&scope).unwrap();
    assert_eq!(use_embedder(&scope, Arc::new(Toy("toy", 5))).wait(), Ok(0));
    scope
}

#[test]
fn a_memory_is_recalled_by_a_paraphrase_that_shares_no_word_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let scope = toy_scope("meaning", dir.path(), json!({"recall_interval": 1}));
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(&mut agent, &model, "Remember that I love espresso.");
    let db = store(&scope).unwrap();
    assert_eq!(
        db.vector_dimension("toy").unwrap(),
        Some(5),
        "stored with its vector"
    );
    let system = common::say(&mut agent, &model, "Which beverage suits me?");
    assert!(
        system.contains("## memories\n- Remember that I love espresso"),
        "{system}"
    );
    assert!(
        db.search("Which beverage suits me?", None, 5)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn by_words_the_paraphrase_finds_nothing_and_hybrid_adds_word_matches() {
    let dir = tempfile::tempdir().unwrap();
    let words = toy_scope("words", &dir.path().join("w"), json!({"search": "words"}));
    let hybrid = toy_scope("hybrid", &dir.path().join("h"), json!({"search": "hybrid"}));
    let meaning = toy_scope("meaning-only", &dir.path().join("m"), json!({}));
    for scope in [&words, &hybrid, &meaning] {
        let model = Arc::new(ScriptedModel::new("m"));
        let mut agent = common::agent(scope, model.clone());
        common::say(
            &mut agent,
            &model,
            "Remember that I love espresso. Remember the Zanzibar trip.",
        );
    }
    let ask = |scope: &hookpoint::Scope| {
        let model = Arc::new(ScriptedModel::new("m"));
        let mut agent = common::agent(scope, model.clone());
        common::say(&mut agent, &model, "A beverage for zanzibar?")
    };
    let w = ask(&words);
    assert!(
        w.contains("- Remember the Zanzibar trip") && !w.contains("espresso"),
        "{w}"
    );
    let m = ask(&meaning);
    assert!(
        m.contains("- Remember that I love espresso") && !m.contains("Zanzibar"),
        "{m}"
    );
    let h = ask(&hybrid);
    assert!(
        h.contains("## memories\n- Remember that I love espresso\n- Remember the Zanzibar trip"),
        "{h}"
    );
}

/// A toy model that waits for a gate before answering.
struct Gated(Arc<(Mutex<bool>, Condvar)>);

impl Embedder for Gated {
    fn model(&self) -> &str {
        "gated"
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        let (open, cv) = &*self.0;
        let mut guard = open.lock().unwrap();
        while !*guard {
            guard = cv.wait(guard).unwrap();
        }
        Box::pin(async move { Ok(texts.iter().map(|t| concepts(t, 7)).collect()) })
    }
}

#[test]
fn recall_keeps_the_old_vectors_until_the_new_model_has_embedded_everything() {
    let dir = tempfile::tempdir().unwrap();
    let scope = toy_scope("switch", dir.path(), json!({"recall_interval": 1}));
    let db = store(&scope).unwrap();
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(&mut agent, &model, "Remember that I love espresso.");
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let switch = use_embedder(&scope, Arc::new(Gated(Arc::clone(&gate))));
    let system = common::say(&mut agent, &model, "Which beverage suits me?");
    assert!(
        system.contains("- Remember that I love espresso"),
        "{system}"
    );
    assert_eq!(db.embedding_model().unwrap().as_deref(), Some("toy"));
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    assert_eq!(switch.wait(), Ok(1));
    assert_eq!(db.embedding_model().unwrap().as_deref(), Some("gated"));
    assert_eq!(db.vector_dimension("gated").unwrap(), Some(7));
    assert_eq!(
        db.vector_dimension("toy").unwrap(),
        None,
        "the old vectors are gone"
    );
    let system = common::say(&mut agent, &model, "Which beverage suits me?");
    assert!(
        system.contains("- Remember that I love espresso"),
        "{system}"
    );
}

#[test]
fn a_new_embedding_model_re_embeds_every_memory_through_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = server(six_for_wide);
    let scope = common::scope(
        "re-embed",
        dir.path(),
        json!({"embedding": {"provider": "openai", "url": url, "model": "narrow"}}),
    );
    let db = store(&scope).unwrap();
    for text in ["I drink tea", "It rains a lot", "My name is Ada"] {
        db.add(MemoryKind::Fragment, text, "", "seed").unwrap();
    }
    let model = Arc::new(ScriptedModel::new("m"));
    let agent = common::agent(&scope, model);
    common::rt()
        .block_on(agent.handle().set_embedding_model("wide"))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while db.embedding_model().unwrap().as_deref() != Some("wide") {
        assert!(Instant::now() < deadline, "the switch did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(db.vector_dimension("wide").unwrap(), Some(6));
    assert!(db.without_vector("wide", 10).unwrap().is_empty());
    let seen = seen.lock().unwrap();
    assert!(
        seen.bodies.iter().all(|b| b["model"] == "wide"),
        "{:?}",
        seen.bodies
    );
    let info = common::log(&agent, LogKind::Info);
    assert!(
        info.iter()
            .any(|l| l == "memory: re-embedding memories for wide in the background"),
        "{info:?}"
    );
}

/// An embedding model that takes 5 s for every call.
struct Slow;

impl Embedder for Slow {
    fn model(&self) -> &str {
        "slow"
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(texts.iter().map(|t| concepts(t, 5)).collect())
        })
    }
}

#[test]
fn a_slow_embedding_model_holds_up_memorizing_only_until_embed_timeout_ms() {
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope(
        "slow-embedder",
        dir.path(),
        json!({"recall": false, "embed_timeout_ms": 200}),
    );
    let db = store(&scope).unwrap();
    assert_eq!(use_embedder(&scope, Arc::new(Slow)).wait(), Ok(0));
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    let started = std::time::Instant::now();
    common::say(&mut agent, &model, "Remember that I love espresso.");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "memorizing waited {took:?} for the model"
    );
    let stored = db.search("espresso", None, 5).unwrap();
    assert_eq!(stored.len(), 1, "stored without its vector: {stored:?}");
    assert_eq!(db.vector_dimension("slow").unwrap(), None);
    let warnings = common::log(&agent, LogKind::Warning);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("memory stored without a vector")
                && w.contains("slow: no vector within 200 ms (embed_timeout_ms)")),
        "{warnings:?}"
    );
}
