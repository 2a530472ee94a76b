//! The PostgreSQL store against a real server: the behaviour suite, two agent processes sharing
//! one memory (what one memorises the other recalls; concurrent writers lose nothing), the
//! versioned schema, a lost connection retried; and a server that is down at start (memory is
//! unhealthy with the reason, the agent answers) and starts later (memory comes back).
//!
//! The server: `HOOKPOINT_TEST_POSTGRES` (a connection string; `.ci/postgres start DIR` starts a
//! throwaway one and prints it). Without it the server tests are skipped with a message, unless
//! `HOOKPOINT_REQUIRE_POSTGRES=1`.

mod common;

use std::io::{Read, Write};
use std::sync::Arc;

use hookpoint::PluginState;
use hookpoint_extensions::{log::LogKind, model::ScriptedModel, payloads::MemoryKind};
use hookpoint_plugin_memory::{MemoryStore, PostgresStore, SCHEMA_VERSION, store};
use postgres::config::Host;
use serde_json::json;

fn server() -> Option<String> {
    let url = std::env::var("HOOKPOINT_TEST_POSTGRES")
        .ok()
        .filter(|u| !u.is_empty());
    if url.is_none() {
        assert!(
            std::env::var("HOOKPOINT_REQUIRE_POSTGRES").as_deref() != Ok("1"),
            "HOOKPOINT_REQUIRE_POSTGRES=1 but HOOKPOINT_TEST_POSTGRES is not set"
        );
        eprintln!(
            "skipped: no PostgreSQL server (set HOOKPOINT_TEST_POSTGRES, e.g. from `.ci/postgres start target/pg`)"
        );
    }
    url
}

/// A namespace no other test run uses.
fn fresh(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{name}-{}-{nanos}", std::process::id())
}

#[test]
fn the_postgres_store_behaves() {
    let Some(url) = server() else { return };
    let store = PostgresStore::open(&url, &fresh("suite")).unwrap();
    common::suite::run(Arc::new(store));
}

#[test]
fn the_schema_is_versioned_and_opening_again_migrates_nothing() {
    let Some(url) = server() else { return };
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || PostgresStore::open(&url, &format!("schema-{i}")).map(drop))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let rows = client
        .query("SELECT version FROM hookpoint_memory_schema", &[])
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get::<_, i32>(0), SCHEMA_VERSION);
}

#[test]
fn a_lost_connection_is_reconnected_and_the_write_retried() {
    let Some(url) = server() else { return };
    let ns = fresh("lossy");
    let store = PostgresStore::open(
        &format!("{url} application_name=lossy-{}", std::process::id()),
        &ns,
    )
    .unwrap();
    store
        .add(MemoryKind::Fragment, "before the loss", "", "a")
        .unwrap();
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let killed = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            &[&format!("lossy-{}", std::process::id())],
        )
        .unwrap();
    assert_eq!(killed.len(), 1, "the store's connection was terminated");
    std::thread::sleep(std::time::Duration::from_millis(100));
    store
        .add(MemoryKind::Fragment, "after the loss", "", "a")
        .unwrap();
    assert_eq!(store.count(None).unwrap(), 2);
}

#[test]
fn a_write_by_another_connection_is_seen_by_the_next_recall() {
    let Some(url) = server() else { return };
    let ns = fresh("cache");
    let first = PostgresStore::open(&url, &ns).unwrap();
    let second = PostgresStore::open(&url, &ns).unwrap();
    common::suite::two_handles(&first, &second);
}

#[test]
fn after_a_write_postgres_reads_again_only_the_vectors_changed() {
    let Some(url) = server() else { return };
    let ns = fresh("incremental");
    let db = PostgresStore::open(&url, &ns).unwrap();
    let fragment = MemoryKind::Fragment;
    let (x, y) = ([1.0, 0.0], [0.0, 1.0]);
    db.add_embedded(fragment, "along x", "", "a", "m", &x)
        .unwrap();
    let texts = |query: &[f32]| -> Vec<String> {
        db.nearest("m", query, None, 5, 0.9)
            .unwrap()
            .into_iter()
            .map(|s| s.memory.text)
            .collect()
    };
    assert_eq!(texts(&x), ["along x"]);
    // Behind the change log's back: a recall that reads every vector again would see this.
    let mut raw = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    raw.execute(
        "UPDATE hookpoint_memory_vectors v SET vector = $2 FROM hookpoint_memories m
         WHERE m.id = v.memory_id AND m.namespace = $1",
        &[&ns, &y.to_vec()],
    )
    .unwrap();
    db.add_embedded(fragment, "along y", "", "a", "m", &y)
        .unwrap();
    assert_eq!(texts(&y), ["along y"], "the logged change is read");
    assert_eq!(texts(&x), ["along x"], "the unlogged one is not");
}

/// The other process: memorizes through an agent, or writes `HOOKPOINT_PG_WRITES` memories.
#[test]
#[ignore = "run by two_processes_share_one_memory as a child process"]
fn child_process() {
    let (Ok(url), Ok(ns)) = (
        std::env::var("HOOKPOINT_PG_URL"),
        std::env::var("HOOKPOINT_PG_NS"),
    ) else {
        return;
    };
    let writer = std::env::var("HOOKPOINT_PG_WRITER").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope(
        &format!("child-{writer}"),
        dir.path(),
        json!({"store": "postgres", "postgres": {"url": url, "namespace": ns}}),
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(
        &mut agent,
        &model,
        &format!("Remember that writer {writer} deploys on Fridays."),
    );
    let db = store(&scope).unwrap();
    for i in 0..50 {
        db.add(
            MemoryKind::Fragment,
            &format!("writer {writer} note {i}"),
            "",
            "child",
        )
        .unwrap();
    }
}

#[test]
fn two_processes_share_one_memory() {
    let Some(url) = server() else { return };
    let ns = fresh("shared");
    let children: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|writer| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "child_process", "--ignored", "--nocapture"])
                .env("HOOKPOINT_PG_URL", &url)
                .env("HOOKPOINT_PG_NS", &ns)
                .env("HOOKPOINT_PG_WRITER", writer)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope(
        "parent",
        dir.path(),
        json!({"store": "postgres", "postgres": {"url": url, "namespace": ns}}),
    );
    let db = store(&scope).unwrap();
    assert_eq!(
        db.count(None).unwrap(),
        102,
        "concurrent writers lose nothing"
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    let system = common::say(&mut agent, &model, "Which weekday does writer b deploy on?");
    assert!(
        system.contains("- Remember that writer b deploys on Fridays"),
        "{system}"
    );
}

/// The memory plugin's state in `scope`.
fn memory_state(scope: &hookpoint::Scope) -> PluginState {
    scope
        .plugins()
        .into_iter()
        .find(|p| p.name == "memory")
        .expect("the memory plugin is linked")
        .state
}

/// A port on 127.0.0.1 where nothing listens (yet).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_server_down_at_start_makes_memory_unhealthy_with_the_reason_and_the_agent_answers() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let scope = common::scope(
        "pg-down",
        dir.path(),
        json!({"store": "postgres", "postgres": {"url": format!("host=127.0.0.1 port={port} user=nobody connect_timeout=2")}}),
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    let system = common::say(&mut agent, &model, "Remember that I like tea.");
    assert!(
        !system.contains("# Memory"),
        "no memory without its store: {system}"
    );
    let server = format!("127.0.0.1:{port}");
    match memory_state(&scope) {
        PluginState::Unhealthy { why } => assert!(
            why.contains("cannot connect to the PostgreSQL server") && why.contains(&server),
            "{why}"
        ),
        other => panic!("memory should be unhealthy, is {other:?}"),
    }
    let warnings = common::log(&agent, LogKind::Warning);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("memory is off") && w.contains(&server)),
        "{warnings:?}"
    );
    let system = common::say(&mut agent, &model, "What do I like?");
    assert!(!system.contains("# Memory"), "{system}");
    assert!(store(&scope).is_err());
}

/// Forwards connections on 127.0.0.1:`port` to the server `url` names: the server "starts"
/// when this does, and "goes away" at [`Forward::cut`].
fn forward(port: u16, url: &str) -> Forward {
    let config: postgres::Config = url.parse().unwrap();
    let target = match (&config.get_hosts()[0], config.get_ports().first().copied()) {
        (Host::Unix(dir), port) => Err(dir.join(format!(".s.PGSQL.{}", port.unwrap_or(5432)))),
        (Host::Tcp(name), port) => Ok(format!("{name}:{}", port.unwrap_or(5432))),
    };
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let forward = Forward {
        port,
        cut: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        clients: Arc::default(),
    };
    let (cut, clients) = (forward.cut.clone(), forward.clients.clone());
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let client = client.unwrap();
            if cut.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let (mut up_read, mut up_write): (Box<dyn Read + Send>, Box<dyn Write + Send>) =
                match &target {
                    Err(socket) => {
                        let s = std::os::unix::net::UnixStream::connect(socket).unwrap();
                        (Box::new(s.try_clone().unwrap()), Box::new(s))
                    }
                    Ok(addr) => {
                        let s = std::net::TcpStream::connect(addr).unwrap();
                        (Box::new(s.try_clone().unwrap()), Box::new(s))
                    }
                };
            clients.lock().unwrap().push(client.try_clone().unwrap());
            let (mut down_read, mut down_write) = (client.try_clone().unwrap(), client);
            std::thread::spawn(move || std::io::copy(&mut down_read, &mut up_write));
            std::thread::spawn(move || std::io::copy(&mut up_read, &mut down_write));
        }
    });
    forward
}

/// A running [`forward`].
struct Forward {
    port: u16,
    cut: Arc<std::sync::atomic::AtomicBool>,
    clients: Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Forward {
    /// The server "goes away": every forwarded connection is shut down and the port is closed
    /// (a connection to it is refused).
    fn cut(self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accept loop, which sees the cut and drops the listener.
        drop(std::net::TcpStream::connect(("127.0.0.1", self.port)));
        for client in self.clients.lock().unwrap().drain(..) {
            let _ = client.shutdown(std::net::Shutdown::Both);
        }
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Waits up to 20 s for the memory plugin of `scope` to be active again.
fn wait_until_active(scope: &hookpoint::Scope) {
    let started = std::time::Instant::now();
    while memory_state(scope) != PluginState::Active {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "memory did not come back: {:?}",
            memory_state(scope)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The user name of the server `url` names.
fn user_of(url: &str) -> String {
    url.parse::<postgres::Config>()
        .unwrap()
        .get_user()
        .unwrap_or("postgres")
        .to_owned()
}

#[test]
fn a_connection_lost_mid_run_makes_memory_unhealthy_until_the_server_is_back() {
    let Some(url) = server() else { return };
    let port = free_port();
    let proxy = forward(port, &url);
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope(
        "pg-lost",
        dir.path(),
        json!({"store": "postgres", "postgres": {
            "url": format!("host=127.0.0.1 port={port} user={} dbname=memory connect_timeout=2", user_of(&url)),
            "namespace": fresh("lost"),
        }}),
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(&mut agent, &model, "Remember that I like green tea.");
    assert_eq!(memory_state(&scope), PluginState::Active);

    proxy.cut();
    let system = common::say(&mut agent, &model, "Which tea do I like?");
    assert!(!system.contains("green tea"), "{system}");
    let server = format!("127.0.0.1:{port}");
    match memory_state(&scope) {
        PluginState::Unhealthy { why } => assert!(why.contains(&server), "{why}"),
        other => panic!("memory should be unhealthy once its server is gone, is {other:?}"),
    }
    let warnings = common::log(&agent, LogKind::Warning);
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("memory is off") && w.contains(&server)),
        "{warnings:?}"
    );

    let _back = forward(port, &url);
    wait_until_active(&scope);
    let system = common::say(&mut agent, &model, "Which tea do I like?");
    assert!(
        system.contains("- Remember that I like green tea"),
        "what was stored before the loss is recalled: {system}"
    );
}

#[test]
fn memory_comes_back_without_a_restart_when_the_server_starts() {
    let Some(url) = server() else { return };
    let port = free_port();
    let user = user_of(&url);
    let dir = tempfile::tempdir().unwrap();
    let scope = common::scope(
        "pg-later",
        dir.path(),
        json!({"store": "postgres", "postgres": {
            "url": format!("host=127.0.0.1 port={port} user={user} dbname=memory connect_timeout=2"),
            "namespace": fresh("later"),
        }}),
    );
    let model = Arc::new(ScriptedModel::new("m"));
    let mut agent = common::agent(&scope, model.clone());
    common::say(&mut agent, &model, "Remember that I like green tea.");
    assert!(
        matches!(memory_state(&scope), PluginState::Unhealthy { .. }),
        "{:?}",
        memory_state(&scope)
    );
    let _started = forward(port, &url);
    wait_until_active(&scope);
    common::say(&mut agent, &model, "Remember that I like green tea.");
    let system = common::say(&mut agent, &model, "Which tea do I like?");
    assert!(system.contains("# Memory"), "{system}");
    assert!(
        system.contains("- Remember that I like green tea"),
        "{system}"
    );
}

/// Needs no server: a listener that accepts the connection (the kernel does) and never answers
/// the start-up message.
#[test]
fn a_server_that_never_answers_is_given_up_after_connect_timeout() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("host=127.0.0.1 port={port} user=agent dbname=memory connect_timeout=1");
    let started = std::time::Instant::now();
    let e = match PostgresStore::open(&url, "silent") {
        Ok(_) => panic!("a server that never answers was taken as connected"),
        Err(e) => e.to_string(),
    };
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    assert!(
        e.contains(&format!("127.0.0.1:{port}")) && e.contains("did not answer within 1000 ms"),
        "{e}"
    );
    assert!(!e.contains("agent"), "the user is not named: {e}");
}
