//! The client under the MCP conformance suite's client scenarios
//! (`@modelcontextprotocol/conformance client --command …`): the harness
//! runs this with its server URL as the last argument and the scenario in
//! `MCP_CONFORMANCE_SCENARIO`.
//!
//! ```text
//! npx @modelcontextprotocol/conformance client \
//!     --command "target/debug/conformance-client" --scenario initialize
//! ```

use std::time::Duration;

use claude_code_agent_mcp::client::auth::{
    AuthorizationRequest, AuthorizationResponse, IdentityAssertion, OAuth,
};
use claude_code_agent_mcp::client::{
    ClientOptions, Error, HandshakeMode, HttpOptions, HttpTransport, McpClient,
};
use claude_code_agent_mcp::types::SKILLS_EXTENSION;
use serde_json::{Map, Value, json};

/// The client ID metadata document URL the `auth/basic-cimd` scenario expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// A person who authorizes at once: the authorization URL is fetched
/// (the harness's authorization server redirects straight back), and the
/// redirect's `Location` read.
async fn authorize_headless(request: AuthorizationRequest) -> Result<AuthorizationResponse, Error> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| Error::transport("no HTTP client").with_source(e))?;
    let response = http
        .get(request.url())
        .send()
        .await
        .map_err(|e| Error::transport("GET the authorization URL failed").with_source(e))?;
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            Error::transport(format!(
                "the authorization endpoint answered {} without a redirect",
                response.status()
            ))
        })?;
    AuthorizationResponse::from_redirect(location)
}

/// The OAuth setup for an `auth/*` scenario, from the harness's context
/// (`MCP_CONFORMANCE_CONTEXT`).
fn oauth_for(scenario: &str, context: &Value) -> Result<Option<OAuth>, Error> {
    let field = |name: &str| context.get(name).and_then(Value::as_str).map(str::to_owned);
    let need = |name: &str| {
        field(name).ok_or_else(|| Error::refused(format!("the context has no {name}")))
    };
    Ok(Some(match scenario {
        s if !s.starts_with("auth/") => return Ok(None),
        "auth/client-credentials-jwt" => OAuth::client_credentials_jwt(
            need("client_id")?,
            &need("private_key_pem")?,
            &field("signing_algorithm").unwrap_or_else(|| "ES256".to_owned()),
        )?,
        "auth/wif-jwt-bearer" => {
            let jwt = need("valid_jwt")?;
            OAuth::jwt_bearer(need("client_id")?, move || Ok(jwt.clone()))
        }
        "auth/client-credentials-basic" => {
            OAuth::client_credentials(need("client_id")?, need("client_secret")?)
        }
        "auth/cross-app-access-complete-flow" | "auth/enterprise-managed-authorization" => {
            let mut assertion =
                IdentityAssertion::new(need("idp_id_token")?, need("idp_token_endpoint")?);
            if let Some(id) = field("idp_client_id") {
                assertion = assertion.client_id(id);
            }
            OAuth::identity_assertion(assertion, need("client_id")?, need("client_secret")?)
        }
        _ => {
            let mut oauth =
                OAuth::authorization_code("http://localhost:3000/callback", authorize_headless)
                    .client_name("claude-code-agent-mcp-conformance")
                    .client_metadata_url(CLIENT_METADATA_URL);
            if let Some(id) = field("client_id") {
                oauth = oauth.client_id(id);
            }
            if let Some(secret) = field("client_secret") {
                oauth = oauth.client_secret(secret);
            }
            oauth
        }
    }))
}

/// Loads every listed skill as a host does: its `SKILL.md` first, then its
/// other files, each used only if it matches the entry; a skill whose file
/// does not is not loaded (nothing more of it is read).
async fn load_skills(client: &McpClient) -> Result<(), Error> {
    for skill in client.list_skills().await? {
        let files: Vec<String> = skill
            .resources
            .iter()
            .flatten()
            .map(|f| f.uri.clone())
            .filter(|uri| *uri != skill.uri)
            .collect();
        let loaded = async {
            client.read_skill_file(&skill, &skill.uri).await?;
            for uri in &files {
                client.read_skill_file(&skill, uri).await?;
            }
            Ok::<_, Error>(())
        };
        match loaded.await {
            Ok(()) => eprintln!("skill {} loaded", skill.uri),
            Err(e) => eprintln!("skill {} not loaded: {e}", skill.uri),
        }
    }
    Ok(())
}

/// An elicitation answer that accepts, filling every field with its schema default.
fn accept_with_defaults(params: &Value) -> Value {
    let mut content = Map::new();
    if let Some(props) = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    {
        for (name, schema) in props {
            if let Some(default) = schema.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    json!({"action": "accept", "content": content})
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .next_back()
        .ok_or("usage: conformance-client <server-url>")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let options = ClientOptions::new(
        "claude-code-agent-mcp-conformance",
        env!("CARGO_PKG_VERSION"),
    )
    // The revision the harness runs the scenario at (the alpha harness
    // says; 2025-11-25 when it does not).
    .handshake(
        match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
            Ok("2026-07-28") => HandshakeMode::Discover,
            _ => HandshakeMode::Initialize,
        },
    )
    .request_timeout(Duration::from_secs(20))
    .extension(SKILLS_EXTENSION, json!({}))
    .on_elicitation(|params| async move { Ok(accept_with_defaults(&params)) });
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let mut http = HttpOptions::new(&url);
    if let Some(oauth) = oauth_for(&scenario, &context)? {
        http = http.oauth(oauth);
    }
    let transport = HttpTransport::new(http)?;
    let client = McpClient::connect(transport, options).await?;
    eprintln!(
        "scenario {scenario:?}: connected to {:?}",
        client.server_info()
    );
    match scenario.as_str() {
        "initialize" => {
            client.list_tools().await?;
        }
        "tools_call" => {
            let r = client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await?;
            eprintln!("add_numbers → {}", r.text_content());
        }
        "json-schema-2020-12-preservation" => {
            // The focal tool's schema, echoed back as the client holds it.
            let tools = client.list_tools().await?;
            let schema = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .map(|t| t.input_schema.clone())
                .ok_or("no json_schema_2020_12_tool")?;
            let r = client
                .call_tool("json_schema_echo", json!({"schema": schema}))
                .await?;
            eprintln!("json_schema_echo → {}", r.text_content());
        }
        "sep-2640-client-no-prefetch" => {
            // Listing loads nothing: no file is read.
            let skills = client.list_skills().await?;
            eprintln!("{} skills listed", skills.len());
        }
        s if s.starts_with("sep-2640-client-verify-") => load_skills(&client).await?,
        _ => {
            // The calls the harness asks for, else each tool with no arguments.
            let asked = context.get("toolCalls").and_then(Value::as_array);
            let calls: Vec<(String, Value)> = match asked {
                Some(calls) => calls
                    .iter()
                    .filter_map(|c| Some((c["name"].as_str()?.to_owned(), c["arguments"].clone())))
                    .collect(),
                None => (client.list_tools().await?.into_iter())
                    .map(|t| (t.name, json!({})))
                    .collect(),
            };
            for (name, arguments) in calls {
                match client.call_tool(&name, arguments).await {
                    Ok(r) => eprintln!("{name} → {}", r.into_value()),
                    Err(e) => eprintln!("{name} failed: {e}"),
                }
            }
        }
    }
    client.close().await?;
    Ok(())
}
