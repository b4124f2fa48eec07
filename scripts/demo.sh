#!/usr/bin/env bash
# The main job on an example, from a fresh machine: set up and build, run
# --qimeng-tensorop on bench/example/matmul.mlir, lower with the stock
# pipeline, execute under mlir-runner-22 (the module checks itself and times
# itself), then print GFLOPS against OpenBLAS for the same shape.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"

BIN="$ROOT/build/bin"
LLVM_LIB=/usr/lib/llvm-22/lib
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

echo "== qimeng-opt --qimeng-tensorop bench/example/matmul.mlir"
"$BIN/qimeng-opt" "$ROOT/bench/example/matmul.mlir" --qimeng-tensorop -o "$OUT/matmul.qimeng.mlir"
grep -o 'llvm.call @qm_sgemm_[A-Za-z0-9_]*' "$OUT/matmul.qimeng.mlir" | sort -u | sed 's/^/   /'

echo "== stock lowering and mlir-runner-22"
mlir-opt-22 "$OUT/matmul.qimeng.mlir" \
  --convert-linalg-to-loops --expand-strided-metadata --lower-affine \
  --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts \
  -o "$OUT/matmul.llvm.mlir"
mlir-runner-22 -O3 "$OUT/matmul.llvm.mlir" -e main -entry-point-result=void \
  --shared-libs="$LLVM_LIB/libmlir_c_runner_utils.so,$LLVM_LIB/libmlir_runner_utils.so,$LLVM_LIB/libomp.so"

echo "== qimeng-bench: the same shape against OpenBLAS (1 thread and all cores, C += A*B)"
"$BIN/qimeng-bench" --op sgemm --shapes 512x512x512 --threads 1
"$BIN/qimeng-bench" --op sgemm --shapes 512x512x512 --threads "$(nproc)"
