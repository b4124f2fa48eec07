// REQUIRES: cross-aarch64, cross-riscv64
// Attention's probabilities times the values over a sequence whose length
// is known only at run time (torch-mlir's output for a dynamic sequence
// dimension, a zero fill and the matmul): O = P * V, P S x S, so the
// product's M and K are both dynamic. The fill stays (a run-time K may be
// 0, when a kernel would store nothing) and the kernel accumulates on it. The pass takes the run-time-M and run-time-K kernel ("mrt_krt":
// rows from its header, and K, whose iterations and last steps the kernel
// counts at each call) for NEON (Neoverse-N1) and RVV at VLEN 256
// (SpacemiT X60), after one-shot-bufferize's defaults (dynamic strides at
// the function boundary), guarded by the strides' run-time check (unit
// inner strides) with the stock matmul in the other branch; it validates
// each kernel under qemu at several M and K.
// Each module is lowered with the stock pipeline, compiled with llc for
// the target, linked statically with attention_main.c and run under qemu at
// S = 1, 5, 24 and 61 against its reference.
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" | FileCheck %s --check-prefixes=CHECK,NEON
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=aarch64-linux-gnu:neoverse-n1:+neon" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -filetype=obj -o %t.neon.o
// RUN: %cross-cc-aarch64 %S/Inputs/attention_main.c %t.neon.o -o %t.neon.exe
// RUN: %qemu-aarch64 -cpu neoverse-n1 %t.neon.exe | FileCheck %s --check-prefix=EXEC
//
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" | FileCheck %s --check-prefixes=CHECK,RVV
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.o
// RUN: %cross-cc-riscv64 %S/Inputs/attention_main.c %t.rvv.o -o %t.rvv.exe
// RUN: %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.exe | FileCheck %s --check-prefix=EXEC
//
// The kernel path is what ran: the same module with a kernel that drops a
// k (validation off) gives a wrong O.
// RUN: %qimeng-opt %s --one-shot-bufferize="bufferize-function-boundaries" --qimeng-tensorop="target=riscv64-linux-gnu:spacemit-x60:+m,+a,+f,+d,+c,+v test-inject-fault=drop-k validate=false" %dealloc \
// RUN:   | %mlir-opt %lower-to-llvm | %mlir-translate --mlir-to-llvmir \
// RUN:   | %llc -O2 -mtriple=riscv64-linux-gnu -mattr=+m,+a,+f,+d,+c,+v,+zvl256b -filetype=obj -o %t.rvv.broken.o
// RUN: %cross-cc-riscv64 %S/Inputs/attention_main.c %t.rvv.broken.o -o %t.rvv.broken.exe
// RUN: not %qemu-riscv64 -cpu rv64,v=true,vext_spec=v1.0,vlen=256,elen=64 %t.rvv.broken.exe | FileCheck %s --check-prefix=BROKEN
// BROKEN: FAIL

// CHECK-LABEL: func.func @attn_v
// CHECK:       scf.if
// NEON:        llvm.call @qm_sgemm_{{[0-9]+}}x21x{{[0-9]+}}_nn_mrt_krt_ldrt_{{[0-9]+x[0-9]+}}_ku{{[48]}}_aarch64_neon
// RVV:         llvm.call @qm_sgemm_{{[0-9]+}}x21x{{[0-9]+}}_nn_mrt_krt_ldrt_{{[0-9]+x[0-9]+}}_m{{[0-9]}}_ku{{[0-9]}}_riscv64_rvv_vlen256
// CHECK:       } else {
// CHECK:         linalg.matmul
// EXEC: PASS S = 1, 5, 24, 61
func.func @attn_v(%p: tensor<?x?xf32>, %v: tensor<?x21xf32>) -> tensor<?x21xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %s = tensor.dim %p, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%s) : tensor<?x21xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x21xf32>) -> tensor<?x21xf32>
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x21xf32>) outs(%f : tensor<?x21xf32>) -> tensor<?x21xf32>
  return %o : tensor<?x21xf32>
}
