#!/usr/bin/env bash
# The Python ipybox beside ours, on this machine: installs ipybox 0.9.2 from PyPI into a
# scratch virtual environment and runs tests/benches/python_ipybox.py, then ours
# (`cargo bench --bench engine`, then `--bench tools` without its remote rows). Needs
# tests/servers/install.sh (the echo server both call). Usage: scripts/bench-python-ipybox.sh [--quick]
# BENCH_DIR sets the scratch directory (default: a directory in the system's temp dir).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bench_dir="${BENCH_DIR:-$(python3 -c 'import tempfile; print(tempfile.gettempdir())')/ipybox-python-bench}"
venv="$bench_dir/venv"
if ! "$venv/bin/python" -c 'import ipybox' 2>/dev/null; then
  echo "== installing the Python ipybox 0.9.2 into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "ipybox==0.9.2" "mcp<2"
fi
echo "== the Python ipybox 0.9.2"
(cd "$bench_dir" && "$venv/bin/python" "$OLDPWD/tests/benches/python_ipybox.py" "$@")
echo "== ipybox (this repository)"
cargo bench -p ipybox-tests --no-default-features --bench engine -- "$@"
cargo bench -p ipybox-tests --no-default-features --bench tools -- --no-remote "$@"
