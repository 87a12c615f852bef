//! The handshake: `server/discover` (2026-07-28), or `initialize` then
//! `notifications/initialized` (2025-11-25 and before).

use std::sync::Arc;

use serde_json::{Value, json};

use super::engine::Inner;
use super::error::error_chain;
use super::options::{HandshakeMode, RequestOptions};
use super::{Error, ServerState};
use crate::types::{
    DiscoverResult, InitializeResult, SERVER_INFO_META, SESSION_PROTOCOL_VERSIONS,
    STATELESS_PROTOCOL_VERSION,
};

pub(crate) async fn handshake(inner: &Arc<Inner>) -> Result<ServerState, Error> {
    let mode = inner.options.handshake;
    if mode == HandshakeMode::Initialize {
        return initialize(inner).await;
    }
    match discover(inner).await {
        Ok(state) => return Ok(state),
        Err(e) if mode == HandshakeMode::Discover => return Err(e),
        Err(e) if e.is_closed() => return Err(e),
        Err(e) => {
            tracing::debug!(error = %error_chain(&e), "server/discover refused; falling back to initialize")
        }
    }
    match initialize(inner).await {
        // The probe timed out, yet the server answered it late and now
        // serves the stateless revision on this connection (a slow start
        // over stdio): it refuses `initialize` offering ours, so ask again.
        Err(e) if offers_ours_after_refusing(&e) => {
            tracing::debug!(error = %error_chain(&e), "initialize refused for the stateless revision; server/discover again");
            discover(inner).await
        }
        outcome => outcome,
    }
}

async fn discover(inner: &Arc<Inner>) -> Result<ServerState, Error> {
    let ask = || {
        let params = json!({"_meta": inner.stateless_meta_for(STATELESS_PROTOCOL_VERSION)});
        let options = RequestOptions::new().timeout(inner.options.discover_timeout);
        inner.request("server/discover", Some(params), options)
    };
    let result = match ask().await {
        // Refused as an unsupported version (-32022) by a server that says
        // it speaks ours: asked once more (a server may refuse the first
        // request it sees until the version is confirmed).
        Err(e) if offers_ours_after_refusing(&e) => ask().await?,
        outcome => outcome?,
    };
    let discovered: DiscoverResult = serde_json::from_value(result)
        .map_err(|e| Error::invalid_response("server/discover: unusable result").with_source(e))?;
    if !discovered
        .supported_versions
        .iter()
        .any(|v| v == STATELESS_PROTOCOL_VERSION)
    {
        return Err(Error::invalid_response(format!(
            "server/discover: the server speaks none of our stateless revisions (it offers {:?})",
            discovered.supported_versions
        )));
    }
    // Servers may put their info in `_meta` rather than the result.
    let server_info = discovered.server_info.clone().or_else(|| {
        let info = discovered.extra.get("_meta")?.get(SERVER_INFO_META)?;
        serde_json::from_value(info.clone()).ok()
    });
    inner.set_stateless(STATELESS_PROTOCOL_VERSION);
    inner
        .transport
        .set_protocol_version(STATELESS_PROTOCOL_VERSION);
    Ok(ServerState {
        protocol_version: STATELESS_PROTOCOL_VERSION.to_owned(),
        server_info,
        capabilities: discovered.capabilities,
        instructions: discovered.instructions,
        stateless: true,
    })
}

/// Whether `e` is an unsupported-version error (`-32022`) whose
/// `data.supported` lists the stateless revision this client speaks.
fn offers_ours_after_refusing(e: &Error) -> bool {
    e.jsonrpc_error().is_some_and(|error| {
        error.code == crate::types::UNSUPPORTED_PROTOCOL_VERSION
            && error
                .data
                .as_ref()
                .and_then(|d| d.get("supported")?.as_array())
                .is_some_and(|v| v.iter().any(|v| v == STATELESS_PROTOCOL_VERSION))
    })
}

async fn initialize(inner: &Arc<Inner>) -> Result<ServerState, Error> {
    let params = json!({
        "protocolVersion": inner.options.protocol_version,
        "capabilities": inner.capabilities,
        "clientInfo": inner.options.client_info,
    });
    let result = inner
        .request("initialize", Some(params), RequestOptions::new())
        .await?;
    let init: InitializeResult = serde_json::from_value(result)
        .map_err(|e| Error::invalid_response("initialize: unusable result").with_source(e))?;
    // The spec: a client that does not speak the server's answer disconnects.
    if !SESSION_PROTOCOL_VERSIONS.contains(&init.protocol_version.as_str()) {
        return Err(Error::invalid_response(format!(
            "initialize: the server answered with protocol version {:?}, which this client does not speak (it speaks {}); disconnected",
            init.protocol_version,
            SESSION_PROTOCOL_VERSIONS.join(", ")
        )));
    }
    inner.transport.set_protocol_version(&init.protocol_version);
    inner
        .notify("notifications/initialized", None::<Value>)
        .await?;
    Ok(ServerState {
        protocol_version: init.protocol_version,
        server_info: Some(init.server_info),
        capabilities: init.capabilities,
        instructions: init.instructions,
        stateless: false,
    })
}
