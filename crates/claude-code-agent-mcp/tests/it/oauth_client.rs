//! Our OAuth client (feature `oauth-client`) end to end against our
//! protected server (feature `oauth-server`) and an authorization server
//! written here: discovery, dynamic registration, the code grant with PKCE
//! and the resource indicator, a step-up for a tool's scope, refresh, the
//! tool reading the verified token; a refused client; and not one secret
//! (token, refresh token, code, verifier, client secret) in any log line or
//! error message.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use claude_code_agent_mcp::client::auth::{AuthorizationRequest, AuthorizationResponse, OAuth};
use claude_code_agent_mcp::client::{ClientOptions, Error, HttpOptions, HttpTransport, McpClient};
use claude_code_agent_mcp::http_server::{
    JwtVerifier, ProtectedResource, StreamableHttpConfig, StreamableHttpService, VerificationKey,
};
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

const CLIENT_ID: &str = "client-7f3a";
const CLIENT_SECRET: &str = "CLIENT-SECRET-5d21e8";

/// What the authorization server handed out and saw.
#[derive(Default)]
struct Seen {
    /// Every secret it issued or received: tokens, refresh tokens, codes,
    /// verifiers, the client secret.
    secrets: Vec<String>,
    /// code → (challenge, scope, resource).
    codes: HashMap<String, (String, String, String)>,
    /// refresh token → scope.
    refresh: HashMap<String, String>,
    /// The scopes asked for at /authorize, in order.
    asked: Vec<String>,
    refreshed: usize,
    registered: usize,
}

#[derive(Clone)]
struct As {
    base: Arc<Mutex<String>>,
    key: Arc<EncodingKey>,
    seen: Arc<Mutex<Seen>>,
    /// How long its access tokens last (1 s: every request refreshes).
    expires_in: u64,
    /// Whether it issues refresh tokens.
    refresh: bool,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn secret(prefix: &str) -> String {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).unwrap();
    format!("{prefix}-{}", URL_SAFE_NO_PAD.encode(bytes))
}

impl As {
    fn base(&self) -> String {
        self.base.lock().unwrap().clone()
    }

    fn issue(&self, scope: &str, resource: &str) -> Value {
        let claims = json!({
            "iss": self.base(), "aud": resource, "sub": "user-42", "client_id": CLIENT_ID,
            "scope": scope, "iat": now(), "exp": now() + 60,
        });
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".into());
        let access = jsonwebtoken::encode(&header, &claims, &self.key).unwrap();
        let refresh = secret("REFRESH");
        let mut seen = self.seen.lock().unwrap();
        seen.secrets.push(access.clone());
        seen.secrets.push(refresh.clone());
        seen.refresh.insert(refresh.clone(), scope.to_owned());
        let mut answer = json!({"access_token": access, "token_type": "Bearer",
                                "expires_in": self.expires_in, "scope": scope});
        if self.refresh {
            answer["refresh_token"] = json!(refresh);
        }
        answer
    }
}

async fn metadata(State(a): State<As>) -> axum::Json<Value> {
    let base = a.base();
    axum::Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "jwks_uri": format!("{base}/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "scopes_supported": ["mcp:read", "mcp:write"],
    }))
}

async fn register(State(a): State<As>, axum::Json(body): axum::Json<Value>) -> Response {
    assert_eq!(
        body["token_endpoint_auth_method"], "client_secret_basic",
        "{body}"
    );
    assert_eq!(
        body["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    a.seen.lock().unwrap().registered += 1;
    let answer = json!({"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                        "token_endpoint_auth_method": "client_secret_basic",
                        "redirect_uris": body["redirect_uris"]});
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

async fn authorize(State(a): State<As>, Query(q): Query<HashMap<String, String>>) -> Response {
    assert_eq!(q["client_id"], CLIENT_ID);
    assert_eq!(q["code_challenge_method"], "S256");
    let code = secret("CODE");
    let scope = q.get("scope").cloned().unwrap_or_default();
    let mut seen = a.seen.lock().unwrap();
    seen.secrets.push(code.clone());
    seen.asked.push(scope.clone());
    seen.codes.insert(
        code.clone(),
        (q["code_challenge"].clone(), scope, q["resource"].clone()),
    );
    Redirect::to(&format!(
        "{}?code={code}&state={}",
        q["redirect_uri"], q["state"]
    ))
    .into_response()
}

async fn token(
    State(a): State<As>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let basic = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    let refuse = |error: &str| {
        (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
    };
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_client"})),
        )
            .into_response();
    }
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((challenge, scope, resource)) =
                a.seen.lock().unwrap().codes.remove(&form["code"])
            else {
                return refuse("invalid_grant");
            };
            let verifier = &form["code_verifier"];
            a.seen.lock().unwrap().secrets.push(verifier.clone());
            let hashed = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
            if URL_SAFE_NO_PAD.encode(hashed) != challenge || form["resource"] != resource {
                return refuse("invalid_grant");
            }
            axum::Json(a.issue(&scope, &resource)).into_response()
        }
        Some("refresh_token") => {
            let scope = a
                .seen
                .lock()
                .unwrap()
                .refresh
                .remove(&form["refresh_token"]);
            let Some(scope) = scope else {
                return refuse("invalid_grant");
            };
            a.seen.lock().unwrap().refreshed += 1;
            axum::Json(a.issue(&scope, &form["resource"])).into_response()
        }
        _ => refuse("unsupported_grant_type"),
    }
}

/// The authorization server, and its JWKS for the verifier.
async fn start_as(expires_in: u64, refresh: bool) -> (As, JwkSet) {
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .unwrap();
    let key = EncodingKey::from_ec_der(pkcs8.as_ref());
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some("k1".into());
    let a = As {
        base: Arc::default(),
        key: Arc::new(key),
        seen: Arc::default(),
        expires_in,
        refresh,
    };
    let app = axum::Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(a.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    *a.base.lock().unwrap() = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    a.seen
        .lock()
        .unwrap()
        .secrets
        .push(CLIENT_SECRET.to_owned());
    (a, JwkSet { keys: vec![jwk] })
}

/// Our server, protected by `a`: `whoami` needs `mcp:read` (as every
/// request does), `write` also `mcp:write`. With `refuse_get`, a GET (the
/// standalone stream) is refused with 401 whatever its token.
async fn start_server(a: &As, jwks: &JwkSet, refuse_get: bool) -> String {
    let server = Server::builder("protected", "1")
        .tool(
            Tool::new(
                "whoami",
                "the caller",
                |_: Value, ctx: ToolContext| async move {
                    let token = ctx.access_token().expect("a verified token");
                    format!(
                        "{} {}",
                        token.subject().unwrap_or("?"),
                        token.scopes().join(" ")
                    )
                },
            )
            .input_schema(json!({"type": "object"})),
        )
        .tool(
            Tool::new("write", "writes", |_: Value| async { "written" })
                .input_schema(json!({"type": "object"})),
        )
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let keys = VerificationKey::from_jwks(serde_json::to_vec(jwks).unwrap()).unwrap();
    let verifier = JwtVerifier::new(a.base(), url.clone()).keys(keys);
    let resource = ProtectedResource::new(url.clone(), verifier)
        .authorization_server(a.base())
        .scopes_supported(["mcp:read", "mcp:write"])
        .required_scopes(["mcp:read"])
        .tool_scopes("write", ["mcp:write"]);
    let config = StreamableHttpConfig::default().protected_resource(resource);
    let service = StreamableHttpService::new(server, config);
    if refuse_get {
        let challenge = format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{}\"",
            resource_metadata(&url)
        );
        let app = service.router().layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let challenge = challenge.clone();
                async move {
                    if request.method() == axum::http::Method::GET && request.uri().path() == "/mcp"
                    {
                        return (StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)])
                            .into_response();
                    }
                    next.run(request).await
                }
            },
        ));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
    } else {
        tokio::spawn(async move {
            let _ = service.serve(listener).await;
        });
    }
    url
}

/// The protected resource metadata of the endpoint `url`.
fn resource_metadata(url: &str) -> String {
    let (origin, path) = url
        .rsplit_once('/')
        .map(|(o, p)| (o.to_owned(), p.to_owned()))
        .unwrap();
    format!("{origin}/.well-known/oauth-protected-resource/{path}")
}

/// A person who authorizes at once: the authorization URL is fetched and
/// its redirect read.
async fn authorize_at_once(request: AuthorizationRequest) -> Result<AuthorizationResponse, Error> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = http.get(request.url()).send().await.unwrap();
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    AuthorizationResponse::from_redirect(&location)
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// The whole flow, under a subscriber that keeps every event of client and
/// server (the runtime is this thread's): a 401 leads to discovery,
/// registration and authorization for `mcp:read`; `write` meets a 403 and
/// steps up to `mcp:read mcp:write`; tokens that expire at once are
/// refreshed; the tool sees the verified token. A client with a wrong
/// secret fails with an error that names the step and not the secret. No
/// secret is in the logs, the errors or the `Debug` of what the client holds.
#[tokio::test]
async fn the_client_authorizes_steps_up_and_refreshes_and_tells_no_secret() {
    let logs = crate::support::logs::Logs::capture();

    let (a, jwks) = start_as(1, true).await;
    let url = start_server(&a, &jwks, false).await;
    let oauth = OAuth::authorization_code("http://127.0.0.1:9/callback", authorize_at_once)
        .client_name("e2e");
    let debug_of_oauth = format!("{oauth:?}");
    let transport = HttpTransport::new(HttpOptions::new(&url).oauth(oauth)).unwrap();
    let client = McpClient::connect(transport, ClientOptions::new("e2e", "1"))
        .await
        .unwrap();

    let who = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(who.text_content(), "user-42 mcp:read", "{who:?}");
    let written = client.call_tool("write", json!({})).await.unwrap();
    assert_eq!(written.text_content(), "written");
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(who.text_content(), "user-42 mcp:read mcp:write");
    client.close().await.unwrap();
    {
        let seen = a.seen.lock().unwrap();
        assert_eq!(seen.registered, 1);
        assert_eq!(
            seen.asked,
            ["mcp:read", "mcp:read mcp:write"],
            "one authorization, one step-up"
        );
        assert!(seen.refreshed >= 1, "tokens of 1 s are refreshed");
    }

    // A pre-registered client whose secret the server does not take.
    let wrong_secret = "WRONG-SECRET-88c1";
    let oauth = OAuth::authorization_code("http://127.0.0.1:9/callback", authorize_at_once)
        .client_id(CLIENT_ID)
        .client_secret(wrong_secret);
    let transport = HttpTransport::new(HttpOptions::new(&url).oauth(oauth)).unwrap();
    let error = McpClient::connect(transport, ClientOptions::new("e2e", "1"))
        .await
        .unwrap_err();
    assert!(error.is_unauthorized(), "{error:?}");
    let said = chain(&error);
    assert!(
        said.contains("/token refused the authorization code with invalid_client"),
        "{said}"
    );

    let logs = logs.text();
    assert!(
        logs.contains("OAuth: authorized"),
        "the logs were captured:\n{logs}"
    );
    let mut secrets = a.seen.lock().unwrap().secrets.clone();
    secrets.push(wrong_secret.to_owned());
    assert!(secrets.len() > 8, "{secrets:?}");
    for secret in &secrets {
        for (what, text) in [
            ("the logs", &logs),
            ("the error", &said),
            ("the OAuth's Debug", &debug_of_oauth),
        ] {
            assert!(
                !text.contains(secret.as_str()),
                "{what} hold the secret {secret}:\n{text}"
            );
        }
    }
}

/// A server that refuses the GET stream the token its POSTs take: the
/// stream fails and is tried again as a broken stream is, and no one is
/// asked to authorize again for it (with no refresh token, only a new
/// authorization could give another token).
#[tokio::test]
async fn a_refused_stream_asks_no_one_again() {
    let (a, jwks) = start_as(3600, false).await;
    let url = start_server(&a, &jwks, true).await;
    let oauth = OAuth::authorization_code("http://127.0.0.1:9/callback", authorize_at_once);
    let http = HttpOptions::new(&url).oauth(oauth).max_reconnects(2);
    let transport = HttpTransport::new(http).unwrap();
    let client = McpClient::connect(transport, ClientOptions::new("e2e", "1"))
        .await
        .unwrap();
    // The stream's attempts, a second apart.
    tokio::time::sleep(std::time::Duration::from_millis(3500)).await;
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(who.text_content(), "user-42 mcp:read");
    assert_eq!(
        a.seen.lock().unwrap().asked.len(),
        1,
        "the person was asked again"
    );
    client.close().await.unwrap();
}
