#!/bin/sh
# The container's entry point: `ipybox mcp --http 0.0.0.0:8000 --workspace /workspace`, with
# the safe choices of docs/container.md made here, where nobody is around to make them:
#   IPYBOX_MCP_TOKEN  the bearer token clients must send; required (no token, no server).
#   IPYBOX_SANDBOX    1 (default): kernels run inside srt, which needs the container started
#                     with /proc unmasked; ipybox refuses to start when it cannot. 0: no
#                     sandbox, the container is the only boundary around kernel code.
#   IPYBOX_APPROVAL   who approves MCP tool calls: `rules` (the default when
#                     /etc/ipybox/approval-rules.json exists, or IPYBOX_APPROVAL_RULES names
#                     a file), `reject` (the default otherwise) or `auto` (approve every call;
#                     only when asked for by name).
#   IPYBOX_MCP_ALLOWED_HOSTS  host names clients may reach the server by besides loopback
#                     ones (read by ipybox itself).
# Arguments are passed on to `ipybox mcp` (e.g. --max-sessions 2); --approval or --rules
# among them replace the choice above.
set -eu

die() {
  echo "ipybox-container: $*" >&2
  exit 2
}

[ -n "${IPYBOX_MCP_TOKEN:-}" ] ||
  die "set IPYBOX_MCP_TOKEN to the bearer token clients must send (e.g. -e IPYBOX_MCP_TOKEN=\"\$(openssl rand -hex 32)\")"

set -- --http 0.0.0.0:8000 --workspace /workspace "$@"

case "${IPYBOX_SANDBOX:-1}" in
  1 | yes | true)
    # srt runs each kernel in bubblewrap with its own user, PID and network namespaces and a
    # fresh /proc. A container runtime's default masks over /proc (/proc/kcore, /proc/sys, …)
    # make the kernel refuse that fresh /proc; try it here so the failure says what to do.
    if ! err="$(bwrap --ro-bind / / --unshare-user --unshare-pid --unshare-net --dev /dev --proc /proc true 2>&1)"; then
      die "the sandbox cannot start in this container ($err). Start it with /proc unmasked
  podman: --security-opt unmask=/proc/* --security-opt no-new-privileges
  docker: --security-opt systempaths=unconfined --security-opt seccomp=unconfined --security-opt no-new-privileges
or set IPYBOX_SANDBOX=0 to run kernels without the sandbox (the container is then the only boundary around kernel code; see docs/container.md)"
    fi
    set -- "$@" --sandbox
    ;;
  0 | no | false)
    echo "ipybox-container: IPYBOX_SANDBOX=0: kernels run without the sandbox; the container is the only boundary around their code" >&2
    ;;
  *) die "IPYBOX_SANDBOX is 1 or 0, not ${IPYBOX_SANDBOX}" ;;
esac

chosen=
for arg in "$@"; do
  case "$arg" in --approval | --approval=* | --rules | --rules=*) chosen=yes ;; esac
done
if [ -z "$chosen" ]; then
  rules="${IPYBOX_APPROVAL_RULES:-/etc/ipybox/approval-rules.json}"
  mode="${IPYBOX_APPROVAL:-}"
  if [ -z "$mode" ]; then
    if [ -e "$rules" ]; then mode=rules; else mode=reject; fi
  fi
  case "$mode" in
    rules)
      [ -e "$rules" ] || die "IPYBOX_APPROVAL=rules needs the rules file $rules (mount it, or name it with IPYBOX_APPROVAL_RULES)"
      set -- "$@" --approval rules "$rules"
      ;;
    reject) set -- "$@" --approval reject ;;
    auto) set -- "$@" --approval auto ;;
    *) die "IPYBOX_APPROVAL is rules, reject or auto, not $mode" ;;
  esac
  echo "ipybox-container: MCP tool calls: $mode$([ "$mode" = rules ] && echo " ($rules)")" >&2
fi

exec ipybox mcp "$@"
