//! The cassette file: pretty-printed JSON, one interaction per element of
//! `interactions`, keys in a fixed order, every SSE event one object. A
//! change of prompt or answer is a few lines of `git diff`, and a reviewer
//! reads what the model was asked and said without tooling.
//!
//! What every request of a session repeats — the CLI's tool definitions
//! (about 60 KB with its built-in tools) and its system prompt — is stored
//! once, in `shared`, and each request names it (`{"$shared": 0}`): a
//! cassette grows by what a turn adds, not by the whole tool list again.
//! Loading puts the shared parts back, so the rest of the testkit only sees
//! whole requests. Version 1 files (everything inline) still load.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::CassetteError;

/// The format's version, the file's first key: 2 stores the parts that
/// requests share once; 1 (every request whole) still loads.
pub(crate) const VERSION: u64 = 2;

/// The request body fields stored once in `shared` when they are large.
const SHARED_FIELDS: [&str; 2] = ["tools", "system"];

/// A field smaller than this (serialized) stays inline: a reference would
/// save nothing worth the indirection.
const SHARED_MIN_BYTES: usize = 512;

/// The key of a reference to `shared`.
const SHARED_REF: &str = "$shared";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct File {
    pub(crate) cassette: u64,
    /// The redaction patterns it was recorded with: replay applies them to
    /// what the CLI asks before matching.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) redact: Vec<String>,
    pub(crate) interactions: Vec<Interaction>,
    /// What several requests hold the same, stored once, after the
    /// interactions that name it (in the file only: empty once loaded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) shared: Vec<Value>,
}

/// The index a reference to `shared` names (`{"$shared": 0}`).
fn shared_ref(value: &Value) -> Option<usize> {
    let object = value.as_object().filter(|o| o.len() == 1)?;
    usize::try_from(object.get(SHARED_REF)?.as_u64()?).ok()
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
        let mut file: File =
            serde_json::from_str(&text).map_err(|source| CassetteError::Format {
                path: path.to_owned(),
                source,
            })?;
        if !(1..=VERSION).contains(&file.cassette) {
            return Err(CassetteError::Version {
                path: path.to_owned(),
                found: file.cassette,
            });
        }
        file.expand().map_err(|source| CassetteError::Format {
            path: path.to_owned(),
            source,
        })?;
        Ok(file)
    }

    /// Puts the shared parts back into the requests that name them.
    fn expand(&mut self) -> Result<(), serde_json::Error> {
        let shared = std::mem::take(&mut self.shared);
        for (n, interaction) in self.interactions.iter_mut().enumerate() {
            let Value::Object(body) = &mut interaction.request.body else {
                continue;
            };
            for field in SHARED_FIELDS {
                let Some(index) = body.get(field).and_then(shared_ref) else {
                    continue;
                };
                let part = shared.get(index).ok_or_else(|| {
                    <serde_json::Error as serde::de::Error>::custom(format!(
                        "interaction {n}: its request's `{field}` names shared part {index}, and the file has {}",
                        shared.len()
                    ))
                })?;
                body.insert(field.to_owned(), part.clone());
            }
        }
        Ok(())
    }

    /// This file as written: the large fields that requests hold the same
    /// stored once in `shared`, each request naming its part.
    fn compacted(&self) -> File {
        let mut file = self.clone();
        file.cassette = VERSION;
        let mut shared: Vec<Value> = Vec::new();
        for interaction in &mut file.interactions {
            let Value::Object(body) = &mut interaction.request.body else {
                continue;
            };
            for field in SHARED_FIELDS {
                let Some(value) = body.get_mut(field) else {
                    continue;
                };
                if value.to_string().len() < SHARED_MIN_BYTES {
                    continue;
                }
                let index = match shared.iter().position(|s| s == value) {
                    Some(index) => index,
                    None => {
                        shared.push(value.clone());
                        shared.len() - 1
                    }
                };
                *value = serde_json::json!({ SHARED_REF: index });
            }
        }
        file.shared = shared;
        file
    }

    pub(crate) fn save(&self, path: &Path) -> Result<(), CassetteError> {
        let io = |source| CassetteError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut text =
            serde_json::to_string_pretty(&self.compacted()).expect("a cassette serializes");
        text.push('\n');
        std::fs::write(path, text).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn interaction(text: &str, tools: &Value) -> Interaction {
        Interaction {
            request: Request {
                method: "POST".into(),
                path: "/v1/messages".into(),
                body: json!({"model": "m", "system": "short", "tools": tools, "messages": [text]}),
            },
            response: Response {
                status: 200,
                content_type: None,
                body: Body::Text("ok".into()),
            },
        }
    }

    #[test]
    fn the_tool_list_that_requests_repeat_is_written_once() {
        let tools = json!([{"name": "Bash", "description": "x".repeat(2000)}]);
        let other = json!([{"name": "Read", "description": "y".repeat(2000)}]);
        let file = File {
            cassette: VERSION,
            redact: Vec::new(),
            shared: Vec::new(),
            interactions: vec![
                interaction("one", &tools),
                interaction("two", &tools),
                interaction("three", &other),
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        file.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(&"x".repeat(2000)).count(), 1, "{text}");
        assert_eq!(text.matches(&"y".repeat(2000)).count(), 1);
        // Small fields stay inline.
        assert_eq!(text.matches("\"system\": \"short\"").count(), 3, "{text}");
        let loaded = File::load(&path).unwrap();
        assert!(loaded.shared.is_empty());
        let bodies = |f: &File| {
            f.interactions
                .iter()
                .map(|i| i.request.body.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(bodies(&loaded), bodies(&file));
    }

    #[test]
    fn a_version_1_file_loads_and_a_dangling_reference_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.json");
        let v1 = json!({"cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/v1/messages", "body": {"tools": [1, 2]}}, "response": {"status": 200, "body": {"text": "ok"}}}]});
        std::fs::write(&path, v1.to_string()).unwrap();
        let loaded = File::load(&path).unwrap();
        assert_eq!(loaded.interactions[0].request.body["tools"], json!([1, 2]));

        let dangling = json!({"cassette": 2, "shared": [[1]], "interactions": [{"request": {"method": "POST", "path": "/v1/messages", "body": {"tools": {"$shared": 3}}}, "response": {"status": 200, "body": {"text": "ok"}}}]});
        std::fs::write(&path, dangling.to_string()).unwrap();
        let error = File::load(&path).unwrap_err().to_string();
        assert!(
            error.contains("interaction 0") && error.contains("shared part 3"),
            "{error}"
        );
    }

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
