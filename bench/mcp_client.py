"""The Python `mcp` client (PyPI `mcp`) as a subject of the client benchmark.

`call_tool("add", {"a": 1, "b": 2})` round trips per second over stdio (the
client spawns BENCH_STDIO_SERVER, a JSON array) and Streamable HTTP
(BENCH_HTTP_URL, when set): serially, then 16 in flight. Each measurement runs
for BENCH_CLIENT_SECONDS after a warm-up and prints one JSON line:
{"transport", "in_flight", "calls", "seconds"}. Run by scripts/bench with the
venv it installs (~/.cache/claude-agent-rs/bench/venv, mcp pinned).
"""

import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

SECONDS = float(os.environ.get("BENCH_CLIENT_SECONDS", "3"))
WARMUP = 200
ARGS = {"a": 1, "b": 2}


async def call(session):
    r = await session.call_tool("add", ARGS)
    if r.is_error:
        raise RuntimeError(f"tool error: {r.content}")


async def measure(session, transport, in_flight):
    for _ in range(WARMUP):
        await call(session)
    calls = 0
    start = time.perf_counter()
    deadline = start + SECONDS

    async def worker():
        nonlocal calls
        while time.perf_counter() < deadline:
            await call(session)
            calls += 1

    await asyncio.gather(*(worker() for _ in range(in_flight)))
    seconds = time.perf_counter() - start
    print(json.dumps({"transport": transport, "in_flight": in_flight, "calls": calls, "seconds": seconds}), flush=True)


async def run(streams, transport):
    async with ClientSession(*streams) as session:
        await session.initialize()
        for in_flight in (1, 16):
            await measure(session, transport, in_flight)


async def main():
    server = json.loads(os.environ["BENCH_STDIO_SERVER"])
    params = StdioServerParameters(command=server[0], args=server[1:])
    async with stdio_client(params) as streams:
        await run(streams, "stdio")
    url = os.environ.get("BENCH_HTTP_URL")
    if url:
        async with streamable_http_client(url) as streams:
            await run(streams, "http")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as e:  # noqa: BLE001 - report, then fail
        import traceback

        traceback.print_exc()
        print(f"mcp_client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
