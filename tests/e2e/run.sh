#!/usr/bin/env bash
# End-to-end tests of the real desktop app under Xvfb. Usage: tests/e2e/run.sh [test files...]
# (NODE_TEST_ARGS="--test-name-pattern=..." picks tests.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(tests/e2e/*.test.mjs)
# shellcheck disable=SC2086
exec bash tests/e2e/with-driver.sh node --test --test-concurrency=1 ${NODE_TEST_ARGS:-} "${files[@]}"
