#!/usr/bin/env bash
# The 2-layer MLP of bench/example/mlp.mlir end to end under mlir-runner-22,
# stock lowering against --qimeng-tensorop (bench/end-to-end.sh).
#
#   bench/mlp.sh [BUILD_DIR]
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$root/bench/end-to-end.sh" "$root/bench/example/mlp.mlir" "${1:-$root/build}"
