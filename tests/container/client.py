"""A small MCP client over Streamable HTTP (stdlib only) that checks the containerised ipybox.

Usage: client.py URL TOKEN. Waits for the server, then: a request without the token and one
with a wrong token are refused with 401, one for another host with 403 (one for
IPYBOX_EXPECT_ALLOWED_HOST is answered); initialize; tools/list has execute_ipython_cell;
`print(6*7)` returns 42; the kernel writes from-kernel.txt in its working directory,
/workspace. With IPYBOX_EXPECT_SANDBOX=1 the kernel can neither see the server's process
(whose environment holds the token) nor reach the network; without it, it sees the server's
environment.
Prints the timings as `name seconds` lines; exits non-zero on the first failure.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

URL, TOKEN = sys.argv[1], sys.argv[2]
START = float(os.environ.get("IPYBOX_STARTED_AT", time.time()))


def fail(why):
    print(f"FAIL: {why}", file=sys.stderr)
    sys.exit(1)


def post(body, token=TOKEN, session=None, timeout=120, host=None):
    """POST one JSON-RPC message; returns (status, headers, the JSON-RPC reply or None)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if host:
        headers["Host"] = host
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if session:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(
        URL, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, head, text = response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, None
    if "text/event-stream" in head.get("Content-Type", ""):
        # The reply is the SSE event whose data is a JSON-RPC response (it has an id).
        for line in text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "id" in message:
                    return status, head, message
        return status, head, None
    return status, head, json.loads(text) if text.strip() else None


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "ipybox-container-test", "version": "1"},
    },
}

# The server is up once it answers at all (a refused request counts).
deadline = time.time() + 120
while True:
    try:
        status, _, _ = post(INITIALIZE, token=None, timeout=5)
        break
    except (urllib.error.URLError, ConnectionError, OSError):
        if time.time() > deadline:
            fail("the server did not answer within 120 s")
        time.sleep(0.1)
if status != 401:
    fail(f"a request without a bearer token got {status}, not 401")
status, _, _ = post(INITIALIZE, token="not-" + TOKEN)
if status != 401:
    fail(f"a request with a wrong bearer token got {status}, not 401")

# Against DNS rebinding, only loopback names and those allowed by IPYBOX_MCP_ALLOWED_HOSTS.
status, _, _ = post(INITIALIZE, host="elsewhere.test")
if status != 403:
    fail(f"a request for the host elsewhere.test got {status}, not 403")
allowed = os.environ.get("IPYBOX_EXPECT_ALLOWED_HOST")
if allowed:
    status, _, _ = post(INITIALIZE, host=allowed)
    if status != 200:
        fail(f"a request for the allowed host {allowed} got {status}, not 200")

status, head, reply = post(INITIALIZE)
if status != 200 or not reply or "result" not in reply:
    fail(f"initialize: {status} {reply}")
session = head.get("Mcp-Session-Id")
if not session:
    fail("initialize gave no Mcp-Session-Id")
if reply["result"]["serverInfo"]["name"] != "ipybox":
    fail(f"initialize: the server is {reply['result']['serverInfo']}, not ipybox")
status, _, _ = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session)
if status not in (200, 202, 204):
    fail(f"notifications/initialized: {status}")

status, _, reply = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session=session)
first_list = time.time() - START
tools = [t["name"] for t in (reply or {}).get("result", {}).get("tools", [])]
if status != 200 or "execute_ipython_cell" not in tools:
    fail(f"tools/list: {status}, tools {tools}")


def execute(request_id, code):
    status, _, reply = post(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "execute_ipython_cell", "arguments": {"code": code}},
        },
        session=session,
        timeout=300,
    )
    result = (reply or {}).get("result")
    if status != 200 or not result:
        fail(f"execute_ipython_cell({code!r}): {status} {reply}")
    text = "".join(c.get("text", "") for c in result.get("content", []))
    return bool(result.get("isError")), text


before = time.time()
is_error, text = execute(3, "print(6*7)")
first_execute = time.time() - before
if is_error or text.strip() != "42":
    fail(f"print(6*7) gave {text!r} (error: {is_error}), not 42")

is_error, text = execute(4, "open('from-kernel.txt', 'w').write('42'); import os; print(os.getcwd())")
if is_error or text.strip() != "/workspace":
    fail(f"the kernel's working directory is {text!r}, not /workspace")

sandboxed = os.environ.get("IPYBOX_EXPECT_SANDBOX") == "1"
# The server's environment holds the token: in its own PID namespace (and /proc) a
# sandboxed kernel cannot see it; without the sandbox it can, as docs/container.md says.
probe = (
    "import os\n"
    "seen = False\n"
    "for p in filter(str.isdigit, os.listdir('/proc')):\n"
    "    try:\n"
    "        seen = seen or b'IPYBOX_MCP_TOKEN=' in open(f'/proc/{p}/environ', 'rb').read()\n"
    "    except OSError:\n"
    "        pass\n"
    "print('token visible' if seen else 'token hidden')\n"
)
is_error, text = execute(5, probe)
expected = "token hidden" if sandboxed else "token visible"
if is_error or text.strip() != expected:
    fail(f"the kernel's view of the server's process: {text!r}, expected {expected!r}")

if sandboxed:
    probe = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('pypi.org', 443), timeout=5)\n"
        "    print('network: open')\n"
        "except OSError:\n"
        "    print('network: closed')\n"
    )
    is_error, text = execute(6, probe)
    if is_error or text.strip() != "network: closed":
        fail(f"the sandboxed kernel reached the network: {text!r}")

print(f"first_tools_list_after_start {first_list:.2f}")
print(f"first_execute {first_execute:.2f}")
