//! A short run of the SDK's fuzz target `control_decoder` (`fuzz/`): every
//! kept input (corpus and regressions) through its check, then mutated
//! ones from a seeded RNG (`CLAUDE_AGENT_FUZZ_SEED`,
//! `CLAUDE_AGENT_FUZZ_ITERS`; the MCP crate's `short_run`, which runs that
//! crate's targets too). The long runs are libFuzzer's (`scripts/fuzz`).

use claude_code_agent::__private::fuzz as sdk;
use claude_code_agent::mcp::__private::fuzz::{Target, short_run};

use crate::support::repo::repo_root;

#[test]
fn control_decoder() {
    let target = Target {
        fuzz_dir: repo_root().join("fuzz"),
        name: "control_decoder",
        regressions: true,
        iterations: 6000,
    };
    short_run(&target, sdk::control_decoder);
}
