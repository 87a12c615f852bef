//! Resources and resource templates: a URI (or an RFC 6570 template), a
//! description and an async handler that reads the contents.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::context::Asking;
use super::outbound::ClientRequestError;
use super::session::Session;
use crate::types::{self, InputRequest, ResourceContents};

/// What a resource handler gets: the URI being read and, for a template,
/// the values of its variables.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ResourceRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// Template variables (`{id}` → its value, percent-decoded); empty for a
    /// plain resource.
    pub variables: HashMap<String, String>,
    /// The session the read arrived on, if any.
    pub session: Option<Session>,
    pub(crate) asking: Asking,
}

impl ResourceRequest {
    /// Asks the client for input while the resource is read, as a tool
    /// does with [`ToolContext::ask`](super::ToolContext::ask).
    pub async fn ask(&self, key: &str, request: InputRequest) -> Result<Value, ClientRequestError> {
        self.asking.ask(self.session.as_ref(), key, request).await
    }

    /// The value of template variable `name`.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.variables.get(name).map(String::as_str)
    }
}

/// What a resource handler may return: text (`String`, `&str`), bytes
/// (`Vec<u8>`, sent base64-encoded as a `blob`), one [`ResourceContents`] or
/// several, or a `Result` of any of these whose error becomes a JSON-RPC
/// error (`-32603`) naming the resource.
pub trait IntoContents: Send {
    /// Converts into contents for `uri`, of type `mime_type` when the value
    /// does not say.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, String>;
}

fn with_mime(c: ResourceContents, mime: Option<&str>) -> ResourceContents {
    match mime {
        Some(m) if c.mime_type.is_none() => c.with_mime_type(m),
        _ => c,
    }
}

impl IntoContents for String {
    fn into_contents(self, uri: &str, mime: Option<&str>) -> Result<Vec<ResourceContents>, String> {
        Ok(vec![with_mime(ResourceContents::text(uri, self), mime)])
    }
}

impl IntoContents for &'static str {
    fn into_contents(self, uri: &str, mime: Option<&str>) -> Result<Vec<ResourceContents>, String> {
        self.to_owned().into_contents(uri, mime)
    }
}

impl IntoContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime: Option<&str>) -> Result<Vec<ResourceContents>, String> {
        Ok(vec![with_mime(
            ResourceContents::blob(uri, crate::transport::mcp_headers::base64(&self)),
            mime,
        )])
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self, _: &str, mime: Option<&str>) -> Result<Vec<ResourceContents>, String> {
        Ok(vec![with_mime(self, mime)])
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, String> {
        Ok(self)
    }
}

impl<T: IntoContents, E: fmt::Display + Send> IntoContents for Result<T, E> {
    fn into_contents(self, uri: &str, mime: Option<&str>) -> Result<Vec<ResourceContents>, String> {
        self.map_err(|e| e.to_string())?.into_contents(uri, mime)
    }
}

pub(crate) type ReadHandler = dyn Fn(ResourceRequest) -> BoxFuture<'static, Result<Vec<ResourceContents>, String>>
    + Send
    + Sync;

fn erase<F, Fut, R>(f: F) -> Arc<ReadHandler>
where
    F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoContents + 'static,
{
    Arc::new(move |req: ResourceRequest| {
        let uri = req.uri.clone();
        f(req).map(move |r| r.into_contents(&uri, None)).boxed()
    })
}

/// A resource with a fixed URI (`resources/list`, `resources/read`).
///
/// ```
/// use claude_code_agent_mcp::server::{Resource, ResourceRequest};
///
/// let readme = Resource::new("file:///readme", "readme", |_req: ResourceRequest| async {
///     "# Hello"
/// })
/// .mime_type("text/markdown")
/// .description("The project's README");
/// assert_eq!(readme.info().uri, "file:///readme");
/// ```
#[derive(Clone)]
pub struct Resource {
    pub(crate) info: types::Resource,
    pub(crate) handler: Arc<ReadHandler>,
}

impl Resource {
    /// A resource at `uri` named `name`, read by `handler`.
    pub fn new<F, Fut, R>(uri: impl Into<String>, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoContents + 'static,
    {
        let info =
            serde_json::from_value(serde_json::json!({"uri": uri.into(), "name": name.into()}))
                .expect("uri and name make a resource");
        Self {
            info,
            handler: erase(handler),
        }
    }

    /// An MCP Apps view (see [`types::apps`](crate::types::apps)): the
    /// HTML document at `uri` (a `ui://` URI), of type
    /// [`UI_MIME_TYPE`](crate::types::apps::UI_MIME_TYPE), which tools
    /// linked with [`Tool::ui`](crate::Tool::ui) are shown in. Its
    /// contents may carry `_meta.ui` (the view's CSP domains, permissions,
    /// border) in the [`ResourceContents`] the handler returns.
    ///
    /// ```
    /// use claude_code_agent_mcp::server::{Resource, ResourceRequest};
    ///
    /// let view = Resource::ui("ui://weather/view.html", "weather", |_: ResourceRequest| async {
    ///     "<!DOCTYPE html><html><body>…</body></html>"
    /// });
    /// assert_eq!(view.info().mime_type.as_deref(), Some("text/html;profile=mcp-app"));
    /// ```
    ///
    /// # Panics
    ///
    /// When `uri` does not start with `ui://`.
    pub fn ui<F, Fut, R>(uri: impl Into<String>, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoContents + 'static,
    {
        let uri = uri.into();
        assert!(
            uri.starts_with(crate::types::apps::UI_SCHEME),
            "an MCP Apps view's URI starts with ui://, not {uri:?}"
        );
        Self::new(uri, name, handler).mime_type(crate::types::apps::UI_MIME_TYPE)
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Sets the MIME type (also applied to text or bytes the handler returns).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.info.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes.
    pub fn size(mut self, bytes: u64) -> Self {
        self.info.size = Some(bytes);
        self
    }

    /// Sets `annotations` (`audience`, `priority`, `lastModified`).
    pub fn annotations(mut self, annotations: Map<String, Value>) -> Self {
        self.info
            .extra
            .insert("annotations".into(), Value::Object(annotations));
        self
    }

    /// The resource as `resources/list` describes it.
    pub fn info(&self) -> &types::Resource {
        &self.info
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// A family of resources named by an RFC 6570 URI template
/// (`resources/templates/list`; `resources/read` of a matching URI).
///
/// Level-1 expressions `{var}` match one non-empty run of characters
/// without `/`, `?` or `#`; `{+var}` (reserved expansion) matches any
/// non-empty run. Values are percent-decoded.
///
/// ```
/// use claude_code_agent_mcp::server::{ResourceRequest, ResourceTemplate};
///
/// let item = ResourceTemplate::new("test://template/{id}/data", "item", |req: ResourceRequest| async move {
///     format!("item {}", req.var("id").unwrap_or_default())
/// })
/// .mime_type("text/plain");
/// let vars = item.matches("test://template/42/data").unwrap();
/// assert_eq!(vars["id"], "42");
/// assert!(item.matches("test://template/42/other").is_none());
/// ```
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) info: types::ResourceTemplate,
    parts: Arc<[Part]>,
    pub(crate) handler: Arc<ReadHandler>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

impl ResourceTemplate {
    /// A template named `name`; `handler` reads the URIs it matches.
    pub fn new<F, Fut, R>(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        handler: F,
    ) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoContents + 'static,
    {
        let uri_template = uri_template.into();
        let parts = parse_template(&uri_template).into();
        let info = serde_json::from_value(
            serde_json::json!({"uriTemplate": uri_template, "name": name.into()}),
        )
        .expect("a template and a name make a resource template");
        Self {
            info,
            parts,
            handler: erase(handler),
        }
    }

    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Sets the MIME type of the resources it makes.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.info.mime_type = Some(mime_type.into());
        self
    }

    /// The template as `resources/templates/list` describes it.
    pub fn info(&self) -> &types::ResourceTemplate {
        &self.info
    }

    /// The variables if `uri` matches the template.
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        match_parts(&self.parts, uri, &mut vars).then_some(vars)
    }
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

fn parse_template(template: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        if open > 0 {
            parts.push(Part::Literal(rest[..open].to_owned()));
        }
        let expr = &rest[open + 1..close];
        let (reserved, name) = match expr.strip_prefix('+') {
            Some(name) => (true, name),
            None => (false, expr),
        };
        parts.push(Part::Var {
            name: name.to_owned(),
            reserved,
        });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest.to_owned()));
    }
    parts
}

/// Matches with backtracking over variable lengths (templates are short).
fn match_parts(parts: &[Part], uri: &str, vars: &mut HashMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(lit) => uri
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_parts(rest, tail, vars)),
        Part::Var { name, reserved } => {
            let stop = if *reserved {
                uri.len()
            } else {
                uri.find(['/', '?', '#']).unwrap_or(uri.len())
            };
            for end in (1..=stop).rev().filter(|&e| uri.is_char_boundary(e)) {
                if match_parts(rest, &uri[end..], vars) {
                    vars.insert(name.clone(), percent_decode(&uri[..end]));
                    return true;
                }
            }
            false
        }
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(template: &str) -> ResourceTemplate {
        ResourceTemplate::new(template, "t", |_r: ResourceRequest| async { "" })
    }

    #[test]
    fn level_one_and_reserved_templates_match() {
        let vars = t("test://template/{id}/data")
            .matches("test://template/a%20b/data")
            .unwrap();
        assert_eq!(vars["id"], "a b");
        assert!(
            t("test://template/{id}/data")
                .matches("test://template//data")
                .is_none()
        );
        assert!(
            t("test://template/{id}/data")
                .matches("test://template/a/b/data")
                .is_none()
        );
        let vars = t("file:///{+path}").matches("file:///a/b/c.txt").unwrap();
        assert_eq!(vars["path"], "a/b/c.txt");
        let vars = t("x://{a}-{b}").matches("x://1-2-3").unwrap();
        assert_eq!((vars["a"].as_str(), vars["b"].as_str()), ("1-2", "3"));
        assert!(t("x://fixed").matches("x://fixed").unwrap().is_empty());
    }
}
