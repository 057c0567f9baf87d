#!/usr/bin/env bash
# The desktop app's figures (launch, first result, warm keypress-to-paint, 100k lines,
# memory) on the real app under Xvfb. Builds the release app first.
# Usage: scripts/bench-desktop.sh [--debug]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = "--debug" ]; then
  app="$PWD/target/debug/ipybox"
else
  ( cd ui && npm run build >/dev/null )
  cargo build --release -p ipybox
  app="$PWD/target/release/ipybox"
fi
IPYBOX_APP="$app" exec bash tests/e2e/with-driver.sh node tests/benches/desktop.mjs
