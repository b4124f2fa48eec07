#!/usr/bin/env bash
# Fused epilogues end to end under mlir-runner-22: the two linear layers of
# bench/example/linear-relu.mlir (bias + relu after the GEMMs 128x3072x768
# and 128x768x3072), or of another MODULE such as
# bench/example/linear-bf16.mlir (bf16 GEMMs into f32, then truncf to
# bf16), bench/example/linear-leaky.mlir (bias + leaky relu),
# bench/example/linear-gelu.mlir (bias + gelu),
# bench/example/linear-tanh.mlir (bias + tanh),
# bench/example/linear-mish.mlir (bias + mish) or
# bench/example/linear-bf16-gelu.mlir (bf16 GEMMs, gelu on their f32 sums,
# then truncf to bf16) or bench/example/conv-bf16.mlir (torch-mlir's bf16
# convolutions: bias init, then truncf to bf16), bufferized with
# one-shot-bufferize's default function boundaries, compiled with
# --qimeng-tensorop twice: fuse-epilogues=true (the kernel adds the bias
# and applies the activation, or rounds to bf16, as it stores C) and false
# (the kernel, then the stock-lowered linalg.generic). The two executables
# run alternately ROUNDS times (default 3); each run prints best and mean
# seconds per call of 25 and a checksum, which must agree (gelu's to about
# six digits: the fused kernel computes it to a few ulps).
#
#   bench/epilogue.sh [BUILD_DIR] [ROUNDS] [EXTRA PASS OPTIONS] [MODULE]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=${1:-$root/build}
rounds=${2:-3}
extra=${3:-}
module=${4:-$root/bench/example/linear-relu.mlir}
. "$root/bench/mlir-runner-env.sh"

mlir-opt-22 "$module" \
  --one-shot-bufferize="bufferize-function-boundaries" -o "$work/memref.mlir"
for fuse in true false; do
  "$build/bin/qimeng-opt" "$work/memref.mlir" \
    "--qimeng-tensorop=fuse-epilogues=$fuse $extra" -o "$work/$fuse.memref.mlir"
  echo "== fuse-epilogues=$fuse: kernels"
  grep -o 'llvm.call @qm_s[a-z0-9]*\(gemm\|conv2d\)_[A-Za-z0-9_]*' "$work/$fuse.memref.mlir" \
    | sort -u | sed 's/^/   /'
  mlir-opt-22 "$work/$fuse.memref.mlir" "${lower[@]}" -o "$work/$fuse.mlir"
done
for round in $(seq "$rounds"); do
  for fuse in true false; do
    echo "== round $round, fuse-epilogues=$fuse"
    mlir-runner-22 -O3 "$work/$fuse.mlir" -e main -entry-point-result=void \
      --shared-libs="$libs"
  done
done
