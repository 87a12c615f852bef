//! The fuzz target `server_handle`: [`Server::handle`] of a server with typed and raw tools,
//! on a batch of arbitrary JSON-RPC-like messages handled concurrently on one
//! session (so `notifications/cancelled` races the calls it names), under
//! Tokio's paused clock (sleeps and timeouts cost nothing).
//!
//! Checked: no panic escapes (a tool's deliberate panic must become an
//! `isError` result); every request gets exactly one reply carrying its own
//! id and `"jsonrpc":"2.0"` and exactly one of `result`/`error`; notifications
//! (`"jsonrpc":"2.0"`, a string method, no `id`) and responses get none;
//! invalid messages — another `"jsonrpc"`, an `"id": null` — get `-32600`;
//! every server-originated message is a notification; the result cap holds
//! over the whole result (text and the JSON of every other part); no call is
//! left registered in flight.
//!
//! Input: bytes for `arbitrary` (structured messages), or, when it starts
//! with `{`, JSON-RPC messages one per line (the seed corpus: `mcp_message`
//! payloads from the captures), handled 1 ms apart.
//!
//! A tool panics on purpose with [`DELIBERATE_PANIC`]: libFuzzer's panic
//! hook aborts on any panic, so its target lets that one unwind.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Value, json};

use super::json_gen;
use crate::{
    CallToolResult, IntoToolResult, Json, RawResult, RequestContext, Server, Session, Tool,
    ToolContext,
};

/// The payload of the tool's deliberate panic, which the server must
/// contain (an `isError` result).
pub const DELIBERATE_PANIC: &str = "deliberate tool panic (fuzz)";
const CAP: usize = 2000;

const WORDS: &[&str] = &[
    "add",
    "person",
    "echo",
    "strict",
    "ctx",
    "broken",
    "slow",
    "missing",
    "a",
    "b",
    "name",
    "age",
    "tags",
    "mode",
    "n",
    "ok",
    "err",
    "panic",
    "sleep",
    "big",
    "value",
    "progress",
    "log",
    "content",
    "type",
    "text",
    "isError",
    "structuredContent",
    "result",
    "error",
    "id",
    "method",
    "params",
    "jsonrpc",
    "2.0",
    "requestId",
    "reason",
    "cursor",
    "protocolVersion",
    "level",
    "debug",
    "_meta",
    "progressToken",
    "claudecode/toolUseId",
    "arguments",
    "tools/call",
    "2025-06-18",
    "2025-11-25",
    "capabilities",
    "clientInfo",
];

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Person {
    name: String,
    age: Option<u8>,
    tags: Vec<String>,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let strict = json!({
            "type": "object",
            "properties": {
                "mode": {"enum": ["ok", "err", "panic", "sleep", "big", "value", "raw"]},
                "n": {"type": "integer", "minimum": 0, "maximum": 100000},
                "result": {}
            },
            "required": ["mode"],
            "additionalProperties": false
        });
        Server::builder("fuzz", "1")
            .tool_timeout(Duration::from_secs(30))
            .max_result_chars(CAP)
            .tool(Tool::new("add", "", |x: Add| async move { x.a + x.b }))
            .tool(
                Tool::new("person", "", |p: Person| async move { Json(p) })
                    .output_schema::<Person>(),
            )
            .tool(Tool::new("echo", "", |v: Value| async move { Json(v) }).input_schema(json!({})))
            .tool(
                Tool::new("strict", "", strict_tool)
                    .input_schema(strict)
                    .timeout(Duration::from_millis(50)),
            )
            .tool(Tool::new("ctx", "", ctx_tool).input_schema(json!({"type": "object"})))
            .tool(
                Tool::new("broken", "", |_: Value| async { "unreachable" })
                    .input_schema(json!({"type": 12})),
            )
            .build()
    })
}

/// `value` returns `result` as `Json` (its JSON text); `raw` as a whole
/// result (`RawResult`).
async fn strict_tool(v: Value) -> std::result::Result<CallToolResult, String> {
    let n = v["n"].as_u64().unwrap_or(0);
    let raw = |v: Value| RawResult(v).into_call_tool_result(false);
    let result = v.get("result").cloned().unwrap_or(Value::Null);
    match v["mode"].as_str().unwrap_or_default() {
        "ok" => Ok(raw(json!({"content": [{"type": "text", "text": "ok"}]}))),
        "err" => Err(format!("failed with {n}")),
        "panic" => std::panic::panic_any(DELIBERATE_PANIC),
        "sleep" => {
            tokio::time::sleep(Duration::from_millis(n)).await;
            Ok(raw(json!({"content": []})))
        }
        "big" => Ok(raw(
            json!({"content": [{"type": "text", "text": "é".repeat(n as usize)}]}),
        )),
        "raw" => Ok(raw(result)),
        _ => Ok(Json(result).into_call_tool_result(false)),
    }
}

async fn ctx_tool(v: Value, ctx: ToolContext) -> String {
    let n = v["n"].as_u64().unwrap_or(0);
    for i in 0..n.min(4) {
        ctx.progress(i as f64, Some(4.0), Some("step"));
        ctx.log(crate::LogLevel::Info, v.clone());
        tokio::select! {
            () = ctx.cancelled() => return "cancelled".into(),
            () = tokio::time::sleep(Duration::from_millis(3)) => {}
        }
    }
    format!("{:?} {}", ctx.tool_use_id(), ctx.request_id())
}

/// Fail on the once-known gaps too (both fixed); `FUZZ_STRICT=0` turns it off.
fn strict() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FUZZ_STRICT").is_none_or(|v| v != "0"))
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
    })
}

fn id(u: &mut Unstructured) -> Result<Option<Value>> {
    Ok(match u.int_in_range(0..=9)? {
        0 => None,
        1 => Some(Value::Null),
        2..=4 => Some(Value::from(u.int_in_range(0..=3u8)?)),
        5 => Some(Value::from(*u.choose(&["0", "1", "a", ""])?)),
        6 => Some(json_gen::number(u)?),
        7 => Some(Value::String(u.arbitrary()?)),
        _ => Some(json_gen::value(u, WORDS, 1)?),
    })
}

fn params(u: &mut Unstructured, method: &str, ids: &[Value]) -> Result<Option<Value>> {
    if u.ratio(1, 8)? {
        return Ok(Some(json_gen::value(u, WORDS, 3)?));
    }
    Ok(match method {
        "tools/call" => {
            let mut p = Map::new();
            let name = *u.choose(&[
                "add", "person", "echo", "strict", "ctx", "broken", "missing",
            ])?;
            p.insert("name".into(), name.into());
            let arguments = match (name, u.int_in_range(0..=3)?) {
                ("add", 0) => json!({"a": json_gen::number(u)?, "b": json_gen::number(u)?}),
                ("strict", 0 | 1) => {
                    let mode =
                        *u.choose(&["ok", "err", "panic", "sleep", "big", "value", "raw"])?;
                    let mut a = json!({"mode": mode, "n": u.int_in_range(0..=3000u32)?});
                    if u.arbitrary()? {
                        a["result"] = json_gen::value(u, WORDS, 3)?;
                    }
                    a
                }
                ("ctx", 0 | 1) => json!({"n": u.int_in_range(0..=5u8)?}),
                _ => json_gen::value(u, WORDS, 3)?,
            };
            if u.ratio(7, 8)? {
                p.insert("arguments".into(), arguments);
            }
            if u.ratio(1, 3)? {
                p.insert("_meta".into(), json_gen::value(u, WORDS, 2)?);
            }
            Some(Value::Object(p))
        }
        "notifications/cancelled" => {
            let target = match ids.len() {
                0 => Value::from(0),
                n => ids[u.choose_index(n)?].clone(),
            };
            Some(json!({"requestId": target, "reason": "fuzz"}))
        }
        "logging/setLevel" => Some(json!({"level": string_or(u, &["debug", "error", "nope"])?})),
        "tools/list" => Some(json!({"cursor": string_or(u, &["", "0", "1"])?})),
        "initialize" => Some(
            json!({"protocolVersion": string_or(u, &["2025-06-18", "2025-11-25", "1"])?,
                                   "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}),
        ),
        _ => None,
    })
}

fn string_or(u: &mut Unstructured, choices: &[&str]) -> Result<Value> {
    Ok(if u.ratio(3, 4)? {
        Value::from(*u.choose(choices)?)
    } else {
        json_gen::value(u, WORDS, 1)?
    })
}

/// One message, and the ids of the requests generated so far (cancel targets).
fn message(u: &mut Unstructured, ids: &mut Vec<Value>) -> Result<Value> {
    if u.ratio(1, 12)? {
        return json_gen::value(u, WORDS, 3);
    }
    let methods = [
        "tools/call",
        "tools/call",
        "tools/call",
        "notifications/cancelled",
        "notifications/cancelled",
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "logging/setLevel",
        "resources/list",
        "prompts/list",
    ];
    let mut m = Map::new();
    if u.ratio(7, 8)? {
        m.insert("jsonrpc".into(), string_or(u, &["2.0"])?);
    }
    let method = match u.int_in_range(0..=15)? {
        0 => None,
        1 => Some(json_gen::value(u, WORDS, 1)?),
        2 => Some(Value::String(u.arbitrary()?)),
        _ => Some(Value::from(*u.choose(&methods)?)),
    };
    let name = method
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let id = if name.starts_with("notifications/") && u.ratio(7, 8)? {
        None
    } else {
        id(u)?
    };
    if let Some(p) = params(u, &name, ids)? {
        m.insert("params".into(), p);
    }
    if let Some(method) = method {
        m.insert("method".into(), method);
    } else if u.arbitrary()? {
        m.insert(
            (*u.choose(&["result", "error"])?).into(),
            json_gen::value(u, WORDS, 1)?,
        );
    }
    if let Some(id) = id {
        if !id.is_null() {
            ids.push(id.clone());
        }
        m.insert("id".into(), id);
    }
    Ok(Value::Object(m))
}

fn check_reply(message: &Value, reply: Option<&Value>) {
    let obj = message.as_object();
    let id = obj.and_then(|o| o.get("id"));
    let has_method = obj.is_some_and(|o| o.get("method").is_some_and(Value::is_string));
    let version_ok = obj.and_then(|o| o.get("jsonrpc")) == Some(&json!("2.0"));
    // No `method` at all and a `result` or `error`: a response, never
    // answered whatever its id (`regressions/server_handle/response-with-bool-id`).
    let is_response = obj.is_some_and(|o| {
        !o.contains_key("method") && (o.contains_key("result") || o.contains_key("error"))
    });
    // A notification is JSON-RPC 2.0 with a string method and no id at all:
    // `"id": null` or another `"jsonrpc"` makes an invalid request.
    let is_notification = has_method && id.is_none() && version_ok;
    let Some(reply) = reply else {
        assert!(is_notification || is_response, "no reply to {message}");
        return;
    };
    assert!(
        !is_notification && !is_response,
        "a notification or response was answered: {message} -> {reply}"
    );
    let valid_request =
        has_method && version_ok && id.is_some_and(|id| id.is_number() || id.is_string());
    if !valid_request {
        assert_eq!(reply["error"]["code"], -32600, "{message} -> {reply}");
    }
    let answerable = id.filter(|id| id.is_number() || id.is_string());
    assert_eq!(reply["jsonrpc"], "2.0", "{message} -> {reply}");
    assert_eq!(
        &reply["id"],
        answerable.unwrap_or(&Value::Null),
        "{message} -> {reply}"
    );
    let keys: Vec<_> = reply
        .as_object()
        .expect("reply is an object")
        .keys()
        .collect();
    assert_eq!(keys.len(), 3, "{reply}");
    match (reply.get("result"), reply.get("error")) {
        (Some(result), None) => {
            assert!(
                answerable.is_some(),
                "success without an id: {message} -> {reply}"
            );
            assert!(result.is_object(), "{reply}");
            if let Some(content) = result.get("content") {
                // The cap covers the whole result: a text block's text, the
                // JSON of every other block and of every other member.
                let json_chars = |v: &Value| v.to_string().chars().count();
                let mut chars = 0;
                for block in content.as_array().expect("content is an array") {
                    if block["type"] == "text" {
                        chars += block["text"]
                            .as_str()
                            .expect("text is a string")
                            .chars()
                            .count();
                    } else {
                        chars += json_chars(block);
                    }
                }
                for (key, value) in result.as_object().unwrap() {
                    if key != "content" && key != "isError" {
                        chars += json_chars(value);
                    }
                }
                assert!(result["isError"].is_boolean(), "{reply}");
                // The cap plus the note appended when a result is cut. Once
                // a known gap (`regressions/server_handle/`): the "Invalid
                // arguments" error echoes the arguments and skipped the cap;
                // FUZZ_STRICT=0 tolerates it.
                let known_gap = !strict()
                    && content[0]["text"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("Invalid arguments"));
                assert!(
                    known_gap || chars <= CAP + 400,
                    "result over the cap: {chars} chars: {message} -> {reply}"
                );
            }
        }
        (None, Some(error)) => {
            assert!(error["code"].is_i64(), "{reply}");
            assert!(error["message"].is_string(), "{reply}");
        }
        _ => panic!("exactly one of result/error: {reply}"),
    }
}

/// Handles the input's batch on one session and panics unless every reply,
/// the session and the server's notifications are as the module says.
pub fn server_handle(input: &[u8]) {
    let mut u = Unstructured::new(input);
    let mut ids = Vec::new();
    let mut batch = Vec::new();
    if input.first() == Some(&b'{') {
        let lines = input.split(|&b| b == b'\n');
        // As the transports decode them (lone surrogates as U+FFFD).
        let values = lines.filter_map(|l| crate::transport::json::from_slice::<Value>(l).ok());
        batch.extend(values.take(12).enumerate().map(|(i, v)| (i as u64, v)));
        u = Unstructured::new(&[]);
    }
    while batch.len() < 12 && !u.is_empty() {
        let (Ok(delay), Ok(msg)) = (u.int_in_range(0..=40u64), message(&mut u, &mut ids)) else {
            break;
        };
        batch.push((delay, msg));
    }
    let outbox = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&outbox);
    let session = Session::with_notifier(move |m| sink.lock().unwrap().push(m));
    let replies = runtime().block_on(async {
        let tasks: Vec<_> = batch
            .iter()
            .map(|(delay, msg)| {
                let (delay, msg) = (*delay, msg.clone());
                let ctx = RequestContext::with_session(session.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    server().handle(msg, ctx).await
                })
            })
            .collect();
        let mut replies = Vec::new();
        for t in tasks {
            replies.push(t.await.expect("handle panicked"));
        }
        replies
    });
    for ((_, msg), reply) in batch.iter().zip(&replies) {
        check_reply(msg, reply.as_ref());
    }
    assert_eq!(session.in_flight(), 0, "calls left in flight");
    for m in outbox.lock().unwrap().iter() {
        assert_eq!(m["jsonrpc"], "2.0", "{m}");
        assert!(
            m["method"].is_string() && m.get("id").is_none(),
            "not a notification: {m}"
        );
    }
}
