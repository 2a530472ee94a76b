//! The web UI example's server (axum on tokio): the page, its loader script, the scope's web UI
//! manifest as JSON, each asset under a hash-stamped URL, and a WebSocket that fires
//! `webui_ws_connect`, `webui_ws_event` and `webui_ws_disconnect` through hookpoint and pushes a
//! `manifest` message when a reload changed the manifest.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the page: three anchors, `<x-extension point="banner">`, `<x-extension point="status">` and `<x-extension point="memory">` (the memory plugin's dashboard) |
//! | `GET /loader.js` | the loader that fills the anchors |
//! | `GET /webui/manifest.json` | [`Scope::webui_manifest`] |
//! | `GET /webui/assets/{hash}/{file name}` | one listed asset (`Cache-Control: immutable`); 404 for anything the manifest does not list |
//! | `GET /ws` | the WebSocket |

mod extensions;

// The memory plugin answers the dashboard's WebSocket events; name it so rustc links it.
hookpoint::link!(hookpoint_plugin_memory);
mod socket;
pub mod stage;

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use hookpoint::Scope;
use hookpoint_extensions::layout::AgentZeroLayout;
use tokio::sync::{broadcast, oneshot};
use tokio::task::JoinHandle;

const INDEX: &str = include_str!("../page/index.html");
const LOADER: &str = include_str!("../page/loader.js");

/// What every request handler shares.
#[derive(Clone)]
struct App {
    scope: Scope,
    /// A generation number after every reload of the scope.
    reloads: broadcast::Sender<u64>,
}

/// A running server; [`stop`](Self::stop) ends it.
pub struct WebuiServer {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl WebuiServer {
    /// Serves `scope`'s web UI on 127.0.0.1:`port` (0: any free port).
    ///
    /// # Errors
    /// The port cannot be bound.
    pub async fn start(scope: Scope, port: u16) -> std::io::Result<WebuiServer> {
        let (reloads, _) = broadcast::channel(16);
        let tx = reloads.clone();
        scope.on_reload(move |event| {
            // No receiver (no browser connected) is fine.
            let _ = tx.send(event.generation);
        });
        let app = Router::new()
            .route("/", get(|| async { Html(INDEX) }))
            .route("/loader.js", get(loader))
            .route("/webui/manifest.json", get(manifest))
            .route("/webui/assets/{hash}/{name}", get(asset))
            .route("/ws", get(socket::upgrade))
            .with_state(App { scope, reloads });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                eprintln!("web UI server stopped: {e}");
            }
        });
        Ok(WebuiServer {
            addr,
            shutdown: Some(shutdown),
            task,
        })
    }

    /// The page's URL, `http://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops accepting connections and waits for the server task.
    pub async fn stop(mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        let _ = (&mut self.task).await;
    }
}

async fn loader() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        LOADER,
    )
        .into_response()
}

async fn manifest(State(app): State<App>) -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(&*app.scope.webui_manifest()),
    )
        .into_response()
}

/// Serves an asset the current manifest lists, by content hash; the file name in the URL must
/// be the asset's (it is there for people reading the network log).
async fn asset(State(app): State<App>, Path((hash, name)): Path<(String, String)>) -> Response {
    match app.scope.webui_asset(&hash) {
        Some(a) if a.file_name() == name => (
            [
                (header::CONTENT_TYPE, a.content_type()),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            a.bytes().to_vec(),
        )
            .into_response(),
        _ => (StatusCode::NOT_FOUND, "not in the web UI manifest").into_response(),
    }
}

/// The memories the example starts with (the memory dashboard lists them).
pub const SEED_MEMORIES: [&str; 3] = [
    "The user prefers metric units.",
    "The deploy host is deploy.example.internal.",
    "Orders are kept in the shop database.",
];

/// The example's scope: the application's folder as the `user` layer, the override folder as the
/// (trusted) `project` layer above it, and the memory plugin's shipped folder (its dashboard for
/// the `memory` anchor), watched. The memory plugin keeps its database in `staged.memory`, seeded
/// with [`SEED_MEMORIES`].
///
/// # Errors
/// The example's own extensions are not linked, the watcher cannot start, or the memory store
/// cannot be opened.
pub fn demo_scope(staged: &stage::Staged) -> Result<Scope, hookpoint::Error> {
    hookpoint::assert_linked(&[
        ("webui_ws_connect", "greet"),
        ("webui_ws_event", "uptime"),
        ("webui_ws_event", "memory_dashboard"),
    ])?;
    let scope = AgentZeroLayout::new()
        .user(&staged.app)
        .project(&staged.overrides)
        .trust_project(true)
        .plugin_folder("memory", hookpoint_plugin_memory::shipped_folder())
        .apply(hookpoint::ScopeBuilder::new("webui-demo"))
        .build()?;
    hookpoint_plugin_memory::set_data_dir(&scope, &staged.memory);
    let store = hookpoint_plugin_memory::store(&scope)?;
    for text in SEED_MEMORIES {
        store
            .add(
                hookpoint_extensions::payloads::MemoryKind::Fragment,
                text,
                "",
                "webui-demo",
            )
            .map_err(hookpoint::Error::msg)?;
    }
    Ok(scope)
}
