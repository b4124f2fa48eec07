// REQUIRES: cross-aarch64
// A matmul on the strided memrefs one-shot-bufferize gives function
// arguments, for a Neoverse-N1 target: the NEON kernel (validated under
// qemu by the pass), its AAPCS64 registers and clobbers in the inline asm;
// the stock lowering, llc for AArch64, a static link with the cross gcc and
// a run under qemu against the reference in gemm_main.c, on leading
// dimensions the types leave dynamic.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" | FileCheck %s
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.o
// RUN: %cross-cc-aarch64 -DM=37 -DN=45 -DK=29 -DLDA=31 -DLDB=47 -DLDC=50 %S/Inputs/gemm_main.c %t.o -o %t.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.exe | FileCheck %s --check-prefix=EXEC
// RUN: %qemu-aarch64 -cpu cortex-a76 %t.exe | FileCheck %s --check-prefix=EXEC
// The kernel path is what ran: the same module with a deliberately broken
// kernel (validation off) gives a wrong C.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon test-inject-fault=drop-k validate=false" \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.broken.o
// RUN: %cross-cc-aarch64 -DM=37 -DN=45 -DK=29 -DLDA=31 -DLDB=47 -DLDC=50 %S/Inputs/gemm_main.c %t.broken.o -o %t.broken.exe
// RUN: not %qemu-aarch64 -cpu neoverse-n1 %t.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL
// K in blocks of 8 with B's panels copied into the workspace (BLIS's
// blocking; a tuner's choice where a board times it): the same C.
// RUN: %qimeng-opt %s --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon kernel-config=kc=8,packb=1" \
// RUN:   | tee %t.blocked.mlir | FileCheck %s --check-prefix=BLOCKED
// RUN: %mlir-opt %t.blocked.mlir %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.blocked.o
// RUN: %cross-cc-aarch64 -DM=37 -DN=45 -DK=29 -DLDA=31 -DLDB=47 -DLDC=50 %S/Inputs/gemm_main.c %t.blocked.o -o %t.blocked.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.blocked.exe | FileCheck %s --check-prefix=EXEC
// BLOCKED: llvm.call @qm_sgemm_37x45x29_nn_ldrt_7x12_ku4_kc8_pb_aarch64_neon

// CHECK-LABEL: func.func @gemm
// CHECK-NOT: linalg.matmul
// CHECK: llvm.call @qm_sgemm_37x45x29_nn_ldrt_7x12_ku4_aarch64_neon
// CHECK: llvm.func internal @qm_sgemm_37x45x29_nn_ldrt_7x12_ku4_aarch64_neon
// CHECK-SAME: no_inline
// CHECK: llvm.inline_asm has_side_effects {{.*}}fmla{{.*}}"={x0},={x1},={x2},={x3},0,1,2,3,{{.*}}~{x19}{{.*}}~{v31},~{nzcv},~{memory}"
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
