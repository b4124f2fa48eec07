#!/usr/bin/env bash
# The 2-layer MLP of bench/example/mlp.mlir end to end under mlir-runner-22:
# bufferized with one-shot-bufferize's default function boundaries, then
# once through the stock pipeline and once with --qimeng-tensorop placed
# before buffer-deallocation-pipeline (docs/FrontendIR.md). Prints each
# run's seconds per forward pass (best and mean of five) and checksum.
#
#   bench/mlp.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=${1:-$root/build}
. "$root/bench/mlir-runner-env.sh"

mlir-opt-22 "$root/bench/example/mlp.mlir" \
  --one-shot-bufferize="bufferize-function-boundaries" -o "$work/mlp.memref.mlir"

echo "== stock lowering (linalg to loops)"
mlir-opt-22 "$work/mlp.memref.mlir" "${lower[@]}" -o "$work/stock.mlir"
mlir-runner-22 -O3 "$work/stock.mlir" -e main -entry-point-result=void --shared-libs="$libs"

echo "== with --qimeng-tensorop ($("$build/bin/qimeng-hostinfo" | sed -n 's/^cores: //p') cores)"
"$build/bin/qimeng-opt" "$work/mlp.memref.mlir" --qimeng-tensorop -o "$work/ours.memref.mlir"
grep -o 'llvm.call @qm_sgemm_[A-Za-z0-9_]*' "$work/ours.memref.mlir" | sort -u | sed 's/^/   /'
mlir-opt-22 "$work/ours.memref.mlir" "${lower[@]}" -o "$work/ours.mlir"
mlir-runner-22 -O3 "$work/ours.mlir" -e main -entry-point-result=void --shared-libs="$libs"
