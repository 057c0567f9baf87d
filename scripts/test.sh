#!/usr/bin/env bash
# Runs every check and test of ipybox: formatting, lints, the build, the examples and the
# unit and end-to-end tests against a real Kernel Gateway and real kernels.
# Needs what scripts/setup.sh (or .ci/run) installs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
features=(--workspace --no-default-features)

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy"
cargo clippy "${features[@]}" --all-targets -- -D warnings
echo "== cargo build"
cargo build "${features[@]}" --all-targets
echo "== ipybox setup (Python environment for the kernels, sandbox runtime)"
target/debug/ipybox setup --sandbox
echo "== reference MCP servers for the tests (npm, PyPI)"
bash tests/servers/install.sh
echo "== examples"
for example in basic_execution stream_chunks capturing_plots kernel_environment kernel_reset working_directory sandbox; do
  echo "-- $example"
  target/debug/examples/"$example" > /dev/null
done
echo "-- quickstart"
IPYBOX_EXAMPLE_APPROVE=yes \
IPYBOX_EXAMPLE_SERVER="{\"command\": \"node\", \"args\": [\"$PWD/tests/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js\", \"stdio\"]}" \
  target/debug/examples/quickstart | grep -q "Echo: hello from kernel code"
echo "== cargo test"
cargo test "${features[@]}" -- --test-threads 2
if [ "$(id -u)" = 0 ]; then
  echo "== the untrusted-workspace attacks again, as an unprivileged user"
  bash scripts/test-unprivileged.sh
fi
echo "== MCP conformance suite against ipybox mcp --http"
bash tests/conformance/run.sh target/debug/ipybox
