//! The SDK's `tracing` spans — a session, its turns, each request the CLI
//! sends, each in-process tool call — and, with feature `opentelemetry`,
//! the session span's W3C trace context for the CLI (`TRACEPARENT`,
//! `TRACESTATE`), so that the CLI's own spans join the trace
//! (docs/observability.md lists the spans and their fields).
//!
//! Every span is at level INFO. With no subscriber, or one that filters
//! them out, making one costs its callsite's interest check: its fields
//! are not computed ([`tracing::span!`] evaluates them only for an enabled
//! span), and the outcome is recorded only on an enabled one. Span fields
//! follow OpenTelemetry's GenAI and MCP semantic conventions where they
//! fit (`gen_ai.*`, `mcp.*`, `error.type`; `otel.status_code` sets an
//! OpenTelemetry span's status). No span holds a secret: no environment,
//! no prompt, and a tool's arguments only when asked
//! ([`CliTelemetry::tool_details`](crate::CliTelemetry::tool_details())).

use serde_json::Value;
use tracing::Span;
use tracing::field::{Empty, display};

use crate::mcp::__private::ToolCallReply;
use crate::message::ResultMessage;

/// A session: from the CLI's start to the end of the session.
pub(crate) fn session(parent: &Span, model: Option<&str>) -> Span {
    tracing::info_span!(
        parent: parent,
        "claude_code_agent.session",
        "gen_ai.provider.name" = "anthropic",
        "gen_ai.request.model" = model,
        "gen_ai.conversation.id" = Empty,
        "process.pid" = Empty,
        "claude_code.version" = Empty,
    )
}

/// One turn: a user message written, until the `result` that answers it.
pub(crate) fn turn(session: &Span) -> Span {
    tracing::info_span!(
        parent: session,
        "claude_code_agent.turn",
        "gen_ai.operation.name" = "invoke_agent",
        "gen_ai.agent.name" = "claude-code",
        "gen_ai.conversation.id" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cache_read.input_tokens" = Empty,
        "gen_ai.usage.cache_creation.input_tokens" = Empty,
        "claude_code.cost_usd" = Empty,
        "claude_code.num_turns" = Empty,
        "claude_code.result" = Empty,
        "error.type" = Empty,
        "otel.status_code" = Empty,
    )
}

/// One request of the CLI other than a tool call: a permission question,
/// a hook, an MCP message, an elicitation, a dialog.
pub(crate) fn control(session: &Span, subtype: &str, request_id: &str) -> Span {
    tracing::info_span!(
        parent: session,
        "claude_code_agent.control_request",
        "control.subtype" = subtype,
        "control.request_id" = request_id,
        "gen_ai.tool.name" = Empty,
        "hook.callback_id" = Empty,
        "mcp.server.name" = Empty,
        "mcp.method.name" = Empty,
        "permission.behavior" = Empty,
        outcome = Empty,
        "error.type" = Empty,
        "otel.status_code" = Empty,
    )
}

/// What a tool call's span says of the call.
pub(crate) struct ToolCallFields<'a> {
    pub(crate) server: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) request_id: &'a str,
    /// Its params' `_meta`: the model's `tool_use` id.
    pub(crate) meta: Option<&'a serde_json::Map<String, Value>>,
    /// Its arguments, recorded only when the user asked for tool details.
    pub(crate) arguments: Option<&'a Value>,
}

/// One in-process tool call, whoever serves it.
pub(crate) fn tool(session: &Span, call: ToolCallFields<'_>) -> Span {
    tracing::info_span!(
        parent: session,
        "claude_code_agent.tool",
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = call.tool,
        "gen_ai.tool.call.id" = call
            .meta
            .and_then(|m| m.get("claudecode/toolUseId"))
            .and_then(serde_json::Value::as_str),
        "gen_ai.tool.call.arguments" = call.arguments.map(display),
        "mcp.server.name" = call.server,
        "mcp.method.name" = "tools/call",
        "control.request_id" = call.request_id,
        outcome = Empty,
        "error.type" = Empty,
        "otel.status_code" = Empty,
    )
}

/// Records on a turn's span what its `result` says.
pub(crate) fn record_result(turn: &Span, result: &ResultMessage) {
    if turn.is_disabled() {
        return;
    }
    if let Some(id) = &result.session_id {
        turn.record("gen_ai.conversation.id", id.as_str());
    }
    if let Some(usage) = &result.usage {
        let fields = [
            ("gen_ai.usage.input_tokens", usage.input_tokens),
            ("gen_ai.usage.output_tokens", usage.output_tokens),
            (
                "gen_ai.usage.cache_read.input_tokens",
                usage.cache_read_input_tokens,
            ),
            (
                "gen_ai.usage.cache_creation.input_tokens",
                usage.cache_creation_input_tokens,
            ),
        ];
        for (field, value) in fields {
            if let Some(value) = value {
                turn.record(field, value);
            }
        }
    }
    if let Some(cost) = result.total_cost_usd {
        turn.record("claude_code.cost_usd", cost);
    }
    if let Some(n) = result.num_turns {
        turn.record("claude_code.num_turns", n);
    }
    turn.record("claude_code.result", display(&result.subtype));
    if result.is_error {
        turn.record("error.type", display(&result.subtype));
        turn.record("otel.status_code", "ERROR");
    }
}

/// How the answer to one CLI request came out, for its span.
pub(crate) enum Outcome<'a> {
    /// A tool call of one of our own servers, answered.
    ToolCall(&'a ToolCallReply),
    /// Any other request, answered with this payload.
    Answered(&'a Value),
    /// A control error.
    Failed,
    /// The handler panicked.
    Panicked,
    /// The CLI withdrew the request, or the session ended, first.
    Withdrawn,
}

/// Records `outcome` on a request's span (a tool call's or a control
/// request's).
pub(crate) fn record_outcome(span: &Span, outcome: Outcome<'_>) {
    if span.is_disabled() {
        return;
    }
    let error = |span: &Span, outcome: &str, kind: &str| {
        span.record("outcome", outcome);
        span.record("error.type", kind);
        span.record("otel.status_code", "ERROR");
    };
    match outcome {
        Outcome::ToolCall(reply) => match reply.answer() {
            Ok(result) if result.is_error => error(span, "tool_error", "tool_error"),
            Ok(_) => {
                span.record("outcome", "ok");
            }
            Err(e) => error(span, "error", &e.code.to_string()),
        },
        Outcome::Answered(payload) => {
            // An MCP message's JSON-RPC reply, or a permission decision.
            let reply = payload.get("mcp_response");
            if let Some(code) = reply
                .and_then(|r| r.get("error"))
                .and_then(|e| e.get("code"))
            {
                error(span, "error", &code.to_string());
            } else if reply
                .and_then(|r| r.get("result"))
                .and_then(|r| r.get("isError"))
                == Some(&Value::Bool(true))
            {
                error(span, "tool_error", "tool_error");
            } else {
                span.record("outcome", "ok");
            }
            if let Some(behavior) = payload.get("behavior").and_then(Value::as_str) {
                span.record("permission.behavior", behavior);
            }
        }
        Outcome::Failed => error(span, "error", "control_error"),
        Outcome::Panicked => error(span, "panic", "panic"),
        Outcome::Withdrawn => {
            span.record("outcome", "withdrawn");
        }
    }
}

/// A span's W3C trace context as text: the values of `TRACEPARENT` and
/// `TRACESTATE` for the CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct W3cContext {
    /// `00-<trace id>-<span id>-<flags>`.
    pub(crate) traceparent: String,
    /// The vendors' entries, if any.
    pub(crate) tracestate: Option<String>,
}

/// `span`'s OpenTelemetry context as W3C trace context, when it has one (an
/// OpenTelemetry layer of `tracing-opentelemetry` records it): the MCP
/// crate's, which its client sends in `_meta`. `None` without feature
/// `opentelemetry`.
#[cfg(feature = "opentelemetry")]
pub(crate) fn w3c_context(span: &Span) -> Option<W3cContext> {
    // The MCP crate's `current()`, with `span` the current one.
    let context = span.in_scope(claude_code_agent_mcp::trace_context::current)?;
    Some(W3cContext {
        traceparent: context.traceparent,
        tracestate: context.tracestate,
    })
}

/// See the feature `opentelemetry`'s version.
#[cfg(not(feature = "opentelemetry"))]
pub(crate) fn w3c_context(_span: &Span) -> Option<W3cContext> {
    None
}

#[cfg(all(test, feature = "opentelemetry"))]
mod tests {
    use super::*;

    #[test]
    fn without_an_opentelemetry_layer_there_is_no_context() {
        assert_eq!(w3c_context(&Span::none()), None);
        let _default = tracing::subscriber::set_default(tracing_subscriber::registry());
        let span = tracing::info_span!("no layer");
        assert_eq!(w3c_context(&span), None);
    }
}
