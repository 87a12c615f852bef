"""The official Python SDK (`claude-agent-sdk`) as a subject of `scripts/bench`.

The same program as `crates/devtools/src/bin/bench-sdk.rs`: an in-process
server `bench` with one tool `add` ({a, b, pad?, reply_bytes?} -> the text
"sum=<a+b>" followed by reply_bytes x's), run through `query()` with the fake
CLI as the CLI (`FAKE_CLAUDE_PATH`), which inherits FAKE_CLAUDE_SCENARIO /
FAKE_CLAUDE_PARAMS, times every tools/call round trip and writes the report.

With BENCH_SUBJECT_REPORT set, writes there when it called `query()` and when
the first message arrived (ns since the Unix epoch), and the error that ended
the query, if any. The SDK's defaults are kept (its 1 MiB line limit among
them): a failure is a result of the benchmark, reported, not worked around.

Run by scripts/bench with the venv it installs (~/.cache/claude-agent-rs/bench/venv).
"""

import asyncio
import json
import os
import sys
import time

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ResultMessage,
    ToolAnnotations,
    create_sdk_mcp_server,
    query,
    tool,
)

# Room for the 10 MiB payload phase (as bench-sdk.rs's max_result_chars).
MAX_RESULT = 64 << 20

SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "number", "description": "Left operand."},
        "b": {"type": "number", "description": "Right operand."},
        "pad": {"type": "string", "description": "Padding, to make the arguments big; ignored."},
        "reply_bytes": {
            "type": "integer",
            "minimum": 0,
            "description": "Bytes of x to append to the result, to make it big.",
        },
    },
    "required": ["a", "b"],
}


@tool("add", "Add two numbers", SCHEMA, annotations=ToolAnnotations(maxResultSizeChars=MAX_RESULT))
async def add(args):
    # The same construction as the echo floor's and bench-sdk.rs's.
    text = f"sum={args['a'] + args['b']}" + "x" * int(args.get("reply_bytes") or 0)
    return {"content": [{"type": "text", "text": text}]}


def write_timing(timing):
    path = os.environ.get("BENCH_SUBJECT_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(timing, f)


async def main():
    cli = os.environ.get("FAKE_CLAUDE_PATH")
    if not cli:
        sys.exit("set FAKE_CLAUDE_PATH to the fake-claude binary")
    server = create_sdk_mcp_server("bench", "1.0.0", tools=[add])
    options = ClaudeAgentOptions(
        cli_path=cli,
        mcp_servers={"bench": server},
        allowed_tools=["mcp__bench__add"],
    )
    timing = {"query_ns": time.time_ns(), "first_message_ns": 0}
    failed = None
    try:
        async for message in query(prompt="Run the benchmark.", options=options):
            if not timing["first_message_ns"]:
                timing["first_message_ns"] = time.time_ns()
                write_timing(timing)
            if isinstance(message, ResultMessage) and message.is_error:
                failed = message.result
    except Exception as e:  # the SDK's own failure (e.g. a line over its limit)
        failed = f"{type(e).__name__}: {e}"
    timing["error"] = failed
    write_timing(timing)
    with open("/proc/self/status") as f:
        hwm = next((line.strip() for line in f if line.startswith("VmHWM:")), None)
    if hwm:
        print(f"python_sdk: {hwm}", file=sys.stderr)
    if failed:
        print(f"python_sdk: the benchmark failed: {failed[:2000]}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
