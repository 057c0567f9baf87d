#!/usr/bin/env bash
# Sets up ipybox on a fresh Debian 12 (or Ubuntu) machine and runs it on a default workspace:
# system packages, Rust (if missing), the ipybox binary in ~/.local/bin, the Python
# environment for the kernels, the sandbox runtime (srt, with bubblewrap, socat, ripgrep and
# a recent enough Node.js), then a first cell in ~/ipybox-workspace.
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

echo "== build ipybox"
cargo build --release --no-default-features -p ipybox
mkdir -p "$BIN_DIR"
install -m 0755 target/release/ipybox "$BIN_DIR/ipybox"
echo "   installed $BIN_DIR/ipybox"

echo "== Python environment for the kernels, sandbox runtime"
"$BIN_DIR/ipybox" setup --sandbox

echo "== first run in $WORKSPACE (sandboxed)"
mkdir -p "$WORKSPACE"
FIRST_CELL="$(cat <<'PY'
import sys, platform
import matplotlib.pyplot as plt
print(f"ipybox is ready: Python {platform.python_version()} in {sys.prefix}")
plt.figure(figsize=(4, 2.5)); plt.bar(["a", "b", "c"], [3, 1, 2]); plt.title("hello from ipybox"); plt.show()
PY
)"
if ! "$BIN_DIR/ipybox" exec --sandbox --workspace "$WORKSPACE" "$FIRST_CELL"; then
  echo "!! the sandbox does not work on this system (see the message above); running unsandboxed"
  "$BIN_DIR/ipybox" exec --workspace "$WORKSPACE" "$FIRST_CELL"
fi
case ":$PATH:" in
  *":$BIN_DIR:"*) ;;
  *) echo "Add $BIN_DIR to your PATH to run ipybox from anywhere." ;;
esac
