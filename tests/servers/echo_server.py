"""A tiny stdio MCP server for ipybox's tests and benchmarks.

Tools (names and schemas match the upstream ipybox benchmark's server, so timings compare):
  echo(text: str) -> str        unstructured text, no outputSchema
  add(a: int, b: int) -> {sum}  structured output, with an outputSchema

Run with the test venv: tests/servers/.venv/bin/python tests/servers/echo_server.py
"""

try:
    from mcp.server.fastmcp import FastMCP
except ModuleNotFoundError:  # mcp 2.x renamed FastMCP to MCPServer, same API for this file
    from mcp.server.mcpserver import MCPServer as FastMCP
from pydantic import BaseModel, Field

server = FastMCP("ipybox-echo", log_level="ERROR")


class AddResult(BaseModel):
    """Result of adding two integers."""

    sum: int = Field(description="a + b")


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Return the given text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> AddResult:
    """Add two integers."""
    return AddResult(sum=a + b)


if __name__ == "__main__":
    server.run(transport="stdio")
