#!/usr/bin/env bash
# A module of bench/example end to end under mlir-runner-22: bufferized with
# one-shot-bufferize's default function boundaries, then once through the
# stock pipeline and once with --qimeng-tensorop placed before
# buffer-deallocation-pipeline (docs/FrontendIR.md). The module prints its
# own seconds per forward pass (best and mean of five) and a checksum; the
# kernels the pass called are listed.
#
#   bench/end-to-end.sh MODULE [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module=$1
build=${2:-$root/build}
. "$root/bench/mlir-runner-env.sh"

mlir-opt-22 "$module" \
  --one-shot-bufferize="bufferize-function-boundaries" -o "$work/module.memref.mlir"

echo "== stock lowering (linalg to loops)"
mlir-opt-22 "$work/module.memref.mlir" "${lower[@]}" -o "$work/stock.mlir"
mlir-runner-22 -O3 "$work/stock.mlir" -e main -entry-point-result=void --shared-libs="$libs"

echo "== with --qimeng-tensorop ($("$build/bin/qimeng-hostinfo" | sed -n 's/^cores: //p') cores)"
"$build/bin/qimeng-opt" "$work/module.memref.mlir" --qimeng-tensorop -o "$work/ours.memref.mlir"
grep -o 'llvm.call @qm_[A-Za-z0-9_]*' "$work/ours.memref.mlir" | sort -u | sed 's/^/   /'
mlir-opt-22 "$work/ours.memref.mlir" "${lower[@]}" -o "$work/ours.mlir"
mlir-runner-22 -O3 "$work/ours.mlir" -e main -entry-point-result=void --shared-libs="$libs"
