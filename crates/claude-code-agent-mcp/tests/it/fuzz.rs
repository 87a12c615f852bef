//! A short run of this crate's fuzz targets (`fuzz/`): every kept input
//! (corpus and regressions) through the target's check, then mutated ones
//! from a seeded RNG (`CLAUDE_AGENT_FUZZ_SEED`, `CLAUDE_AGENT_FUZZ_ITERS`;
//! `claude_code_agent_mcp::__private::fuzz::short_run`). The long runs are
//! libFuzzer's (`scripts/fuzz`). Sized to a second or less of CPU each in
//! the dev profile.

use std::path::Path;

use claude_code_agent_mcp::__private::fuzz::{self, Target, short_run};

fn target(name: &str, regressions: bool, iterations: usize) -> Target<'_> {
    Target {
        fuzz_dir: Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .expect("the repository")
            .join("fuzz"),
        name,
        regressions,
        iterations,
    }
}

#[test]
fn ndjson_reader() {
    short_run(&target("ndjson_reader", false, 15_000), fuzz::ndjson_reader);
}

#[test]
fn lenient_json() {
    short_run(&target("lenient_json", false, 1500), fuzz::lenient_json);
}

#[cfg(feature = "http-client")]
#[test]
fn sse_parser() {
    short_run(&target("sse_parser", true, 30_000), fuzz::sse_parser);
}

#[test]
fn server_handle() {
    short_run(&target("server_handle", true, 3000), fuzz::server_handle);
}
