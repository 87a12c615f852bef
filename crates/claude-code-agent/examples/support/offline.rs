//! Running an example offline: the pinned CLI against the testkit's mock
//! model, shared by the examples.

use claude_code_agent::Options;
use claude_code_agent_testkit::{CliEnv, MockModel};

/// What must live as long as the session: the mock and the CLI's folders.
pub type Offline = (MockModel, CliEnv);

/// `options` set to run the pinned CLI, in a temporary environment, against
/// `mock`.
pub async fn offline(
    mut options: Options,
    mock: MockModel,
) -> Result<(Options, Offline), Box<dyn std::error::Error>> {
    let env = CliEnv::for_mock(&mock)?;
    for (key, value) in env.vars() {
        options = options.env(key, value);
    }
    let options = options
        .cwd(env.work_dir())
        .cli_path(claude_code_agent_testkit::cli::pinned_cli_async().await?);
    Ok((options, (mock, env)))
}
