#!/usr/bin/env bash
# Builds the ipybox MCP server image (packaging/container/Containerfile, docs/container.md)
# with podman, from nothing but Debian's package mirror and the package registries:
#   1. the base image: a Debian 12 root made with `debootstrap --variant=minbase` and
#      `podman import`ed as $IPYBOX_BASE_IMAGE (skipped when that image exists; a BASE of
#      your own, e.g. docker.io/library/debian:bookworm-slim, skips it too);
#   2. the headless ipybox (`cargo build --release --no-default-features`: no WebKit/GTK);
#   3. the image, $IPYBOX_IMAGE (default localhost/ipybox:latest).
# Installs debootstrap, podman and runc when missing (apt-get, as root or with sudo). podman
# runs with packaging/container/containers.conf (runc, cgroupfs), through CONTAINERS_CONF.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/packaging/container/containers.conf}"
export PATH="$HOME/.cargo/bin:$PATH"
IMAGE="${IPYBOX_IMAGE:-localhost/ipybox:latest}"
BASE="${IPYBOX_BASE_IMAGE:-localhost/debian-bookworm-minbase}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

need_apt=()
command -v podman >/dev/null || need_apt+=(podman)
command -v runc >/dev/null || need_apt+=(runc)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== installing ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need_apt[@]}"
fi

# The mirror this machine's apt uses (deb822 or one-line sources), else Debian's own.
mirror() {
  local m
  m="$(grep -hoE '(URIs:[[:space:]]*|^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -oE 'https?://[^[:space:]]+' | head -n 1 || true)"
  echo "${m:-http://deb.debian.org/debian}"
}

if ! podman image exists "$BASE"; then
  case "$BASE" in
    localhost/*) ;;
    *) echo "ipybox: the base image $BASE is not here; pull it first, or leave IPYBOX_BASE_IMAGE unset to make one with debootstrap" >&2; exit 1 ;;
  esac
  if ! command -v debootstrap >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends debootstrap
  fi
  root="$(mktemp -d)"
  trap '$SUDO rm -rf "$root"' EXIT
  debian="$(mirror)"
  debian="${debian%/}"
  echo "== base image $BASE: debootstrap --variant=minbase bookworm from $debian"
  $SUDO debootstrap --variant=minbase bookworm "$root" "$debian" > "$root.log" 2>&1 ||
    { tail -n 20 "$root.log" >&2; exit 1; }
  rm -f "$root.log"
  # Security and point-release updates too, as Debian's own images have them.
  printf '%s\n' \
    "deb $debian bookworm main" \
    "deb $debian bookworm-updates main" \
    "deb ${debian%/debian}/debian-security bookworm-security main" |
    $SUDO tee "$root/etc/apt/sources.list" >/dev/null
  $SUDO rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  $SUDO tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  $SUDO rm -rf "$root"
  trap - EXIT
fi

echo "== headless ipybox (release, no desktop)"
cargo build --release -p ipybox --no-default-features
binary=target/release/ipybox
if ldd "$binary" | grep -Ei 'webkit|gtk|soup|javascriptcore'; then
  echo "ipybox: the headless binary links the desktop libraries above" >&2
  exit 1
fi

echo "== image $IMAGE (base $BASE)"
context="target/container"
rm -rf "$context"
mkdir -p "$context"
cp packaging/container/Containerfile packaging/container/entrypoint.sh "$context/"
cp "$binary" "$context/ipybox"
# A TLS-inspecting proxy's authorities, which this machine trusts, for the build stage that
# fetches from PyPI and npm (IPYBOX_BUILD_CA_DIR=/nonexistent: none).
mkdir -p "$context/extra-ca"
for ca in "${IPYBOX_BUILD_CA_DIR:-/usr/local/share/ca-certificates}"/*.crt; do
  if [ -f "$ca" ]; then cp "$ca" "$context/extra-ca/"; fi
done
podman build --build-arg "BASE=$BASE" -t "$IMAGE" -f "$context/Containerfile" "$context"
podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$IMAGE"
