"""A tiny MCP server on the Python SDK (mcp 2.x), for the client's interop tests.

Usage: py_server.py stdio | py_server.py http PORT
Tools: add(a, b), echo(text), region_echo(region) (its argument is mirrored
into the Mcp-Param-Region header), fail() (a tool error); resource
demo://hello; template demo://item/{id}; prompt greet(name).
"""

import sys
import warnings

warnings.filterwarnings("ignore")

from mcp.server.mcpserver import MCPServer  # noqa: E402
from pydantic import Field  # noqa: E402
from typing import Annotated  # noqa: E402

mcp = MCPServer("py-peer", instructions="Python interop peer.")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


@mcp.tool()
def region_echo(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Echo the region (mirrored into a header)."""
    return f"region={region}"


@mcp.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


@mcp.resource("demo://hello")
def hello() -> str:
    """A greeting."""
    return "Hello from Python"


@mcp.resource("demo://item/{id}")
def item(id: str) -> str:
    """An item by id."""
    return f"item {id}"


@mcp.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run()
