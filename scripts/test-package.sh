#!/usr/bin/env bash
# Tries the packages scripts/package.sh built, the way a person gets them: in a fresh Debian 12
# root (debootstrap --variant=minbase) it installs dist/'s ipybox .deb with apt, checks that no
# -dev package, no compiler and no WebKitGTK came with it, has `ipybox mcp` answer an MCP
# initialize and tools/list, sets up the Python environment and runs a first cell; then it
# installs ipybox-desktop, starts it as its desktop entry says under Xvfb, waits for its
# window and takes a screenshot; finally it purges both and checks nothing is left.
#
# Slow (about 10 minutes, most of it debootstrap, WebKitGTK and the kernels' Python packages
# from the network), so it is not part of scripts/test.sh. Runs as root (chroot, mounts).
# IPYBOX_PKG_ROOT=DIR tests in DIR (made by debootstrap if empty) and keeps it afterwards.
# Writes its measurements and screenshot to target/package-test/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ "$(id -u)" = 0 ] || { echo "!! run as root (debootstrap, chroot, mounts)"; exit 1; }

VERSION="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)"
ARCH="$(dpkg --print-architecture)"
HEADLESS="dist/ipybox_${VERSION}_${ARCH}.deb"
DESKTOP="dist/ipybox-desktop_${VERSION}_${ARCH}.deb"
for deb in "$HEADLESS" "$DESKTOP"; do
  [ -f "$deb" ] || { echo "!! $deb is missing: run scripts/package.sh first"; exit 1; }
done
OUT="$PWD/target/package-test"
mkdir -p "$OUT"
# The machine's own Debian mirror (deb822 sources, else sources.list).
MIRROR="$(sed -n 's/^URIs: *\(.*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)"
[ -n "$MIRROR" ] || MIRROR="$(awk '$1 == "deb" && $3 ~ /^bookworm$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

export DEBIAN_FRONTEND=noninteractive
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v Xvfb >/dev/null || need+=(xvfb)
command -v xdotool >/dev/null || need+=(xdotool)
command -v xprop >/dev/null || need+=(x11-utils)
command -v import >/dev/null || need+=(imagemagick)
command -v desktop-file-validate >/dev/null || need+=(desktop-file-utils)
command -v appstreamcli >/dev/null || need+=(appstream)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}"
fi

ROOT="${IPYBOX_PKG_ROOT:-}"
KEEP=1
if [ -z "$ROOT" ]; then
  ROOT="$(mktemp -d /var/tmp/ipybox-pkgtest.XXXXXX)"
  KEEP=0
fi
XVFB_PID=""
APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null || true
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
  for m in tmp/.X11-unix dev sys proc; do
    mountpoint -q "$ROOT/$m" && umount -R "$ROOT/$m" || true
  done
  [ "$KEEP" = 1 ] || rm -rf --one-file-system "$ROOT"
}
trap cleanup EXIT

# Runs a command in the root, with a clean environment like a login's.
in_root() {
  chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
fail() { echo "!! $*"; exit 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# Packages that have no place on a user's machine: headers, compilers.
no_build_packages() {
  local found
  found="$(in_root dpkg-query -W -f '${Package}\n' | grep -E -- '-dev(:|$)|^(gcc|g\+\+|cpp|clang|build-essential)(-[0-9.]+)?$|^libgcc-[0-9]+-dev' || true)"
  [ -z "$found" ] || fail "$1 installed build packages: $found"
}

echo "== a fresh Debian 12 root in $ROOT (mirror $MIRROR)"
if [ ! -e "$ROOT/etc/debian_version" ]; then
  debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" > "$OUT/debootstrap.log"
fi
cat > "$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The certificate authorities this machine added (a TLS-inspecting proxy's, say) and its pip
# settings, so that the root reaches PyPI as the machine does; ca-certificates, which the
# ipybox package depends on, takes them in when it is installed.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$ROOT/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi
if [ -f /etc/pip.conf ]; then cp /etc/pip.conf "$ROOT/etc/pip.conf"; fi
mount -t proc proc "$ROOT/proc"
mount --rbind /sys "$ROOT/sys" && mount --make-rslave "$ROOT/sys"
mount --rbind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev"
in_root apt-get update -qq
cp "$HEADLESS" "$DESKTOP" "$ROOT/tmp/"

echo "== apt-get install ./$(basename "$HEADLESS")"
t0="$(now)"
in_root apt-get install -y -qq "/tmp/$(basename "$HEADLESS")" > "$OUT/apt-headless.log"
t_installed="$(now)"
no_build_packages ipybox
in_root dpkg-query -W 'libwebkit2gtk*' 'libgtk-3*' 2>/dev/null | grep -q . \
  && fail "the headless package brought WebKitGTK or GTK: $(in_root dpkg-query -W 'libwebkit2gtk*' 'libgtk-3*')"
in_root ipybox --version

echo "== ipybox open without the desktop app: says how to install it"
if in_root ipybox open > "$OUT/open.txt" 2>&1; then fail "ipybox open succeeded without a desktop app"; fi
grep -q 'ipybox-desktop' "$OUT/open.txt" || fail "ipybox open did not say how to install the app: $(cat "$OUT/open.txt")"
cat "$OUT/open.txt"

echo "== ipybox mcp answers initialize and tools/list over stdio (no WebKitGTK installed)"
cat > "$ROOT/tmp/mcp_check.py" <<'PY'
"""Talks MCP to `ipybox mcp` over stdio; prints the tools and the server's memory."""
import json, subprocess, sys, time

start = time.monotonic()
server = subprocess.Popen(["ipybox", "mcp", "--workspace", "/root/mcp-ws"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

def send(message):
    server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()

def answer(id_):
    for line in server.stdout:
        message = json.loads(line)
        if message.get("id") == id_:
            return message
    sys.exit("ipybox mcp closed its output")

send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test-package", "version": "1"}}})
init = answer(1)
initialized_in = time.monotonic() - start
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
tools = [t["name"] for t in answer(2)["result"]["tools"]]
with open(f"/proc/{server.pid}/status") as f:
    rss = next(line.split()[1] for line in f if line.startswith("VmRSS:"))
with open(f"/proc/{server.pid}/maps") as f:
    gui = sorted({l.split()[-1] for l in f if "webkit" in l or "gtk" in l})
server.stdin.close()
server.wait(timeout=30)
print(f"server: {init['result']['serverInfo']['name']}; tools: {', '.join(tools)}")
print(f"initialize answered in {initialized_in * 1000:.0f} ms; VmRSS {rss} kB; GUI libraries mapped: {gui or 'none'}")
assert "execute_ipython_cell" in tools, tools
assert not gui, gui
PY
in_root python3 /tmp/mcp_check.py | tee "$OUT/mcp.txt"

echo "== ipybox setup, then a first cell"
in_root ipybox setup > "$OUT/setup.log" 2>&1 || { tail -20 "$OUT/setup.log"; fail "ipybox setup failed"; }
t_setup="$(now)"
result="$(in_root sh -c 'mkdir -p /root/ws && cd /root/ws && ipybox exec "print(1+1)"')"
t_first="$(now)"
[ "$result" = 2 ] || fail "ipybox exec printed '$result', not 2"
no_build_packages "ipybox setup"
timing="install $(secs "$t0" "$t_installed") s + setup $(secs "$t_installed" "$t_setup") s + first cell $(secs "$t_setup" "$t_first") s = $(secs "$t0" "$t_first") s"
echo "   install to first result: $timing" | tee "$OUT/timing.txt"

echo "== apt-get install ./$(basename "$DESKTOP")"
in_root apt-get install -y -qq "/tmp/$(basename "$DESKTOP")" > "$OUT/apt-desktop.log"
no_build_packages ipybox-desktop
entry="$ROOT/usr/share/applications/ipybox-desktop.desktop"
[ -f "$entry" ] || fail "no desktop entry at /usr/share/applications/ipybox-desktop.desktop"
desktop-file-validate "$entry"
appstreamcli validate --no-net "$ROOT/usr/share/metainfo/ai.ipybox.desktop.metainfo.xml"
for size in 16 32 48 128 256 512; do
  [ -f "$ROOT/usr/share/icons/hicolor/${size}x${size}/apps/ipybox-desktop.png" ] || fail "no ${size}x${size} icon"
done
in_root ipybox open --help > /dev/null  # the headless ipybox still answers for itself

echo "== the app from its desktop entry, under Xvfb, on a first run (no Python environment yet)"
display=":$((90 + RANDOM % 9))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp -noreset &
XVFB_PID=$!
sleep 1
mkdir -p "$ROOT/tmp/.X11-unix"
mount --bind /tmp/.X11-unix "$ROOT/tmp/.X11-unix"
exec_line="$(sed -n 's/^Exec=//p' "$entry" | sed 's/ *%[fFuU]//g')"
echo "   Exec=$exec_line"
mkdir -p "$ROOT/root/first-run"
# A person's first start: an empty data directory, so the app provisions its environment.
chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DISPLAY="$display" \
  XDG_DATA_HOME=/root/first-run/data PATH=/usr/local/bin:/usr/bin:/bin \
  sh -c "cd /root/first-run && exec $exec_line" > "$OUT/app.log" 2>&1 &
APP_PID=$!
window=""
for _ in $(seq 60); do
  window="$(DISPLAY=$display xdotool search --onlyvisible --class ipybox 2>/dev/null | head -n1 || true)"
  [ -n "$window" ] && break
  sleep 1
done
[ -n "$window" ] || { tail -20 "$OUT/app.log"; fail "no ipybox window within 60 s"; }
DISPLAY=$display xprop -id "$window" WM_CLASS _NET_WM_NAME | tee "$OUT/window.txt"
sleep 10
DISPLAY=$display import -window root "$OUT/first-run.png"
echo "   screenshot: $OUT/first-run.png"
sleep 50
DISPLAY=$display import -window root "$OUT/first-run-later.png"
echo "   screenshot a minute later: $OUT/first-run-later.png"
kill "$APP_PID"; wait "$APP_PID" 2>/dev/null || true; APP_PID=""
umount "$ROOT/tmp/.X11-unix"

echo "== apt-get remove --purge: nothing left"
in_root apt-get remove --purge -y -qq ipybox-desktop ipybox > "$OUT/apt-remove.log"
left="$(ls -d "$ROOT"/usr/bin/ipybox* "$ROOT"/usr/share/applications/ipybox* \
  "$ROOT"/usr/share/icons/hicolor/*/apps/ipybox* "$ROOT"/usr/share/metainfo/ai.ipybox* 2>/dev/null || true)"
[ -z "$left" ] || fail "left behind: $left"
echo "== packages OK ($OUT)"
