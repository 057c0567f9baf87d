#!/usr/bin/env bash
# Runs every check and test of ipybox: formatting, lints, the build, the examples and the
# unit and end-to-end tests against a real Kernel Gateway and real kernels.
# Needs what scripts/setup.sh (or .ci/run) installs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
features=(--workspace --no-default-features)

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy"
cargo clippy "${features[@]}" --all-targets -- -D warnings
echo "== cargo build"
cargo build "${features[@]}" --all-targets
echo "== ipybox setup (Python environment for the kernels)"
target/debug/ipybox setup
echo "== examples"
for example in basic_execution stream_chunks capturing_plots kernel_environment kernel_reset working_directory; do
  echo "-- $example"
  target/debug/examples/"$example" > /dev/null
done
echo "== cargo test"
cargo test "${features[@]}" -- --test-threads 2
