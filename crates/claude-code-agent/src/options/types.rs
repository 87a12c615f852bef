//! The value types of [`Options`](super::Options): system prompt, setting
//! sources, thinking, skills, sandbox, plugins.

use std::path::PathBuf;

use serde_json::Value;

use crate::protocol::ThinkingDisplay;
use crate::wire::wire_struct;

/// The system prompt the CLI runs with.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub enum SystemPrompt {
    /// No system prompt beyond the CLI's one identity line (`--system-prompt ""`),
    /// as the official SDKs do by default.
    #[default]
    Empty,
    /// This text replaces the system prompt.
    Text(String),
    /// Claude Code's full default prompt, optionally with text appended.
    Preset {
        /// Appended to the preset (`--append-system-prompt`).
        append: Option<String>,
    },
    /// The system prompt is read by the CLI from this file
    /// (`--system-prompt-file`; relative to the CLI's working directory).
    File(PathBuf),
    /// The system prompt as blocks (`initialize.systemPrompt`). A block
    /// equal to [`SYSTEM_PROMPT_DYNAMIC_BOUNDARY`] splits what may be
    /// cached across sessions (before it) from what changes (after it).
    Blocks(Vec<String>),
}

/// The marker block of [`SystemPrompt::Blocks`] between the cacheable
/// part of a system prompt and the per-session part (the TypeScript SDK's
/// `SYSTEM_PROMPT_DYNAMIC_BOUNDARY`).
pub const SYSTEM_PROMPT_DYNAMIC_BOUNDARY: &str = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__";

/// How the built-in `AskUserQuestion` tool asks
/// ([`Options::ask_user_question`](super::Options::ask_user_question); the
/// TypeScript SDK's `toolConfig.askUserQuestion`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AskUserQuestionConfig {
    /// How option previews are written (`markdown` or `html`).
    pub preview_format: Option<String>,
    /// Questions with more options and multi-select.
    pub extended_questions: bool,
    /// Options need no description.
    pub optional_descriptions: bool,
}

impl AskUserQuestionConfig {
    /// The CLI's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the preview format.
    pub fn preview_format(mut self, format: impl Into<String>) -> Self {
        self.preview_format = Some(format.into());
        self
    }

    /// Turns extended questions on or off.
    pub fn extended_questions(mut self, yes: bool) -> Self {
        self.extended_questions = yes;
        self
    }

    /// Makes option descriptions optional, or not.
    pub fn optional_descriptions(mut self, yes: bool) -> Self {
        self.optional_descriptions = yes;
        self
    }
}

/// The Claude Code CLI's own OpenTelemetry traces
/// ([`Options::cli_telemetry`](super::Options::cli_telemetry)): the
/// environment that makes the CLI export, over OTLP, a span for each
/// interaction (`claude_code.interaction`), model request
/// (`claude_code.llm_request`) and tool call (`claude_code.tool`)
/// (docs/observability.md).
///
/// It sets `CLAUDE_CODE_ENABLE_TELEMETRY=1`,
/// `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1` and `OTEL_TRACES_EXPORTER=otlp`,
/// and what is set here; the CLI reads the other standard
/// `OTEL_EXPORTER_OTLP_*` variables (`OTEL_EXPORTER_OTLP_HEADERS`, the
/// traces' own endpoint, certificates) from the environment it inherits. A
/// variable set with [`Options::env`](super::Options::env) or removed with
/// [`Options::env_remove`](super::Options::env_remove) wins over these.
///
/// ```
/// use claude_code_agent::{CliTelemetry, Options};
///
/// // To the collector the inherited OTEL_EXPORTER_OTLP_* variables name:
/// let options = Options::new().cli_telemetry(CliTelemetry::traces());
/// // To a local collector (OTLP over HTTP, protobuf):
/// let options = Options::new()
///     .cli_telemetry(CliTelemetry::traces().endpoint("http://127.0.0.1:4318"));
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CliTelemetry {
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`: the collector's base URL (the CLI adds
    /// `/v1/traces` for HTTP). `None`: as inherited.
    pub endpoint: Option<String>,
    /// `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`, `http/json` or
    /// `grpc`. `None`: as inherited, or `http/protobuf` with an
    /// [`endpoint`](Self::endpoint()).
    pub protocol: Option<String>,
    /// Tools' arguments in the spans: the CLI's (`OTEL_LOG_TOOL_DETAILS=1`)
    /// and the SDK's own tool spans (`gen_ai.tool.call.arguments`). Off by
    /// default: arguments may hold what a trace backend should not keep.
    pub tool_details: bool,
}

impl CliTelemetry {
    /// Traces over OTLP, to the endpoint the inherited environment names
    /// (or the CLI's default, `http://localhost:4318` for HTTP).
    pub fn traces() -> Self {
        Self::default()
    }

    /// Sends them to `url`, the collector's base URL
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`), with `http/protobuf` unless
    /// [`protocol`](Self::protocol()) says otherwise.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// The OTLP protocol (`OTEL_EXPORTER_OTLP_PROTOCOL`): `http/protobuf`,
    /// `http/json` or `grpc`.
    pub fn protocol(mut self, protocol: impl Into<String>) -> Self {
        self.protocol = Some(protocol.into());
        self
    }

    /// Puts tools' arguments in the spans, or not (see
    /// [`tool_details`](Self::tool_details())).
    pub fn tool_details(mut self, yes: bool) -> Self {
        self.tool_details = yes;
        self
    }

    /// The variables to set for the CLI.
    pub(crate) fn vars(&self) -> Vec<(&'static str, String)> {
        let mut vars = vec![
            ("CLAUDE_CODE_ENABLE_TELEMETRY", "1".to_owned()),
            ("CLAUDE_CODE_ENHANCED_TELEMETRY_BETA", "1".to_owned()),
            ("OTEL_TRACES_EXPORTER", "otlp".to_owned()),
        ];
        if let Some(endpoint) = &self.endpoint {
            vars.push(("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.clone()));
        }
        let protocol = match (&self.protocol, &self.endpoint) {
            (Some(protocol), _) => Some(protocol.clone()),
            (None, Some(_)) => Some("http/protobuf".to_owned()),
            (None, None) => None,
        };
        if let Some(protocol) = protocol {
            vars.push(("OTEL_EXPORTER_OTLP_PROTOCOL", protocol));
        }
        if self.tool_details {
            vars.push(("OTEL_LOG_TOOL_DETAILS", "1".to_owned()));
        }
        vars
    }
}

/// Which settings files the CLI loads (`--setting-sources`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettingSource {
    /// The user's settings (`~/.claude/settings.json`).
    User,
    /// The project's shared settings (`.claude/settings.json`).
    Project,
    /// The project's local settings (`.claude/settings.local.json`).
    Local,
}

impl SettingSource {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }
}

/// Extended thinking (`--thinking`, `--max-thinking-tokens`,
/// `--thinking-display`). Takes precedence over
/// [`Options::max_thinking_tokens`](super::Options::max_thinking_tokens).
///
/// The CLI applies it only to models that take these settings: on its
/// default model (an adaptive-only one) they are ignored, so pin a model
/// such as `claude-sonnet-4-5` to see them act.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Thinking {
    /// The model decides when and how much to think (`--thinking=adaptive`).
    Adaptive {
        /// How thinking is shown.
        display: Option<ThinkingDisplay>,
    },
    /// A fixed budget (`--max-thinking-tokens=N`); without a budget, like
    /// `Adaptive` (as the TypeScript SDK does).
    Enabled {
        /// The most tokens to think with.
        budget_tokens: Option<u64>,
        /// How thinking is shown.
        display: Option<ThinkingDisplay>,
    },
    /// No extended thinking (`--thinking=disabled`).
    Disabled,
}

impl Thinking {
    /// Adaptive thinking, shown as the CLI defaults.
    pub fn adaptive() -> Self {
        Self::Adaptive { display: None }
    }

    /// A fixed thinking budget, in tokens.
    pub fn budget(tokens: u64) -> Self {
        Self::Enabled {
            budget_tokens: Some(tokens),
            display: None,
        }
    }

    /// Sets how thinking is shown (ignored for `Disabled`).
    pub fn display(self, how: ThinkingDisplay) -> Self {
        match self {
            Self::Adaptive { .. } => Self::Adaptive { display: Some(how) },
            Self::Enabled { budget_tokens, .. } => Self::Enabled {
                budget_tokens,
                display: Some(how),
            },
            Self::Disabled => Self::Disabled,
        }
    }
}

/// Which skills the model may use ([`Options::skills`](super::Options::skills)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Skills {
    /// Every skill the CLI finds (allows the `Skill` tool).
    All,
    /// Only these, by name (allows `Skill(<name>)` for each and offers only
    /// them to the model).
    Named(Vec<String>),
}

/// A plugin to load ([`Options::plugin`](super::Options::plugin)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plugin {
    /// The plugin's directory.
    pub path: PathBuf,
    /// Load its skills and commands but not its MCP servers.
    pub skip_mcp_discovery: bool,
}

impl Plugin {
    /// A local plugin directory (`--plugin-dir`).
    pub fn local(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            skip_mcp_discovery: false,
        }
    }

    /// Leaves its MCP servers out (`--plugin-dir-no-mcp`).
    pub fn without_mcp(mut self) -> Self {
        self.skip_mcp_discovery = true;
        self
    }

    /// The TypeScript `SdkPluginConfig` form:
    /// `{"type":"local","path":…,"skipMcpDiscovery":true}`.
    pub(crate) fn to_wire(&self) -> serde_json::Value {
        let mut plugin = serde_json::Map::new();
        plugin.insert("type".into(), "local".into());
        plugin.insert("path".into(), self.path.to_string_lossy().into());
        if self.skip_mcp_discovery {
            plugin.insert("skipMcpDiscovery".into(), true.into());
        }
        serde_json::Value::Object(plugin)
    }
}

wire_struct! {
    /// Sandboxing of the commands the CLI runs (the `sandbox` block of the
    /// settings). Only the common keys are typed; set any other (`network`,
    /// `filesystem`, `credentials`, …, as in the CLI's settings schema) in
    /// `extra` or the typed `Value` fields.
    ///
    /// When `enabled` is set and `fail_if_unavailable` is not,
    /// [`Options::sandbox`](super::Options::sandbox) sets it to `true`, as
    /// the TypeScript SDK does: without it, a CLI that cannot sandbox (no
    /// `bubblewrap` on Linux) runs commands unsandboxed with only a warning.
    pub struct SandboxSettings {
        /// Sandbox commands.
        opt enabled: bool = "enabled",
        /// Fail (an error result, exit 1) rather than run unsandboxed.
        opt fail_if_unavailable: bool = "failIfUnavailable",
        /// Allow Bash without asking when it runs sandboxed.
        opt auto_allow_bash_if_sandboxed: bool = "autoAllowBashIfSandboxed",
        /// Let the model ask to run a command outside the sandbox.
        opt allow_unsandboxed_commands: bool = "allowUnsandboxedCommands",
        /// Commands that always run outside the sandbox.
        opt excluded_commands: Vec<String> = "excludedCommands",
        /// Network rules (`allowedDomains`, `allowUnixSockets`, …).
        opt network: Value = "network",
        /// File system rules (`allowWrite`, `denyRead`, …).
        opt filesystem: Value = "filesystem",
        /// Ignore these violations.
        opt ignore_violations: Value = "ignoreViolations",
        /// A weaker sandbox that works inside containers.
        opt enable_weaker_nested_sandbox: bool = "enableWeakerNestedSandbox",
    }
}

impl SandboxSettings {
    /// Sandboxing on.
    pub fn enabled() -> Self {
        Self {
            enabled: Some(true),
            ..Self::default()
        }
    }
}
