"""Runtime of the MCP tool modules ipybox generates (written by ipybox; do not edit).

Generated modules ask ipybox to call a tool over the kernel's own stdin channel (the
``ipybox_channel`` module ipybox installs in every kernel it starts): the request carries
``{"server", "tool", "args"}``, ipybox asks for approval, runs the tool on the person's
machine and answers. No network path from the kernel to ipybox is needed, so the same code
works in local, sandboxed and remote kernels. Safe to call from threads and asyncio tasks.
Standard library only.
"""

from __future__ import annotations

import base64
import sys
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

    def _render_traceback_(self) -> list[str]:
        # IPython shows what this returns instead of a traceback: one line saying what
        # happened to the call, without the frames of generated code and of this runtime,
        # which tell the person nothing. `try/except` is unaffected.
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"]


class ApprovalRejected(ToolError):
    """The call was rejected (by a person, a rule, or because nobody could be asked)."""


class ApprovalTimeout(ApprovalRejected):
    """Nobody approved the call in time: a rejection, so `except ApprovalRejected` catches it."""


class ToolServerError(ToolError):
    """ipybox could not run the call: unknown server or tool, a kernel ipybox did not
    start, or the MCP server failed."""


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


def _post(server: str, tool: str, args: dict) -> dict:
    __tracebackhide__ = True  # errors point at the caller's line
    channel = sys.modules.get("ipybox_channel")
    if channel is None:
        raise ToolServerError(
            server,
            tool,
            "this kernel was not started by ipybox, so there is nobody to ask for approval; run the code with ipybox",
        )
    try:
        if "site" in getattr(getattr(channel.call, "__code__", None), "co_varnames", ()):
            payload = channel.call(server, tool, args, site=_call_site())
        else:  # a kernel started by an older ipybox: its channel takes no site
            payload = channel.call(server, tool, args)
    except ValueError as e:
        raise ToolServerError(server, tool, f"unexpected answer from ipybox: {e}") from None
    if payload.get("ok"):
        if payload.get("is_error"):
            raise ToolError(server, tool, _text(payload.get("content") or []) or "the tool reported an error")
        return payload
    kind = payload.get("error", "")
    message = payload.get("message", "the call failed")
    if kind == "rejected":
        raise ApprovalRejected(server, tool, message)
    if kind == "approval_timeout":
        raise ApprovalTimeout(server, tool, message)
    raise ToolServerError(server, tool, message)


_SITE_TEXT = 200


def _call_site() -> dict | None:
    """The line of code that made the call: the first frame outside the generated modules
    and this runtime, as ``{"cell" or "file", "line", "text"}`` (shown to the person who
    approves the call; ipybox treats it as untrusted text)."""
    try:
        import linecache

        frame = sys._getframe(1)
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            if not (name == __name__ or name.startswith(("mcptools.", "gentools.")) or name == "mcptools"):
                break
            frame = frame.f_back
        if frame is None:
            return None
        code = frame.f_code
        site: dict = {"line": frame.f_lineno}
        text = linecache.getline(code.co_filename, frame.f_lineno).strip()
        if text:
            site["text"] = text[:_SITE_TEXT]
        if "ipykernel_" in code.co_filename or code.co_filename.startswith("<"):
            try:
                from IPython import get_ipython

                site["cell"] = int(get_ipython().execution_count)
            except Exception:
                pass
        if "cell" not in site:
            site["file"] = code.co_filename[-_SITE_TEXT:]
        return site
    except Exception:
        return None


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
