#!/usr/bin/env bash
# The pass's NVIDIA target end to end, first half, on a machine with the
# LLVM build (the GPU machine has none): compiles
# test/Cuda/Inputs/pass-e2e.mlir with --qimeng-tensorop for sm_90a
# (validate=false: no GPU here) and the stock lowering into an object,
# BUILD/device-pass/pass-e2e.o. scripts/device-check.sh, given that
# directory (the device tool's `carry: ["build/device-pass"]`), links it
# with test/Cuda/Inputs/pass-e2e-driver.c and the CUDA driver and runs it.
# Usage: scripts/device-pass-prepare.sh [BUILD]   (default: build)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
LLVM="${LLVM_TOOLS:-/usr/lib/llvm-22/bin}"
OUT="$BUILD/device-pass"
mkdir -p "$OUT"
"$BUILD/bin/qimeng-opt" \
  --qimeng-tensorop="target=nvptx64-nvidia-cuda:sm_90a validate=false tf32=true" \
  "$ROOT/test/Cuda/Inputs/pass-e2e.mlir" -o "$OUT/pass-e2e.mlir" \
  2> "$OUT/remarks.txt"
grep "remark:" "$OUT/remarks.txt"
[ "$(grep -c "remark: accelerated" "$OUT/remarks.txt")" -eq 3 ] \
  || { echo "expected three accelerated contractions"; exit 1; }
"$LLVM/mlir-opt" "$OUT/pass-e2e.mlir" --convert-linalg-to-loops \
  --expand-strided-metadata --lower-affine --convert-scf-to-cf \
  --convert-to-llvm --reconcile-unrealized-casts \
  | "$LLVM/mlir-translate" --mlir-to-llvmir \
  | "$LLVM/llc" -O2 -filetype=obj -relocation-model=pic -o "$OUT/pass-e2e.o"
echo "wrote $OUT/pass-e2e.o"
