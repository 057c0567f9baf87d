#!/usr/bin/env bash
# A Jupyter server and its kernels in namespaces of their own, as on a cluster: a network
# namespace with nothing but its own loopback (and a "cluster" address on it), so no route back
# to this machine; a mount namespace where HIDE (the workspace) is an empty tmpfs, so the kernels
# do not see it; a pid namespace, so everything inside dies with this process. The server listens
# on 127.0.0.1:8888 inside; the host reaches it through STATE/gw.sock (forward a port to it with
# `socat TCP-LISTEN:PORT,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:STATE/gw.sock`).
#
# Usage: remote-gateway.sh jupyter-server|enterprise-gateway HIDE STATE TOKEN
#   jupyter-server: Jupyter Server 2 from $PYTHON (ipybox's own environment);
#   enterprise-gateway: Jupyter Enterprise Gateway 3.3 from tests/servers/.remote-venv.
# Used by the tests (tests/common RemoteGateway, tests/e2e/remote.test.mjs); runs as root, or
# unprivileged in a user namespace.
set -euo pipefail
kind="$1" hide="$2" state="$3" token="$4"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$kind" in
  jupyter-server)
    server="'${PYTHON:?PYTHON names the Python that has jupyter_server}' -m jupyter_server --ServerApp.ip=127.0.0.1 --ServerApp.port=8888 --IdentityProvider.token=$token --ServerApp.open_browser=False --allow-root --ServerApp.root_dir=/"
    ;;
  enterprise-gateway)
    eg="$here/.remote-venv/bin/jupyter-enterprisegateway"
    [ -x "$eg" ] || { echo "run tests/servers/install.sh first" >&2; exit 2; }
    # EG refuses to start kernels for root unless told otherwise.
    server="'$eg' --ip=127.0.0.1 --port=8888 --EnterpriseGatewayApp.auth_token=$token --EnterpriseGatewayApp.default_kernel_name=python3 --EnterpriseGatewayApp.unauthorized_users=nobody-at-all"
    ;;
  *) echo "unknown server kind $kind" >&2; exit 2 ;;
esac
mkdir -p "$state"
export JUPYTER_CONFIG_DIR="$state/config" JUPYTER_DATA_DIR="$state/data" \
  JUPYTER_RUNTIME_DIR="$state/runtime" JUPYTER_PLATFORM_DIRS=1 IPYTHONDIR="$state/ipython"
user=()
[ "$(id -u)" = 0 ] || user=(--user --map-root-user)
# EG needs an address that is not loopback to exist (it assumes a cluster network); one on `lo`
# gives it that without any route anywhere.
exec unshare "${user[@]}" --net --mount --pid --fork --kill-child sh -c "set -e; ip link set lo up; ip addr add 10.213.0.2/32 dev lo; \
  mount -t tmpfs tmpfs '$hide'; \
  socat UNIX-LISTEN:'$state/gw.sock',fork TCP:127.0.0.1:8888 & \
  cd /; exec $server"
