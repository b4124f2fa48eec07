#!/usr/bin/env bash
# torch-mlir's bf16 ResNet basic block in NCHW (bench/example/
# resnet-block-bf16.mlir) end to end under mlir-runner-22, stock lowering
# against --qimeng-tensorop (bench/end-to-end.sh).
#
#   bench/resnet-block.sh [BUILD_DIR]
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$root/bench/end-to-end.sh" "$root/bench/example/resnet-block-bf16.mlir" \
  "${1:-$root/build}"
