//! The Streamable HTTP server as an OAuth protected resource (MCP
//! Authorization, feature `oauth-server`): JWTs signed here with ES256 keys
//! made at test time, their JWKS served by a tiny axum route; the RFC 9728
//! metadata, the RFC 6750 challenges of every refusal, scopes per tool, the
//! verified token in the tool's context, a JWKS that is down, and no token
//! in the logs or the bodies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use claude_code_agent_mcp::http_server::{
    IntrospectionVerifier, JwtAlgorithm, JwtVerifier, ProtectedResource, StaticToken,
    StreamableHttpConfig, StreamableHttpService, TokenVerifier, VerificationKey,
};
use claude_code_agent_mcp::{Server, Tool, ToolContext};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{Value, json};

use crate::support::http_session;

const ISSUER: &str = "https://auth.test.example";

/// An ES256 key pair made now: its signing key, its public JWK (`kid`) and
/// its public key in DER (SubjectPublicKeyInfo).
struct SigningKey {
    kid: String,
    key: EncodingKey,
    jwk: Jwk,
    der: Vec<u8>,
}

fn es256(kid: &str) -> SigningKey {
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .unwrap();
    let key = EncodingKey::from_ec_der(pkcs8.as_ref());
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    let der = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
        .unwrap()
        .public_key()
        .as_der()
        .unwrap()
        .as_ref()
        .to_vec();
    SigningKey {
        kid: kid.to_owned(),
        key,
        jwk,
        der,
    }
}

/// A public key in PEM.
fn pem(der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    format!("-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A JWT signed by `key` under its `kid`.
fn sign(key: &SigningKey, claims: &Value) -> String {
    sign_as(key, &key.kid, claims)
}

fn sign_as(key: &SigningKey, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, &key.key).unwrap()
}

/// The JWKS route: the key set it serves (changeable) and how often it was
/// fetched.
#[derive(Clone, Default)]
struct Jwks {
    set: Arc<Mutex<JwkSet>>,
    hits: Arc<AtomicUsize>,
}

async fn serve_jwks(jwks: Jwks) -> (String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let jwks = jwks.clone();
            async move {
                jwks.hits.fetch_add(1, Ordering::SeqCst);
                let set = jwks.set.lock().unwrap().clone();
                axum::Json(serde_json::to_value(set).unwrap())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

/// The tools: `whoami` reports the caller's token, `delete_file` needs
/// `files:write`.
fn server() -> Server {
    Server::builder("oauth-test", "1")
        .tool(
            Tool::new(
                "whoami",
                "who is calling",
                |_: Value, ctx: ToolContext| async move {
                    let token = ctx.access_token().expect("a verified token");
                    json!({
                        "sub": token.subject(),
                        "client": token.client_id(),
                        "scopes": token.scopes(),
                        "tenant": token.claim("tenant"),
                        "expires": token.expires_at().is_some(),
                    })
                    .to_string()
                },
            )
            .input_schema(json!({"type":"object"})),
        )
        .tool(
            Tool::new(
                "delete_file",
                "deletes",
                |_: Value| async move { "deleted" },
            )
            .input_schema(json!({"type":"object"})),
        )
        .build()
}

struct Running {
    /// The MCP endpoint, also the resource's URL and the tokens' audience.
    url: String,
    origin: String,
    http: Client,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Our server protecting its endpoint with `verifier(resource URL)`.
async fn start_with(
    verifier: impl FnOnce(&str) -> ProtectedResource,
    mut tasks: Vec<tokio::task::JoinHandle<()>>,
) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{origin}/mcp");
    let resource = verifier(&url)
        .authorization_server(ISSUER)
        .scopes_supported(["mcp", "files:write"])
        .resource_name("OAuth test")
        .required_scopes(["mcp"])
        .tool_scopes("delete_file", ["files:write"]);
    let config = StreamableHttpConfig::default().protected_resource(resource);
    let service = StreamableHttpService::new(server(), config);
    tasks.push(tokio::spawn(async move {
        let _ = service.serve(listener).await;
    }));
    Running {
        url,
        origin,
        http: Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
        tasks,
    }
}

/// A server whose `JwtVerifier` fetches the JWKS that `key` is in.
async fn start(key: &SigningKey) -> (Running, Jwks) {
    let jwks = Jwks::default();
    jwks.set.lock().unwrap().keys.push(key.jwk.clone());
    let (jwks_url, task) = serve_jwks(jwks.clone()).await;
    let running = start_with(
        |url| {
            ProtectedResource::new(
                url,
                JwtVerifier::new(ISSUER, url)
                    .jwks_url(jwks_url)
                    .leeway(Duration::from_secs(5))
                    .refresh_interval(Duration::from_millis(200))
                    .fetch_timeout(Duration::from_secs(2)),
            )
        },
        vec![task],
    )
    .await;
    (running, jwks)
}

/// Valid claims for `audience`, with these scopes.
fn claims(audience: &str, scope: &str) -> Value {
    json!({
        "iss": ISSUER,
        "aud": audience,
        "sub": "user-42",
        "client_id": "test-client",
        "scope": scope,
        "tenant": "acme",
        "iat": now(),
        "exp": now() + 600,
    })
}

fn initialize_body() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
}

fn call_body(tool: &str) -> Value {
    json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":tool,"arguments":{}}})
}

fn post(r: &Running, token: Option<&str>, session: Option<&str>, body: &Value) -> RequestBuilder {
    let request = http_session::post(&r.http, &r.url, session, body);
    match token {
        Some(token) => request.header("authorization", format!("Bearer {token}")),
        None => request,
    }
}

/// Status, `WWW-Authenticate` (empty if none) and body of a response.
async fn parts(response: reqwest::Response) -> (StatusCode, String, String) {
    let status = response.status();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, challenge, response.text().await.unwrap())
}

/// The JSON-RPC reply in a body (JSON, or the last event of an SSE stream).
fn reply_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| {
        let last = body
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or("null");
        serde_json::from_str(last).unwrap()
    })
}

/// Opens a session with `token` and calls `tool`: the status, challenge
/// and reply of the call.
async fn call_in_session(r: &Running, token: &str, tool: &str) -> (StatusCode, String, String) {
    let response = post(r, Some(token), None, &initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let sid = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let response = post(r, Some(token), Some(&sid), &note)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    parts(
        post(r, Some(token), Some(&sid), &call_body(tool))
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// Calls `tool` at the stateless revision (2026-07-28), `Mcp-Name` and all.
async fn call_stateless(r: &Running, token: &str, tool: &str) -> (StatusCode, String, String) {
    let mut body = call_body(tool);
    body["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let response = r
        .http
        .post(&r.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .header("authorization", format!("Bearer {token}"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    parts(response).await
}

fn metadata_url(r: &Running) -> String {
    format!("{}/.well-known/oauth-protected-resource/mcp", r.origin)
}

#[tokio::test]
async fn the_metadata_is_served_at_both_well_known_paths() {
    let key = es256("k1");
    let (r, _jwks) = start(&key).await;
    for url in [
        format!("{}/.well-known/oauth-protected-resource", r.origin),
        metadata_url(&r),
    ] {
        let response = r.http.get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        let doc: Value = response.json().await.unwrap();
        assert_eq!(
            doc,
            json!({
                "resource": r.url,
                "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp", "files:write"],
                "resource_name": "OAuth test",
            }),
            "{url}"
        );
    }
}

#[tokio::test]
async fn a_request_without_a_token_is_challenged_with_the_metadata() {
    let key = es256("k1");
    let (r, _jwks) = start(&key).await;
    let (status, challenge, body) = parts(
        post(&r, None, None, &initialize_body())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"mcp\"",
            metadata_url(&r)
        )
    );
    assert_eq!(reply_of(&body)["error"]["code"], -32600);
    // GET and DELETE are protected too.
    let response = r
        .http
        .get(&r.url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn refused_tokens_get_invalid_token() {
    let key = es256("k1");
    let other = es256("k2");
    let (r, _jwks) = start(&key).await;
    let aud = r.url.clone();
    let mut expired = claims(&aud, "mcp");
    expired["exp"] = json!(now() - 120);
    let mut early = claims(&aud, "mcp");
    early["nbf"] = json!(now() + 120);
    let mut no_exp = claims(&aud, "mcp");
    no_exp.as_object_mut().unwrap().remove("exp");
    let mut issuer = claims(&aud, "mcp");
    issuer["iss"] = json!("https://evil.example");
    let hs = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims(&aud, "mcp"),
        &EncodingKey::from_secret(b"guessable").unwrap(),
    )
    .unwrap();
    let cases = [
        ("expired", sign(&key, &expired), "The access token expired"),
        (
            "not yet valid",
            sign(&key, &early),
            "The access token is not valid yet",
        ),
        (
            "wrong audience",
            sign(&key, &claims("http://other.example/mcp", "mcp")),
            "The access token is not meant for this resource",
        ),
        (
            "audience list without us",
            sign(
                &key,
                &json!({"iss": ISSUER, "aud": ["a", "b"], "exp": now() + 60}),
            ),
            "The access token is not meant for this resource",
        ),
        (
            "wrong issuer",
            sign(&key, &issuer),
            "The access token was not issued by a trusted authorization server",
        ),
        (
            "bad signature",
            sign_as(&other, "k1", &claims(&aud, "mcp")),
            "The access token's signature is invalid",
        ),
        (
            "unknown kid",
            sign(&other, &claims(&aud, "mcp")),
            "The access token was signed with an unknown key",
        ),
        ("no exp", sign(&key, &no_exp), "The access token is invalid"),
        ("HS256 without a secret", hs, "The access token is invalid"),
        (
            "not a JWT",
            "abc.def.ghi".to_owned(),
            "The access token is invalid",
        ),
    ];
    for (case, token, description) in cases {
        let request = post(&r, Some(&token), None, &initialize_body());
        let body = assert_challenged(&r, request, "invalid_token", description, case).await;
        assert!(!body.contains(&token), "{case}: the token is echoed");
    }
    // An audience array naming us is fine.
    let token = sign(
        &key,
        &json!({"iss": ISSUER, "aud": ["x", aud], "scope": "mcp", "exp": now() + 60}),
    );
    let response = post(&r, Some(&token), None, &initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

/// Sends `request` and checks that it is refused with 401 and the
/// challenge of `error` and `description`; the body of the answer.
async fn assert_challenged(
    r: &Running,
    request: RequestBuilder,
    error: &str,
    description: &str,
    case: &str,
) -> String {
    let (status, challenge, body) = parts(request.send().await.unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{case}: {body}");
    let want = format!(
        "Bearer error=\"{error}\", error_description=\"{description}\", \
         resource_metadata=\"{}\", scope=\"mcp\"",
        metadata_url(r)
    );
    assert_eq!(challenge, want, "{case}");
    body
}

#[tokio::test]
async fn malformed_authorization_headers_are_invalid_requests() {
    let key = es256("k1");
    let (r, _jwks) = start(&key).await;
    let valid = sign(&key, &claims(&r.url, "mcp"));
    let cases = [
        (
            "Basic dXNlcjpwYXNz".to_owned(),
            "The Authorization header must use the Bearer scheme",
        ),
        ("Bearer".to_owned(), "The Authorization header has no token"),
        (
            "Bearer    ".to_owned(),
            "The Authorization header has no token",
        ),
        (
            format!("Bearer {valid} extra"),
            "The bearer token is malformed",
        ),
        ("Bearer a,b".to_owned(), "The bearer token is malformed"),
    ];
    for (value, description) in cases {
        let request = http_session::post(&r.http, &r.url, None, &initialize_body())
            .header("authorization", &value);
        assert_challenged(&r, request, "invalid_request", description, &value).await;
    }
    let (status, challenge, _) = parts(
        http_session::post(&r.http, &r.url, None, &initialize_body())
            .header("authorization", format!("Bearer {valid}"))
            .header("authorization", format!("Bearer {valid}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        challenge.contains("error=\"invalid_request\""),
        "{challenge}"
    );
}

#[tokio::test]
async fn a_valid_token_reaches_the_tool_which_reads_its_claims() {
    let key = es256("k1");
    let (r, _jwks) = start(&key).await;
    let token = sign(&key, &claims(&r.url, "mcp files:read"));
    let expected = json!({
        "sub": "user-42",
        "client": "test-client",
        "scopes": ["mcp", "files:read"],
        "tenant": "acme",
        "expires": true,
    });
    let (status, _, body) = call_in_session(&r, &token, "whoami").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let reply = reply_of(&body);
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), expected);

    // The stateless revision, too.
    let (status, _, body) = call_stateless(&r, &token, "whoami").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let reply = reply_of(&body);
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), expected);
}

#[tokio::test]
async fn missing_scopes_are_403_insufficient_scope_naming_them() {
    let key = es256("k1");
    let (r, _jwks) = start(&key).await;
    let insufficient = |r: &Running, scope: &str| {
        format!(
            "Bearer error=\"insufficient_scope\", error_description=\"this request needs the \
             scopes {scope}\", resource_metadata=\"{}\", scope=\"{scope}\"",
            metadata_url(r)
        )
    };
    // A tool's own scope, in a session and stateless.
    let reader = sign(&key, &claims(&r.url, "mcp"));
    let (status, challenge, body) = call_in_session(&r, &reader, "delete_file").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(challenge, insufficient(&r, "mcp files:write"));
    assert_eq!(reply_of(&body)["id"], 7, "refused with the call's id");
    let (status, challenge, _) = call_stateless(&r, &reader, "delete_file").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(challenge, insufficient(&r, "mcp files:write"));
    // An `Mcp-Name` naming the scoped tool is held to its scopes too, even
    // when the body names another (which is a 400 anyway).
    let mut body = call_body("whoami");
    body["params"]["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let response = r
        .http
        .post(&r.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "delete_file")
        .header("authorization", format!("Bearer {reader}"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let (status, challenge, _) = parts(response).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(challenge, insufficient(&r, "mcp files:write"));
    // Other tools are fine with that token.
    let (status, _, _) = call_in_session(&r, &reader, "whoami").await;
    assert_eq!(status, StatusCode::OK);
    // With the scope, the call goes through.
    let writer = sign(&key, &claims(&r.url, "mcp files:write"));
    let (status, _, body) = call_in_session(&r, &writer, "delete_file").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply_of(&body)["result"]["content"][0]["text"], "deleted");
    // The scope every request needs.
    let nothing = sign(&key, &claims(&r.url, "files:write"));
    let (status, challenge, _) = parts(
        post(&r, Some(&nothing), None, &initialize_body())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(challenge, insufficient(&r, "mcp"));
}

/// Keys given directly (a JWKS document, a JWK, PEM, DER) need no fetch;
/// HS256 is accepted only with the secret given explicitly.
#[tokio::test]
async fn keys_and_secrets_given_directly() {
    let in_set = es256("set");
    let [jwk, from_pem, from_der] = ["jwk", "pem", "der"].map(es256);
    let set = JwkSet {
        keys: vec![in_set.jwk.clone()],
    };
    let keys = VerificationKey::from_jwks(serde_json::to_string(&set).unwrap()).unwrap();
    let jwk_key = VerificationKey::from_jwk(serde_json::to_vec(&jwk.jwk).unwrap()).unwrap();
    assert_eq!(jwk_key.kid(), Some("jwk"));
    let pem_key = VerificationKey::from_pem(JwtAlgorithm::Es256, pem(&from_pem.der)).unwrap();
    let der_key = VerificationKey::from_der(JwtAlgorithm::Es256, &from_der.der).unwrap();
    let r = start_with(
        |url| {
            ProtectedResource::new(
                url,
                JwtVerifier::new(ISSUER, url)
                    .keys(keys)
                    .key(jwk_key)
                    .key(pem_key.with_kid("pem"))
                    .key(der_key.with_kid("der"))
                    .hmac_secret(b"a shared secret of 32 bytes or so"),
            )
        },
        Vec::new(),
    )
    .await;
    let hs = |secret: &[u8]| {
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims(&r.url, "mcp"),
            &EncodingKey::from_secret(secret).unwrap(),
        )
        .unwrap()
    };
    for (token, expected) in [
        (sign(&in_set, &claims(&r.url, "mcp")), StatusCode::OK),
        (sign(&jwk, &claims(&r.url, "mcp")), StatusCode::OK),
        (sign(&from_pem, &claims(&r.url, "mcp")), StatusCode::OK),
        (sign(&from_der, &claims(&r.url, "mcp")), StatusCode::OK),
        // The PEM key under the DER key's kid: the kid chooses the key.
        (
            sign_as(&from_pem, "der", &claims(&r.url, "mcp")),
            StatusCode::UNAUTHORIZED,
        ),
        (hs(b"a shared secret of 32 bytes or so"), StatusCode::OK),
        (hs(b"another secret"), StatusCode::UNAUTHORIZED),
        (
            sign(&es256("stray"), &claims(&r.url, "mcp")),
            StatusCode::UNAUTHORIZED,
        ),
    ] {
        let response = post(&r, Some(&token), None, &initialize_body())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), expected, "{token}");
    }
}

/// A 2025-03-26 batch holding a call the token may not make is refused
/// whole, naming the scopes of that call.
#[tokio::test]
async fn a_batch_is_checked_call_by_call() {
    let key = es256("k1");
    let (r, _jwks) = start(&key).await;
    let reader = sign(&key, &claims(&r.url, "mcp"));
    let mut init = initialize_body();
    init["params"]["protocolVersion"] = json!("2025-03-26");
    let response = post(&r, Some(&reader), None, &init).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let sid = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let batch = json!([call_body("whoami"), call_body("delete_file")]);
    let response = post(&r, Some(&reader), None, &batch)
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-03-26")
        .send()
        .await
        .unwrap();
    let (status, challenge, _) = parts(response).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        challenge.contains("scope=\"mcp files:write\""),
        "{challenge}"
    );
    let batch = json!([call_body("whoami")]);
    let response = post(&r, Some(&reader), None, &batch)
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-03-26")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

/// A session belongs to the subject whose token opened it: another
/// subject's token does not find it (404), a fresh token of the same
/// subject does.
#[tokio::test]
async fn a_session_is_bound_to_the_subject_that_opened_it() {
    let key = es256("k1");
    let (r, _jwks) = start(&key).await;
    let alice = sign(&key, &claims(&r.url, "mcp"));
    let mut other = claims(&r.url, "mcp");
    other["sub"] = json!("user-43");
    let mallory = sign(&key, &other);
    let mut later = claims(&r.url, "mcp");
    later["iat"] = json!(now() + 1);
    let alice_again = sign(&key, &later);
    assert_ne!(alice, alice_again);

    let response = post(&r, Some(&alice), None, &initialize_body())
        .send()
        .await
        .unwrap();
    let sid = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let call = call_body("whoami");
    let response = post(&r, Some(&mallory), Some(&sid), &call)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = r
        .http
        .delete(&r.url)
        .header("mcp-session-id", &sid)
        .header("authorization", format!("Bearer {mallory}"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::NOT_FOUND,
        "not ended by another subject"
    );
    let response = post(&r, Some(&alice_again), Some(&sid), &call)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_rotated_key_is_fetched_once_its_kid_shows_up() {
    let key = es256("k1");
    let rotated = es256("k2");
    let (r, jwks) = start(&key).await;
    let old = sign(&key, &claims(&r.url, "mcp"));
    let new = sign(&rotated, &claims(&r.url, "mcp"));
    let status = |token: String| {
        let request = post(&r, Some(&token), None, &initialize_body());
        async move { request.send().await.unwrap().status() }
    };
    assert_eq!(status(old.clone()).await, StatusCode::OK);
    assert_eq!(jwks.hits.load(Ordering::SeqCst), 1);
    // Unknown kids do not make us hammer the JWKS.
    for _ in 0..5 {
        assert_eq!(status(new.clone()).await, StatusCode::UNAUTHORIZED);
    }
    assert!(
        jwks.hits.load(Ordering::SeqCst) <= 2,
        "rate-limited fetches"
    );
    jwks.set.lock().unwrap().keys.push(rotated.jwk.clone());
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(status(new).await, StatusCode::OK);
    assert_eq!(status(old).await, StatusCode::OK);
}

#[tokio::test]
async fn an_unreachable_jwks_is_a_prompt_503() {
    // A listener that never answers: the fetch must time out.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/jwks", silent.local_addr().unwrap());
    // A port nobody listens on: refused at once.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_url = format!("http://{}/jwks", closed.local_addr().unwrap());
    drop(closed);
    let key = es256("k1");
    for jwks_url in [silent_url, closed_url] {
        let r = start_with(
            |url| {
                ProtectedResource::new(
                    url,
                    JwtVerifier::new(ISSUER, url)
                        .jwks_url(&jwks_url)
                        .fetch_timeout(Duration::from_millis(300)),
                )
            },
            Vec::new(),
        )
        .await;
        let token = sign(&key, &claims(&r.url, "mcp"));
        for _ in 0..2 {
            let started = Instant::now();
            let (status, challenge, body) = parts(
                post(&r, Some(&token), None, &initialize_body())
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert!(started.elapsed() < Duration::from_secs(3), "{jwks_url}");
            assert_eq!(
                status,
                StatusCode::SERVICE_UNAVAILABLE,
                "{jwks_url}: {body}"
            );
            assert!(challenge.is_empty());
            assert!(
                reply_of(&body)["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("could not be verified"),
                "{body}"
            );
        }
    }
    drop(silent);
}

#[tokio::test]
async fn a_verifier_that_does_not_answer_is_a_503() {
    struct Never;
    impl claude_code_agent_mcp::http_server::TokenVerifier for Never {
        fn verify<'a>(
            &'a self,
            _: &'a str,
        ) -> futures::future::BoxFuture<
            'a,
            Result<
                claude_code_agent_mcp::AccessToken,
                claude_code_agent_mcp::http_server::VerifyError,
            >,
        > {
            Box::pin(std::future::pending())
        }
    }
    let r = start_with(
        |url| ProtectedResource::new(url, Never).verify_timeout(Duration::from_millis(200)),
        Vec::new(),
    )
    .await;
    let started = Instant::now();
    let response = post(&r, Some("abc"), None, &initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(started.elapsed() < Duration::from_secs(3));
}

/// An RFC 7662 introspection endpoint: `opaque-good` is active for the
/// audience it is told, `opaque-elsewhere` for another one, anything else
/// inactive (401, as the TypeScript SDK's demo answers); `/down` is a 500.
/// `opaque-2` is active too, `opaque-forever` active without `exp`. Each
/// introspection counts one in `calls`.
async fn serve_introspection(
    audience: Arc<Mutex<String>>,
    calls: Arc<AtomicUsize>,
) -> (String, tokio::task::JoinHandle<()>) {
    let introspect = move |headers: axum::http::HeaderMap, body: String| {
        let audience = audience.lock().unwrap().clone();
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(
                headers["content-type"], "application/x-www-form-urlencoded",
                "a form"
            );
            assert!(
                headers["authorization"]
                    .to_str()
                    .unwrap()
                    .starts_with("Basic ")
            );
            let token = body
                .split('&')
                .find_map(|kv| kv.strip_prefix("token="))
                .unwrap_or_default()
                .to_owned();
            let active = |aud: &str| {
                json!({"active": true, "client_id": "opaque-client", "sub": "user-7",
                       "scope": "mcp", "aud": aud, "exp": now() + 60})
            };
            match token.as_str() {
                "opaque-good" | "opaque-2" => (StatusCode::OK, axum::Json(active(&audience))),
                "opaque-forever" => {
                    let mut answer = active(&audience);
                    answer.as_object_mut().unwrap().remove("exp");
                    (StatusCode::OK, axum::Json(answer))
                }
                "opaque-elsewhere" => (StatusCode::OK, axum::Json(active("http://elsewhere/mcp"))),
                _ => (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(json!({"active": false})),
                ),
            }
        }
    };
    let app = axum::Router::new()
        .route("/introspect", axum::routing::post(introspect))
        .route(
            "/down",
            axum::routing::post(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (origin, task)
}

#[tokio::test]
async fn opaque_tokens_are_introspected() {
    let audience = Arc::new(Mutex::new(String::new()));
    let calls = Arc::default();
    let (origin, task) = serve_introspection(Arc::clone(&audience), calls).await;
    let endpoint = format!("{origin}/introspect");
    let r = start_with(
        |url| {
            *audience.lock().unwrap() = url.to_owned();
            ProtectedResource::new(
                url,
                IntrospectionVerifier::new(&endpoint, url).client_credentials("rs", Some("pw")),
            )
        },
        vec![task],
    )
    .await;
    let (status, _, body) = call_in_session(&r, "opaque-good", "whoami").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let reply = reply_of(&body);
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    let who: Value = serde_json::from_str(text).unwrap();
    assert_eq!(who["sub"], "user-7");
    assert_eq!(who["client"], "opaque-client");
    assert_eq!(who["scopes"], json!(["mcp"]));
    for (token, description) in [
        (
            "opaque-elsewhere",
            "The access token is not meant for this resource",
        ),
        ("opaque-unknown", "The access token is invalid"),
    ] {
        let (status, challenge, _) = parts(
            post(&r, Some(token), None, &initialize_body())
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token}");
        assert!(
            challenge.starts_with(&format!(
                "Bearer error=\"invalid_token\", error_description=\"{description}\""
            )),
            "{token}: {challenge}"
        );
    }
    // An endpoint that fails is a 503, not a refusal.
    let down = start_with(
        |url| {
            ProtectedResource::new(
                url,
                IntrospectionVerifier::new(format!("{origin}/down"), url),
            )
        },
        Vec::new(),
    )
    .await;
    let response = post(&down, Some("opaque-good"), None, &initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn introspection_answers_are_cached_until_the_token_expires_in_a_bounded_cache() {
    let audience = Arc::new(Mutex::new("https://r/mcp".to_owned()));
    let calls = Arc::new(AtomicUsize::new(0));
    let (origin, _task) = serve_introspection(audience, Arc::clone(&calls)).await;
    let verifier = |capacity| {
        IntrospectionVerifier::new(format!("{origin}/introspect"), "https://r/mcp")
            .client_credentials("rs", Some("pw"))
            .cache_capacity(capacity)
    };
    let count = |verifier: IntrospectionVerifier, tokens: &'static [&'static str]| {
        let calls = Arc::clone(&calls);
        async move {
            calls.store(0, Ordering::SeqCst);
            for token in tokens {
                let verified = verifier.verify(token).await;
                assert_eq!(verified.unwrap().subject(), Some("user-7"), "{token}");
            }
            calls.load(Ordering::SeqCst)
        }
    };
    let good: &[&str] = &["opaque-good"; 3];
    assert_eq!(count(verifier(10), good).await, 1, "cached after the first");
    assert_eq!(count(verifier(0), good).await, 3, "no cache");
    let forever: &[&str] = &["opaque-forever"; 2];
    assert_eq!(count(verifier(10), forever).await, 2, "no exp: not cached");
    // One place: each token pushes the other out; two: both stay.
    let two: &[&str] = &["opaque-good", "opaque-2", "opaque-good", "opaque-2"];
    assert_eq!(count(verifier(1), two).await, 4);
    assert_eq!(count(verifier(2), two).await, 2);
    // An inactive token is asked about each time.
    calls.store(0, Ordering::SeqCst);
    let shared = verifier(10);
    for _ in 0..2 {
        assert!(shared.verify("opaque-unknown").await.is_err());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// The positive and negative cases with recognisable tokens, under a
/// subscriber that keeps every event (the runtime is this thread's, so the
/// server's events are too): neither the tokens nor the static secret
/// appear in the logs or in any response.
#[tokio::test]
async fn tokens_never_reach_the_logs_or_the_bodies() {
    let logs = crate::support::logs::Logs::capture();

    let key = es256("k1");
    let (r, _jwks) = start(&key).await;
    let valid = sign(&key, &claims(&r.url, "mcp"));
    let mut expired = claims(&r.url, "mcp");
    expired["exp"] = json!(now() - 600);
    let expired = sign(&key, &expired);
    let garbage = "SECRET-GARBAGE-TOKEN-0451".to_owned();
    let mut bodies = String::new();
    let (_, _, body) = call_in_session(&r, &valid, "whoami").await;
    bodies.push_str(&body);
    let (_, _, body) = call_in_session(&r, &valid, "delete_file").await;
    bodies.push_str(&body);
    for token in [&expired, &garbage] {
        let (_, challenge, body) = parts(
            post(&r, Some(token), None, &initialize_body())
                .send()
                .await
                .unwrap(),
        )
        .await;
        bodies.push_str(&challenge);
        bodies.push_str(&body);
    }
    let (_, challenge, body) = parts(
        http_session::post(&r.http, &r.url, None, &initialize_body())
            .header("authorization", format!("Bearer {garbage} more"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    bodies.push_str(&challenge);
    bodies.push_str(&body);

    // A static secret, refused and accepted.
    let secret = "STATIC-SECRET-VALUE-9931";
    let s = start_with(
        |url| ProtectedResource::new(url, StaticToken::new(secret).scopes(["mcp"])),
        Vec::new(),
    )
    .await;
    let (_, _, body) = call_in_session(&s, secret, "whoami").await;
    bodies.push_str(&body);
    let wrong = format!("{secret}-NOT");
    let (_, challenge, body) = parts(
        post(&s, Some(&wrong), None, &initialize_body())
            .send()
            .await
            .unwrap(),
    )
    .await;
    bodies.push_str(&challenge);
    bodies.push_str(&body);

    let logs = logs.text();
    assert!(
        logs.contains("access token refused"),
        "the refusals are logged: {logs}"
    );
    let signature = |t: &str| t.rsplit('.').next().unwrap().to_owned();
    for needle in [
        valid.clone(),
        signature(&valid),
        expired.clone(),
        signature(&expired),
        garbage.clone(),
        secret.to_owned(),
    ] {
        assert!(!logs.contains(&needle), "{needle} is in the logs:\n{logs}");
        assert!(!bodies.contains(&needle), "{needle} is in a response");
    }
}
