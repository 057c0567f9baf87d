"""Runtime of the MCP tool modules ipybox generates (written by ipybox; do not edit).

Generated modules call tools through ipybox's tool server: a POST of
``{"server", "tool", "args"}`` to the address in ``IPYBOX_TOOL_SERVER`` with the session
token from ``IPYBOX_TOOL_TOKEN``. ipybox asks for approval before the tool runs.
Standard library only; one keep-alive connection per thread.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ApprovalRejected",
    "ApprovalTimeout",
    "ContentBlock",
    "ToolError",
    "ToolServerError",
    "call_tool",
    "call_tool_blocks",
]


class ToolError(Exception):
    """A tool call failed; ``server`` and ``tool`` name the call."""

    def __init__(self, server: str, tool: str, message: str):
        self.server = server
        self.tool = tool
        self.message = message
        super().__init__(f"{server}.{tool}: {message}")


class ApprovalRejected(ToolError):
    """The call was rejected (by a person, a rule, or because nobody could be asked)."""


class ApprovalTimeout(ApprovalRejected):
    """Nobody approved the call in time: a rejection, so `except ApprovalRejected` catches it."""


class ToolServerError(ToolError):
    """ipybox could not run the call: unknown server or tool, unreachable tool server,
    or the MCP server failed."""


@dataclass
class ContentBlock:
    """One content block of a tool result.

    ``type`` is ``text``, ``image``, ``audio``, ``resource`` or ``resource_link``. Images and
    audio have ``data`` (bytes) and ``mime_type``; resources have ``uri`` and ``text`` or
    ``data``. ``raw`` is the block as the server sent it.
    """

    type: str
    text: str | None = None
    data: bytes | None = None
    mime_type: str | None = None
    uri: str | None = None
    raw: dict = field(default_factory=dict, repr=False)


_local = threading.local()


def _address() -> tuple[str, int, str]:
    address = os.environ.get("IPYBOX_TOOL_SERVER", "")
    token = os.environ.get("IPYBOX_TOOL_TOKEN", "")
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not token:
        raise RuntimeError(
            "this kernel has no ipybox tool server (IPYBOX_TOOL_SERVER / IPYBOX_TOOL_TOKEN are not set); "
            "run the code with ipybox"
        )
    return host, int(port), token


def _post(server: str, tool: str, args: dict) -> dict:
    __tracebackhide__ = True  # errors point at the caller's line
    host, port, token = _address()
    body = json.dumps({"server": server, "tool": tool, "args": args}).encode()
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    for attempt in (0, 1):
        conn = getattr(_local, "conn", None)
        if conn is None:
            conn = _local.conn = http.client.HTTPConnection(host, port)
        try:
            conn.request("POST", "/run", body, headers)
            response = conn.getresponse()
            data = response.read()
            status = response.status
            break
        except (
            http.client.RemoteDisconnected,
            http.client.ImproperConnectionState,
            BrokenPipeError,
            ConnectionResetError,
        ) as e:
            # A kept-alive connection the server has closed: reconnect once.
            conn.close()
            _local.conn = None
            if attempt:
                raise ToolServerError(server, tool, f"cannot reach ipybox's tool server: {e}") from None
        except OSError as e:
            conn.close()
            _local.conn = None
            raise ToolServerError(server, tool, f"cannot reach ipybox's tool server: {e}") from None
        except BaseException:
            # Interrupted mid-call (KeyboardInterrupt while waiting for an approval): the
            # connection is halfway through a request, so the next call starts a fresh one.
            conn.close()
            _local.conn = None
            raise
    try:
        payload = json.loads(data)
    except ValueError:
        raise ToolServerError(server, tool, f"unexpected answer from the tool server (HTTP {status})") from None
    if payload.get("ok"):
        if payload.get("is_error"):
            raise ToolError(server, tool, _text(payload.get("content") or []) or "the tool reported an error")
        return payload
    kind = payload.get("error", "")
    message = payload.get("message", f"HTTP {status}")
    if kind == "rejected":
        raise ApprovalRejected(server, tool, message)
    if kind == "approval_timeout":
        raise ApprovalTimeout(server, tool, message)
    raise ToolServerError(server, tool, message)


def _text(content: list) -> str:
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def call_tool(server: str, tool: str, args: dict) -> Any:
    """Call a tool; return its structured content if it has any, else its text."""
    __tracebackhide__ = True  # errors point at the caller's line
    payload = _post(server, tool, args)
    if "structured" in payload:
        return payload["structured"]
    return _text(payload.get("content") or [])


def _block(raw: dict) -> ContentBlock:
    kind = raw.get("type", "")
    if kind in ("image", "audio"):
        return ContentBlock(kind, data=base64.b64decode(raw.get("data", "")), mime_type=raw.get("mimeType"), raw=raw)
    if kind == "resource":
        res = raw.get("resource") or {}
        blob = res.get("blob")
        return ContentBlock(
            kind,
            text=res.get("text"),
            data=base64.b64decode(blob) if blob is not None else None,
            mime_type=res.get("mimeType"),
            uri=res.get("uri"),
            raw=raw,
        )
    if kind == "resource_link":
        return ContentBlock(kind, text=raw.get("name"), mime_type=raw.get("mimeType"), uri=raw.get("uri"), raw=raw)
    return ContentBlock(kind, text=raw.get("text"), raw=raw)


def call_tool_blocks(server: str, tool: str, args: dict) -> list[ContentBlock]:
    """Call a tool; return every content block it returned."""
    __tracebackhide__ = True  # errors point at the caller's line
    payload = _post(server, tool, args)
    return [_block(b) for b in payload.get("content") or [] if isinstance(b, dict)]
