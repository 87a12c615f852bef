//! The typed MCP methods of [`McpClient`].

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, PoisonError};

use futures::future::Either;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::answer::Answer;
use super::input::{self, MAX_INPUT_ROUNDS};
use super::options::RequestOptions;
use super::transport::SendOptions;
use super::{Error, McpClient, headers};
use crate::types::skills::{GetSkillResult, ListSkillsResult, SkillEntry};
use crate::types::{
    CallToolResult, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, Prompt, ReadResourceResult, Resource, ResourceTemplate,
    ToolInfo,
};

/// Pages followed at most by the `list_*` methods (a guard against a
/// server whose cursors never end).
pub const MAX_PAGES: usize = 10_000;

fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, Error> {
    Answer::Value(value).decode(method)
}

/// Params built as an object, as a map.
fn into_map(params: Value) -> Map<String, Value> {
    match params {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn cursor_params(cursor: Option<&str>) -> Option<Value> {
    cursor.map(|c| json!({"cursor": c}))
}

impl McpClient {
    /// Checks that the server answers: `ping`, or, at the stateless
    /// 2026-07-28 revision (which has no `ping`), `server/discover`.
    pub async fn ping(&self) -> Result<(), Error> {
        if self.protocol_version() == crate::types::STATELESS_PROTOCOL_VERSION {
            return self.send_request("server/discover", None).await.map(drop);
        }
        self.send_request("ping", None).await.map(drop)
    }

    /// One page of `tools/list`.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<ListToolsResult, Error> {
        let result = self
            .send_request("tools/list", cursor_params(cursor))
            .await?;
        let page: ListToolsResult = decode("tools/list", result)?;
        self.inner.note_tools(&page.tools);
        Ok(page)
    }

    /// Every tool, following `nextCursor` to the end.
    ///
    /// Over HTTP, a tool whose `x-mcp-header` annotations break the rules
    /// (an empty or invalid header name, one given twice, one on a property
    /// that is no string, integer or boolean reached through `properties`
    /// alone) is left out, as the specification requires: its calls could
    /// not mirror their arguments.
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, Error> {
        let mut tools = self
            .collect_pages("tools/list", |p: ListToolsResult| (p.tools, p.next_cursor))
            .await?;
        // Which calls may be sent again (`RetryPolicy`).
        self.inner.note_tools(&tools);
        // A fresh listing also refreshes the header annotations.
        if self.inner.transport.mirrors_header_params() {
            tools.retain(|tool| {
                let invalid = crate::transport::mcp_headers::invalid_annotation(&tool.input_schema);
                if let Some(why) = &invalid {
                    tracing::warn!(tool = %tool.name, %why, "MCP client: leaving out a tool with invalid x-mcp-header annotations");
                }
                invalid.is_none()
            });
            self.cache_header_maps(&tools);
        }
        Ok(tools)
    }

    /// `tools/call`: calls a tool with JSON arguments (an object).
    ///
    /// A tool failure is a result with `is_error` set; an `Err` is a
    /// protocol failure (unknown tool, bad params) or a transport one.
    ///
    /// At the stateless revision a tool may ask for input before it
    /// answers (an `input_required` result): the client answers through
    /// its elicitation, sampling and roots handlers
    /// ([`ClientOptions`](super::ClientOptions)) and calls again with the
    /// answers, up to [`MAX_INPUT_ROUNDS`] times; what comes back here is
    /// the final result. Input no handler answers fails the call
    /// ([`ErrorKind::Refused`](super::ErrorKind::Refused)).
    ///
    /// An `async fn` in all but name: nothing happens until the future is
    /// polled. (It is written as a function returning a future so that an
    /// in-process call's future stays a few words long.)
    pub fn call_tool<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send + 'a {
        self.call_tool_with(name, arguments, RequestOptions::new())
    }

    /// [`call_tool`](Self::call_tool) with options (timeout, progress token, …).
    ///
    /// Over HTTP, arguments whose input-schema property carries
    /// `x-mcp-header` are mirrored into `Mcp-Param-<Name>` headers (the tool
    /// list is fetched once and cached for that); a value that is not plain
    /// visible ASCII travels base64-wrapped.
    pub fn call_tool_with<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        options: RequestOptions,
    ) -> impl Future<Output = Result<CallToolResult, Error>> + Send + 'a {
        if self.inner.can_call_direct(&options) {
            return Either::Left(self.inner.call_tool_direct(name, arguments, options));
        }
        // Boxed: the request's state is large, and only this path needs it.
        Either::Right(Box::pin(self.call_tool_request(name, arguments, options)))
    }

    /// `tools/call` as a JSON-RPC request (every transport but the direct
    /// in-process one).
    async fn call_tool_request(
        &self,
        name: &str,
        arguments: Value,
        mut options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        if self.inner.transport.mirrors_header_params() {
            // Boxed: its future (it may list the tools) is larger than the
            // rest of the call's, and would be copied into every call.
            let params = Box::pin(self.header_params(name, &arguments)).await?;
            let mut send = SendOptions::new();
            for (k, v) in params {
                send = send.header_param(k, v);
            }
            send.header_params.append(&mut options.send.header_params);
            options.send = send;
        }
        let params = json!({"name": name, "arguments": arguments});
        if !self.inner.is_stateless() {
            return self
                .inner
                .request_answer("tools/call", Some(params), options)
                .await?
                .decode("tools/call");
        }
        let mut params = into_map(params);
        for _ in 0..=MAX_INPUT_ROUNDS {
            let result: CallToolResult = self
                .inner
                .request_answer(
                    "tools/call",
                    Some(Value::Object(params.clone())),
                    options.clone(),
                )
                .await?
                .decode("tools/call")?;
            if !result.is_input_required() {
                return Ok(result);
            }
            params = self
                .answer_input("tools/call", params, &result.into_value())
                .await?;
        }
        Err(input::too_many_rounds("tools/call"))
    }

    /// `method` with `params`, its `input_required` rounds (stateless
    /// revision) answered through the client's handlers: the final result.
    async fn request_answering(&self, method: &str, params: Value) -> Result<Value, Error> {
        if !self.inner.is_stateless() {
            return self.send_request(method, Some(params)).await;
        }
        let mut params = into_map(params);
        for _ in 0..=MAX_INPUT_ROUNDS {
            let result = self
                .send_request(method, Some(Value::Object(params.clone())))
                .await?;
            if !result.as_object().is_some_and(input::is_asking) {
                return Ok(result);
            }
            params = self.answer_input(method, params, &result).await?;
        }
        Err(input::too_many_rounds(method))
    }

    /// The params of the retry of a request whose `result` asked for input.
    async fn answer_input(
        &self,
        method: &str,
        params: Map<String, Value>,
        result: &Value,
    ) -> Result<Map<String, Value>, Error> {
        let asked = input::asked(method, result).unwrap_or_else(|| {
            Err(Error::invalid_response(format!(
                "{method}: no input_required result"
            )))
        })?;
        let answers = input::answer(&self.inner.options, method, &asked).await?;
        Ok(input::retry(params, answers, asked))
    }

    /// One page of `resources/list`.
    pub async fn list_resources_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourcesResult, Error> {
        let result = self
            .send_request("resources/list", cursor_params(cursor))
            .await?;
        decode("resources/list", result)
    }

    /// Every resource, following `nextCursor` to the end.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.collect_pages("resources/list", |p: ListResourcesResult| {
            (p.resources, p.next_cursor)
        })
        .await
    }

    /// Every resource template, following `nextCursor` to the end.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.collect_pages(
            "resources/templates/list",
            |p: ListResourceTemplatesResult| (p.resource_templates, p.next_cursor),
        )
        .await
    }

    /// `resources/read` (its rounds of input answered, as for
    /// [`call_tool`](Self::call_tool)).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let result = self
            .request_answering("resources/read", json!({"uri": uri}))
            .await?;
        decode("resources/read", result)
    }

    /// Every prompt, following `nextCursor` to the end.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.collect_pages("prompts/list", |p: ListPromptsResult| {
            (p.prompts, p.next_cursor)
        })
        .await
    }

    /// `prompts/get` with string arguments (its rounds of input answered,
    /// as for [`call_tool`](Self::call_tool)).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, Error> {
        let mut params = json!({"name": name});
        if let Some(arguments) = arguments {
            params["arguments"] = Value::Object(arguments);
        }
        let result = self.request_answering("prompts/get", params).await?;
        decode("prompts/get", result)
    }

    /// `skills/list` (Skills extension, SEP-2640): every skill the server
    /// lists, following `nextCursor` to the end. Listing reads no skill's
    /// files: read them when the skill is loaded, with
    /// [`read_skill_file`](Self::read_skill_file).
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, Error> {
        self.collect_pages("skills/list", |p: ListSkillsResult| {
            (p.skills, p.next_cursor)
        })
        .await
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`,
    /// listed or not (an error when the server serves no such skill).
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, Error> {
        let result = self
            .send_request("skills/get", Some(json!({"uri": uri})))
            .await?;
        decode("skills/get", result).map(|r: GetSkillResult| r.skill)
    }

    /// Reads the file at `uri` of `skill` (`resources/read`) and returns
    /// its bytes only when they are what the entry lists: its size, its
    /// digest, and for the skill's `SKILL.md` its frontmatter. Anything
    /// else fails ([`ErrorKind::InvalidResponse`](super::ErrorKind::InvalidResponse),
    /// the [`SkillMismatch`](crate::types::skills::SkillMismatch) as its
    /// source): content that does not verify is not to be used, and the
    /// skill not loaded.
    pub async fn read_skill_file(&self, skill: &SkillEntry, uri: &str) -> Result<Vec<u8>, Error> {
        let read = self.read_resource(uri).await?;
        let contents = read.contents.into_iter().find(|c| c.uri == uri);
        let bytes = match contents {
            Some(c) => match (c.text, c.blob) {
                (Some(text), _) => text.into_bytes(),
                (None, Some(blob)) => crate::transport::mcp_headers::base64_decode(&blob)
                    .ok_or_else(|| {
                        Error::invalid_response(format!("{uri}: a blob that is not base64"))
                    })?,
                (None, None) => Vec::new(),
            },
            None => {
                return Err(Error::invalid_response(format!(
                    "resources/read of {uri} gave no contents for it"
                )));
            }
        };
        skill.verify(uri, &bytes).map_err(|mismatch| {
            Error::invalid_response(format!("skill file not used: {mismatch}"))
                .with_source(mismatch)
        })?;
        Ok(bytes)
    }

    /// `logging/setLevel`: the lowest level of `notifications/message` wanted.
    pub async fn set_log_level(&self, level: crate::LogLevel) -> Result<(), Error> {
        self.send_request("logging/setLevel", Some(json!({"level": level.as_str()})))
            .await
            .map(drop)
    }

    async fn collect_pages<P, T>(
        &self,
        method: &str,
        split: impl Fn(P) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, Error>
    where
        P: DeserializeOwned,
    {
        let mut all = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let result = self
                .send_request(method, cursor_params(cursor.as_deref()))
                .await?;
            let (items, next) = split(decode(method, result)?);
            all.extend(items);
            match next {
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Error::invalid_response(format!(
                        "{method}: the server repeated the cursor {next:?}"
                    )));
                }
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(Error::invalid_response(format!(
            "{method}: more than {MAX_PAGES} pages"
        )))
    }

    fn cache_header_maps(&self, tools: &[ToolInfo]) {
        let maps = Arc::new(headers::tool_header_maps(tools));
        *self
            .inner
            .header_maps
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(maps);
    }

    async fn header_params(
        &self,
        tool: &str,
        arguments: &Value,
    ) -> Result<Vec<(String, String)>, Error> {
        let cached = self
            .inner
            .header_maps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let maps: Arc<HashMap<String, crate::transport::mcp_headers::ParamHeaders>> = match cached {
            Some(maps) => maps,
            None => {
                self.list_tools().await?;
                self.inner
                    .header_maps
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
                    .unwrap_or_default()
            }
        };
        match maps.get(tool) {
            Some(map) => Ok(headers::header_params(map, arguments)),
            None => Ok(Vec::new()),
        }
    }
}
