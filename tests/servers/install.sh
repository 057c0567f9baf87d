#!/usr/bin/env bash
# Installs the reference MCP servers that ipybox's end-to-end tests run against:
#   node_modules/  from package-lock.json (npm ci)
#   .venv/         from requirements.txt (uv if on PATH, else python3 -m venv + pip)
#   .remote-venv/  from remote-requirements.txt (Jupyter Enterprise Gateway), the same way
#
# Idempotent: each half is skipped when a stamp shows it already matches its lock file.
# Usage: tests/servers/install.sh [--force]
# Env:   PYTHON  interpreter for the venv (default: python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

force=0
case "${1:-}" in
  "") ;;
  --force) force=1 ;;
  *) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac

log() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$@" | cut -d' ' -f1 | tr '\n' ' '
  else
    shasum -a 256 "$@" | cut -d' ' -f1 | tr '\n' ' '
  fi
}

# Two test runs starting at once must not install over each other.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$here/.install.lock"
  flock 9
fi

# ---- npm: server-everything, server-filesystem, server-memory --------------------------
npm_stamp=node_modules/.ipybox-install-stamp
npm_want="$(sha256 package.json package-lock.json)"
npm_entries=(
  node_modules/@modelcontextprotocol/server-everything/dist/index.js
  node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
  node_modules/@modelcontextprotocol/server-memory/dist/index.js
)
npm_ok() {
  [[ -f $npm_stamp && "$(cat "$npm_stamp")" == "$npm_want" ]] || return 1
  local f
  for f in "${npm_entries[@]}"; do [[ -f $f ]] || return 1; done
}

if [[ $force == 0 ]] && npm_ok; then
  log "node_modules matches package-lock.json, skipped"
else
  command -v node >/dev/null 2>&1 || die "node is not on PATH (Node.js >= 18 is needed for the npm servers)"
  command -v npm >/dev/null 2>&1 || die "npm is not on PATH"
  log "npm ci (node $(node --version)) into $here/node_modules"
  # No package here needs install scripts; skipping them keeps the install offline-safe.
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error </dev/null \
    || die "npm ci failed (see npm's output above)"
  for f in "${npm_entries[@]}"; do [[ -f $f ]] || die "npm ci did not install $f"; done
  printf '%s' "$npm_want" >"$npm_stamp"
  log "node_modules installed"
fi

# ---- Python venv: mcp (FastMCP, for echo_server.py), mcp-server-time, mcp-server-fetch, pyte
py_stamp=.venv/.ipybox-install-stamp
py_want="$(sha256 requirements.txt)"
py_ok() {
  [[ -f $py_stamp && "$(cat "$py_stamp")" == "$py_want" ]] || return 1
  [[ -x .venv/bin/mcp-server-time && -x .venv/bin/mcp-server-fetch ]] || return 1
  # A venv outlives the interpreter it points at when that is upgraded or removed.
  .venv/bin/python -c '' >/dev/null 2>&1
}

if [[ $force == 0 ]] && py_ok; then
  log ".venv matches requirements.txt, skipped"
else
  python="${PYTHON:-python3}"
  command -v "$python" >/dev/null 2>&1 || die "$python is not on PATH (Python >= 3.10 is needed for the Python servers)"
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || die "$python is $("$python" --version 2>&1); mcp needs Python >= 3.10"
  rm -rf .venv
  if command -v uv >/dev/null 2>&1; then
    log "uv venv + uv pip sync into $here/.venv ($("$python" --version 2>&1))"
    # Use the interpreter at hand: uv must not try to download one.
    UV_PYTHON_DOWNLOADS=never uv venv --quiet --python "$(command -v "$python")" .venv </dev/null \
      || die "uv venv failed"
    uv pip sync --quiet --python .venv/bin/python requirements.txt </dev/null \
      || die "uv pip sync -r requirements.txt failed (see uv's output above)"
  else
    log "python -m venv + pip install into $here/.venv ($("$python" --version 2>&1))"
    "$python" -m venv .venv </dev/null || die "$python -m venv failed (on Debian: apt-get install python3-venv)"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r requirements.txt </dev/null \
      || die "pip install -r requirements.txt failed (see pip's output above)"
  fi
  .venv/bin/python -c 'import mcp.server.fastmcp' \
    || die "the venv cannot import mcp.server.fastmcp, which echo_server.py needs"
  .venv/bin/python -c 'import pyte' \
    || die "the venv cannot import pyte, which tests/fixtures/untrusted-text/screen.py needs"
  [[ -x .venv/bin/mcp-server-time && -x .venv/bin/mcp-server-fetch ]] \
    || die "mcp-server-time or mcp-server-fetch is missing from .venv/bin"
  printf '%s' "$py_want" >"$py_stamp"
  log ".venv installed"
fi

# ---- Python venv: Jupyter Enterprise Gateway, for the remote-kernel tests -------------------
eg_stamp=.remote-venv/.ipybox-install-stamp
eg_want="$(sha256 remote-requirements.txt)"
eg_ok() {
  [[ -f $eg_stamp && "$(cat "$eg_stamp")" == "$eg_want" ]] || return 1
  [[ -x .remote-venv/bin/jupyter-enterprisegateway ]] || return 1
  # pip, as a cluster's kernel image has it (installing packages in a remote kernel runs it).
  .remote-venv/bin/python -c 'import pip' >/dev/null 2>&1
}

if [[ $force == 0 ]] && eg_ok; then
  log ".remote-venv matches remote-requirements.txt, skipped"
else
  python="${PYTHON:-python3}"
  rm -rf .remote-venv
  if command -v uv >/dev/null 2>&1; then
    log "uv venv + uv pip sync into $here/.remote-venv"
    UV_PYTHON_DOWNLOADS=never uv venv --quiet --seed --python "$(command -v "$python")" .remote-venv </dev/null \
      || die "uv venv failed"
    uv pip sync --quiet --python .remote-venv/bin/python remote-requirements.txt </dev/null \
      || die "uv pip sync -r remote-requirements.txt failed (see uv's output above)"
  else
    log "python -m venv + pip install into $here/.remote-venv"
    "$python" -m venv .remote-venv </dev/null || die "$python -m venv failed"
    .remote-venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r remote-requirements.txt </dev/null \
      || die "pip install -r remote-requirements.txt failed (see pip's output above)"
  fi
  [[ -x .remote-venv/bin/jupyter-enterprisegateway ]] || die "jupyter-enterprisegateway is missing from .remote-venv/bin"
  printf '%s' "$eg_want" >"$eg_stamp"
  log ".remote-venv installed"
fi
