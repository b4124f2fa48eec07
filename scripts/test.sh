#!/usr/bin/env bash
# Sets up, builds and runs every test: GoogleTest, the emitters' unittest
# suite and lit (the pass, remarks, execution under mlir-runner-22). Ends with
# ctest's summary.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT/build"
exec ctest --output-on-failure -j2
