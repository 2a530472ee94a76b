//! The background retry of a store that cannot be opened holds only a `WeakScope`: its thread
//! ends when the scope is gone. Alone in its test binary, so the threads it counts are its own.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use hookpoint_extensions::model::ScriptedModel;
use serde_json::json;

/// The threads of this process named `memory-retry`.
fn retry_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim() == "memory-retry")
        .count()
}

#[test]
fn the_retry_thread_ends_when_the_scope_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let scope = common::scope(
        "pg-retry-ends",
        dir.path(),
        json!({"store": "postgres", "postgres": {"url": format!("host=127.0.0.1 port={port} user=nobody connect_timeout=1")}}),
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(&mut agent, &model, "Remember that I like tea.");
    assert_eq!(retry_threads(), 1, "the store failed: one thread retries");
    drop(agent);
    drop(scope);
    let started = Instant::now();
    while retry_threads() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the retry thread outlived its scope"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
