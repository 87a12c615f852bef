//! The server the TypeScript SDK client script (`tests/peers/ts_client.mjs`)
//! drives from `interop_ts_client.rs`, over stdio (served by the devtools
//! program `interop-server`) and Streamable HTTP.
//!
//! Tools:
//! * `caps` — what `ToolContext` says the client supports (a JSON map);
//! * `sample` — asks the client for a completion of `text`; says what came
//!   of it (`answered: …` or `refused: …`); `sample_briefly` is the same
//!   with a 500 ms timeout;
//! * `work` — `steps` progress reports `every_ms` apart (default 100; `steps`
//!   `0`: forever), under a 300 ms timeout that progress restarts, capped at
//!   2 s; the last report is sent just before the answer;
//! * `echo` — its `text` argument back, as the server decoded it;
//! * `greet` — asks the user's name, then (a second round) their colour,
//!   with `ToolContext::ask`, and greets them;
//! * `map`, `map_structured` (with an output schema), `parts` — a
//!   `serde_json::Value` map as `Json`, the same with a schema, a list of
//!   content parts as a `RawResult`;
//! * `big_image` — a caption and a 5,000-character image under a cap of
//!   1,000 characters;
//! * `big` — `n` characters of text (under a cap of 64 Mi characters);
//! * `slow` — sleeps `ms` milliseconds; `running` says how many `slow`
//!   handlers of this process are running now.
//!
//! Resources `docs://fine` and `docs://boom` (panics), prompt `boom`
//! (panics), completion (panics on the value `boom`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use claude_code_agent_mcp::server::{
    ClientRequestError, CompletionRequest, Prompt, PromptRequest, Resource, ResourceRequest,
};
use claude_code_agent_mcp::types::InputRequest;
use claude_code_agent_mcp::{CallToolResult, Content, Json, RawResult, Server, Tool, ToolContext};
use serde_json::{Value, json};

/// A 1×1 red PNG.
pub const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// The cap of `big_image`, in characters.
pub const BIG_IMAGE_CAP: usize = 1000;

async fn caps(_: Value, ctx: ToolContext) -> Json<Value> {
    Json(json!({
        "declared": ctx.client_capabilities().map(|c| Value::Object(c.as_map().clone())),
        "sampling": ctx.supports_sampling(),
        "elicitation": ctx.supports_elicitation(),
        "roots": ctx.supports_roots(),
    }))
}

async fn sample(v: Value, ctx: ToolContext) -> String {
    let text = v["text"].as_str().unwrap_or_default();
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": 16,
    });
    match ctx.request("sampling/createMessage", params).await {
        Ok(r) => format!("answered: {}", r["content"]["text"].as_str().unwrap_or("?")),
        Err(e) => format!("refused: {e}"),
    }
}

/// Asks for a name, then for a colour (a question that depends on the
/// first answer: two rounds at the stateless revision).
pub async fn greet(_: Value, ctx: ToolContext) -> Result<String, ClientRequestError> {
    let form = |field: &str| json!({"type": "object", "properties": {field: {"type": "string"}}});
    let name = ctx
        .ask(
            "name",
            InputRequest::elicitation("What is your name?", form("name")),
        )
        .await?;
    let name = name["content"]["name"]
        .as_str()
        .unwrap_or("stranger")
        .to_owned();
    let question = format!("What is your favourite colour, {name}?");
    let colour = ctx
        .ask(
            "colour",
            InputRequest::elicitation(question, form("colour")),
        )
        .await?;
    let colour = colour["content"]["colour"].as_str().unwrap_or("grey");
    Ok(format!("Hello, {name}! You like {colour}."))
}

async fn work(v: Value, ctx: ToolContext) -> String {
    let steps = v["steps"].as_u64().unwrap_or(0);
    let every = Duration::from_millis(v["every_ms"].as_u64().unwrap_or(100));
    let mut done = 0u64;
    while steps == 0 || done < steps {
        tokio::time::sleep(every).await;
        done += 1;
        ctx.progress(done as f64, (steps > 0).then_some(steps as f64), None);
    }
    format!("{done} steps")
}

/// How many `slow` handlers run now.
static SLOW_RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Counts a `slow` handler as running until dropped (its future ended or
/// was dropped).
struct Running;

impl Running {
    fn start() -> Self {
        SLOW_RUNNING.fetch_add(1, Ordering::SeqCst);
        Self
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        SLOW_RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How many `slow` handlers of this process run now.
pub fn slow_running() -> usize {
    SLOW_RUNNING.load(Ordering::SeqCst)
}

/// The server.
pub fn server() -> Server {
    let object = || json!({"type": "object"});
    Server::builder("rust-interop", "1.0.0")
        .tool(Tool::new("caps", "What the client supports", caps).input_schema(object()))
        .tool(Tool::new("sample", "Asks the client", sample).input_schema(object()))
        .tool(Tool::new("greet", "Asks the user, then greets", greet).input_schema(object()))
        .tool(
            Tool::new("sample_briefly", "Asks the client, briefly", sample)
                .input_schema(object())
                .timeout(Duration::from_millis(500)),
        )
        .tool(
            Tool::new("work", "Works in steps", work)
                .input_schema(object())
                .timeout(Duration::from_millis(300))
                .reset_timeout_on_progress(Duration::from_secs(2)),
        )
        .tool(
            Tool::new("echo", "Says its text back", |v: Value| async move {
                v["text"].as_str().unwrap_or_default().to_owned()
            })
            .input_schema(object()),
        )
        .tool(
            Tool::new("map", "A map", |_: Value| async {
                Json(json!({"name": "Alice", "id": 7}))
            })
            .input_schema(object()),
        )
        .tool(
            Tool::new("map_structured", "A map, structured", |_: Value| async {
                Json(json!({"count": 3}))
            })
            .input_schema(object())
            .output_schema_value(json!({
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"]
            })),
        )
        .tool(
            Tool::new("parts", "Content parts", |_: Value| async {
                RawResult(json!({"content": [
                    {"type": "text", "text": "a chart"},
                    {"type": "image", "data": IMAGE, "mimeType": "image/png"}
                ]}))
            })
            .input_schema(object()),
        )
        .tool(
            Tool::new("big_image", "A large image", |_: Value| async {
                CallToolResult::success(vec![
                    Content::text("caption"),
                    Content::image("A".repeat(5000), "image/png"),
                ])
            })
            .input_schema(object())
            .max_result_chars(BIG_IMAGE_CAP),
        )
        .tool(
            Tool::new("big", "n characters of text", |v: Value| async move {
                "x".repeat(v["n"].as_u64().unwrap_or(0) as usize)
            })
            .input_schema(object())
            .max_result_chars(64 << 20),
        )
        .tool(
            Tool::new("slow", "Sleeps ms milliseconds", |v: Value| async move {
                let _running = Running::start();
                let ms = v["ms"].as_u64().unwrap_or(1000);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                "slept"
            })
            .input_schema(object())
            .timeout(Duration::from_secs(60)),
        )
        .tool(
            Tool::new("running", "How many slow calls run", |_: Value| async {
                slow_running().to_string()
            })
            .input_schema(object()),
        )
        .resource(Resource::new(
            "docs://fine",
            "fine",
            |_: ResourceRequest| async { "fine" },
        ))
        .resource(Resource::new(
            "docs://boom",
            "boom",
            |_: ResourceRequest| async {
                if true {
                    panic!("resource handler blew up");
                }
                "unreachable"
            },
        ))
        .prompt(Prompt::new("boom", |_: PromptRequest| async {
            if true {
                panic!("prompt handler blew up");
            }
            String::new()
        }))
        .completion(|req: CompletionRequest| async move {
            if req.value == "boom" {
                panic!("completion handler blew up");
            }
            vec![format!("{}!", req.value)]
        })
        .build()
}
