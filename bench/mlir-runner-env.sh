# Sourced by the bench scripts that run modules under mlir-runner-22: the
# runtime libraries (libomp for the kernels' omp.parallel), a scratch
# directory removed on exit, and the stock lowering after the pass (the
# deallocation pipeline, then to LLVM, math ops without an LLVM intrinsic,
# erf among them, through libm; README.md "In a frontend's pipeline").
llvm_lib=/usr/lib/llvm-22/lib
libs="$llvm_lib/libmlir_c_runner_utils.so,$llvm_lib/libmlir_runner_utils.so,$llvm_lib/libomp.so"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
lower=(--buffer-deallocation-pipeline --convert-bufferization-to-memref
       --convert-linalg-to-loops --expand-strided-metadata --lower-affine
       --convert-scf-to-cf --convert-math-to-libm --convert-to-llvm
       --reconcile-unrealized-casts)
