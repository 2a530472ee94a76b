//! The WebSocket: each client fires `webui_ws_connect` when it connects, `webui_ws_event` for
//! every `{"type": "event", "id", "event", "data"}` it sends (answered with
//! `{"type": "reply", "id", "reply"}` from the payload's `reply`), and `webui_ws_disconnect` when
//! it goes. After a reload whose manifest differs from the one the client last had, the server
//! sends `{"type": "manifest", "generation", "changed": [points]}`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use hookpoint::Scope;
use hookpoint_extensions::ui::webui;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::App;

static CLIENTS: AtomicU64 = AtomicU64::new(0);

pub(super) async fn upgrade(ws: WebSocketUpgrade, State(app): State<App>) -> Response {
    ws.on_upgrade(move |socket| session(socket, app))
}

/// Each point's asset hashes: what a client has rendered.
type Signature = BTreeMap<String, Vec<String>>;

fn signature(scope: &Scope) -> Signature {
    scope
        .webui_manifest()
        .points
        .iter()
        .map(|(p, assets)| (p.clone(), assets.iter().map(|a| a.hash.clone()).collect()))
        .collect()
}

/// The points whose assets differ between two signatures.
fn changed(old: &Signature, new: &Signature) -> Vec<String> {
    let mut points: Vec<String> = old
        .keys()
        .chain(new.keys())
        .filter(|p| old.get(*p) != new.get(*p))
        .cloned()
        .collect();
    points.dedup();
    points
}

async fn session(mut socket: WebSocket, app: App) {
    let client = format!("browser-{}", CLIENTS.fetch_add(1, Ordering::Relaxed) + 1);
    let mut reloads = app.reloads.subscribe();
    let mut seen = signature(&app.scope);
    match app.scope.bind(webui::connect(&client)).await {
        Ok(e) => {
            let hello = json!({"type": "hello", "client": client, "reply": e.reply});
            if send(&mut socket, &hello).await.is_err() {
                return;
            }
        }
        Err(e) => eprintln!("webui_ws_connect failed for {client}: {e}"),
    }
    loop {
        tokio::select! {
            msg = socket.recv() => match msg {
                Some(Ok(Message::Text(text))) => {
                    if let Some(reply) = on_event(&app.scope, &client, &text).await
                        && send(&mut socket, &reply).await.is_err()
                    {
                        break;
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
            generation = reloads.recv() => match generation {
                Ok(generation) => {
                    let now = signature(&app.scope);
                    let points = changed(&seen, &now);
                    seen = now;
                    if !points.is_empty() {
                        let push = json!({"type": "manifest", "generation": generation, "changed": points});
                        if send(&mut socket, &push).await.is_err() {
                            break;
                        }
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            },
        }
    }
    if let Err(e) = app.scope.bind(webui::disconnect(&client)).await {
        eprintln!("webui_ws_disconnect failed for {client}: {e}");
    }
}

/// Fires `webui_ws_event` for one client message and returns the reply to send.
async fn on_event(scope: &Scope, client: &str, text: &str) -> Option<Value> {
    let msg: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Some(json!({"type": "error", "error": format!("not JSON: {e}")})),
    };
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let name = msg.get("event").and_then(Value::as_str).unwrap_or("");
    let data = msg.get("data").cloned().unwrap_or(Value::Null);
    Some(match scope.bind(webui::event(client, name, data)).await {
        Ok(e) => json!({"type": "reply", "id": id, "reply": e.reply}),
        Err(e) => json!({"type": "reply", "id": id, "error": e.to_string()}),
    })
}

async fn send(socket: &mut WebSocket, v: &Value) -> Result<(), axum::Error> {
    socket.send(Message::Text(v.to_string().into())).await
}
