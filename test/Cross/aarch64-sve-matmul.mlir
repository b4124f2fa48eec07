// REQUIRES: cross-aarch64
// The strided-memref matmul for an SVE target built for 256-bit vectors
// (neoverse-v1's length): the SVE kernel, validated by the pass under
// qemu at that length, with its predicate and z-register clobbers; run
// under qemu with 256-bit SVE against gemm_main.c's reference.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" | FileCheck %s
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve" \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -filetype=obj -o %t.o
// RUN: %cross-cc-aarch64 -DM=37 -DN=45 -DK=29 -DLDA=31 -DLDB=47 -DLDC=50 %S/Inputs/gemm_main.c %t.o -o %t.exe
// RUN: %qemu-aarch64 -cpu max,sve256=on %t.exe | FileCheck %s --check-prefix=EXEC
// The kernel path is what ran: the same module with a deliberately broken
// kernel (validation off) gives a wrong C.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-v1:+neon,+sve test-inject-fault=drop-k validate=false" \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -filetype=obj -o %t.broken.o
// RUN: %cross-cc-aarch64 -DM=37 -DN=45 -DK=29 -DLDA=31 -DLDB=47 -DLDC=50 %S/Inputs/gemm_main.c %t.broken.o -o %t.broken.exe
// RUN: not %qemu-aarch64 -cpu max,sve256=on %t.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL

// CHECK-LABEL: func.func @gemm
// CHECK-NOT: linalg.matmul
// CHECK: llvm.call @qm_sgemm_37x45x29_nn_ldrt_7x24_ku4_aarch64_sve_vl256
// CHECK: llvm.func internal @qm_sgemm_37x45x29_nn_ldrt_7x24_ku4_aarch64_sve_vl256
// CHECK-SAME: no_inline
// CHECK: llvm.inline_asm has_side_effects {{.*}}ld1rqw{{.*}}"={x0},={x1},={x2},={x3},0,1,2,3,{{.*}}~{x27},~{x28},~{z0}{{.*}}~{z31},~{p0},~{p1},~{nzcv},~{memory}"
// EXEC: PASS 37x45x29
func.func @gemm(%a: memref<37x29xf32, strided<[?, ?], offset: ?>>,
                %b: memref<29x45xf32, strided<[?, ?], offset: ?>>,
                %c: memref<37x45xf32, strided<[?, ?], offset: ?>>)
    attributes {llvm.emit_c_interface} {
  linalg.matmul ins(%a, %b : memref<37x29xf32, strided<[?, ?], offset: ?>>,
                             memref<29x45xf32, strided<[?, ?], offset: ?>>)
                outs(%c : memref<37x45xf32, strided<[?, ?], offset: ?>>)
  return
}
