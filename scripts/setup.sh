#!/usr/bin/env bash
# Sets up ipybox on a fresh Debian 12 (or Ubuntu) machine and runs it on a default workspace:
# system packages (WebKitGTK for the desktop app), Rust (if missing), the app's web UI, the
# ipybox binary in ~/.local/bin, the Python environment for the kernels, the sandbox runtime
# (srt, with bubblewrap, socat, ripgrep and a recent enough Node.js), then a first notebook
# in ~/ipybox-workspace: opened in the app when there is a display, run headless otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WORKSPACE="${IPYBOX_WORKSPACE:-$HOME/ipybox-workspace}"
BIN_DIR="${IPYBOX_BIN_DIR:-$HOME/.local/bin}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

echo "== system packages"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq build-essential pkg-config curl ca-certificates python3 python3-venv python3-pip \
  bubblewrap socat ripgrep
# The desktop app (Tauri on WebKitGTK).
$SUDO apt-get install -y -qq --no-install-recommends libwebkit2gtk-4.1-dev libgtk-3-dev libxdo-dev libssl-dev \
  libayatana-appindicator3-dev librsvg2-dev libdbus-1-dev
# npm installs srt (and, when the system's Node.js is older than srt needs, a Node.js for it).
command -v npm >/dev/null || $SUDO apt-get install -y -qq nodejs npm

if ! command -v cargo >/dev/null; then
  echo "== Rust toolchain (rustup)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi

if ! command -v uv >/dev/null; then
  echo "== uv (fast Python environment provisioning; optional)"
  python3 -m pip install --quiet --user uv 2>/dev/null \
    || python3 -m pip install --quiet --user --break-system-packages uv 2>/dev/null \
    || echo "   uv not installed; ipybox will use python3 -m venv and pip"
  export PATH="$HOME/.local/bin:$PATH"
fi

echo "== build the app's web UI"
# shellcheck source=lib/node.sh
. scripts/lib/node.sh
ensure_node_for_ui
( cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build )

echo "== build ipybox (desktop app, command line and MCP server in one binary)"
cargo build --release -p ipybox
mkdir -p "$BIN_DIR"
install -m 0755 target/release/ipybox "$BIN_DIR/ipybox"
echo "   installed $BIN_DIR/ipybox"

echo "== Python environment for the kernels, sandbox runtime"
"$BIN_DIR/ipybox" setup --sandbox

echo "== first notebook in $WORKSPACE"
mkdir -p "$WORKSPACE"
FIRST_CELL="$(cat <<'PY'
import sys, platform
import matplotlib.pyplot as plt
print(f"ipybox is ready: Python {platform.python_version()} in {sys.prefix}")
plt.figure(figsize=(4, 2.5)); plt.bar(["a", "b", "c"], [3, 1, 2]); plt.title("hello from ipybox"); plt.show()
PY
)"
NOTEBOOK="$WORKSPACE/welcome.ipynb"
if [ ! -e "$NOTEBOOK" ]; then
  FIRST_CELL="$FIRST_CELL" python3 - "$NOTEBOOK" <<'PY'
import json, os, sys
cell = os.environ["FIRST_CELL"]
lines = cell.splitlines(keepends=True)
nb = {
    "cells": [
        {"cell_type": "markdown", "id": "welcome", "metadata": {},
         "source": ["# Welcome to ipybox\n", "\n", "Run the cell below with **Shift+Enter**. "
                    "Tool calls your code makes to MCP servers ask you first."]},
        {"cell_type": "code", "id": "first-plot", "metadata": {}, "execution_count": None,
         "outputs": [], "source": lines},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                 "language_info": {"name": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}
with open(sys.argv[1], "w") as f:
    json.dump(nb, f, indent=1)
    f.write("\n")
PY
fi
case ":$PATH:" in
  *":$BIN_DIR:"*) ;;
  *)
    echo "== ipybox is in $BIN_DIR, which this shell does not search for programs"
    echo "   In this shell:  export PATH=\"$BIN_DIR:\$PATH\""
    if [ "$BIN_DIR" = "$HOME/.local/bin" ] && grep -qs '.local/bin' "$HOME/.profile"; then
      echo "   Your ~/.profile adds it from your next login on; until then, run $BIN_DIR/ipybox"
    else
      echo "   For good:       echo 'export PATH=\"$BIN_DIR:\$PATH\"' >> ~/.profile   (then log in again)"
    fi
    ;;
esac
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "== opening the app on $NOTEBOOK"
  exec "$BIN_DIR/ipybox" open "$NOTEBOOK"
fi
echo "== no display: running the first cell headless (sandboxed)"
if ! "$BIN_DIR/ipybox" exec --sandbox --workspace "$WORKSPACE" "$FIRST_CELL"; then
  echo "!! the sandbox does not work on this system (see the message above); running unsandboxed"
  "$BIN_DIR/ipybox" exec --workspace "$WORKSPACE" "$FIRST_CELL"
fi
case ":$PATH:" in
  *":$BIN_DIR:"*) echo "On a machine with a display, open the app with: ipybox open $NOTEBOOK" ;;
  *) echo "On a machine with a display, open the app with: $BIN_DIR/ipybox open $NOTEBOOK" ;;
esac
