//! The server the MCP conformance harness (`@modelcontextprotocol/conformance`,
//! `server` mode) tests: every fixed tool, resource and prompt name its
//! scenarios call, served over Streamable HTTP at `http://127.0.0.1:PORT/mcp`.
//!
//! ```text
//! cargo run -p claude-code-agent-devtools --bin conformance-server -- 3102
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3102/mcp --suite all
//! ```
//!
//! The port comes from the first argument, else `PORT`, else 3000.

mod round_trips;
mod tasks;
mod tools;

use claude_code_agent_mcp::http_server::serve_http;
use claude_code_agent_mcp::server::{
    CompletionRequest, Prompt, PromptRequest, Resource, ResourceRequest, ResourceTemplate, Skill,
    prompt_user,
};
use claude_code_agent_mcp::types::ResourceContents;
use claude_code_agent_mcp::{Content, Server};
use serde_json::json;

use round_trips::{Conformance, round_trip_prompt};
use tools::{IMAGE, embedded, tools, trigger_tools};

fn server() -> Server {
    let text = |uri: &'static str, text: &'static str| {
        move |_: ResourceRequest| async move { ResourceContents::text(uri, text) }
    };
    let server = Server::builder("mcp-conformance-test-server", "1.0.0")
        .tools(tools())
        .tools(tasks::task_tools())
        // The Skills extension's scenarios (`sep-2640-skills-*`) read it.
        .skill(
            Skill::new(
                "pdf-processing",
                "Extract, fill, and assemble PDF documents",
                "# PDF processing\n\nFor forms, read references/FORMS.md.\n",
            )
            .file("references/FORMS.md", "# Forms\n\nFill each field.\n"),
        )
        .resource(
            Resource::new(
                "test://static-text",
                "static-text",
                text(
                    "test://static-text",
                    "This is the content of the static text resource.",
                ),
            )
            .title("Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain"),
        )
        .resource(
            Resource::new(
                "test://static-binary",
                "static-binary",
                |_: ResourceRequest| async {
                    ResourceContents::blob("test://static-binary", IMAGE)
                },
            )
            .title("Static Binary Resource")
            .description("A static binary resource (image) for testing")
            .mime_type("image/png"),
        )
        .resource(
            Resource::new(
                "test://watched-resource",
                "watched-resource",
                text("test://watched-resource", "Watched resource content"),
            )
            .title("Watched Resource")
            .description("A resource clients can subscribe to")
            .mime_type("text/plain"),
        )
        .resource_template(
            ResourceTemplate::new(
                "test://template/{id}/data",
                "template",
                |req: ResourceRequest| async move {
                    let id = req.var("id").unwrap_or_default().to_owned();
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                        .to_string()
                },
            )
            .title("Resource Template")
            .description("A resource template with parameter substitution")
            .mime_type("application/json"),
        )
        .prompt(
            Prompt::new("test_simple_prompt", |_: PromptRequest| async {
                vec![prompt_user(Content::text(
                    "This is a simple prompt for testing.",
                ))]
            })
            .title("Simple Test Prompt")
            .description("A simple prompt without arguments"),
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_arguments",
                |req: PromptRequest| async move {
                    let (a, b) = (
                        req.arg("arg1").unwrap_or_default(),
                        req.arg("arg2").unwrap_or_default(),
                    );
                    vec![prompt_user(Content::text(format!(
                        "Prompt with arguments: arg1='{a}', arg2='{b}'"
                    )))]
                },
            )
            .title("Prompt With Arguments")
            .description("A prompt with required arguments")
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true),
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_embedded_resource",
                |req: PromptRequest| async move {
                    let uri = req.arg("resourceUri").unwrap_or_default();
                    vec![
                        prompt_user(embedded(
                            uri,
                            "text/plain",
                            "Embedded resource content for testing.",
                        )),
                        prompt_user(Content::text("Please process the embedded resource above.")),
                    ]
                },
            )
            .title("Prompt With Embedded Resource")
            .description("A prompt that includes an embedded resource")
            .argument("resourceUri", "URI of the resource to embed", true),
        )
        .prompt(
            Prompt::new("test_prompt_with_image", |_: PromptRequest| async {
                vec![
                    prompt_user(Content::image(IMAGE, "image/png")),
                    prompt_user(Content::text("Please analyze the image above.")),
                ]
            })
            .title("Prompt With Image")
            .description("A prompt that includes image content"),
        )
        .prompt(round_trip_prompt())
        .completion(|_: CompletionRequest| async { Vec::new() })
        .build();
    trigger_tools(&server);
    server
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .and_then(|p| p.parse().ok())
        .unwrap_or(3000);
    eprintln!("MCP conformance server on http://127.0.0.1:{port}/mcp");
    let handler = Conformance::new(server());
    serve_http(handler, ("127.0.0.1", port)).await
}
