"""Drives the calculator server with the official Python SDK (mcp 2.x) in its
default mode="auto" (it probes server/discover first, then falls back to
initialize). Prints one JSON line with what it saw.

usage: py_calc_client.py stdio CMD [ARGS...] | py_calc_client.py http URL
"""
import asyncio
import json
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def main():
    kind, rest = sys.argv[1], sys.argv[2:]
    target = rest[0] if kind == "http" else StdioServerParameters(command=rest[0], args=rest[1:])
    async with Client(target, read_timeout_seconds=30) as client:
        tools = await client.list_tools()
        add = await client.call_tool("add", {"a": 2, "b": 40})
        div = await client.call_tool("divide", {"a": 1, "b": 0})
        print(json.dumps({
            "tools": sorted(t.name for t in tools.tools),
            "add": text(add),
            "add_is_error": bool(add.is_error),
            "divide": text(div),
            "divide_is_error": bool(div.is_error),
        }), flush=True)


asyncio.run(asyncio.wait_for(main(), 60))
