//! The real Claude Code CLI (offline, against the testkit's mock model)
//! using our calculator example as an *external* MCP server, through
//! `--mcp-config`: spawned by the CLI over stdio, and over Streamable HTTP.

use std::path::PathBuf;

use crate::support::*;
use claude_code_agent::{McpServerConfig, query};
use claude_code_agent_testkit::{MockModel, Turn};
use serde_json::json;

/// The calculator example next to this test binary (built on demand).
fn calculator() -> PathBuf {
    example("calculator")
}

fn script() -> claude_code_agent_testkit::MockModelBuilder {
    MockModel::builder()
        .turn(Turn::tool_use("mcp__calc__add", json!({"a": 2, "b": 3})))
        .turn(Turn::tool_use("mcp__calc__divide", json!({"a": 1, "b": 0})))
        .turn(Turn::dynamic(|req| {
            let texts: Vec<String> = req.tool_results().iter().map(|r| r.text()).collect();
            Turn::text(format!("results: {}", texts.join(" | ")))
        }))
}

async fn round_trip(h: &Harness, config: McpServerConfig) {
    round_trip_with(h, config, h.options()).await
}

async fn round_trip_with(
    h: &Harness,
    config: McpServerConfig,
    options: claude_code_agent::Options,
) {
    let options = options
        .mcp_server_config("calc", config)
        .allowed_tools(["mcp__calc__add", "mcp__calc__divide"])
        .max_turns(4);
    let (messages, error) = drain(query("What is 2+3, and 1/0?", options)).await;
    assert!(error.is_none(), "{error:?}\n{}", h.stderr_text());
    let results = tool_results(&messages);
    assert_eq!(results.len(), 2, "{messages:#?}\n{}", h.stderr_text());
    assert_eq!(result_text(&results[0]), "5");
    assert_ne!(results[0].is_error, Some(true));
    assert!(
        result_text(&results[1]).contains("division by zero"),
        "{:?}",
        results[1]
    );
    assert_eq!(results[1].is_error, Some(true));
    // What the model was sent back matches.
    let sent = h.mock().tool_results();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].text(), "5");
    assert!(sent[1].is_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_runs_the_calculator_as_an_external_stdio_server() {
    with_timeout(async {
        let h = Harness::start(script()).await;
        let exe = calculator().to_string_lossy().into_owned();
        round_trip(&h, McpServerConfig::stdio(exe, ["--stdio"])).await;
        h.finish().await;
    })
    .await
}

/// The same server delivered in `initialize` (`mcp_servers_via_initialize`):
/// nothing on the command line, the CLI waits for `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_runs_the_calculator_delivered_in_initialize() {
    with_timeout(async {
        let h = Harness::start(script()).await;
        let exe = calculator().to_string_lossy().into_owned();
        let config = McpServerConfig::stdio(exe, ["--stdio"]);
        let options = h.options().mcp_servers_via_initialize(true);
        if claude_code_agent_testkit::cli::tested_cli_version()
            == claude_code_agent_testkit::PINNED_CLI_VERSION
        {
            round_trip_with(&h, config, options).await;
        } else {
            // CLI 2.1.302 ignores `initialize.mcpServers` (found by
            // scripts/test-cli-range): the model is told the tool does not
            // exist. The pinned CLI runs it (above).
            let options = options
                .mcp_server_config("calc", config)
                .allowed_tools(["mcp__calc__add", "mcp__calc__divide"])
                .max_turns(4);
            let (messages, error) = drain(query("What is 2+3, and 1/0?", options)).await;
            assert!(error.is_none(), "{error:?}");
            let results = tool_results(&messages);
            assert!(!results.is_empty(), "{messages:#?}");
            let first = result_text(&results[0]);
            assert!(
                first == "5" || first.contains("No such tool available"),
                "{first}"
            );
        }
        h.finish().await;
    })
    .await
}

/// Over Streamable HTTP: the calculator needs the `http-server` feature
/// (`scripts/test` turns it on).
#[cfg(feature = "http-server")]
mod over_http {
    use super::*;

    /// The model adds, divides by zero, then repeats both tool results.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cli_uses_the_calculator_over_streamable_http() {
        with_timeout(async {
            let h = Harness::start(script()).await;
            let (calc, url) = http_calculator(&[]);
            round_trip(&h, McpServerConfig::http(url)).await;
            drop(calc);
            h.finish().await;
        })
        .await
    }
}
