//! The user interface's points that belong to no agent: start-up banners and the web
//! interface's WebSocket. The application calls these at the moment its interface has them.

use hookpoint::Error;

use crate::payloads::{Banner, Banners, WsEvent};
use crate::points::{BANNERS, WEBUI_WS_CONNECT, WEBUI_WS_DISCONNECT, WEBUI_WS_EVENT};

/// Fires `banners` on the current scope and returns what the extensions contributed.
///
/// # Errors
/// An extension error of `banners`.
pub async fn banners() -> Result<Vec<Banner>, Error> {
    let mut b = Banners::default();
    BANNERS.call(&mut b).await?;
    Ok(b.banners)
}

/// The web interface's WebSocket points (`webui_ws_connect`, `webui_ws_disconnect`,
/// `webui_ws_event`). Each returns the payload; send its `reply`, if any, back to the client.
pub mod webui {
    use super::*;

    /// Fires `webui_ws_connect` for `client`.
    ///
    /// # Errors
    /// An extension error.
    pub async fn connect(client: &str) -> Result<WsEvent, Error> {
        fire(
            &WEBUI_WS_CONNECT,
            client,
            "connect",
            serde_json::Value::Null,
        )
        .await
    }

    /// Fires `webui_ws_disconnect` for `client`.
    ///
    /// # Errors
    /// An extension error.
    pub async fn disconnect(client: &str) -> Result<WsEvent, Error> {
        fire(
            &WEBUI_WS_DISCONNECT,
            client,
            "disconnect",
            serde_json::Value::Null,
        )
        .await
    }

    /// Fires `webui_ws_event` for an event `event` with `data` from `client`.
    ///
    /// # Errors
    /// An extension error.
    pub async fn event(
        client: &str,
        event: &str,
        data: serde_json::Value,
    ) -> Result<WsEvent, Error> {
        fire(&WEBUI_WS_EVENT, client, event, data).await
    }

    async fn fire<S>(
        point: &'static hookpoint::AsyncPoint<S>,
        client: &str,
        event: &str,
        data: serde_json::Value,
    ) -> Result<WsEvent, Error>
    where
        S: for<'a> hookpoint::PointSpec<Payload<'a> = WsEvent>,
    {
        let mut e = WsEvent {
            client: client.to_owned(),
            event: event.to_owned(),
            data,
            reply: None,
        };
        point.call(&mut e).await?;
        Ok(e)
    }
}
