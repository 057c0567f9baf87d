#!/usr/bin/env bash
# Runs the untrusted-workspace attack tests again as an unprivileged user. The sandbox differs
# between the two: run as root, bubblewrap leaves the sandbox's root its capabilities (ipybox
# drops them); run as a user, it has none to begin with. scripts/test.sh runs this when it
# runs as root (as CI does); it creates the user `ipybox-ci` and gives it its own data
# directory (Python environment, srt).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "$(id -u)" != 0 ]; then
  echo "test-unprivileged.sh: run as root (it creates and switches to the user ipybox-ci)" >&2
  exit 1
fi
user=ipybox-ci
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)

# uv makes the user's environment quick to build; it may live where the user cannot reach it.
bin=/var/tmp/ipybox-ci-bin
mkdir -p "$bin"
uv=$(python3 -c 'import uv; print(uv.find_uv_bin())' 2>/dev/null || command -v uv || true)
if [ -n "$uv" ] && [ -x "$uv" ]; then install -m 755 "$uv" "$bin/uv"; fi

test_bin=$(cargo test --no-default-features -p ipybox-tests --test untrusted_workspace --no-run 2>&1 |
  grep -o 'target/debug/deps/untrusted_workspace-[0-9a-f]*' | tail -n 1)
[ -x "$test_bin" ] || { echo "test-unprivileged.sh: no test binary found" >&2; exit 1; }

# The environment stays (proxy and CA settings reach the user's pip, uv and npm); what names
# root's home does not.
as_user() {
  runuser -u "$user" -- env HOME="$home" USER="$user" LOGNAME="$user" \
    IPYBOX_HOME="$home/.local/share/ipybox" XDG_DATA_HOME="$home/.local/share" \
    XDG_CACHE_HOME="$home/.cache" XDG_CONFIG_HOME="$home/.config" \
    NPM_CONFIG_USERCONFIG="$home/.npmrc" NPM_CONFIG_CACHE="$home/.npm" \
    PATH="$bin:/usr/local/bin:/usr/bin:/bin" "$@"
}
# srt (0.0.78) leaves its multiplexer socket in /tmp (srt-mux-PID-N.sock); one left by a
# process of root whose pid the user's srt gets now would keep that srt from starting.
for sock in /tmp/srt-mux-*-*.sock; do
  [ -S "$sock" ] || continue
  pid=${sock#/tmp/srt-mux-}; pid=${pid%%-*}
  kill -0 "$pid" 2>/dev/null || rm -f "$sock"
done
echo "== as $user: ipybox setup --sandbox"
as_user target/debug/ipybox setup --sandbox
echo "== as $user: untrusted-workspace tests"
# The `python -m` server test needs the MCP SDK environment in tests/servers, which is built
# with root's Python; it runs as root only.
as_user "$test_bin" --test-threads 2 --skip a_planted_module_does_not_replace_a_python_m_server
