#!/usr/bin/env bash
# Installs what scripts/test.sh needs and a fresh Debian 12 machine lacks: the build
# prerequisites of the desktop app, the sandbox's tools, Xvfb, xdotool, WebKitWebDriver,
# Chromium and tauri-driver for the window's end-to-end tests, a D-Bus daemon and GNOME
# Keyring for the keyring test, uv, and a Node.js recent enough to build the UI. Installs
# only what is missing; run by scripts/test.sh itself.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
command -v pip3 >/dev/null || python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
command -v cc >/dev/null || need_apt+=(build-essential)
command -v curl >/dev/null || need_apt+=(curl ca-certificates)
# Reference MCP servers from npm (Node.js >= 18) for the tool-call tests.
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
# The sandbox (srt) runs kernels with bubblewrap; srt also needs socat and ripgrep.
command -v bwrap >/dev/null || need_apt+=(bubblewrap)
command -v socat >/dev/null || need_apt+=(socat)
command -v rg >/dev/null || need_apt+=(ripgrep)
# The APT repository scripts/apt-repo.sh writes: dpkg-scanpackages and GnuPG.
command -v dpkg-scanpackages >/dev/null || need_apt+=(dpkg-dev)
command -v gpg >/dev/null || need_apt+=(gnupg)
# The desktop app: WebKitGTK and friends to build it (Tauri's Linux prerequisites); Xvfb,
# xdotool, WebKitWebDriver and Chromium to test it without a screen; a window manager
# (openbox: focus and modality differ without one); a D-Bus daemon and GNOME Keyring for the
# test of a remote server's token in the keyring; dbus-monitor and a notification service
# (dunst) for the approval notifications; poppler-utils (pdftoppm, pdftotext) to read the
# PDF `ipybox export --to pdf` prints.
for pkg in pkg-config libwebkit2gtk-4.1-dev libgtk-3-dev libxdo-dev libssl-dev \
  libayatana-appindicator3-dev librsvg2-dev libdbus-1-dev xvfb xauth xdotool x11-utils imagemagick \
  webkit2gtk-driver chromium fonts-dejavu-core dbus-daemon dbus-bin gnome-keyring openbox dunst poppler-utils; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== installing test prerequisites: ${need_apt[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need_apt[@]}"
fi

# uv makes provisioning the kernels' Python environment fast; ipybox falls back to
# venv + pip without it (and a test covers that path), but the tests of a project's own
# .venv make one with uv. A user's pip puts it in ~/.local/bin, as scripts/setup.sh does.
export PATH="$HOME/.local/bin:$PATH"
if ! command -v uv >/dev/null; then
  pip=(python3 -m pip install --quiet --disable-pip-version-check)
  "${pip[@]}" uv 2>/dev/null \
    || "${pip[@]}" --break-system-packages uv 2>/dev/null \
    || "${pip[@]}" --user uv 2>/dev/null \
    || "${pip[@]}" --user --break-system-packages uv 2>/dev/null \
    || { echo "uv could not be installed with pip; the tests of a project's .venv need it" >&2; exit 1; }
  hash -r
fi

export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null; then
  echo "== Rust toolchain (rustup)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
fi
command -v rustfmt >/dev/null || rustup component add rustfmt
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy

# The WebDriver server for Tauri apps (drives WebKitWebDriver) for the app's end-to-end tests.
command -v tauri-driver >/dev/null || cargo install tauri-driver --locked --quiet
