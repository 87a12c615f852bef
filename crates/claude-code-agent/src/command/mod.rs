//! Turning [`Options`] into the CLI's arguments and environment
//! (docs/protocol.md §1).
//!
//! User-supplied values always use the `--flag=value` form: the CLI declares
//! some options with optional values, so `--resume -x` would read `-x` as a flag.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::options::{McpConfig, Options, Skills, SystemPrompt, Thinking};
use crate::protocol::McpServerConfig;
pub(crate) use crate::spawn::CliCommand;
use crate::telemetry::W3cContext;

/// The value of `CLAUDE_CODE_ENTRYPOINT`. The CLI switches on its SDK
/// behaviour only for the entry points it knows (`sdk-ts`, `sdk-py`,
/// `sdk-cli`); `sdk-cli` is the generic one.
pub(crate) const ENTRYPOINT: &str = "sdk-cli";

fn flag(args: &mut Vec<OsString>, name: &str, value: &str) {
    args.push(format!("--{name}={value}").into());
}

fn path_flag(args: &mut Vec<OsString>, name: &str, path: &Path) {
    let mut arg = OsString::from(format!("--{name}="));
    arg.push(path);
    args.push(arg);
}

fn invalid(message: String) -> Error {
    Error::InvalidOptions(message)
}

fn settings_error(
    path: Option<std::path::PathBuf>,
    source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> Error {
    Error::Settings {
        path,
        source: source.into(),
    }
}

/// Builds the command line for `options`, running `program`, with the
/// session's trace context, if it has one, for the CLI's spans.
pub(crate) fn build_for(
    options: &Options,
    program: OsString,
    trace: Option<&W3cContext>,
) -> Result<CliCommand> {
    let mut cmd = build_traced(options, trace)?;
    cmd.program = program;
    Ok(cmd)
}

/// Builds the command line for `options` (the program left empty).
#[cfg(test)]
pub(crate) fn build(options: &Options) -> Result<CliCommand> {
    build_traced(options, None)
}

/// [`build`] with a trace context for the CLI.
fn build_traced(options: &Options, trace: Option<&W3cContext>) -> Result<CliCommand> {
    let mut args: Vec<OsString> = [
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
    ]
    .iter()
    .map(OsString::from)
    .collect();

    match &options.system_prompt {
        SystemPrompt::Empty => flag(&mut args, "system-prompt", ""),
        SystemPrompt::Text(text) => flag(&mut args, "system-prompt", text),
        SystemPrompt::Preset { append: Some(text) } => {
            flag(&mut args, "append-system-prompt", text)
        }
        SystemPrompt::Preset { append: None } => {}
        SystemPrompt::File(path) => path_flag(&mut args, "system-prompt-file", path),
        // Sent in `initialize` (`Options::initialize_request`).
        SystemPrompt::Blocks(_) => {}
    }
    if let Some(tools) = &options.tools {
        flag(&mut args, "tools", &tools.join(","));
    }
    let (allowed_tools, setting_sources) = skills_defaults(options)?;
    if !allowed_tools.is_empty() {
        flag(&mut args, "allowedTools", &allowed_tools.join(","));
    }
    if !options.disallowed_tools.is_empty() {
        flag(
            &mut args,
            "disallowedTools",
            &options.disallowed_tools.join(","),
        );
    }
    thinking_flags(options, &mut args);
    if let Some(effort) = &options.effort {
        flag(&mut args, "effort", effort.as_str());
    }
    if let Some(n) = options.max_turns {
        flag(&mut args, "max-turns", &n.to_string());
    }
    if let Some(usd) = options.max_budget_usd {
        if !(usd.is_finite() && usd >= 0.0) {
            return Err(invalid(format!(
                "max_budget_usd must be a non-negative number, not {usd}"
            )));
        }
        flag(&mut args, "max-budget-usd", &usd.to_string());
    }
    if let Some(total) = options.task_budget {
        flag(&mut args, "task-budget", &total.to_string());
    }
    if let Some(model) = &options.model {
        flag(&mut args, "model", model);
    }
    if let Some(agent) = &options.main_agent {
        flag(&mut args, "agent", agent);
    }
    if !options.betas.is_empty() {
        flag(&mut args, "betas", &options.betas.join(","));
    }
    if let Some(schema) = &options.output_schema {
        flag(&mut args, "json-schema", &schema.to_string());
    }
    if let Some(file) = &options.debug_file {
        path_flag(&mut args, "debug-file", file);
    } else if options.debug {
        args.push("--debug".into());
    }
    if let Some(fallback) = &options.fallback_model {
        if options.model.as_ref() == Some(fallback) {
            return Err(invalid(format!(
                "fallback_model must differ from model (both are {fallback:?})"
            )));
        }
        flag(&mut args, "fallback-model", fallback);
    }
    match (&options.can_use_tool, &options.permission_prompt_tool) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "can_use_tool and permission_prompt_tool_name cannot be combined; use one".into(),
            ));
        }
        (Some(_), None) => flag(&mut args, "permission-prompt-tool", "stdio"),
        (None, Some(tool)) => flag(&mut args, "permission-prompt-tool", tool),
        (None, None) => {}
    }
    if let Some(who) = &options.permission_prompts {
        flag(&mut args, "permission-prompts", who);
    }
    if let Some(mode) = &options.permission_mode {
        flag(&mut args, "permission-mode", mode.as_str());
    }
    if options.allow_dangerously_skip_permissions {
        args.push("--allow-dangerously-skip-permissions".into());
    }
    session_flags(options, &mut args)?;
    if let Some(settings) = settings_value(options)? {
        flag(&mut args, "settings", &settings);
    }
    if let Some(managed) = &options.managed_settings {
        flag(&mut args, "managed-settings", managed);
    }
    if let Some(sources) = setting_sources {
        flag(&mut args, "setting-sources", &sources);
    }
    if let Some(root) = &options.project_config_root {
        path_flag(&mut args, "project-config-root", root);
    }
    for dir in &options.add_dirs {
        path_flag(&mut args, "add-dir", dir);
    }
    let plugins: &[crate::options::Plugin] = if options.plugins_via_initialize {
        &[]
    } else {
        &options.plugins
    };
    for plugin in plugins {
        let name = if plugin.skip_mcp_discovery {
            "plugin-dir-no-mcp"
        } else {
            "plugin-dir"
        };
        path_flag(&mut args, name, &plugin.path);
    }
    let servers_in_initialize = options.mcp_servers_via_initialize
        && matches!(options.mcp_config, Some(McpConfig::Servers(_)));
    if let Some(config) = mcp_config(options).filter(|_| !servers_in_initialize) {
        args.push("--mcp-config".into());
        args.push(config);
    }
    if servers_in_initialize || (options.plugins_via_initialize && !options.plugins.is_empty()) {
        args.push("--await-initialize".into());
    }
    if options.strict_mcp_config {
        args.push("--strict-mcp-config".into());
    }
    if options.include_partial_messages {
        args.push("--include-partial-messages".into());
    }
    if options.include_hook_events {
        args.push("--include-hook-events".into());
    }
    if options.session_store.is_some() {
        args.push("--session-mirror".into());
    }
    for (name, value) in &options.extra_args {
        let name = name.trim_start_matches('-');
        match value {
            Some(v) => args.push(format!("--{name}={v}").into()),
            None => args.push(format!("--{name}").into()),
        }
    }

    let mut seen = std::collections::HashSet::new();
    for server in &options.in_process_servers()? {
        if !seen.insert(server.name().to_owned()) {
            return Err(invalid(format!(
                "two in-process MCP servers are named {:?}; names must be unique",
                server.name()
            )));
        }
    }

    let (env, env_remove) = environment(options, trace);
    Ok(CliCommand {
        program: OsString::new(),
        args,
        env,
        env_remove,
        cwd: options.cwd.clone(),
    })
}

/// `--continue`, `--resume`, `--session-id`, `--fork-session`,
/// `--resume-session-at`, `--resume-drops-turn`, `--no-session-persistence`.
fn session_flags(options: &Options, args: &mut Vec<OsString>) -> Result<()> {
    if options.continue_conversation {
        args.push("--continue".into());
    }
    if let Some(id) = &options.resume {
        flag(args, "resume", id);
    }
    if let Some(id) = &options.session_id {
        flag(args, "session-id", id);
    }
    if options.fork_session {
        if options.resume.is_none() && !options.continue_conversation {
            return Err(invalid(
                "fork_session needs resume or continue_conversation".into(),
            ));
        }
        args.push("--fork-session".into());
    }
    if let Some(at) = &options.resume_session_at {
        if options.resume.is_none() {
            return Err(invalid("resume_session_at needs resume".into()));
        }
        flag(args, "resume-session-at", at);
    }
    if let Some(turn) = &options.resume_drops_turn {
        if options.resume_session_at.is_none() {
            return Err(invalid("resume_drops_turn needs resume_session_at".into()));
        }
        flag(args, "resume-drops-turn", turn);
    }
    if options.no_session_persistence {
        args.push("--no-session-persistence".into());
    }
    Ok(())
}

/// `thinking` as the TypeScript SDK maps it; else `max_thinking_tokens`.
fn thinking_flags(options: &Options, args: &mut Vec<OsString>) {
    match &options.thinking {
        Some(thinking) => {
            let display = match thinking {
                Thinking::Adaptive { display } => {
                    flag(args, "thinking", "adaptive");
                    display
                }
                Thinking::Enabled {
                    budget_tokens,
                    display,
                } => {
                    match budget_tokens {
                        Some(n) => flag(args, "max-thinking-tokens", &n.to_string()),
                        None => flag(args, "thinking", "adaptive"),
                    }
                    display
                }
                Thinking::Disabled => {
                    flag(args, "thinking", "disabled");
                    &None
                }
            };
            if let Some(display) = display {
                flag(args, "thinking-display", display.as_str());
            }
        }
        None => match options.max_thinking_tokens {
            Some(0) => flag(args, "thinking", "disabled"),
            Some(n) => flag(args, "max-thinking-tokens", &n.to_string()),
            None => {}
        },
    }
}

/// The allowed tools and setting sources once [`Options::skills`] is
/// applied (the Python SDK's `_apply_skills_defaults`).
fn skills_defaults(options: &Options) -> Result<(Vec<String>, Option<String>)> {
    let mut allowed = options.allowed_tools.clone();
    let mut sources = options.setting_sources_arg();
    let Some(skills) = &options.skills else {
        return Ok((allowed, sources));
    };
    let mut allow = |rule: String| {
        if !allowed.contains(&rule) {
            allowed.push(rule);
        }
    };
    match skills {
        Skills::All => allow("Skill".into()),
        Skills::Named(names) => {
            for name in names {
                check_skill_name(name)?;
                allow(format!("Skill({name})"));
            }
        }
    }
    if sources.is_none() {
        sources = Some("user,project".into());
    }
    Ok((allowed, sources))
}

/// Refuses skill names that cannot ride in a `Skill(<name>)` rule, with the
/// official SDKs' rules.
pub(crate) fn check_skill_name(name: &str) -> Result<()> {
    let why = if name.trim().is_empty() {
        Some("must not be empty")
    } else if name != name.trim() {
        Some("has leading or trailing whitespace, which can never match")
    } else if name
        .chars()
        .any(|c| matches!(c, '(' | ')' | ',' | '\u{feff}') || c.is_control())
    {
        Some("has a parenthesis, comma, control character or byte-order mark")
    } else if name == "*" {
        Some("is '*': use Skills::All to enable every skill")
    } else if name.ends_with(":*") || name.ends_with(" *") {
        Some("ends in a wildcard; list each skill by its exact name")
    } else if name.starts_with('/') {
        Some("starts with '/': give the skill's name, not the slash command")
    } else if name.contains("\\\\") || name.ends_with('\\') {
        Some("has backslashes the rule parser would collapse")
    } else {
        None
    };
    match why {
        Some(why) => Err(invalid(format!("skill name {name:?} {why}"))),
        None => Ok(()),
    }
}

/// The `--settings` value: the user's settings with the sandbox merged in.
fn settings_value(options: &Options) -> Result<Option<String>> {
    let Some(sandbox) = &options.sandbox else {
        return Ok(options.settings.clone());
    };
    let mut settings = match options.settings.as_deref().map(str::trim) {
        None => serde_json::Map::new(),
        Some(text) => {
            let (text, path) = if text.starts_with('{') {
                (text.to_owned(), None)
            } else {
                // A file, read as the CLI would: relative to its cwd.
                let path = match &options.cwd {
                    Some(cwd) => cwd.join(text),
                    None => text.into(),
                };
                match std::fs::read_to_string(&path) {
                    Ok(text) => (text, Some(path)),
                    Err(e) => return Err(settings_error(Some(path), e)),
                }
            };
            match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
                Ok(Value::Object(map)) => map,
                Ok(_) => return Err(settings_error(path, "the settings are not a JSON object")),
                Err(e) => return Err(settings_error(path, e)),
            }
        }
    };
    let mut sandbox = sandbox.clone();
    if sandbox.enabled == Some(true) && sandbox.fail_if_unavailable.is_none() {
        sandbox.fail_if_unavailable = Some(true);
    }
    settings.insert("sandbox".into(), serde_json::to_value(&sandbox)?);
    Ok(Some(Value::Object(settings).to_string()))
}

/// The `--mcp-config` value, if any.
fn mcp_config(options: &Options) -> Option<OsString> {
    match &options.mcp_config {
        None => None,
        Some(McpConfig::Path(path)) => Some(path.into()),
        Some(McpConfig::Json(value)) => Some(value.to_string().into()),
        Some(McpConfig::Servers(servers)) => {
            // In-process servers reach the CLI through `initialize`.
            let external: BTreeMap<_, _> = servers
                .iter()
                .filter(|(_, c)| !matches!(c, McpServerConfig::InProcess(_)))
                .collect();
            (!external.is_empty()).then(|| {
                serde_json::json!({ "mcpServers": external })
                    .to_string()
                    .into()
            })
        }
    }
}

/// The variables to set and to remove. The user's [`Options::env`] and
/// [`Options::env_remove`] apply in call order (the last one for a key
/// wins) over what the SDK sets; `env_clear` removes every inherited one.
///
/// `trace`, the session span's context, replaces an inherited
/// `TRACEPARENT` and `TRACESTATE` (an inherited `TRACESTATE` is removed
/// when the context has none: it belonged to the other parent), unless
/// the user's own variables name `TRACEPARENT`: then neither is touched
/// (what the TypeScript SDK does).
fn environment(
    options: &Options,
    trace: Option<&W3cContext>,
) -> (Vec<(OsString, OsString)>, Vec<OsString>) {
    let mut vars: BTreeMap<String, Option<String>> = BTreeMap::new();
    vars.insert("CLAUDE_CODE_ENTRYPOINT".into(), Some(ENTRYPOINT.into()));
    vars.insert(
        "CLAUDE_AGENT_SDK_VERSION".into(),
        Some(env!("CARGO_PKG_VERSION").into()),
    );
    if let Some(cwd) = &options.cwd {
        vars.insert("PWD".into(), Some(cwd.to_string_lossy().into_owned()));
    }
    if options.file_checkpointing {
        vars.insert(
            "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING".into(),
            Some("true".into()),
        );
    }
    if let Some(ask) = &options.ask_user_question {
        if let Some(format) = &ask.preview_format {
            vars.insert(
                "CLAUDE_CODE_QUESTION_PREVIEW_FORMAT".into(),
                Some(format.clone()),
            );
        }
        for (on, key) in [
            (ask.extended_questions, "CLAUDE_CODE_QUESTION_EXTENDED"),
            (
                ask.optional_descriptions,
                "CLAUDE_CODE_QUESTION_OPTIONAL_DESCRIPTIONS",
            ),
        ] {
            if on {
                vars.insert(key.into(), Some("1".into()));
            }
        }
    }
    if let Some(telemetry) = &options.cli_telemetry {
        for (key, value) in telemetry.vars() {
            vars.insert(key.into(), Some(value));
        }
    }
    if let Some(trace) = trace
        && !options.env.iter().any(|(key, _)| key == "TRACEPARENT")
    {
        vars.insert("TRACEPARENT".into(), Some(trace.traceparent.clone()));
        vars.insert("TRACESTATE".into(), trace.tracestate.clone());
    }
    // A CLI started from inside Claude Code would otherwise think it is nested.
    vars.insert("CLAUDECODE".into(), None);
    for (key, value) in &options.env {
        vars.insert(key.clone(), value.clone());
    }
    let mut env = Vec::new();
    let mut remove: Vec<OsString> = Vec::new();
    for (key, value) in vars {
        match value {
            Some(v) => env.push((key.into(), v.into())),
            None => remove.push(key.into()),
        }
    }
    if options.env_clear {
        for (key, _) in std::env::vars_os() {
            if !env.iter().any(|(k, _)| *k == key) && !remove.contains(&key) {
                remove.push(key);
            }
        }
    }
    (env, remove)
}

#[cfg(test)]
mod tests;
