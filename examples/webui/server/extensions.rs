//! The example's own backend extensions, on the WebSocket points of `hookpoint-extensions`.

use std::sync::LazyLock;
use std::time::Instant;

use hookpoint::extension;
use hookpoint_extensions::{
    payloads::WsEvent,
    points::{WEBUI_WS_CONNECT, WEBUI_WS_EVENT},
};
use serde_json::json;

static STARTED: LazyLock<Instant> = LazyLock::new(Instant::now);

/// Greets a client that connects (the server sends the reply as its `hello`).
#[extension(point = WEBUI_WS_CONNECT, order = 10)]
fn greet(e: &mut WsEvent) {
    LazyLock::force(&STARTED);
    e.reply = Some(json!({"greeting": format!("hello {}, from webui_ws_connect", e.client)}));
}

/// Answers the `status` JavaScript extension's `uptime` event.
#[extension(point = WEBUI_WS_EVENT, order = 10)]
fn uptime(e: &mut WsEvent) {
    if e.event == "uptime" {
        e.reply = Some(json!({
            "uptime_ms": STARTED.elapsed().as_millis() as u64,
            "answered_by": "extension `uptime` on webui_ws_event",
        }));
    }
}
