//! Turning [`Options`] into the CLI's arguments and environment
//! (docs/protocol.md §1).
//!
//! User-supplied values always use the `--flag=value` form: the CLI declares
//! some options with optional values, so `--resume -x` would read `-x` as a flag.

use std::ffi::OsString;

use crate::error::{Error, Result};
use crate::options::{McpConfig, Options, SystemPrompt};
use crate::protocol::McpServerConfig;

/// The value of `CLAUDE_CODE_ENTRYPOINT`. The CLI switches on its SDK
/// behaviour only for the entry points it knows (`sdk-ts`, `sdk-py`,
/// `sdk-cli`); `sdk-cli` is the generic one.
pub(crate) const ENTRYPOINT: &str = "sdk-cli";

/// The arguments and environment for one CLI process.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CliCommand {
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub env_remove: Vec<OsString>,
}

fn flag(args: &mut Vec<OsString>, name: &str, value: &str) {
    args.push(format!("--{name}={value}").into());
}

/// Builds the command line for `options`.
pub(crate) fn build(options: &Options) -> Result<CliCommand> {
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
    }
    if let Some(tools) = &options.tools {
        flag(&mut args, "tools", &tools.join(","));
    }
    if !options.allowed_tools.is_empty() {
        flag(&mut args, "allowedTools", &options.allowed_tools.join(","));
    }
    if !options.disallowed_tools.is_empty() {
        flag(
            &mut args,
            "disallowedTools",
            &options.disallowed_tools.join(","),
        );
    }
    if let Some(n) = options.max_turns {
        flag(&mut args, "max-turns", &n.to_string());
    }
    if let Some(usd) = options.max_budget_usd {
        if !(usd.is_finite() && usd >= 0.0) {
            return Err(Error::InvalidOptions(format!(
                "max_budget_usd must be a non-negative number, not {usd}"
            )));
        }
        flag(&mut args, "max-budget-usd", &usd.to_string());
    }
    if let Some(model) = &options.model {
        flag(&mut args, "model", model);
    }
    if let Some(fallback) = &options.fallback_model {
        if options.model.as_ref() == Some(fallback) {
            return Err(Error::InvalidOptions(format!(
                "fallback_model must differ from model (both are {fallback:?})"
            )));
        }
        flag(&mut args, "fallback-model", fallback);
    }
    if options.can_use_tool.is_some() {
        flag(&mut args, "permission-prompt-tool", "stdio");
    }
    if let Some(mode) = &options.permission_mode {
        flag(&mut args, "permission-mode", mode.as_str());
    }
    if options.continue_conversation {
        args.push("--continue".into());
    }
    if let Some(id) = &options.resume {
        flag(&mut args, "resume", id);
    }
    if let Some(id) = &options.session_id {
        flag(&mut args, "session-id", id);
    }
    if options.fork_session {
        if options.resume.is_none() && !options.continue_conversation {
            return Err(Error::InvalidOptions(
                "fork_session needs resume or continue_conversation".into(),
            ));
        }
        args.push("--fork-session".into());
    }
    if let Some(settings) = &options.settings {
        flag(&mut args, "settings", settings);
    }
    if let Some(sources) = options.setting_sources_arg() {
        flag(&mut args, "setting-sources", &sources);
    }
    for dir in &options.add_dirs {
        let mut arg = OsString::from("--add-dir=");
        arg.push(dir);
        args.push(arg);
    }
    let mcp_config: Option<OsString> = match &options.mcp_config {
        None => None,
        Some(McpConfig::Path(path)) => Some(path.into()),
        Some(McpConfig::Json(value)) => Some(value.to_string().into()),
        Some(McpConfig::Servers(servers)) => {
            // In-process servers reach the CLI through `initialize`.
            let external: std::collections::BTreeMap<_, _> = servers
                .iter()
                .filter(|(_, c)| !matches!(c, McpServerConfig::InProcess(_)))
                .collect();
            (!external.is_empty()).then(|| {
                serde_json::json!({ "mcpServers": external })
                    .to_string()
                    .into()
            })
        }
    };
    if let Some(config) = mcp_config {
        args.push("--mcp-config".into());
        args.push(config);
    }
    if options.strict_mcp_config {
        args.push("--strict-mcp-config".into());
    }
    if options.include_partial_messages {
        args.push("--include-partial-messages".into());
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
            return Err(Error::InvalidOptions(format!(
                "two in-process MCP servers are named {:?}; names must be unique",
                server.name()
            )));
        }
    }

    let user_sets = |key: &str| options.env.iter().any(|(k, _)| k == key);
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if !user_sets("CLAUDE_CODE_ENTRYPOINT") {
        env.push(("CLAUDE_CODE_ENTRYPOINT".into(), ENTRYPOINT.into()));
    }
    env.push((
        "CLAUDE_AGENT_SDK_VERSION".into(),
        env!("CARGO_PKG_VERSION").into(),
    ));
    if let Some(cwd) = &options.cwd {
        env.push(("PWD".into(), cwd.into()));
    }
    for (k, v) in &options.env {
        env.push((k.into(), v.into()));
    }
    // A CLI started from inside Claude Code would otherwise think it is nested.
    let env_remove = vec![OsString::from("CLAUDECODE")];

    Ok(CliCommand {
        args,
        env,
        env_remove,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SettingSource;
    use crate::protocol::PermissionMode;

    fn args(options: &Options) -> Vec<String> {
        build(options)
            .unwrap()
            .args
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn fixed_flags_and_empty_system_prompt_by_default() {
        assert_eq!(
            args(&Options::new()),
            [
                "--output-format",
                "stream-json",
                "--verbose",
                "--input-format",
                "stream-json",
                "--system-prompt="
            ]
        );
    }

    #[test]
    fn user_values_use_the_equals_form() {
        let a = args(
            &Options::new()
                .model("m")
                .resume("-odd")
                .allowed_tools(["a", "b"])
                .permission_mode(PermissionMode::AcceptEdits)
                .setting_sources([SettingSource::User, SettingSource::Project])
                .add_dir("/x"),
        );
        for want in [
            "--model=m",
            "--resume=-odd",
            "--allowedTools=a,b",
            "--permission-mode=acceptEdits",
            "--setting-sources=user,project",
            "--add-dir=/x",
        ] {
            assert!(a.contains(&want.to_string()), "{want} missing in {a:?}");
        }
    }

    #[test]
    fn preset_prompt_sends_no_system_prompt_flag() {
        let a = args(&Options::new().system_prompt_preset());
        assert!(!a.iter().any(|a| a.starts_with("--system-prompt")));
        let a = args(&Options::new().append_system_prompt("more"));
        assert!(a.contains(&"--append-system-prompt=more".to_string()));
    }

    #[test]
    fn equal_fallback_model_is_refused() {
        let err = build(&Options::new().model("m").fallback_model("m")).unwrap_err();
        assert!(err.to_string().contains("fallback_model"), "{err}");
    }

    #[test]
    fn entrypoint_is_one_the_cli_treats_as_an_sdk() {
        let cmd = build(&Options::new()).unwrap();
        assert!(
            cmd.env
                .contains(&("CLAUDE_CODE_ENTRYPOINT".into(), "sdk-cli".into()))
        );
        let cmd = build(&Options::new().env("CLAUDE_CODE_ENTRYPOINT", "mine")).unwrap();
        assert!(
            cmd.env
                .contains(&("CLAUDE_CODE_ENTRYPOINT".into(), "mine".into()))
        );
        assert!(
            !cmd.env
                .contains(&("CLAUDE_CODE_ENTRYPOINT".into(), "sdk-cli".into()))
        );
    }
}
