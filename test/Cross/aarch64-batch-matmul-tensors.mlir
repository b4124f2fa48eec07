// REQUIRES: cross-aarch64
// The frontend form on tensors: a zero fill and a batch_matmul, bufferized
// with one-shot-bufferize's defaults (strided memrefs with dynamic strides
// at the function boundary), for a Neoverse-N1: one NEON overwrite kernel
// called per batch, validated under qemu by the pass; lowered, compiled
// with llc for AArch64, linked statically and run under qemu against the
// reference in bmm_main.c. Dense operands: the pass assumes dense batch
// strides and checks them at run time (other strides take the linalg op's
// loops), so padded rows would not reach the kernel.
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:   --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" | FileCheck %s
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:   --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.o
// RUN: %cross-cc-aarch64 -DBATCH=3 -DM=17 -DN=21 -DK=9 -DLDA=9 -DLDB=21 %S/Inputs/bmm_main.c %t.o -o %t.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.exe | FileCheck %s --check-prefix=EXEC
// The kernel path is what ran: the same module with a deliberately broken
// kernel (validation off) gives a wrong C.
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon test-inject-fault=drop-k validate=false" \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.broken.o
// RUN: %cross-cc-aarch64 -DBATCH=3 -DM=17 -DN=21 -DK=9 -DLDA=9 -DLDB=21 %S/Inputs/bmm_main.c %t.broken.o -o %t.broken.exe
// RUN: not %qemu-aarch64 -cpu neoverse-n1 %t.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL

// CHECK-LABEL: func.func @bmm
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.batch_matmul
// CHECK: scf.for
// CHECK: llvm.call @qm_sgemm_17x21x9_nn_b0_ldrt_7x12_ku4_aarch64_neon
// EXEC: PASS 3x17x21x9
func.func @bmm(%a: tensor<3x17x9xf32>, %b: tensor<3x9x21xf32>) -> tensor<3x17x21xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x17x21xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x17x21xf32>) -> tensor<3x17x21xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x17x9xf32>, tensor<3x9x21xf32>)
                           outs(%f : tensor<3x17x21xf32>) -> tensor<3x17x21xf32>
  return %r : tensor<3x17x21xf32>
}
