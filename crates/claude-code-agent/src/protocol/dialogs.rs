//! The CLI asking the person at the SDK for something: an MCP server's
//! `elicitation` (forwarded `elicitation/create`), and a
//! `request_user_dialog` (a dialog of the CLI's own) — the requests and
//! their answers.

use serde_json::{Map, Value};

use super::hooks::ElicitationAction;
use crate::wire::{string_enum, wire_struct};

string_enum! {
    /// `mode` of an elicitation.
    pub enum ElicitationMode default Form {
        /// A form: `requested_schema` says which fields.
        "form" => Form,
        /// A URL to open (authorisation, payment, …); the server says when
        /// it is done with `system/elicitation_complete`.
        "url" => Url,
    }
}

wire_struct! {
    /// `elicitation`: an MCP server connected to the CLI asked for input
    /// (`elicitation/create`) and no `Elicitation` hook answered it.
    /// Answer with an [`ElicitationResponse`].
    pub struct ElicitationRequest tags { "subtype" = "elicitation" } {
        /// The MCP server asking.
        req mcp_server_name: String = "mcp_server_name",
        /// What to show the user.
        req message: String = "message",
        /// Form or URL (absent: form).
        opt mode: ElicitationMode = "mode",
        /// The URL to open (URL mode).
        opt url: String = "url",
        /// Ties a URL elicitation to its `system/elicitation_complete`.
        opt elicitation_id: String = "elicitation_id",
        /// JSON Schema of the answer's `content` (form mode).
        opt requested_schema: Map<String, Value> = "requested_schema",
        /// `requested_schema.properties`' keys in the server's order.
        opt property_order: Vec<String> = "property_order",
        /// Title from the server's `_meta["anthropic/permissionDisplay"]`.
        opt title: String = "title",
        /// Its short tool or server label.
        opt display_name: String = "display_name",
        /// Its subtitle.
        opt description: String = "description",
    }
}

wire_struct! {
    /// The answer to an [`ElicitationRequest`] (MCP's `ElicitResult`),
    /// which the CLI hands to the server.
    pub struct ElicitationResponse {
        /// Accept (with `content`), decline or cancel.
        req action: ElicitationAction = "action",
        /// The answer to the form (accept only).
        opt content: Map<String, Value> = "content",
    }
}

impl ElicitationResponse {
    /// Accepts, with the form's answers (`{}` for a URL elicitation).
    ///
    /// ```
    /// use claude_code_agent::protocol::ElicitationResponse;
    /// use serde_json::json;
    /// let answer = ElicitationResponse::accept(json!({"name": "Ada"}));
    /// assert_eq!(answer.to_value(), json!({"action": "accept", "content": {"name": "Ada"}}));
    /// ```
    pub fn accept(content: Value) -> Self {
        Self {
            action: ElicitationAction::Accept,
            content: match content {
                Value::Object(map) => Some(map),
                Value::Null => None,
                other => Some(Map::from_iter([("value".to_owned(), other)])),
            },
            ..Self::default()
        }
    }

    /// Declines: the user said no. What the SDK answers when there is no
    /// [`Options::on_elicitation`](crate::Options::on_elicitation), as the
    /// TypeScript SDK does.
    pub fn decline() -> Self {
        Self {
            action: ElicitationAction::Decline,
            ..Self::default()
        }
    }

    /// Cancels: the user dismissed the question.
    pub fn cancel() -> Self {
        Self {
            action: ElicitationAction::Cancel,
            ..Self::default()
        }
    }
}

wire_struct! {
    /// `request_user_dialog`: the CLI asks the host to show one of its
    /// dialogs and return the choice. Sent only for a kind the session
    /// declared in `initialize.supportedDialogKinds`
    /// ([`Options::on_user_dialog`](crate::Options::on_user_dialog)).
    /// Answer with a [`UserDialogResult`].
    pub struct UserDialogRequest tags { "subtype" = "request_user_dialog" } {
        /// Which dialog (`refusal_fallback_prompt`, …; open).
        req dialog_kind: String = "dialog_kind",
        /// Its data; the shape is the dialog kind's.
        req payload: Map<String, Value> = "payload",
        /// The tool call the dialog is about, if any.
        opt tool_use_id: String = "tool_use_id",
    }
}

/// The answer to a [`UserDialogRequest`]: `{"behavior":"completed","result":…}`
/// or `{"behavior":"cancelled"}` (the CLI then does what the dialog does by
/// default; the answer for a kind you cannot show).
///
/// ```
/// use claude_code_agent::protocol::UserDialogResult;
/// use serde_json::json;
/// let cancelled = serde_json::to_value(UserDialogResult::Cancelled).unwrap();
/// assert_eq!(cancelled, json!({"behavior": "cancelled"}));
/// let chosen = serde_json::to_value(UserDialogResult::Completed { result: json!("retry") }).unwrap();
/// assert_eq!(chosen, json!({"behavior": "completed", "result": "retry"}));
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "behavior", rename_all = "lowercase")]
#[non_exhaustive]
pub enum UserDialogResult {
    /// The user chose; `result`'s shape is the dialog kind's.
    Completed {
        /// The choice.
        result: Value,
    },
    /// Dismissed.
    Cancelled,
}
