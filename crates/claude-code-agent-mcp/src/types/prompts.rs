//! Prompts: `prompts/list` and `prompts/get`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Content;

/// A prompt as `prompts/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One argument of a [`Prompt`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptArgument {
    /// Programmatic name.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A message of a [`GetPromptResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// What the message says.
    pub content: Content,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `prompts/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListPromptsResult {
    /// One page of prompts.
    pub prompts: Vec<Prompt>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptResult {
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prompt_result_decodes_content_and_keeps_extra() {
        let v = json!({"description":"d","messages":[
            {"role":"user","content":{"type":"text","text":"hi"}},
            {"role":"assistant","content":{"type":"future","x":1}}],"_meta":{"k":2}});
        let r: GetPromptResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.messages[0].content.as_text(), Some("hi"));
        assert!(matches!(r.messages[1].content, Content::Unknown(_)));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        let l: ListPromptsResult = serde_json::from_value(json!({"prompts":[
            {"name":"p","arguments":[{"name":"a","required":true}]}]}))
        .unwrap();
        assert_eq!(l.prompts[0].arguments[0].required, Some(true));
    }
}
