//! The proxy between the CLI and the Messages API: records (forwards, then
//! keeps the request as matched and the answer) or replays (answers from
//! the cassette, or says what did not match).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body as AxumBody, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::format::{Body, Interaction, Request, Response as Recorded};
use super::matching::{Volatile, diff, normalize};

/// The request headers not sent on: hop-by-hop ones, the length (reqwest
/// sets it), the encodings (the answer is read as it comes), the CLI's
/// dummy key.
const NOT_FORWARDED: &[&str] = &[
    "host",
    "content-length",
    "accept-encoding",
    "connection",
    "x-api-key",
    "authorization",
];

pub(crate) enum Active {
    Record {
        upstream: String,
        api_key: Option<String>,
        http: reqwest::Client,
    },
    Replay {
        interactions: Vec<Interaction>,
        used: Mutex<Vec<bool>>,
    },
}

/// What went wrong with one request: its report and, for a request that
/// matched nothing, the recorded request it came closest to (with the
/// number of lines that differ), by which the CLI's retries of one request
/// are folded into one report.
pub(crate) struct Problem {
    pub(crate) closest: Option<(usize, usize)>,
    pub(crate) report: String,
}

pub(crate) struct Shared {
    pub(crate) active: Active,
    pub(crate) volatile: Volatile,
    /// What recording kept, in the order the answers came.
    pub(crate) recorded: Mutex<Vec<Interaction>>,
    /// Requests that matched nothing, upstream failures: the report.
    pub(crate) problems: Mutex<Vec<Problem>>,
}

pub(crate) async fn serve(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    let app = Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(256 * 1024 * 1024))
        .with_state(shared);
    let _ = axum::serve(listener, app).await;
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let parsed = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };
    let request = Request {
        method: method.to_string(),
        path: uri.path().to_owned(),
        body: normalize(&parsed, &shared.volatile),
    };
    match &shared.active {
        Active::Record {
            upstream,
            api_key,
            http,
        } => {
            record(
                &shared,
                http,
                upstream,
                api_key.as_deref(),
                &uri,
                &headers,
                body,
                request,
            )
            .await
        }
        Active::Replay { interactions, used } => replay(&shared, interactions, used, request),
    }
}

#[allow(clippy::too_many_arguments)]
async fn record(
    shared: &Shared,
    http: &reqwest::Client,
    upstream: &str,
    api_key: Option<&str>,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
    request: Request,
) -> Response {
    let target = format!(
        "{upstream}{}",
        uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let mut forwarded = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        if !NOT_FORWARDED.contains(&name.as_str()) {
            forwarded.append(name.clone(), value.clone());
        }
    }
    if let Some(key) = api_key
        && let Ok(mut value) = reqwest::header::HeaderValue::from_str(key)
    {
        value.set_sensitive(true);
        forwarded.insert("x-api-key", value);
    }
    let method =
        reqwest::Method::from_bytes(request.method.as_bytes()).unwrap_or(reqwest::Method::POST);
    let sent = http
        .request(method, &target)
        .headers(forwarded)
        .body(body)
        .send()
        .await;
    let answer = match sent {
        Ok(answer) => answer,
        Err(e) => {
            let why = format!(
                "{} {}: the upstream {upstream} could not be reached: {e}",
                request.method, request.path
            );
            return problem(shared, why);
        }
    };
    let status = answer.status().as_u16();
    if status == 401 {
        // Not an answer to keep: a cassette of refusals replays nothing.
        let why = format!(
            "{} {}: the upstream {upstream} refused the key (HTTP 401): set ANTHROPIC_API_KEY or Cassette::api_key",
            request.method, request.path
        );
        return problem(shared, why);
    }
    let content_type = answer
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = match answer.bytes().await {
        Ok(bytes) => bytes,
        Err(e) => {
            let why = format!(
                "{} {}: the upstream's answer broke off: {e}",
                request.method, request.path
            );
            return problem(shared, why);
        }
    };
    let response = Recorded {
        status,
        content_type: content_type.clone(),
        body: Body::parse(&bytes, content_type.as_deref()),
    };
    lock(&shared.recorded).push(Interaction { request, response });
    respond(status, content_type.as_deref(), bytes.to_vec())
}

fn replay(
    shared: &Shared,
    interactions: &[Interaction],
    used: &Mutex<Vec<bool>>,
    request: Request,
) -> Response {
    let mut used = lock(used);
    if let Some(i) =
        (0..interactions.len()).find(|&i| !used[i] && interactions[i].request == request)
    {
        used[i] = true;
        let r = &interactions[i].response;
        return respond(r.status, r.content_type.as_deref(), r.body.render());
    }
    // The closest recorded request of the same method and path, unused ones first.
    let candidates = (0..interactions.len())
        .filter(|&i| {
            interactions[i].request.method == request.method
                && interactions[i].request.path == request.path
        })
        .map(|i| (used[i], diff(&interactions[i].request, &request), i))
        .min_by_key(|(was_used, (_, changed), _)| (*was_used, *changed));
    drop(used);
    let closest = candidates
        .as_ref()
        .map(|(_, (_, changed), i)| (*i, *changed));
    let report = match candidates {
        Some((was_used, (text, _), i)) => format!(
            "{} {} matches no recorded request; the closest is #{}{}:\n{text}",
            request.method,
            request.path,
            i + 1,
            if was_used { " (already used)" } else { "" },
        ),
        None => format!(
            "{} {} matches no recorded request: the cassette holds none of that method and path",
            request.method, request.path
        ),
    };
    problem_near(shared, report, closest)
}

/// Keeps `report`, prints it, and answers the CLI with an API error it
/// does not retry (a 400: a 401 or 5xx would be tried again for minutes),
/// so that its turn fails at once.
fn problem(shared: &Shared, report: String) -> Response {
    problem_near(shared, report, None)
}

/// [`problem`], for a request that came closest to recorded request
/// `closest.0` (`closest.1` lines differ).
fn problem_near(shared: &Shared, report: String, closest: Option<(usize, usize)>) -> Response {
    eprintln!("cassette: {report}");
    let message = report.lines().next().unwrap_or_default().to_owned();
    lock(&shared.problems).push(Problem { closest, report });
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!("cassette: {message}")}});
    respond(400, Some("application/json"), body.to_string().into_bytes())
}

fn respond(status: u16, content_type: Option<&str>, body: Vec<u8>) -> Response {
    let mut response =
        Response::builder().status(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY));
    if let Some(kind) = content_type {
        response = response.header(header::CONTENT_TYPE, kind);
    }
    response
        .body(AxumBody::from(body))
        .expect("a status and a content type make a response")
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
