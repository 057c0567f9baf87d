#!/usr/bin/env bash
# Runs every check and test of ipybox: formatting, lints, the build, the examples and the
# unit and end-to-end tests against a real Kernel Gateway and real kernels. Installs what
# a fresh Debian 12 machine lacks first (scripts/test-deps.sh; IPYBOX_TEST_DEPS=0 skips it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# What scripts/setup.sh and test-deps.sh install lands in ~/.cargo/bin and ~/.local/bin (uv,
# ipybox), which a new shell may not have on its PATH yet: look there first.
export PATH="$HOME/.cargo/bin:$HOME/.local/bin:$PATH"
if [ "${IPYBOX_TEST_DEPS:-1}" != 0 ]; then
  bash scripts/test-deps.sh
fi
# shellcheck source=lib/node.sh
. scripts/lib/node.sh
ensure_node_for_ui

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
features=(--workspace --no-default-features)

echo "== ui: install, typecheck, build (the desktop build embeds src-tauri/ui-dist), unit tests"
( cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build && npm test )
echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy (headless engine, then the desktop app)"
cargo clippy "${features[@]}" --all-targets -- -D warnings
cargo clippy --workspace --all-features --all-targets -- -D warnings
echo "== cargo build (headless engine and examples)"
cargo build "${features[@]}" --all-targets
node tests/plugin/validate.mjs target/debug/ipybox  # the Claude Code plugin marketplace (.claude-plugin/, plugin/) against its documented format
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
echo "== the kernel's side of ipybox's channel, held to the same examples"
python3 -m unittest discover -s tests/python
echo "== packaging: the signed APT repository scripts/apt-repo.sh writes, as apt reads it"
bash tests/packaging/apt-repo.test.sh
if [ "$(id -u)" = 0 ]; then
  echo "== the untrusted-workspace attacks again, as an unprivileged user"
  bash scripts/test-unprivileged.sh
fi
echo "== desktop: the window's unit tests"
cargo test -p ipybox --lib desktop
echo "== desktop: a remote server's token and MCP servers' sign-ins in a real keyring (GNOME Keyring's Secret Service on a private session bus)"
keyrings="$(mktemp -d)"  # a new keyring, unlocked by the password given here, gone afterwards
# (ipybox's own data directory stays where it is: the kernels' Python is there)
IPYBOX_HOME="${IPYBOX_HOME:-$HOME/.local/share/ipybox}" XDG_DATA_HOME="$keyrings" dbus-run-session -- bash -c 'printf ipybox-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null \
  && IPYBOX_TEST_KEYRING=1 cargo test -p ipybox --lib -- desktop::remote mcp::oauth::keyring_store' 2> >(grep -v "Failed to set fd limit" >&2)
rm -rf "$keyrings"
echo "== ui: the built UI in headless Chromium"
( cd ui && npm run test:browser )
echo "== desktop: build the app, then end-to-end tests of the real window under Xvfb"
cargo build -p ipybox
bash tests/e2e/run.sh
echo "== desktop: an MCP server's sign-in kept in a real keyring by the app, and used by its command line (GNOME Keyring on a private session bus)"
keyrings="$(mktemp -d)"
# target/debug/ipybox is the default build here (the keyring feature on), as people run it.
IPYBOX_HOME="${IPYBOX_HOME:-$HOME/.local/share/ipybox}" XDG_DATA_HOME="$keyrings" dbus-run-session -- bash -c 'printf ipybox-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null \
  && IPYBOX_TEST_KEYRING=1 bash tests/e2e/run.sh tests/e2e/signin.test.mjs \
  && IPYBOX_TEST_KEYRING=1 cargo test -p ipybox-tests --features keyring --test oauth_sign_in -- keyring' 2> >(grep -v "Failed to set fd limit" >&2)
rm -rf "$keyrings"
echo "== MCP conformance suite against ipybox mcp --http"
bash tests/conformance/run.sh target/debug/ipybox
echo "== MCP conformance suite's client mode against ipybox's own MCP client"
bash tests/conformance/run-client.sh target/debug/ipybox-conformance-client
