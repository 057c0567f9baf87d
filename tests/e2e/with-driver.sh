#!/usr/bin/env bash
# Runs a command with the real desktop app reachable through WebDriver: a display of its own
# (Xvfb), a window manager on it (openbox, as a person has one: focus, stacking, placement
# and transient dialogs differ without one) and tauri-driver (WebKitWebDriver), all stopped
# afterwards. The app is the debug build unless IPYBOX_APP says otherwise.
# Usage: tests/e2e/with-driver.sh COMMAND...
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

app="${IPYBOX_APP:-$PWD/target/debug/ipybox}"
[ -x "$app" ] || { echo "build the app first (cargo build -p ipybox)"; exit 1; }
command -v tauri-driver >/dev/null || { echo "tauri-driver is missing: cargo install tauri-driver --locked"; exit 1; }
command -v WebKitWebDriver >/dev/null || { echo "WebKitWebDriver is missing: apt-get install webkit2gtk-driver"; exit 1; }

[ $# -gt 0 ] || { echo "usage: $0 COMMAND..."; exit 2; }
mkdir -p target/e2e-shots

# A display of our own, a window manager and a driver on it; all end with this script. Runs
# side by side (two checkouts at once) take IPYBOX_E2E_PORT apart: the driver listens there,
# WebKitWebDriver one above, and each run stops only its own processes.
port="${IPYBOX_E2E_PORT:-4444}"
n=90
while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
display=":$n"
# -noreset: Xvfb otherwise resets when its last client leaves (the readiness check
# below is one), and a client connecting during the reset fails ("Failed to open the
# display", seen from openbox now and then).
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp -noreset > target/e2e-xvfb.log 2>&1 &
xvfb=$!
WM_PID=""
tauri_driver=""
cleanup() {
  # tauri-driver leads its own process group, with the WebKitWebDriver it started.
  [ -z "$tauri_driver" ] || kill -- "-$tauri_driver" 2>/dev/null || true
  [ -z "$WM_PID" ] || kill "$WM_PID" 2>/dev/null || true
  kill "$xvfb" 2>/dev/null || true
  # Gone before this script ends: an Xvfb still closing can remove the socket of the display
  # a run started right after took with the same number (that run's openbox then could not
  # open its display).
  wait 2>/dev/null || true
}
trap cleanup EXIT
export DISPLAY="$display"
# Up to 15 s: a loaded machine (a build beside it) has been seen to need more than 5.
for _ in $(seq 150); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
# Ours, not another run's that took the number first (this Xvfb then gave up).
kill -0 "$xvfb" 2>/dev/null && xdpyinfo >/dev/null 2>&1 \
  || { echo "Xvfb did not start on $display (target/e2e-xvfb.log):"; cat target/e2e-xvfb.log; exit 1; }

# shellcheck source=../../scripts/lib/window-manager.sh
. scripts/lib/window-manager.sh
start_window_manager "$display" target/e2e-openbox.log

setsid tauri-driver --port "$port" --native-port "$((port + 1))" > target/e2e-tauri-driver.log 2>&1 &
tauri_driver=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/status" >/dev/null && break; sleep 0.1; done

WEBDRIVER_URL="http://127.0.0.1:$port" IPYBOX_APP="$app" "$@"
