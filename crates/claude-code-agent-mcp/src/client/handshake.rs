//! The handshake: `server/discover` (2026-07-28), or `initialize` then
//! `notifications/initialized` (2025-11-25 and before).

use std::sync::Arc;

use serde_json::{Value, json};

use super::engine::Inner;
use super::options::{HandshakeMode, RequestOptions};
use super::{ClientError, ServerState};
/// `_meta` key under which a `server/discover` result may carry `serverInfo`.
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

use crate::types::{
    DiscoverResult, InitializeResult, STATELESS_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS,
};

pub(crate) async fn handshake(inner: &Arc<Inner>) -> Result<ServerState, ClientError> {
    let mode = inner.options.handshake;
    if mode != HandshakeMode::Initialize {
        match discover(inner).await {
            Ok(state) => return Ok(state),
            Err(e) if mode == HandshakeMode::Discover => return Err(e),
            Err(e @ ClientError::Closed(_)) => return Err(e),
            Err(e) => {
                tracing::debug!(error = %e, "server/discover refused; falling back to initialize")
            }
        }
    }
    initialize(inner).await
}

async fn discover(inner: &Arc<Inner>) -> Result<ServerState, ClientError> {
    let params = json!({"_meta": inner.stateless_meta_for(STATELESS_PROTOCOL_VERSION)});
    let options = RequestOptions::new().timeout(inner.options.discover_timeout);
    let result = inner
        .request("server/discover", Some(params), options)
        .await?;
    let discovered: DiscoverResult = serde_json::from_value(result).map_err(|e| {
        ClientError::InvalidResponse(format!("server/discover: unusable result: {e}"))
    })?;
    if !discovered
        .supported_versions
        .iter()
        .any(|v| v == STATELESS_PROTOCOL_VERSION)
    {
        return Err(ClientError::InvalidResponse(format!(
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

async fn initialize(inner: &Arc<Inner>) -> Result<ServerState, ClientError> {
    let params = json!({
        "protocolVersion": inner.options.protocol_version,
        "capabilities": inner.capabilities,
        "clientInfo": inner.options.client_info,
    });
    let result = inner
        .request("initialize", Some(params), RequestOptions::new())
        .await?;
    let init: InitializeResult = serde_json::from_value(result)
        .map_err(|e| ClientError::InvalidResponse(format!("initialize: unusable result: {e}")))?;
    // The spec: a client that does not speak the server's answer disconnects.
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&init.protocol_version.as_str()) {
        return Err(ClientError::InvalidResponse(format!(
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
