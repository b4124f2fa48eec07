#!/usr/bin/env bash
# Kernels for few rows of a dynamic M (the pass's m-buckets) end to end
# under mlir-runner-22: bench/example/dynamic-m-linear.mlir (a 4096 -> 4096
# linear layer on a dynamic number of rows) compiled with --qimeng-tensorop
# twice, m-buckets=none (one kernel, blocked for representative-m rows,
# for every M) and the default (kernels of their own for 1 and at most 16
# rows, chosen at run time). The two executables run alternately ROUNDS
# times (default 3); each prints the best of 20 calls, in seconds, at 1, 4,
# 16 and 256 rows.
#
#   bench/dynamic-m.sh [BUILD_DIR] [ROUNDS] [EXTRA PASS OPTIONS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=${1:-$root/build}
rounds=${2:-3}
extra=${3:-threads=1}
. "$root/bench/mlir-runner-env.sh"

forms=(none default)
for form in "${forms[@]}"; do
  buckets=""
  [ "$form" = none ] && buckets="m-buckets=none"
  "$build/bin/qimeng-opt" "$root/bench/example/dynamic-m-linear.mlir" \
    "--qimeng-tensorop=$buckets $extra" -o "$work/$form.memref.mlir"
  echo "== m-buckets=$form: kernels"
  grep -o 'llvm.call @qm_sgemm_[A-Za-z0-9_]*' "$work/$form.memref.mlir" \
    | sort -u | sed 's/^/   /'
  mlir-opt-22 "$work/$form.memref.mlir" "${lower[@]}" -o "$work/$form.mlir"
done
echo "seconds per call (best of 20) at M = 1, 4, 16, 256"
for round in $(seq "$rounds"); do
  for form in "${forms[@]}"; do
    printf 'round %s, m-buckets=%-8s' "$round" "$form"
    mlir-runner-22 -O3 "$work/$form.mlir" -e main -entry-point-result=void \
      --shared-libs="$libs" | tr '\n' ' '
    echo
  done
done
