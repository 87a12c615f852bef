//! The cassette file: pretty-printed JSON, one interaction per element of
//! `interactions`, keys in a fixed order, every SSE event one object. A
//! change of prompt or answer is a few lines of `git diff`, and a reviewer
//! reads what the model was asked and said without tooling.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::CassetteError;

/// The format's version, the file's first key.
pub(crate) const VERSION: u64 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct File {
    pub(crate) cassette: u64,
    /// The redaction patterns it was recorded with: replay applies them to
    /// what the CLI asks before matching.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) redact: Vec<String>,
    pub(crate) interactions: Vec<Interaction>,
}

/// One request of the CLI and what the upstream answered.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Interaction {
    pub(crate) request: Request,
    pub(crate) response: Response,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    /// The body as matched: normalized (see `matching`).
    pub(crate) body: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Response {
    pub(crate) status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) content_type: Option<String>,
    pub(crate) body: Body,
}

/// A response body: SSE events, a JSON document, or text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Body {
    Events(Vec<Event>),
    Json(Value),
    Text(String),
}

/// One server-sent event; `data` is JSON when it parses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Event {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) event: Option<String>,
    pub(crate) data: Value,
}

impl Body {
    /// The body as the upstream sent it, from its bytes and content type.
    pub(crate) fn parse(bytes: &[u8], content_type: Option<&str>) -> Body {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let kind = content_type.unwrap_or_default();
        if kind.starts_with("text/event-stream") {
            return Body::Events(parse_events(&text));
        }
        if kind.contains("json")
            && let Ok(value) = serde_json::from_str::<Value>(&text)
        {
            return Body::Json(value);
        }
        Body::Text(text)
    }

    /// The bytes to send again.
    pub(crate) fn render(&self) -> Vec<u8> {
        match self {
            Body::Events(events) => {
                let mut out = String::new();
                for e in events {
                    if let Some(name) = &e.event {
                        out.push_str(&format!("event: {name}\n"));
                    }
                    let data = match &e.data {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    for line in data.split('\n') {
                        out.push_str(&format!("data: {line}\n"));
                    }
                    out.push('\n');
                }
                out.into_bytes()
            }
            Body::Json(value) => value.to_string().into_bytes(),
            Body::Text(text) => text.clone().into_bytes(),
        }
    }
}

/// The events of an SSE body (comments and `id:`/`retry:` fields dropped:
/// the Messages API sends none that matter).
fn parse_events(text: &str) -> Vec<Event> {
    let mut events = Vec::new();
    for block in text.replace("\r\n", "\n").split("\n\n") {
        let mut name = None;
        let mut data: Vec<&str> = Vec::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                name = Some(v.trim_start().to_owned());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if name.is_none() && data.is_empty() {
            continue;
        }
        let data = data.join("\n");
        let data = serde_json::from_str::<Value>(&data).unwrap_or(Value::String(data));
        events.push(Event { event: name, data });
    }
    events
}

impl File {
    pub(crate) fn load(path: &Path) -> Result<File, CassetteError> {
        let text = std::fs::read_to_string(path).map_err(|source| CassetteError::Io {
            path: path.to_owned(),
            source,
        })?;
        let file: File = serde_json::from_str(&text).map_err(|source| CassetteError::Format {
            path: path.to_owned(),
            source,
        })?;
        if file.cassette != VERSION {
            return Err(CassetteError::Version {
                path: path.to_owned(),
                found: file.cassette,
            });
        }
        Ok(file)
    }

    pub(crate) fn save(&self, path: &Path) -> Result<(), CassetteError> {
        let io = |source| CassetteError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut text = serde_json::to_string_pretty(self).expect("a cassette serializes");
        text.push('\n');
        std::fs::write(path, text).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_bodies_round_trip_as_events() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n";
        let body = Body::parse(sse.as_bytes(), Some("text/event-stream; charset=utf-8"));
        let Body::Events(events) = &body else {
            panic!("{body:?}")
        };
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event.as_deref(), Some("message_start"));
        assert_eq!(events[1].data["type"], "ping");
        let again = Body::parse(&body.render(), Some("text/event-stream"));
        assert_eq!(
            serde_json::to_value(&again).unwrap(),
            serde_json::to_value(&body).unwrap()
        );
        assert!(matches!(
            Body::parse(b"{\"a\":1}", Some("application/json")),
            Body::Json(_)
        ));
        assert!(matches!(
            Body::parse(b"oops", Some("application/json")),
            Body::Text(_)
        ));
    }
}
