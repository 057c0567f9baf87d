#!/usr/bin/env bash
# Tests the ipybox container image (scripts/container.sh builds it; docs/container.md):
#   - without IPYBOX_MCP_TOKEN the container refuses to start;
#   - with the sandbox asked for (the default) but /proc masked, it refuses to start and says
#     which flags make the sandbox work;
#   - sandboxed (/proc unmasked) and then without the sandbox (IPYBOX_SANDBOX=0): from the
#     host, over a published loopback port, a request without the token or with a wrong one
#     gets 401, one for another host name 403 (unless IPYBOX_MCP_ALLOWED_HOSTS names it:
#     tried without the sandbox); initialize, tools/list and execute_ipython_cell with
#     `print(6*7)` → 42 work; a file the kernel writes in /workspace shows up in the host's
#     folder; the sandboxed kernel sees neither the server's process nor the network, the
#     unsandboxed one sees the server's environment (client.py); a mounted rules file decides
#     tool calls, and without one they are all rejected.
# Prints how long each took. Usage: tests/container/run.sh [--build]  (--build runs
# scripts/container.sh first). Exits non-zero on the first failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$root/packaging/container/containers.conf}"
IMAGE="${IPYBOX_IMAGE:-localhost/ipybox:latest}"

if [ "${1:-}" = --build ]; then
  started=$(date +%s)
  bash "$root/scripts/container.sh"
  echo "build: $(($(date +%s) - started)) s"
fi
podman image exists "$IMAGE" || { echo "no image $IMAGE: run scripts/container.sh (or this with --build)" >&2; exit 1; }
echo "image: $IMAGE, $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}')"

token="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
names=()
dirs=()
cleanup() {
  for n in "${names[@]}"; do podman rm -f -t 2 "$n" >/dev/null 2>&1 || true; done
  for d in "${dirs[@]}"; do rm -rf "$d"; done
}
trap cleanup EXIT

echo "-- without a token: refused"
if out="$(podman run --rm "$IMAGE" 2>&1)"; then
  echo "FAIL: the container started without IPYBOX_MCP_TOKEN: $out" >&2; exit 1
fi
grep -q "set IPYBOX_MCP_TOKEN" <<<"$out" || { echo "FAIL: unexpected refusal: $out" >&2; exit 1; }

echo "-- the sandbox asked for, /proc masked: refused, saying how"
if out="$(podman run --rm -e IPYBOX_MCP_TOKEN="$token" "$IMAGE" 2>&1)"; then
  echo "FAIL: the container started although its sandbox cannot: $out" >&2; exit 1
fi
grep -q "unmask=/proc/\*" <<<"$out" || { echo "FAIL: unexpected refusal: $out" >&2; exit 1; }

# run NAME EXPECT_SANDBOX APPROVAL PODMAN_OPTION…: a container on a free loopback port,
# checked by client.py from the host; its log must say who approves tool calls (APPROVAL).
run() {
  local name="$1" sandbox="$2" approval="$3"
  shift 3
  local port workspace
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  workspace="$(mktemp -d)"
  dirs+=("$workspace")
  name="ipybox-test-$name-$$"
  names+=("$name")
  echo "-- $name: $* (port $port, workspace $workspace)"
  export IPYBOX_STARTED_AT
  IPYBOX_STARTED_AT="$(python3 -c 'import time; print(time.time())')"
  # :U gives the workspace to the image's user (uid 1000), as docs/container.md says.
  podman run -d --name "$name" -p "127.0.0.1:$port:8000" -e IPYBOX_MCP_TOKEN="$token" \
    -v "$workspace:/workspace:U" "$@" "$IMAGE" >/dev/null
  if ! IPYBOX_EXPECT_SANDBOX="$sandbox" IPYBOX_EXPECT_ALLOWED_HOST="${allowed_host:-}" python3 "$here/client.py" "http://127.0.0.1:$port/mcp" "$token"; then
    echo "container log:" >&2
    podman logs "$name" 2>&1 | tail -n 40 >&2
    exit 1
  fi
  podman logs "$name" 2>&1 | grep -qF "MCP tool calls: $approval" ||
    { echo "FAIL: the container did not choose \"$approval\" for tool calls:" >&2; podman logs "$name" 2>&1 | head -5 >&2; exit 1; }
  [ "$(cat "$workspace/from-kernel.txt" 2>/dev/null)" = 42 ] ||
    { echo "FAIL: the file the kernel wrote in /workspace is not in the volume on the host" >&2; exit 1; }
  local stopped
  stopped=$(date +%s.%N)
  podman stop -t 20 "$name" >/dev/null
  echo "stop $(python3 -c "import time; print(f'{time.time() - $stopped:.2f}')")"
}

# A mounted rules file decides tool calls; without one, every call is rejected.
run sandboxed 1 "rules (/etc/ipybox/approval-rules.json)" \
  --security-opt 'unmask=/proc/*' --security-opt no-new-privileges \
  -v "$root/examples/approval-rules.json:/etc/ipybox/approval-rules.json:ro"
allowed_host=ipybox.test run unsandboxed 0 reject \
  -e IPYBOX_SANDBOX=0 -e IPYBOX_MCP_ALLOWED_HOSTS=ipybox.test
echo "container test: 2 passed, 0 failed"
