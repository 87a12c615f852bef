//! The handshake: `server/discover` (2026-07-28), or `initialize` then
//! `notifications/initialized` (2025-11-25 and before).

use std::sync::Arc;

use serde_json::{Value, json};

use super::engine::Inner;
use super::error::error_chain;
use super::options::{HandshakeMode, RequestOptions};
use super::{Error, ServerState};
use crate::types::{
    DiscoverResult, InitializeResult, SERVER_INFO_META, STATELESS_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
};

pub(crate) async fn handshake(inner: &Arc<Inner>) -> Result<ServerState, Error> {
    let mode = inner.options.handshake;
    if mode != HandshakeMode::Initialize {
        match discover(inner).await {
            Ok(state) => return Ok(state),
            Err(e) if mode == HandshakeMode::Discover => return Err(e),
            Err(e) if e.is_closed() => return Err(e),
            Err(e) => {
                tracing::debug!(error = %error_chain(&e), "server/discover refused; falling back to initialize")
            }
        }
    }
    initialize(inner).await
}

async fn discover(inner: &Arc<Inner>) -> Result<ServerState, Error> {
    let params = json!({"_meta": inner.stateless_meta_for(STATELESS_PROTOCOL_VERSION)});
    let options = RequestOptions::new().timeout(inner.options.discover_timeout);
    let result = inner
        .request("server/discover", Some(params), options)
        .await?;
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
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&init.protocol_version.as_str()) {
        return Err(Error::invalid_response(format!(
            "initialize: the server answered with protocol version {:?}, which this client does not speak (it speaks {}); disconnected",
            init.protocol_version,
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
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
